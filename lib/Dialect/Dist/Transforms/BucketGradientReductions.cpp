//===- BucketGradientReductions.cpp - dist-bucket-gradient-reductions -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// DDP's gradient buckets, decided on the IR so that every target sees the
// same buckets and a test can read them (GradientBuckets.h). For each
// function:
//
//   1. take its gradient reductions (GradientBuckets.h: sum all-reduces
//      read only by optimizer updates; under ZeRO, the reduce-scatters of
//      the gradients into the rank's shard, per micro-batch at stages 2
//      and 3) in program
//      order: the order the backward produces the gradients, reverse
//      parameter order;
//   2. cut them greedily into buckets: a reduction joins the open bucket
//      when it has the bucket's mesh, axes, stage and micro-batch (that of
//      its gradient's producer, `loom.micro_batch`), the bucket stays
//      within the byte cap, and the bucket's last gradient still comes
//      before the first read of any of its results; else it opens the
//      next bucket (a gradient above the cap makes a bucket alone);
//   3. move each bucket's reductions, in order, to right after its last
//      gradient's producer and mark them `dist.bucket = b`;
//   4. mark the first op that reads one of the bucket's results with b in
//      `dist.wait_buckets`.
//
// Nothing moves across a use, so the results are the same; only where a
// target may start and must finish each reduction is new.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/Passes.h"

#include "loom/Dialect/Dist/IR/GradientBuckets.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Debug.h"

#include <cmath>

#define DEBUG_TYPE "dist-bucket-gradient-reductions"

namespace mlir::loom::dist {
#define GEN_PASS_DEF_BUCKETGRADIENTREDUCTIONSPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

/// Bytes of a reduction's operand in the IR's element type (what it sends;
/// for a reduce-scatter, the whole gradient, not the kept shard).
int64_t bytesOf(Operation *reduce) {
  auto type = cast<RankedTensorType>(getReducedGradient(reduce).getType());
  return type.getNumElements() *
         static_cast<int64_t>((type.getElementTypeBitWidth() + 7) / 8);
}

/// What the reductions of one bucket must share: the group, the stage and
/// the micro-batch whose backward produced the gradient (ZeRO-2 reduces
/// each micro-batch's gradients: a bucket that waited for the next
/// micro-batch's first gradient would start the earlier ones late).
std::tuple<StringRef, ArrayAttr, Attribute, Attribute, Attribute>
keyOf(Operation *reduce) {
  Attribute stage = reduce->getAttr(kStageAttrName);
  Attribute chunk = reduce->getAttr(kChunkAttrName);
  Attribute microBatch;
  if (Operation *producer = getReducedGradient(reduce).getDefiningOp())
    microBatch = producer->getAttr(kMicroBatchAttrName);
  if (auto allReduce = dyn_cast<AllReduceOp>(reduce))
    return {allReduce.getMesh(), allReduce.getAxes(), stage, chunk, microBatch};
  auto scatter = cast<ReduceScatterOp>(reduce);
  return {scatter.getMesh(), scatter.getAxes(), stage, chunk, microBatch};
}

/// The later of two ops of one block (either may be null).
Operation *later(Operation *a, Operation *b) {
  if (!a || !b)
    return a ? a : b;
  return a->isBeforeInBlock(b) ? b : a;
}
/// The earlier of two ops of one block (either may be null).
Operation *earlier(Operation *a, Operation *b) {
  if (!a || !b)
    return a ? a : b;
  return a->isBeforeInBlock(b) ? a : b;
}

/// The producer of `reduce`'s operand in `body`, or null for an argument.
Operation *producerIn(Block &body, Operation *reduce) {
  Operation *def = getReducedGradient(reduce).getDefiningOp();
  return def ? body.findAncestorOpInBlock(*def) : nullptr;
}

/// The first op of `body` that reads `reduce`'s result.
Operation *firstReaderIn(Block &body, Operation *reduce) {
  Operation *first = nullptr;
  for (Operation *user : reduce->getUsers())
    first = earlier(first, body.findAncestorOpInBlock(*user));
  return first;
}

struct Bucket {
  SmallVector<Operation *> reductions;
  int64_t bytes = 0;
  /// The producer of its last gradient and the first reader of a result.
  Operation *lastProducer = nullptr;
  Operation *firstReader = nullptr;
};

void bucketFunction(func::FuncOp func, int64_t capBytes) {
  Block &body = func.getBody().front();
  SmallVector<Bucket> buckets;
  for (Operation &op : body) {
    Operation *reduce = &op;
    if (!isGradientReduction(reduce))
      continue;
    int64_t bytes = bytesOf(reduce);
    Operation *producer = producerIn(body, reduce);
    Operation *reader = firstReaderIn(body, reduce);
    if (!buckets.empty()) {
      Bucket &open = buckets.back();
      Operation *lastProducer = later(open.lastProducer, producer);
      Operation *firstReader = earlier(open.firstReader, reader);
      bool fits = keyOf(open.reductions.front()) == keyOf(reduce) &&
                  open.bytes + bytes <= capBytes &&
                  (!lastProducer || lastProducer->isBeforeInBlock(firstReader));
      if (fits) {
        open.reductions.push_back(reduce);
        open.bytes += bytes;
        open.lastProducer = lastProducer;
        open.firstReader = firstReader;
        continue;
      }
    }
    buckets.push_back({{reduce}, bytes, producer, reader});
  }
  OpBuilder builder(func.getContext());
  for (auto [b, bucket] : llvm::enumerate(buckets)) {
    // Right after the last gradient (or where the first reduction stands
    // when every operand is an argument).
    Operation *after = bucket.lastProducer;
    for (Operation *reduce : bucket.reductions) {
      if (after)
        reduce->moveAfter(after);
      after = reduce;
      reduce->setAttr(kBucketAttrName,
                      builder.getI64IntegerAttr(static_cast<int64_t>(b)));
    }
    SmallVector<int64_t> waited = getWaitedBuckets(bucket.firstReader);
    waited.push_back(static_cast<int64_t>(b));
    bucket.firstReader->setAttr(kWaitBucketsAttrName,
                                builder.getDenseI64ArrayAttr(waited));
    LLVM_DEBUG(llvm::dbgs() << func.getSymName() << ": bucket " << b << ": "
                            << bucket.reductions.size() << " reductions, "
                            << bucket.bytes << " bytes\n");
  }
}

struct BucketGradientReductionsPass
    : mlir::loom::dist::impl::BucketGradientReductionsPassBase<
          BucketGradientReductionsPass> {
  using BucketGradientReductionsPassBase::BucketGradientReductionsPassBase;

  void runOnOperation() override {
    if (!(bucketCapMB >= 0) || !std::isfinite(bucketCapMB)) {
      getOperation().emitError()
          << "bucket-cap-mb must be a non-negative number of MiB, got "
          << bucketCapMB;
      return signalPassFailure();
    }
    if (bucketCapMB == 0)
      return;
    auto capBytes = static_cast<int64_t>(bucketCapMB * 1024.0 * 1024.0);
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        bucketFunction(func, capBytes);
  }
};

} // namespace
