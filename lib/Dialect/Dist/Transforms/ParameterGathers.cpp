//===- ParameterGathers.cpp - ZeRO-3 gathers per layer, prefetched --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. The gathers are the `dist.reshard`s whose input is a `loom.param`
//    argument (under ZeRO-3 the argument holds the shard).
// 2. Walk the block in program order. Each op that reads a gather gets a
//    label: its micro-batch (`loom.micro_batch`, -1 without) and its layer
//    (the first integer in the name of a layer parameter it reads, -1 for
//    embeddings, final norms and heads). A unit is a maximal run of such
//    ops with one label; ops reading no gather do not break a run. A
//    layer's forward and backward are apart in program order (the other
//    layers run between), except where the forward turns into the
//    backward: there the last layer (or the head) keeps its gathered copy
//    from its forward through its backward instead of gathering it again.
//    Recomputed clones run in their layer's backward, so they share its
//    unit.
// 3. Each unit gets its own copy of every gather it reads, inserted right
//    before the first op of the unit before it (the first unit: before its
//    own first op). So while unit k computes, unit k+1's parameters are
//    already being gathered (in program order: a backend that overlaps
//    collectives with compute overlaps them), and unit k-1's copies are
//    dead: the liveness of the per-rank program, which the interpreter and
//    the emitted arena follow, holds two units of whole parameters.
// 4. The original gathers, now unread, are erased.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/ParameterGathers.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/Transforms/StrategyCostGraph.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"

#include <utility>

using ::mlir::loom::kMicroBatchAttrName;
using ::mlir::loom::kParamAttrName;

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {
/// Which unit an op belongs to: (micro-batch, layer).
using UnitLabel = std::pair<int64_t, int64_t>;

/// A run of consecutive ops with one label, and the gathers they read.
struct Unit {
  UnitLabel label;
  Operation *firstOp = nullptr;
  /// Each gather the unit reads, with the operands that read it.
  llvm::MapVector<ReshardOp, SmallVector<OpOperand *, 4>> reads;
};
} // namespace

/// The parameter a gather reads (its argument's `#loom.param`).
static ParamAttr getGatheredParam(func::FuncOp func, ReshardOp reshard) {
  auto arg = dyn_cast<BlockArgument>(reshard.getInput());
  if (!arg || arg.getOwner() != &func.getBody().front())
    return {};
  return func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
}

ParameterGatherStats
mlir::loom::dist::scheduleParameterGathers(func::FuncOp func) {
  ParameterGatherStats stats;
  Block &body = func.getBody().front();
  llvm::DenseMap<Operation *, int64_t> layerOf;
  for (auto reshard : body.getOps<ReshardOp>())
    if (ParamAttr param = getGatheredParam(func, reshard)) {
      layerOf[reshard] = getLayerIndex(param.getName());
      ++stats.gathersBefore;
    }
  if (layerOf.empty())
    return stats;

  std::vector<Unit> units;
  for (Operation &op : body) {
    std::optional<int64_t> layer;
    for (OpOperand &operand : op.getOpOperands()) {
      auto gather = operand.get().getDefiningOp<ReshardOp>();
      if (!gather || !layerOf.count(gather))
        continue;
      int64_t gatherLayer = layerOf.lookup(gather);
      if (!layer || *layer < 0)
        layer = gatherLayer;
    }
    if (!layer)
      continue;
    auto microBatch = op.getAttrOfType<IntegerAttr>(kMicroBatchAttrName);
    UnitLabel label{microBatch ? microBatch.getInt() : -1, *layer};
    if (units.empty() || units.back().label != label)
      units.push_back(Unit{label, &op, {}});
    for (OpOperand &operand : op.getOpOperands())
      if (auto gather = operand.get().getDefiningOp<ReshardOp>();
          gather && layerOf.count(gather))
        units.back().reads[gather].push_back(&operand);
  }

  OpBuilder builder(func.getContext());
  for (size_t k = 0; k < units.size(); ++k) {
    builder.setInsertionPoint(units[k == 0 ? 0 : k - 1].firstOp);
    for (auto &[gather, operands] : units[k].reads) {
      Operation *copy = builder.clone(*gather.getOperation());
      for (OpOperand *operand : operands)
        operand->set(copy->getResult(0));
      ++stats.gathersAfter;
    }
  }
  for (auto &[gather, layer] : layerOf)
    if (gather->use_empty())
      gather->erase();
  stats.units = units.size();
  return stats;
}
