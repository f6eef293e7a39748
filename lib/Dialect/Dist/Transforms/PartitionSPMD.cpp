//===- PartitionSPMD.cpp - dist-partition-spmd ----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites a global program, whose values all have layouts (after
// dist-insert-reshards and dist-lower-reshards), into the program every rank
// runs on its blocks. For each function that carries layouts:
//
//   1. analyze, on the global types, before anything changes: each argument's
//      and result's `dist.layout`, each op's sharding rule and the layouts
//      its `dist.strategy` gives (deriveOpLayouts), and the layout on each
//      `builtin.unrealized_conversion_cast`; the micro-batch copies of an op
//      (the same name, types and attributes but `loom.micro_batch`) share
//      one analysis;
//   2. give each block argument its local type;
//   3. walk the ops in order, so that an op's operands are local when it is
//      reached, tracking the layout of every value:
//      - a cast whose input has a known layout starts a reshard chain
//        (global -> local): the input is already local; check its type and
//        layout, and fold the cast;
//      - a cast whose input is a collective's result ends a chain (local ->
//        global): the global value is now that local value, under the
//        cast's layout; check the type and fold the cast;
//      - `arith.constant`: replicated, unchanged;
//      - an op with a strategy: check that every operand has the layout the
//        strategy requires (a missing reshard otherwise), drop the strategy,
//        and apply its PartitionableOpInterface rewrite (by default: take
//        the local result types);
//      - `func.return`: check the results' layouts against the function's;
//   4. set the function type to the local types and run the verifier, which
//      reports any op whose attributes still encode global sizes.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"

#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.h"
#include "loom/Interfaces/ShardingRuleOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

#include <map>
#include <memory>
#include <optional>
#include <tuple>

#define DEBUG_TYPE "dist-partition-spmd"

namespace mlir::loom::dist {
#define GEN_PASS_DEF_PARTITIONSPMDPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

/// A resolved `dist.mesh`.
struct MeshInfo {
  MeshOp op;
  Mesh mesh;
};

/// What the pass knows about an op with a strategy, from its global types.
struct StrategyInfo {
  const MeshInfo *mesh;
  OpShardingRule rule;
  FactorAxes factorAxes;
  OpLayouts layouts;
  SmallVector<RankedTensorType> operandTypes;
  SmallVector<RankedTensorType> resultTypes;
};

/// Partitions one function.
class FunctionPartitioner {
public:
  FunctionPartitioner(func::FuncOp func, SymbolTableCollection &symbols,
                      std::map<std::string, MeshInfo> &meshes)
      : func(func), symbols(symbols), meshes(meshes) {}

  LogicalResult run();

private:
  LogicalResult analyze();
  LogicalResult analyzeStrategy(Operation *op, StrategyAttr strategy);
  LogicalResult analyzeCast(UnrealizedConversionCastOp cast);
  const MeshInfo *resolveMesh(Operation *from, FlatSymbolRefAttr name);
  FailureOr<Layout> readLayout(Operation *at, Attribute attr,
                               const MeshInfo *&mesh, const Twine &what);

  LogicalResult rewriteCast(UnrealizedConversionCastOp cast);
  LogicalResult rewriteStrategyOp(Operation *op);
  LogicalResult checkReturn(func::ReturnOp ret);
  LogicalResult checkOperand(Operation *op, Value value,
                             RankedTensorType localType, const Layout &layout,
                             const Twine &what);

  func::FuncOp func;
  SymbolTableCollection &symbols;
  std::map<std::string, MeshInfo> &meshes;

