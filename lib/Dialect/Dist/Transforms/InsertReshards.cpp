//===- InsertReshards.cpp - dist-insert-reshards --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Layout assignment, as a pass:
//
//   1. read the strategy file and the parallel config into a ShardingSpec;
//   2. run the layout-assignment engine (LayoutAssignment.cpp): strategies
//      in, a layout on every value, a dist.reshard wherever a user needs a
//      layout its producer does not give;
//   3. with `devices`, check the mesh's device count against it;
//   4. with `plan-json`, write the plan (PlanJSON.cpp) to that file.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Dist/Transforms/LayoutAssignment.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Dist/Transforms/PlanJSON.h"
#include "loom/Support/Flags.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

using ::mlir::loom::kPlanAttrName;

namespace mlir::loom::dist {
#define GEN_PASS_DEF_INSERTRESHARDSPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom::dist;

namespace {
struct InsertReshardsPass
    : mlir::loom::dist::impl::InsertReshardsPassBase<InsertReshardsPass> {
  using InsertReshardsPassBase::InsertReshardsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    LayoutAssignmentOptions options;
    options.entry = entryName;
    options.mesh = meshSpec;
    std::string error =
        loadShardingSpec(strategyFile, parallelConfig, options.spec);
    if (!error.empty()) {
      module.emitError() << error;
      return signalPassFailure();
    }
    // The search's ZeRO choice, unless the user set one.
    if (auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName))
      if (options.spec.optimizerShard == 0)
        options.spec.optimizerShard = plan.getZero();
    options.reuseChoices = reuseChoices;
    options.gatherPerLayer = gatherPerLayer;
    int64_t reused = 0;
    options.reusedChoices = &reused;
    LogicalResult assigned = assignLayouts(module, options);
    numReusedChoices += reused;
    if (failed(assigned) || failed(checkDevices()))
      return signalPassFailure();
    if (planJson.empty())
      return;
    std::string message;
    auto file = openOutputFile(planJson, &message);
    if (!file) {
      module.emitError() << "cannot write plan `" << planJson
                         << "`: " << message;
      return signalPassFailure();
    }
    if (failed(writePlanJSON(module, file->os())))
      return signalPassFailure();
    file->keep();
  }

  /// With `devices`, checks the mesh the assignment settled on: its device
  /// count times the pipeline stages must be the devices given, before any
  /// communication is planned for the wrong cluster.
  LogicalResult checkDevices() {
    // A negative count used to mean "not checked" like 0.
    if (auto error = ::loom::support::checkAtLeast("devices", devices, 0,
                                                   "0: not checked"))
      return getOperation().emitError() << *error;
    if (devices == 0)
      return success();
    ModuleOp module = getOperation();
    FailureOr<std::optional<PipelineInfo>> pipeline = getPipelineInfo(module);
    if (failed(pipeline))
      return failure();
    int64_t stages = *pipeline ? (*pipeline)->stages : 1;
    for (auto meshOp : module.getOps<MeshOp>()) {
      ValueOrError<Mesh> mesh = meshOp.getMesh();
      if (!mesh)
        return meshOp.emitError(mesh.error());
      if (mesh->getNumDevices() * stages == devices)
        continue;
      std::string product;
      for (const Mesh::Axis &axis : mesh->getAxes())
        product += (product.empty() ? "" : " x ") + axis.name + "=" +
                   std::to_string(axis.size);
      InFlightDiagnostic diag = emitError(UnknownLoc::get(&getContext()));
      diag << "--devices " << devices.getValue()
           << " does not equal the number of devices of mesh @"
           << meshOp.getSymName() << " (" << product << " = "
           << mesh->getNumDevices() << ")";
      if (stages > 1)
        diag << " times its " << stages << " pipeline stages";
      return diag;
    }
    return success();
  }
};
} // namespace
