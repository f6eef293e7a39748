//===- LowerReshards.cpp - dist-lower-reshards ----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Replaces every `dist.reshard` by the cheapest chain of collectives the
// redistribution planner finds. The IR stays global-typed around the chain:
//
//   %l0 = builtin.unrealized_conversion_cast %g : tensor<G> to
//   tensor<local(L1)>
//   ... collectives on local types ...
//   %g2 = builtin.unrealized_conversion_cast %lN : tensor<local(L2)> to
//   tensor<G>
//
// and each cast carries the `dist.layout` of its local side, which
// `dist-partition-spmd` checks when it folds the casts.
//
//   1. Collect the reshards (the walk must not see the ops it creates).
//   2. For each, resolve its mesh and layouts; a reshard whose layouts are
//      equal is replaced by its input.
//   3. Ask the planner (one per run, so identical reshards share a search)
//      for the cheapest chain; a reshard with no chain is an error.
//   4. Build cast, chain, cast; replace the reshard's uses; under `explain`
//      emit a remark with the chain and its cost.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Analysis/Cost/ClusterCostModel.h"
#include "loom/Analysis/Layout/Redistribution.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/Transforms/CollectiveChain.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Debug.h"

using ::mlir::loom::kClusterAttrName;
using ::mlir::loom::kLayoutAttrName;

#define DEBUG_TYPE "dist-lower-reshards"

namespace mlir::loom::dist {
#define GEN_PASS_DEF_LOWERRESHARDSPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom::dist;

/// The bytes of one element of `type`, for the cost model; nullopt for
/// types without a fixed size.
static std::optional<int64_t> getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
  if (auto complex = dyn_cast<ComplexType>(type))
    if (std::optional<int64_t> part = getElementBytes(complex.getElementType()))
      return 2 * *part;
  if (auto vector = dyn_cast<VectorType>(type))
    if (vector.hasStaticShape())
      if (std::optional<int64_t> part =
              getElementBytes(vector.getElementType()))
        return vector.getNumElements() * *part;
  // Types of other dialects may have no size the pass can know.
  return std::nullopt;
}

/// The steps of `plan`, one per line, for remarks.
static std::string describeChain(const RedistributionPlan &plan) {
  std::string result;
  for (const RedistributionStep &step : plan.steps)
    result += "\n  " + step.toString();
  return result;
}

/// Lowers one reshard (steps 2 to 4 of the file comment).
static LogicalResult lowerReshard(ReshardOp reshard,
                                  RedistributionPlanner &planner,
                                  SymbolTableCollection &symbolTables,
                                  bool explain) {
  FailureOr<Mesh> mesh =
      lookupMesh(reshard, reshard.getFrom().getMesh(), symbolTables);
  if (failed(mesh))
    return failure();
  ValueOrError<Layout> from = reshard.getFrom().toLayout(*mesh);
  if (!from)
    return reshard.emitOpError("source layout: ") << from.error();
  ValueOrError<Layout> to = reshard.getTo().toLayout(*mesh);
  if (!to)
    return reshard.emitOpError("destination layout: ") << to.error();

  auto globalType = cast<RankedTensorType>(reshard.getInput().getType());
  if (*from == *to) {
    if (explain)
      reshard.emitRemark("reshard from ")
          << from->toString() << " to itself folds away";
    reshard.getResult().replaceAllUsesWith(reshard.getInput());
    reshard.erase();
    return success();
  }

  std::optional<int64_t> elementBytes =
      getElementBytes(globalType.getElementType());
  if (!elementBytes)
    return reshard.emitOpError("element type ")
           << globalType.getElementType()
           << " has no fixed size to price collectives with";
  std::vector<int64_t> globalShape(globalType.getShape().begin(),
                                   globalType.getShape().end());
  ValueOrError<RedistributionPlan> plan =
      planner.plan(*mesh, globalShape, *elementBytes, *from, *to);
  if (!plan)
    return reshard.emitOpError("cannot be lowered: ") << plan.error();
  LLVM_DEBUG(llvm::dbgs() << "reshard " << from->toString() << " -> "
                          << to->toString() << ":\n"
                          << plan->toString() << "\n");
  if (explain)
    reshard.emitRemark("reshard from ")
        << from->toString() << " to " << to->toString() << " costs "
        << plan->cost << " s (" << planner.getCostModel().getName()
        << " model) in " << plan->steps.size() << " collective"
        << (plan->steps.size() == 1 ? "" : "s") << ":" << describeChain(*plan);

  auto localType = [&](const Layout &layout) {
    std::vector<int64_t> shape = *layout.getLocalShape(*mesh, globalShape);
    return RankedTensorType::get(shape, globalType.getElementType(),
                                 globalType.getEncoding());
  };
  OpBuilder builder(reshard);
  Location loc = reshard.getLoc();
  auto toLocal = UnrealizedConversionCastOp::create(
      builder, loc, TypeRange{localType(*from)},
      ValueRange{reshard.getInput()});
  toLocal->setAttr(kLayoutAttrName, reshard.getFrom());
  Value local = buildCollectiveChain(builder, loc, toLocal.getResult(0), *mesh,
                                     reshard.getFrom().getMesh(), *plan);
  auto toGlobal = UnrealizedConversionCastOp::create(
      builder, loc, TypeRange{globalType}, ValueRange{local});
  toGlobal->setAttr(kLayoutAttrName, reshard.getTo());
  reshard.getResult().replaceAllUsesWith(toGlobal.getResult(0));
  reshard.erase();
  return success();
}