  SmallVector<RankedTensorType> argLocalTypes;
  SmallVector<Layout> argLayouts;
  SmallVector<RankedTensorType> resultLocalTypes;
  SmallVector<Layout> resultLayouts;
  /// Each op with a strategy, and its analysis.
  DenseMap<Operation *, const StrategyInfo *> strategies;
  /// What an analysis reads: the op's name, its attributes but
  /// `loom.micro_batch` (sharding rules read neither the index nor
  /// anything outside the op) and its operand and result types. A step
  /// split into M micro-batches has M copies of each op (GPT-3 175B with
  /// M = 48: 337,489 ops with strategies), and each key is analyzed once.
  using AnalysisKey = std::tuple<OperationName, DictionaryAttr, FunctionType>;
  DenseMap<AnalysisKey, const StrategyInfo *> analysesByKey;
  std::vector<std::unique_ptr<StrategyInfo>> analyses;
  /// The layout on each cast dist-lower-reshards left, and its mesh.
  DenseMap<Operation *, std::pair<Layout, const MeshInfo *>> casts;
  /// The layout of every value whose layout is known (arguments, op results,
  /// folded casts, constants).
  DenseMap<Value, Layout> valueLayouts;
};

} // namespace

/// Prints a layout for a diagnostic as its attribute body.
static std::string printLayout(const Layout &layout) {
  return "<" + layout.toString() + ">";
}

const MeshInfo *FunctionPartitioner::resolveMesh(Operation *from,
                                                 FlatSymbolRefAttr name) {
  auto it = meshes.find(name.getValue().str());
  if (it != meshes.end())
    return &it->second;
  auto meshOp = symbols.lookupNearestSymbolFrom<MeshOp>(from, name);
  if (!meshOp) {
    from->emitOpError() << "names mesh " << name
                        << ", which is not a `dist.mesh` of the module";
    return nullptr;
  }
  auto mesh = meshOp.getMesh();
  if (!mesh) {
    meshOp.emitOpError() << mesh.error();
    return nullptr;
  }
  return &meshes.emplace(name.getValue().str(), MeshInfo{meshOp, *mesh})
              .first->second;
}

FailureOr<Layout> FunctionPartitioner::readLayout(Operation *at, Attribute attr,
                                                  const MeshInfo *&mesh,
                                                  const Twine &what) {
  auto layoutAttr = dyn_cast_or_null<LayoutAttr>(attr);
  if (!layoutAttr)
    return at->emitOpError() << what << " has no `" << kLayoutAttrName
                             << "` #dist.layout attribute";
  mesh = resolveMesh(at, layoutAttr.getMesh());
  if (!mesh)
    return failure();
  auto layout = layoutAttr.toLayout(mesh->mesh);
  if (!layout)
    return at->emitOpError() << what << ": " << layout.error();
  return *layout;
}

//===----------------------------------------------------------------------===//
// 1. Analysis on global types
//===----------------------------------------------------------------------===//

LogicalResult FunctionPartitioner::analyzeStrategy(Operation *op,
                                                   StrategyAttr strategy) {
  auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
  if (!ruleOp)
    return op->emitOpError()
           << "has a `" << kStrategyAttrName << "` but no sharding rule";
  NamedAttrList attributes(op->getAttrDictionary());
  attributes.erase(kMicroBatchAttrName);
  AnalysisKey key{op->getName(), attributes.getDictionary(op->getContext()),
                  FunctionType::get(op->getContext(), op->getOperandTypes(),
                                    op->getResultTypes())};
  if (const StrategyInfo *shared = analysesByKey.lookup(key)) {
    strategies.try_emplace(op, shared);
    return success();
  }
  auto owned = std::make_unique<StrategyInfo>();
  StrategyInfo &info = *owned;
  for (Type type : op->getOperandTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return op->emitOpError() << "operand of type " << type
                               << " cannot be partitioned (expected a "
                                  "statically shaped tensor)";
    info.operandTypes.push_back(tensor);
  }
  for (Type type : op->getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return op->emitOpError() << "result of type " << type
                               << " cannot be partitioned (expected a "
                                  "statically shaped tensor)";
    info.resultTypes.push_back(tensor);
  }
  info.mesh = resolveMesh(op, strategy.getMesh());
  if (!info.mesh)
    return failure();
  info.rule = ruleOp.getShardingRule();
  info.factorAxes = strategy.getAllFactorAxes();
  // A strategy with `partial` axes keeps pending sums: the op runs on each
  // device's summand, so it needs nothing beyond the layouts derived here.
  auto layouts = deriveOpLayouts(info.rule, info.mesh->mesh, info.factorAxes,
                                 strategy.getPartialAxes());
  if (!layouts)
    return op->emitOpError()
           << "`" << kStrategyAttrName << "`: " << layouts.error();
  info.layouts = *layouts;
  // Every operand and result must divide under its layout.
  for (auto [index, type] : llvm::enumerate(info.operandTypes))
    if (auto local = getLocalTensorType(type, info.layouts.operands[index],
                                        info.mesh->mesh);
        !local)
      return op->emitOpError() << "operand #" << index << ": " << local.error();
  for (auto [index, type] : llvm::enumerate(info.resultTypes))
    if (auto local = getLocalTensorType(type, info.layouts.results[index],
                                        info.mesh->mesh);
        !local)
      return op->emitOpError() << "result #" << index << ": " << local.error();
  analysesByKey.try_emplace(key, owned.get());
  strategies.try_emplace(op, owned.get());
  analyses.push_back(std::move(owned));
  return success();
}

