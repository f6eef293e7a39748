//===- GradientBuckets.cpp - Data-parallel gradient buckets ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Reads and checks the bucket attributes (GradientBuckets.h). The check
// walks the body once, numbering the ops, then compares positions: a
// reduction's position against its bucket's producers (B2) and the waiter's
// against the reductions and their first readers (B3).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/IR/GradientBuckets.h"

#include "loom/Dialect/Loom/IR/LoomTraits.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

/// Whether every reader of `value` is an optimizer update, or an add that
/// accumulates gradient shards into a value of which this holds in turn.
/// The Dist dialect does not link the Loom dialect, so the add is known by
/// its name.
static bool reachesOnlyOptimizerUpdates(Value value) {
  if (value.use_empty())
    return false;
  return llvm::all_of(value.getUsers(), [](Operation *user) {
    if (isOptimizerUpdate(user))
      return true;
    return user->getName().getStringRef() == "loom.add" &&
           user->getNumResults() == 1 &&
           reachesOnlyOptimizerUpdates(user->getResult(0));
  });
}

bool mlir::loom::dist::isGradientReduction(Operation *op) {
  if (auto reduce = dyn_cast<AllReduceOp>(op)) {
    if (reduce.getKind() != ReductionKind::Sum || reduce->use_empty())
      return false;
    return llvm::all_of(reduce->getUsers(), [](Operation *user) {
      return isOptimizerUpdate(user);
    });
  }
  if (auto scatter = dyn_cast<ReduceScatterOp>(op))
    return reachesOnlyOptimizerUpdates(scatter.getResult());
  return false;
}

std::optional<int64_t> mlir::loom::dist::getBucket(Operation *op) {
  if (!isa<AllReduceOp, ReduceScatterOp>(op))
    return std::nullopt;
  if (auto bucket = op->getAttrOfType<IntegerAttr>(kBucketAttrName))
    return bucket.getInt();
  return std::nullopt;
}

Value mlir::loom::dist::getReducedGradient(Operation *reduction) {
  return reduction->getOperand(0);
}

SmallVector<int64_t> mlir::loom::dist::getWaitedBuckets(Operation *op) {
  if (auto waited = op->getAttrOfType<DenseI64ArrayAttr>(kWaitBucketsAttrName))
    return SmallVector<int64_t>(waited.asArrayRef());
  return {};
}

std::map<int64_t, GradientBucket>
mlir::loom::dist::collectGradientBuckets(func::FuncOp func) {
  std::map<int64_t, GradientBucket> buckets;
  func.walk([&](Operation *op) {
    if (std::optional<int64_t> bucket = getBucket(op))
      buckets[*bucket].reductions.push_back(op);
    for (int64_t bucket : getWaitedBuckets(op))
      if (buckets.count(bucket) && !buckets[bucket].waiter)
        buckets[bucket].waiter = op;
  });
  return buckets;
}

/// The group a reduction of a bucket reduces over.
static std::pair<StringRef, ArrayAttr> groupOf(Operation *reduction) {
  if (auto reduce = dyn_cast<AllReduceOp>(reduction))
    return {reduce.getMesh(), reduce.getAxes()};
  auto scatter = cast<ReduceScatterOp>(reduction);
  return {scatter.getMesh(), scatter.getAxes()};
}

static int64_t stageOf(Operation *op) {
  auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName);
  return stage ? stage.getInt() : -1;
}

LogicalResult mlir::loom::dist::verifyGradientBuckets(func::FuncOp func) {
  if (func.isExternal())
    return success();
  Block &body = func.getBody().front();
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = static_cast<int64_t>(i);
  auto at = [&](Operation *op) -> int64_t {
    auto it = position.find(op);
    return it == position.end() ? -1 : it->second;
  };
  bool ok = true;
  std::map<int64_t, SmallVector<Operation *>> members;
  std::map<int64_t, SmallVector<Operation *>> waiters;
  func.walk([&](Operation *op) {
    if (std::optional<int64_t> bucket = getBucket(op))
      members[*bucket].push_back(op);
    for (int64_t bucket : getWaitedBuckets(op))
      waiters[bucket].push_back(op);
  });
  for (auto &[bucket, reductions] : members) {
    Operation *first = reductions.front();
    // B1. One body, group and stage; sums.
    for (Operation *reduce : reductions) {
      if (reduce->getBlock() != &body) {
        reduce->emitOpError() << "of gradient bucket " << bucket
                              << " is not in the function's body";
        ok = false;
      }
      if (auto allReduce = dyn_cast<AllReduceOp>(reduce);
          allReduce && allReduce.getKind() != ReductionKind::Sum) {
        reduce->emitOpError()
            << "of gradient bucket " << bucket << " is not a sum";
        ok = false;
      }
      if (groupOf(reduce) != groupOf(first) ||
          stageOf(reduce) != stageOf(first)) {
        reduce->emitOpError()
            << "of gradient bucket " << bucket
            << " reduces over another mesh, axis list or stage than the "
               "bucket's first reduction";
        ok = false;
      }
    }
    if (!ok)
      continue;
    // B2. No reduction of the bucket before its last gradient.
    Operation *lastProducer = nullptr;
    for (Operation *reduce : reductions)
      if (Operation *producer = getReducedGradient(reduce).getDefiningOp())
        if (!lastProducer || at(producer) > at(lastProducer))
          lastProducer = producer;
    for (Operation *reduce : reductions)
      if (lastProducer && at(reduce) < at(lastProducer)) {
        InFlightDiagnostic diag =
            reduce->emitOpError()
            << "of gradient bucket " << bucket
            << " starts before the bucket's last gradient is produced";
        diag.attachNote(lastProducer->getLoc())
            << "the last gradient of the bucket is produced here";
        ok = false;
      }
    // B3. One waiter, after the reductions, before their readers.
    auto found = waiters.find(bucket);
    if (found == waiters.end() || found->second.size() != 1) {
      first->emitOpError() << "of gradient bucket " << bucket << " has "
                           << (found == waiters.end() ? 0
                                                      : found->second.size())
                           << " ops waiting for it (`" << kWaitBucketsAttrName
                           << "`), expected 1";
      ok = false;
      continue;
    }
    Operation *waiter = found->second.front();
    if (waiter->getBlock() != &body || stageOf(waiter) != stageOf(first)) {
      waiter->emitOpError() << "waits for gradient bucket " << bucket
                            << " outside the body or the stage of its "
                               "reductions";
      ok = false;
      continue;
    }
    for (Operation *reduce : reductions) {
      if (at(waiter) <= at(reduce)) {
        waiter->emitOpError() << "waits for gradient bucket " << bucket
                              << " before one of its reductions starts";
        ok = false;
      }
      for (Operation *user : reduce->getUsers())
        if (at(user) < at(waiter)) {
          InFlightDiagnostic diag =
              user->emitOpError()
              << "reads a result of gradient bucket " << bucket
              << " before the op that waits for the bucket";
          diag.attachNote(waiter->getLoc()) << "the bucket is waited here";
          ok = false;
        }
    }
  }
  for (auto &[bucket, ops] : waiters)
    if (!members.count(bucket)) {
      ops.front()->emitOpError()
          << "waits for gradient bucket " << bucket << ", which has no "
          << "reductions";
      ok = false;
    }
  return success(ok);
}
