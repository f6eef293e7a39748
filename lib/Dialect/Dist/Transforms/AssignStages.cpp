//===- AssignStages.cpp - Pipeline stages by transformer layer ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The pipeline phase: every op of the training step gets the pipeline stage
// that runs it.
//
//   1. walk the entry's ops in order; the first op carrying a `loom.fwd` id
//      that depends on a parameter is that id's forward op. A forward op that
//      reads a parameter of a transformer layer (LayerNames.h) is in that
//      layer; any other forward op is in the layer of the forward op before it
//      (before the first layer: the embedding, ordinal -1). Layers are numbered
//      in order of appearance (ordinals), so an encoder's and a decoder's
//      layers count on from each other;
//   2. split the ordinals into contiguous chunk ranges (one chunk per stage,
//      or S · V under interleaved 1F1B): the user's counts, else the
//      search's `dist.pipeline`, else an even split;
//   3. tag every op with an id and operands with its id's stage (chunk c
//      runs on stage c mod S; with V > 1 the op also gets `dist.chunk` =
//      c / S); write `dist.pipeline`.
//
// Chunks rise monotonically along the forward, so activations only flow to
// the next chunks and gradients back: the schedule cannot deadlock.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/Transforms/LayerNames.h"
#include "loom/Support/Flags.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kLayoutAttrName;
using ::mlir::loom::kParamAttrName;

namespace mlir::loom::dist {
#define GEN_PASS_DEF_ASSIGNSTAGESPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

struct AssignStagesPass
    : public dist::impl::AssignStagesPassBase<AssignStagesPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// Step 1: the layer ordinal of each `loom.fwd` id (-1: before the first
/// layer), and the number of layers.
std::pair<std::map<int64_t, int64_t>, int64_t>
getLayerOrdinals(func::FuncOp entry) {
  std::map<int64_t, int64_t> ordinalOf;
  std::map<std::string, int64_t> layers;
  int64_t current = -1;
  // Ops that depend on no parameter (the micro-batch slices of the batch,
  // label counts) are not a forward op's clone: they take their id's stage.
  llvm::DenseSet<Value> dependsOnParams;
  for (BlockArgument arg : entry.getArguments())
    if (entry.getArgAttr(arg.getArgNumber(), kParamAttrName))
      dependsOnParams.insert(arg);
  for (Operation &op : entry.getBody().front()) {
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return dependsOnParams.contains(v); }))
      continue;
    dependsOnParams.insert(op.result_begin(), op.result_end());
    auto id = op.getAttrOfType<IntegerAttr>(kFwdAttrName);
    if (!id || ordinalOf.count(id.getInt()))
      continue;
    for (Value operand : op.getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != &entry.getBody().front())
        continue;
      auto param =
          entry.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
      if (!param)
        continue;
      if (std::optional<LayerName> layer = parseLayerName(param.getName())) {
        auto [it, inserted] =
            layers.try_emplace(layer->key, static_cast<int64_t>(layers.size()));
        // A layer's ordinal never goes back: a later op reading an earlier
        // layer's parameter stays where the forward is.
        current = std::max(current, it->second);
        break;
      }
    }
    ordinalOf[id.getInt()] = current;
  }
  return {ordinalOf, static_cast<int64_t>(layers.size())};
}

} // namespace

void AssignStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  FailureOr<std::optional<PipelineInfo>> existing = getPipelineInfo(module);
  if (failed(existing))
    return signalPassFailure();

  // A negative count used to mean "the module's" like 0.
  if (auto error =
          ::loom::support::checkAtLeast("dist-assign-stages: stages", stages, 0,
                                        "0: the module's dist.pipeline")) {
    module.emitError() << *error;
    return signalPassFailure();
  }
  // The user's stage count wins over a searched plan's.
  PipelineInfo info;
  if (*existing)
    info = **existing;
  if (virtualStages > 0) {
    if (*existing && (*existing)->virtualStages != virtualStages) {
      info.stageLayers.clear();
      info.predicted = nullptr;
    }
    info.virtualStages = virtualStages;
  }
  if (stages > 0) {
    if (*existing && (*existing)->stages != stages) {
      // The searched split and its prediction were for another count.
      info.stageLayers.clear();
      info.predicted = nullptr;
    }
    info.stages = stages;
  }
  if (!schedule.empty()) {
    auto kind = ::loom::pipeline::parseScheduleKind(schedule.getValue());
    if (!kind) {
      module.emitError("dist-assign-stages: unknown schedule '")
          << schedule << "', expected gpipe, 1f1b or interleaved-1f1b";
      return signalPassFailure();
    }
    info.schedule = *kind;
  } else if (info.virtualStages > 1) {
    info.schedule = ::loom::pipeline::ScheduleKind::Interleaved1F1B;
  }
  int64_t numChunks = info.stages * info.virtualStages;
  if (info.stages <= 1 && !*existing)
    return;

  auto entry = module.lookupSymbol<func::FuncOp>(entryName);
  if (!entry || entry.isExternal()) {
    module.emitError("dist-assign-stages: no function @")
        << entryName << " with a body";
    return signalPassFailure();
  }

  // Stages are assigned to the global program, before layouts: the
  // partition phase must see them (its reshards and collectives take their
  // producers' stages, and the scheduler its units).
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    if (entry.getArgAttr(i, kLayoutAttrName)) {
      module.emitError("dist-assign-stages: @")
          << entryName
          << " already has layouts; assign stages before the partition "
             "phase (the pipeline phase comes first)";
      return signalPassFailure();
    }

  // Step 1.
  auto [ordinalOf, numLayers] = getLayerOrdinals(entry);
  if (numChunks > numLayers) {
    InFlightDiagnostic diag =
        module.emitError("dist-assign-stages: cannot split ");
    diag << numLayers << " transformer layer(s) into " << info.stages
         << " pipeline stages";
    if (info.virtualStages > 1)
      diag << " of " << info.virtualStages << " chunks each (" << numChunks
           << " chunks)";
    diag << ": every " << (info.virtualStages > 1 ? "chunk" : "stage")
         << " needs at least one layer (layers "
            "are recognized by parameter names with a numeric component, "
            "e.g. `h.3.attn.weight`)";
    return signalPassFailure();
  }

  // Step 2.
  if (!stageLayers.empty()) {
    SmallVector<StringRef> parts;
    StringRef(stageLayers).split(parts, ',');
    std::vector<LayerRange> ranges;
    int64_t first = 0;
    for (StringRef part : parts) {
      int64_t count;
      if (part.trim().getAsInteger(10, count) || count < 1) {
        module.emitError("dist-assign-stages: stage-layers: expected a "
                         "comma list of positive layer counts, found '")
            << stageLayers << "'";
        return signalPassFailure();
      }
      ranges.push_back({first, first + count});
      first += count;
    }
    if (static_cast<int64_t>(ranges.size()) != numChunks ||
        first != numLayers) {
      module.emitError("dist-assign-stages: stage-layers '")
          << stageLayers << "' gives " << ranges.size() << " "
          << (info.virtualStages > 1 ? "chunk" : "stage") << "(s) of " << first
          << " layer(s), expected " << numChunks << " "
          << (info.virtualStages > 1 ? "chunk" : "stage") << "(s) of "
          << numLayers << " layer(s)";
      return signalPassFailure();
    }
    info.stageLayers = ranges;
  }
  if (info.stageLayers.empty()) {
    int64_t first = 0;
    for (int64_t s = 0; s < numChunks; ++s) {
      int64_t count = numLayers / numChunks + (s < numLayers % numChunks);
      info.stageLayers.push_back({first, first + count});
      first += count;
    }
  }
  // A plan from elsewhere must still cover every layer exactly once.
  int64_t expectedFirst = 0;
  for (auto [first, end] : info.stageLayers) {
    if (first != expectedFirst || end <= first) {
      module.emitError("dist-assign-stages: stage layer ranges must be "
                       "contiguous, non-empty and start at 0");
      return signalPassFailure();
    }
    expectedFirst = end;
  }
  if (expectedFirst != numLayers) {
    module.emitError("dist-assign-stages: the stages hold ")
        << expectedFirst << " layer(s), the model has " << numLayers;
    return signalPassFailure();
  }
  if (static_cast<int64_t>(info.stageLayers.size()) != numChunks) {
    module.emitError("dist-assign-stages: the plan has ")
        << info.stageLayers.size() << " layer range(s), expected " << numChunks;
    return signalPassFailure();
  }
  auto chunkOfOrdinal = [&](int64_t ordinal) -> int64_t {
    for (auto [c, range] : llvm::enumerate(info.stageLayers))
      if (ordinal < range.end)
        return static_cast<int64_t>(c);
    return numChunks - 1;
  };

  // The micro-batches autodiff made.
  int64_t microBatches = 1;
  entry.walk([&](Operation *op) {
    if (auto m = op->getAttrOfType<IntegerAttr>(kMicroBatchAttrName))
      microBatches = std::max(microBatches, m.getInt() + 1);
  });
  info.microBatches = microBatches;
  if (std::optional<std::string> error = ::loom::pipeline::checkSchedule(
          info.schedule, info.stages, microBatches, info.virtualStages)) {
    module.emitError("dist-assign-stages: ") << *error;
    return signalPassFailure();
  }

  // Step 3.
  Builder b(context);
  for (Operation &op : entry.getBody().front()) {
    auto id = op.getAttrOfType<IntegerAttr>(kFwdAttrName);
    if (!id || op.getNumOperands() == 0)
      continue;
    auto it = ordinalOf.find(id.getInt());
    int64_t ordinal = it == ordinalOf.end() ? -1 : it->second;
    int64_t chunk = chunkOfOrdinal(ordinal);
    op.setAttr(kStageAttrName, b.getI64IntegerAttr(chunk % info.stages));
    if (info.virtualStages > 1)
      op.setAttr(kChunkAttrName, b.getI64IntegerAttr(chunk / info.stages));
  }
  module->setAttr(kPipelineAttrName, info.toAttr(context));

  std::string ranges;
  for (auto [s, range] : llvm::enumerate(info.stageLayers))
    ranges += (s ? ", " : "") + std::string("[") +
              std::to_string(range.first) + ", " +
              std::to_string(range.end) + ")";
  mlir::emitRemark(entry.getLoc(), "pipeline: ")
      << info.stages << " stages"
      << (info.virtualStages > 1
              ? " of " + std::to_string(info.virtualStages) + " chunks"
              : std::string())
      << " over " << numLayers << " layers " << ranges << ", " << microBatches
      << " micro-batch(es), "
      << ::loom::pipeline::getScheduleKindName(info.schedule);
}