LogicalResult
FunctionPartitioner::analyzeCast(UnrealizedConversionCastOp cast) {
  if (cast->getNumOperands() != 1 || cast->getNumResults() != 1)
    return cast.emitOpError("of a lowered reshard must have one operand and "
                            "one result");
  auto in = dyn_cast<RankedTensorType>(cast.getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(cast.getResult(0).getType());
  if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape())
    return cast.emitOpError("of a lowered reshard must cast between "
                            "statically shaped tensors");
  const MeshInfo *mesh = nullptr;
  auto layout = readLayout(cast, cast->getAttr(kLayoutAttrName), mesh,
                           "cast of a lowered reshard");
  if (failed(layout))
    return failure();
  casts.try_emplace(cast, *layout, mesh);
  return success();
}

LogicalResult FunctionPartitioner::analyze() {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("has several blocks; dist-partition-spmd "
                            "partitions straight-line functions");

  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    const MeshInfo *mesh = nullptr;
    std::string what = "argument #" + std::to_string(i);
    auto layout =
        readLayout(func, func.getArgAttr(i, kLayoutAttrName), mesh, what);
    if (failed(layout))
      return failure();
    auto type = dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
    if (!type || !type.hasStaticShape())
      return func.emitOpError()
             << what << " has type " << func.getArgumentTypes()[i]
             << ", expected a statically shaped tensor";
    auto local = getLocalTensorType(type, *layout, mesh->mesh);
    if (!local)
      return func.emitOpError() << what << ": " << local.error();
    argLayouts.push_back(*layout);
    argLocalTypes.push_back(*local);
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    const MeshInfo *mesh = nullptr;
    std::string what = "result #" + std::to_string(i);
    auto layout =
        readLayout(func, func.getResultAttr(i, kLayoutAttrName), mesh, what);
    if (failed(layout))
      return failure();
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
    if (!type || !type.hasStaticShape())
      return func.emitOpError()
             << what << " has type " << func.getResultTypes()[i]
             << ", expected a statically shaped tensor";
    auto local = getLocalTensorType(type, *layout, mesh->mesh);
    if (!local)
      return func.emitOpError() << what << ": " << local.error();
    resultLayouts.push_back(*layout);
    resultLocalTypes.push_back(*local);
  }

  for (Operation &op : func.getBody().front()) {
    if (auto strategy = op.getAttrOfType<StrategyAttr>(kStrategyAttrName)) {
      if (failed(analyzeStrategy(&op, strategy)))
        return failure();
      continue;
    }
    if (op.hasAttr(kStrategyAttrName))
      return op.emitOpError() << "`" << kStrategyAttrName
                              << "` must be a #dist.strategy attribute";
    if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op)) {
      if (failed(analyzeCast(cast)))
        return failure();
      continue;
    }
    if (isa<ReshardOp>(op))
      return op.emitOpError("must be lowered to collectives before "
                            "partitioning (run -dist-lower-reshards)");
    if (isa<AnnotateOp>(op))
      return op.emitOpError("must be resolved before partitioning (run "
                            "-dist-insert-reshards)");
    if (isa<arith::ConstantOp, func::ReturnOp>(op) ||
        op.getDialect() == func->getContext()->getLoadedDialect<DistDialect>())
      continue;
    if (op.getName().getDialectNamespace() == "loom")
      return op.emitOpError() << "has no `" << kStrategyAttrName
                              << "` (run -dist-insert-reshards first)";
    return op.emitOpError("is not supported by dist-partition-spmd (expected "
                          "loom, dist, arith.constant and func.return ops)");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// 3. The walk
