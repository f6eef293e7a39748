//===- PipelineInfo.cpp - The dist.pipeline module attribute --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Reading and writing `dist.pipeline` (a `#dist.pipeline`) through the
// editable `PipelineInfo`, and the per-stage helpers built on it.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::loom::dist;

PipelineInfo PipelineInfo::get(PipelineAttr attr) {
  PipelineInfo info;
  info.axis = attr.getAxis().str();
  info.stages = attr.getStages();
  info.microBatches = attr.getMicroBatches();
  info.schedule = attr.getSchedule();
  info.virtualStages = attr.getVirtualStages();
  info.stageLayers.assign(attr.getStageLayers().begin(),
                          attr.getStageLayers().end());
  info.predicted = attr.getPredicted();
  return info;
}

PipelineAttr PipelineInfo::toAttr(MLIRContext *context) const {
  return PipelineAttr::get(context, axis, stages, microBatches, schedule,
                           virtualStages, stageLayers, predicted);
}

FailureOr<std::optional<PipelineInfo>> mlir::loom::dist::getPipelineInfo(
    ModuleOp module) {
  Attribute raw = module->getAttr(kPipelineAttrName);
  if (!raw)
    return std::optional<PipelineInfo>();
  auto attr = dyn_cast<PipelineAttr>(raw);
  if (!attr)
    return module.emitError() << "`" << kPipelineAttrName
                              << "`: expected a #dist.pipeline, found "
                              << raw;
  return std::optional<PipelineInfo>(PipelineInfo::get(attr));
}

std::optional<int64_t> mlir::loom::dist::getOpStage(Operation *op) {
  if (auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName))
    return stage.getInt();
  return std::nullopt;
}

int64_t mlir::loom::dist::getOpChunk(Operation *op) {
  if (auto chunk = op->getAttrOfType<IntegerAttr>(kChunkAttrName))
    return chunk.getInt();
  return 0;
}

std::optional<int64_t> mlir::loom::dist::getInFlightKey(Operation *op) {
  auto m = op->getAttrOfType<IntegerAttr>(kMicroBatchAttrName);
  if (!m)
    return std::nullopt;
  // Micro-batch counts stay far below 2^32 (the search takes at most 256).
  return (getOpChunk(op) << 32) | m.getInt();
}

llvm::DenseSet<Operation *> mlir::loom::dist::getActivationOps(
    Block &body, llvm::function_ref<bool(unsigned)> isDataInput) {
  llvm::DenseSet<Value> activations;
  for (BlockArgument arg : body.getArguments())
    if (!isDataInput(arg.getArgNumber()))
      activations.insert(arg);
  llvm::DenseSet<Operation *> ops;
  for (Operation &op : body) {
    if (!isa<RecvOp>(op) &&
        llvm::none_of(op.getOperands(),
                      [&](Value v) { return activations.contains(v); }))
      continue;
    ops.insert(&op);
    activations.insert(op.result_begin(), op.result_end());
  }
  return ops;
}

FailureOr<SmallVector<std::optional<int64_t>>>
mlir::loom::dist::getStageList(ModuleOp module) {
  FailureOr<std::optional<PipelineInfo>> pipeline = getPipelineInfo(module);
  if (failed(pipeline))
    return failure();
  SmallVector<std::optional<int64_t>> stages;
  if (!*pipeline || (*pipeline)->stages <= 1)
    return SmallVector<std::optional<int64_t>>{std::nullopt};
  for (int64_t s = 0; s < (*pipeline)->stages; ++s)
    stages.push_back(s);
  return stages;
}
