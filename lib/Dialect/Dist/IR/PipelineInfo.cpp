//===- PipelineInfo.cpp - The dist.pipeline module attribute --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Reading and writing `dist.pipeline`: a dictionary {axis, stages,
// micro_batches, schedule, stage_layers}, and possibly more fields (the
// search adds its predictions) that these helpers keep as they are.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::loom::dist;

DictionaryAttr PipelineInfo::toAttr(MLIRContext *context,
                                    DictionaryAttr keep) const {
  Builder b(context);
  SmallVector<Attribute> ranges;
  for (auto [first, end] : stageLayers)
    ranges.push_back(b.getI64ArrayAttr({first, end}));
  NamedAttrList fields(keep ? keep.getValue() : ArrayRef<NamedAttribute>());
  fields.set("axis", b.getStringAttr(axis));
  fields.set("stages", b.getI64IntegerAttr(stages));
  fields.set("micro_batches", b.getI64IntegerAttr(microBatches));
  fields.set("schedule", b.getStringAttr(
                             ::loom::pipeline::getScheduleKindName(schedule)));
  fields.set("stage_layers", b.getArrayAttr(ranges));
  return fields.getDictionary(context);
}

FailureOr<std::optional<PipelineInfo>> mlir::loom::dist::getPipelineInfo(
    ModuleOp module) {
  Attribute raw = module->getAttr(kPipelineAttrName);
  if (!raw)
    return std::optional<PipelineInfo>();
  auto dict = dyn_cast<DictionaryAttr>(raw);
  auto fail = [&](StringRef what) {
    module.emitError() << "`" << kPipelineAttrName << "`: " << what;
    return failure();
  };
  if (!dict)
    return fail("expected a dictionary");
  PipelineInfo info;
  if (auto axis = dict.getAs<StringAttr>("axis"))
    info.axis = axis.getValue().str();
  auto stages = dict.getAs<IntegerAttr>("stages");
  if (!stages || stages.getInt() < 1)
    return fail("expected `stages` >= 1");
  info.stages = stages.getInt();
  if (auto micro = dict.getAs<IntegerAttr>("micro_batches")) {
    if (micro.getInt() < 1)
      return fail("expected `micro_batches` >= 1");
    info.microBatches = micro.getInt();
  }
  if (auto schedule = dict.getAs<StringAttr>("schedule")) {
    auto kind = ::loom::pipeline::parseScheduleKind(schedule.getValue().str());
    if (!kind)
      return fail("expected `schedule` gpipe or 1f1b, found '" +
                  schedule.getValue().str() + "'");
    info.schedule = *kind;
  }
  if (auto ranges = dict.getAs<ArrayAttr>("stage_layers")) {
    for (Attribute range : ranges) {
      auto pair = dyn_cast<ArrayAttr>(range);
      if (!pair || pair.size() != 2 || !isa<IntegerAttr>(pair[0]) ||
          !isa<IntegerAttr>(pair[1]))
        return fail("expected `stage_layers` as [first, end) pairs");
      info.stageLayers.push_back({cast<IntegerAttr>(pair[0]).getInt(),
                                  cast<IntegerAttr>(pair[1]).getInt()});
    }
    if (!info.stageLayers.empty() &&
        static_cast<int64_t>(info.stageLayers.size()) != info.stages)
      return fail("expected one `stage_layers` range per stage");
  }
  return std::optional<PipelineInfo>(info);
}

std::optional<int64_t> mlir::loom::dist::getOpStage(Operation *op) {
  if (auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName))
    return stage.getInt();
  return std::nullopt;
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