//===----------------------------------------------------------------------===//

LogicalResult FunctionPartitioner::checkOperand(Operation *op, Value value,
                                                RankedTensorType localType,
                                                const Layout &layout,
                                                const Twine &what) {
  auto known = valueLayouts.find(value);
  if (known != valueLayouts.end() && known->second != layout)
    return op->emitOpError()
           << what << " has layout " << printLayout(known->second)
           << " but needs " << printLayout(layout) << " (a reshard is missing)";
  if (value.getType() != localType)
    return op->emitOpError()
           << what << " has local type " << value.getType() << " but needs "
           << localType << " under " << printLayout(layout);
  return success();
}

LogicalResult
FunctionPartitioner::rewriteCast(UnrealizedConversionCastOp cast) {
  const auto &[layout, mesh] = casts.find(cast)->second;
  Value input = cast.getOperand(0);
  Value result = cast.getResult(0);
  auto resultType = llvm::cast<RankedTensorType>(result.getType());
  if (valueLayouts.count(input)) {
    // Global -> local, the start of a reshard's chain: the input is a global
    // value, partitioned already, so it is the local value the chain starts
    // from.
    if (failed(checkOperand(cast, input, resultType, layout, "input")))
      return failure();
  } else {
    // Local -> global, the end of a chain: its last collective holds the
    // blocks of `layout`.
    auto local = getLocalTensorType(resultType, layout, mesh->mesh);
    if (!local)
      return cast.emitOpError() << "result: " << local.error();
    if (input.getType() != *local)
      return cast.emitOpError()
             << "input has type " << input.getType()
             << " but the local type of " << resultType << " under "
             << printLayout(layout) << " is " << *local;
    valueLayouts.insert_or_assign(input, layout);
  }
  result.replaceAllUsesWith(input);
  cast.erase();
  return success();
}

/// Gives each op between `before` and `after` (exclusive; null: the block's
/// ends) the discardable attributes of the op it was rewritten from that it
/// does not set itself. They say which micro-batch, pass (forward or
/// backward), stage and chunk the work belongs to: dist-partition-stages
/// orders each stage's ops by them, so an op that lost them would run at
/// the end of the step and keep its operands (a loss's logits, one per
/// micro-batch) alive until then.
static void inheritAttribution(Operation *before, Operation *after,
                               ArrayRef<NamedAttribute> attribution) {
  if (attribution.empty())
    return;
  Block *block = before ? before->getBlock() : after->getBlock();
  auto it = before ? std::next(before->getIterator()) : block->begin();
  auto end = after ? after->getIterator() : block->end();
  for (; it != end; ++it)
    for (NamedAttribute attr : attribution)
      if (!it->hasAttr(attr.getName()))
        it->setAttr(attr.getName(), attr.getValue());
}