namespace {
struct LowerReshardsPass
    : mlir::loom::dist::impl::LowerReshardsPassBase<LowerReshardsPass> {
  using LowerReshardsPassBase::LowerReshardsPassBase;

  /// The planner prices steps with the cluster the search planned for when
  /// the module records one (`dist.cluster`, the spec as JSON), so lowering
  /// picks the chains the search priced; else with the default α–β model.
  FailureOr<std::shared_ptr<const RedistributionCostModel>> getCostModel() {
    ModuleOp module = getOperation();
    auto clusterAttr = module->getAttrOfType<StringAttr>(kClusterAttrName);
    if (!clusterAttr)
      return std::shared_ptr<const RedistributionCostModel>(
          std::make_shared<AlphaBetaCostModel>());
    auto meshOps = llvm::to_vector(module.getOps<MeshOp>());
    if (meshOps.size() != 1) {
      module.emitError() << kClusterAttrName << " needs exactly one dist.mesh, found "
                         << meshOps.size();
      return failure();
    }
    ValueOrError<ClusterSpec> spec =
        getParsedClusterSpec(clusterAttr.getValue(), kClusterAttrName);
    if (!spec) {
      module.emitError() << spec.error();
      return failure();
    }
    ValueOrError<Mesh> mesh = meshOps.front().getMesh();
    if (!mesh) {
      meshOps.front().emitOpError() << mesh.error();
      return failure();
    }
    ValueOrError<ClusterCostModel> model = ClusterCostModel::get(*spec, *mesh);
    if (!model) {
      module.emitError() << kClusterAttrName << ": " << model.error();
      return failure();
    }
    return std::shared_ptr<const RedistributionCostModel>(
        std::make_shared<ClusterCostModel>(*model));
  }

  void runOnOperation() override {
    SmallVector<ReshardOp> reshards;
    getOperation().walk([&](ReshardOp op) { reshards.push_back(op); });
    FailureOr<std::shared_ptr<const RedistributionCostModel>> costModel =
        getCostModel();
    if (failed(costModel))
      return signalPassFailure();
    RedistributionPlanner planner(*costModel);
    SymbolTableCollection symbolTables;
    bool failedAny = false;
    for (ReshardOp reshard : reshards)
      if (failed(lowerReshard(reshard, planner, symbolTables, explain)))
        failedAny = true;
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