LogicalResult FunctionPartitioner::rewriteStrategyOp(Operation *op) {
  const StrategyInfo &info = *strategies.find(op)->second;
  const Mesh &mesh = info.mesh->mesh;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    auto local = getLocalTensorType(info.operandTypes[index],
                                    info.layouts.operands[index], mesh);
    if (failed(checkOperand(op, operand, *local, info.layouts.operands[index],
                            "operand #" + Twine(index))))
      return failure();
  }
  op->removeAttr(kStrategyAttrName);

  // A rewrite may replace the op: find its results again through their uses.
  SmallVector<SmallVector<std::pair<Operation *, unsigned>>> uses;
  for (Value result : op->getResults()) {
    auto &list = uses.emplace_back();
    for (OpOperand &use : result.getUses())
      list.push_back({use.getOwner(), use.getOperandNumber()});
  }
  SmallVector<RankedTensorType> localResults;
  for (auto [index, type] : llvm::enumerate(info.resultTypes))
    localResults.push_back(
        *getLocalTensorType(type, info.layouts.results[index], mesh));
  Location loc = op->getLoc();
  StringRef name = op->getName().getStringRef();

  OpPartitionContext context{info.mesh->op,   mesh,         info.rule,
                             info.factorAxes, info.layouts, info.operandTypes,
                             info.resultTypes};
  LLVM_DEBUG(llvm::dbgs() << "partitioning " << *op << "\n");
  // The ops a rewrite creates stand where `op` stood, between its neighbours.
  Operation *before = op->getPrevNode();
  Operation *after = op->getNextNode();
  SmallVector<NamedAttribute> attribution(op->getDiscardableAttrs());
  OpBuilder builder(op);
  if (failed(partitionOp(op, context, builder)))
    return failure();
  inheritAttribution(before, after, attribution);

  for (auto [index, list] : llvm::enumerate(uses))
    for (auto [user, operand] : list) {
      Value value = user->getOperand(operand);
      if (value.getType() != localResults[index])
        return emitError(loc) << "'" << name << "' op result #" << index
                              << " was partitioned to " << value.getType()
                              << ", expected " << localResults[index];
      valueLayouts.insert_or_assign(value, info.layouts.results[index]);
    }
  return success();
}

LogicalResult FunctionPartitioner::checkReturn(func::ReturnOp ret) {
  if (ret.getNumOperands() != resultLocalTypes.size())
    return ret.emitOpError("returns a different number of values than the "
                           "function declares");
  for (auto [index, operand] : llvm::enumerate(ret.getOperands()))
    if (failed(checkOperand(ret, operand, resultLocalTypes[index],
                            resultLayouts[index], "operand #" + Twine(index))))
      return failure();
  return success();
}

LogicalResult FunctionPartitioner::run() {
  if (failed(analyze()))
    return failure();

  // 2. Arguments.
  Block &body = func.getBody().front();
  for (auto [index, arg] : llvm::enumerate(body.getArguments())) {
    arg.setType(argLocalTypes[index]);
    valueLayouts.insert_or_assign(arg, argLayouts[index]);
  }

  // 3. Ops, in order; rewrites may add ops before the one they rewrite,
  // which are local already and not visited.
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op)) {
      if (failed(rewriteCast(cast)))
        return failure();
    } else if (strategies.count(op)) {
      if (failed(rewriteStrategyOp(op)))
        return failure();
    } else if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      if (auto type = dyn_cast<RankedTensorType>(constant.getType()))
        valueLayouts.insert_or_assign(constant.getResult(),
                                      Layout::getReplicated(type.getRank()));
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (failed(checkReturn(ret)))
        return failure();
    }
  }

  // 4. The function type, and the verifier.
  SmallVector<Type> inputs(argLocalTypes.begin(), argLocalTypes.end());
  SmallVector<Type> results(resultLocalTypes.begin(), resultLocalTypes.end());
  func.setFunctionType(FunctionType::get(func.getContext(), inputs, results));
  if (failed(verify(func)))
    return func.emitOpError("does not verify after partitioning (see the "
                            "errors above)");
  return success();
}

/// Whether `func` is a global program with layouts to partition.
static bool carriesLayouts(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, kLayoutAttrName))
      return true;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (func.getResultAttr(i, kLayoutAttrName))
      return true;
  bool found = false;
  func.walk([&](Operation *op) {
    if (op->hasAttr(kStrategyAttrName) ||
        (isa<UnrealizedConversionCastOp>(op) && op->hasAttr(kLayoutAttrName)))
      found = true;
  });
  return found;
}

namespace {
struct PartitionSPMDPass
    : mlir::loom::dist::impl::PartitionSPMDPassBase<PartitionSPMDPass> {
  using PartitionSPMDPassBase::PartitionSPMDPassBase;

  void runOnOperation() override {
    SymbolTableCollection symbols;
    std::map<std::string, MeshInfo> meshes;
    bool ok = true;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !carriesLayouts(func))
        continue;
      FunctionPartitioner partitioner(func, symbols, meshes);
      if (failed(partitioner.run()))
        ok = false;
    }
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
