//===- FixedStrategies.cpp - User strategies resolved into fixed factors --===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Resolves what the user fixed into fixed factors per forward op, for both
// layout assignment (dist-insert-reshards) and the strategy search
// (dist-search-strategy), so the two read user constraints identically:
//
// 1. Find the forward op of each `loom.fwd` id: the first op carrying it.
//    Backward and optimizer ops are never matched (they follow).
// 2. A `dist.strategy` attribute fixes every factor of its op.
// 3. Each op entry of the spec (strategy file, expanded parallel config)
//    selects the forward ops consuming an argument whose name matches its
//    glob; its per-dim splits are resolved through the op's sharding rule
//    into factor axes (a compound dim's axes go to its factors major
//    first). A factor two entries or two dims set differently is an error;
//    an entry of a strategy file that matches no op is an error.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/FixedStrategies.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Analysis/Strategy/OpLayouts.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interfaces/ShardingRuleOpInterface.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/GlobPattern.h"

#include <set>

using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;
using ::mlir::loom::kStrategyAttrName;

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

/// Whether `op` has the role a parallel-config entry selects: the one place
/// that maps ShardingSpec's op roles to ops.
static bool hasRole(Operation *op, OpRole opRole) {
  switch (opRole) {
  case OpRole::Any:
    return true;
  case OpRole::Attention:
    return isa<AttentionOp>(op);
  case OpRole::Matmul:
    return isa<MatmulOp>(op);
  case OpRole::Embedding:
    return isa<EmbeddingOp>(op);
  case OpRole::LayerNorm:
    return isa<LayerNormOp>(op);
  case OpRole::RmsNorm:
    return isa<RmsNormOp>(op);
  case OpRole::Add:
    return isa<AddOp>(op);
  }
  llvm_unreachable("unknown op role");
}

/// The op kind an entry selects, as messages name it: a strategy file's
/// `op`, or the name of the op of a parallel-config entry's role.
static StringRef getEntryKind(const OpEntry &entry) {
  if (!entry.opKind.empty())
    return entry.opKind;
  switch (entry.opRole) {
  case OpRole::Any:
    return "";
  case OpRole::Attention:
    return AttentionOp::getOperationName();
  case OpRole::Matmul:
    return MatmulOp::getOperationName();
  case OpRole::Embedding:
    return EmbeddingOp::getOperationName();
  case OpRole::LayerNorm:
    return LayerNormOp::getOperationName();
  case OpRole::RmsNorm:
    return RmsNormOp::getOperationName();
  case OpRole::Add:
    return AddOp::getOperationName();
  }
  llvm_unreachable("unknown op role");
}

/// `["dp", "tp"]`, for messages.
static std::string printAxes(const Layout::AxisList &axes) {
  std::string text = "[";
  for (auto [i, axis] : llvm::enumerate(axes))
    text += (i ? ", \"" : "\"") + axis + "\"";
  return text + "]";
}

static std::vector<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape().vec();
}

std::string mlir::loom::dist::getArgumentName(func::FuncOp func,
                                              unsigned index) {
  if (auto param = func.getArgAttrOfType<ParamAttr>(index, kParamAttrName))
    return param.getName().str();
  if (auto name = func.getArgAttrOfType<StringAttr>(index, kNameAttrName))
    return name.str();
  if (auto role = func.getArgAttrOfType<InputRoleAttr>(index, kInputAttrName))
    return stringifyInputRole(role.getValue()).str();
  return "";
}

llvm::DenseMap<int64_t, Operation *>
mlir::loom::dist::findForwardOps(Block &body) {
  llvm::DenseMap<int64_t, Operation *> forwardOps;
  for (Operation &op : body)
    if (auto id = op.getAttrOfType<IntegerAttr>(kFwdAttrName))
      forwardOps.try_emplace(id.getInt(), &op);
  return forwardOps;
}

/// Whether `op` is a copy of the forward op `original` in a later
/// micro-batch of a split step (loom-slice-micro-batches): the same op on
/// operands and results of the same types, neither a backward op nor a
/// recomputation.
static bool isMicroBatchCopy(Operation *op, Operation *original) {
  auto microBatch = op->getAttrOfType<IntegerAttr>(kMicroBatchAttrName);
  auto originalMicroBatch =
      original->getAttrOfType<IntegerAttr>(kMicroBatchAttrName);
  if (!microBatch || !originalMicroBatch ||
      microBatch.getInt() == originalMicroBatch.getInt())
    return false;
  for (Operation *each : {op, original})
    if (each->hasAttr(kBackwardAttrName) || each->hasAttr(kRecomputeAttrName))
      return false;
  return op->getName() == original->getName() &&
         op->getOperandTypes() == original->getOperandTypes() &&
         op->getResultTypes() == original->getResultTypes();
}

namespace {
class FixedStrategyResolver {
public:
  FixedStrategyResolver(func::FuncOp func, const Mesh &mesh,
                        FlatSymbolRefAttr meshRef, const ShardingSpec &spec)
      : func(func), mesh(mesh), meshRef(meshRef), spec(spec) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      argNames.push_back(getArgumentName(func, i));
  }

  LogicalResult run();
  FixedStrategies result;

private:
  /// Gives `copy` the constraints resolved for `original`, if any.
  void copyConstraints(Operation *original, Operation *copy);
  LogicalResult applyEntry(Operation *op, const OpEntry &entry,
                           unsigned matchedOperand);
  LogicalResult fix(Operation *op, FixedFactors &fixed, int64_t factor,
                    const Layout::AxisList &axes, const std::string &origin,
                    const std::string &where);
  LogicalResult fixDim(Operation *op, const OpShardingRule &rule,
                       FixedFactors &fixed, unsigned operand, int64_t dim,
                       const Layout::AxisList &axes,
                       const std::string &origin, bool complete);

  func::FuncOp func;
  const Mesh &mesh;
  FlatSymbolRefAttr meshRef;
  const ShardingSpec &spec;
  std::vector<std::string> argNames;
};
} // namespace

LogicalResult FixedStrategyResolver::fix(Operation *op, FixedFactors &fixed,
                                  int64_t factor, const Layout::AxisList &axes,
                                  const std::string &origin,
                                  const std::string &where) {
  if (fixed[factor] && *fixed[factor] != axes)
    return op->emitOpError()
           << "contradictory strategy: " << origin << " splits " << where
           << " (factor " << char('a' + factor % 26) << ") over "
           << printAxes(axes) << ", but it is already split over "
           << printAxes(*fixed[factor]);
  fixed[factor] = axes;
  return success();
}

LogicalResult FixedStrategyResolver::fixDim(Operation *op, const OpShardingRule &rule,
                                     FixedFactors &fixed, unsigned operand,
                                     int64_t dim, const Layout::AxisList &axes,
                                     const std::string &origin,
                                     bool complete) {
  std::vector<int64_t> shape = getShape(op->getOperand(operand));
  std::string where = "dim " + std::to_string(dim) + " of operand " +
                      std::to_string(operand);
  for (const std::string &axis : axes)
    if (!mesh.findAxis(axis))
      return op->emitOpError()
             << origin << ": unknown mesh axis `" << axis << "` in " << where
             << " (mesh " << mesh.toString() << ")";
  std::set<std::string> distinct(axes.begin(), axes.end());
  if (distinct.size() != axes.size())
    return op->emitOpError() << origin << ": " << where
                             << " names a mesh axis twice: "
                             << printAxes(axes);
  int64_t blocks = mesh.getGroupSize(axes);
  if (shape[dim] % blocks != 0)
    return op->emitOpError()
           << origin << ": mesh axes " << printAxes(axes) << " (" << blocks
           << " devices) do not divide " << where << " (size " << shape[dim]
           << ")";
  ArrayRef<int64_t> dimFactors = rule.getOperandDimFactors(operand, dim);
  if (dimFactors.empty()) {
    if (!axes.empty())
      return op->emitOpError() << origin << ": " << where
                               << " is broadcast (no factor) and cannot be "
                                  "split over "
                               << printAxes(axes);
    return success();
  }
  // Major first: a factor takes axes until it is split completely.
  ArrayRef<ShardingFactor> factors = rule.getFactors();
  std::vector<Layout::AxisList> perFactor(dimFactors.size());
  size_t current = 0;
  int64_t remaining = factors[dimFactors[0]].size;
  for (const std::string &axis : axes) {
    while (remaining == 1 && current + 1 < dimFactors.size())
      remaining = factors[dimFactors[++current]].size;
    int64_t size = mesh.getAxis(*mesh.findAxis(axis)).size;
    if (remaining % size != 0)
      return op->emitOpError()
             << origin << ": " << where << " is made of several factors and "
             << printAxes(axes)
             << " does not split them major-first into whole blocks";
    remaining /= size;
    perFactor[current].push_back(axis);
  }
  for (auto [i, factor] : llvm::enumerate(dimFactors)) {
    // A sparse split (parallel config) leaves the minor factors free.
    if (!complete && perFactor[i].empty() && i > current)
      continue;
    if (failed(fix(op, fixed, factor, perFactor[i], origin, where)))
      return failure();
  }
  return success();
}

LogicalResult FixedStrategyResolver::applyEntry(Operation *op, const OpEntry &entry,
                                         unsigned matchedOperand) {
  auto ruleOp = cast<ShardingRuleOpInterface>(op);
  OpShardingRule rule = ruleOp.getShardingRule();
  FixedFactors &fixed = result.factors[op];
  fixed.resize(rule.getFactors().size());
  std::string origin =
      "strategy " + entry.origin + " (`" +
      (entry.match.empty() ? getEntryKind(entry).str() : entry.match) + "`)";
  result.origins[op].push_back(origin);

  if (entry.in) {
    if (entry.in->size() != op->getNumOperands())
      return op->emitOpError()
             << origin << " gives " << entry.in->size()
             << " operands, the op has " << op->getNumOperands();
    for (auto [operand, dims] : llvm::enumerate(*entry.in)) {
      if (!dims)
        continue;
      int64_t rank = getShape(op->getOperand(operand)).size();
      if (int64_t(dims->size()) != rank)
        return op->emitOpError()
               << origin << " gives " << dims->size() << " dims for operand "
               << operand << " of rank " << rank;
      for (auto [dim, axes] : llvm::enumerate(*dims))
        if (failed(fixDim(op, rule, fixed, operand, dim, axes, origin,
                          /*complete=*/true)))
          return failure();
    }
  }
  for (const DimSplit &split : entry.dimSplits) {
    if (split.operand >= op->getNumOperands())
      return op->emitOpError() << origin << ": no operand " << split.operand;
    int64_t rank = getShape(op->getOperand(split.operand)).size();
    int64_t dim = split.dim < 0 ? split.dim + rank : split.dim;
    if (dim < 0 || dim >= rank)
      return op->emitOpError() << origin << ": operand " << split.operand
                               << " has no dim " << split.dim;
    if (failed(fixDim(op, rule, fixed, split.operand, dim, split.axes, origin,
                      /*complete=*/false)))
      return failure();
  }
  for (const ParamSplit &split : entry.paramSplits) {
    int64_t rank = getShape(op->getOperand(matchedOperand)).size();
    if (split.kind == ParamSplit::Kind::Dim) {
      int64_t dim = split.dim < 0 ? split.dim + rank : split.dim;
      if (dim < 0 || dim >= rank)
        return op->emitOpError() << origin << ": operand " << matchedOperand
                                 << " has no dim " << split.dim;
      if (failed(fixDim(op, rule, fixed, matchedOperand, dim, split.axes,
                        origin, /*complete=*/false)))
        return failure();
      continue;
    }
    // The feature (kept) or contraction (summed) dim of a linear's weight:
    // the last dim of that kind, since a weight's batch dims come before
    // its matrix (GPT-2's fused c_attn [3, 1, out, in] keeps its q/k/v
    // dim 0 whole and splits the output features, dim 2).
    bool wantReduction = split.kind == ParamSplit::Kind::Contraction;
    std::optional<int64_t> found;
    for (int64_t dim = rank - 1; dim >= 0 && !found; --dim) {
      ArrayRef<int64_t> dimFactors =
          rule.getOperandDimFactors(matchedOperand, dim);
      if (dimFactors.size() == 1 &&
          (rule.getFactors()[dimFactors[0]].kind == FactorKind::Reduction) ==
              wantReduction)
        found = dim;
    }
    if (!found)
      return op->emitOpError()
             << origin << ": operand " << matchedOperand << " has no "
             << (wantReduction ? "contracted" : "output-feature") << " dim";
    if (failed(fixDim(op, rule, fixed, matchedOperand, *found, split.axes,
                      origin, /*complete=*/false)))
      return failure();
  }
  return success();
}

LogicalResult FixedStrategyResolver::run() {
  Block &body = func.getBody().front();
  std::vector<llvm::GlobPattern> patterns;
  for (const OpEntry &entry : spec.ops) {
    if (entry.match.empty()) {
      // Matched by kind alone; the pattern is never used.
      patterns.push_back(cantFail(llvm::GlobPattern::create("*")));
      continue;
    }
    llvm::Expected<llvm::GlobPattern> pattern =
        llvm::GlobPattern::create(entry.match);
    if (!pattern)
      return func.emitOpError()
             << "strategy " << entry.origin << ": invalid glob `"
             << entry.match << "`: " << llvm::toString(pattern.takeError());
    patterns.push_back(std::move(*pattern));
  }
  std::vector<bool> used(spec.ops.size(), false);

  for (Operation &op : body) {
    if (auto id = op.getAttrOfType<IntegerAttr>(kFwdAttrName)) {
      auto [it, inserted] = result.forwardOps.try_emplace(id.getInt(), &op);
      if (!inserted) {
        // Backward and optimizer ops follow their forward op; a later
        // micro-batch's copy of it is the same op again, so it takes the
        // same constraints (the search prices every copy as micro-batch
        // 0's, and a user's entry names the op, not one micro-batch).
        if (isMicroBatchCopy(&op, it->second))
          copyConstraints(it->second, &op);
        continue;
      }
    }
    auto ruleOp = dyn_cast<ShardingRuleOpInterface>(&op);
    if (!ruleOp)
      continue;
    if (auto attr = op.getAttrOfType<StrategyAttr>(kStrategyAttrName)) {
      OpShardingRule rule = ruleOp.getShardingRule();
      if (attr.getMesh() != meshRef)
        return op.emitOpError() << "strategy names mesh " << attr.getMesh()
                                << ", not " << meshRef;
      FactorAxes axes = attr.getAllFactorAxes();
      std::string error = verifyFactorAxes(rule, mesh, axes);
      if (error.empty())
        error = verifyPartialAxes(rule, mesh, axes, attr.getPartialAxes());
      if (!error.empty())
        return op.emitOpError() << "invalid strategy: " << error;
      FixedFactors &fixed = result.factors[&op];
      fixed.assign(axes.begin(), axes.end());
      result.partial[&op] = attr.getPartialAxes();
      result.origins[&op].push_back("its dist.strategy attribute");
    }
    for (auto [index, entry] : llvm::enumerate(spec.ops)) {
      // A strategy file names its op kind (user input); a parallel config
      // gives a role.
      if (!entry.opKind.empty() && op.getName().getStringRef() != entry.opKind)
        continue;
      if (!hasRole(&op, entry.opRole))
        continue;
      std::optional<unsigned> matched;
      if (entry.match.empty())
        matched = 0;
      for (OpOperand &operand : op.getOpOperands()) {
        if (matched)
          break;
        auto arg = dyn_cast<BlockArgument>(operand.get());
        if (arg && arg.getOwner() == &body &&
            !argNames[arg.getArgNumber()].empty() &&
            patterns[index].match(argNames[arg.getArgNumber()])) {
          matched = operand.getOperandNumber();
          break;
        }
      }
      if (!matched)
        continue;
      used[index] = true;
      if (failed(applyEntry(&op, entry, *matched)))
        return failure();
    }
  }
  for (auto [index, entry] : llvm::enumerate(spec.ops))
    if (!used[index] && entry.origin.rfind("ops[", 0) == 0)
      return func.emitOpError()
             << "strategy " << entry.origin << " (`"
             << (entry.match.empty() ? getEntryKind(entry) : entry.match)
             << "`) matches no op";
  return success();
}

void FixedStrategyResolver::copyConstraints(Operation *original,
                                            Operation *copy) {
  auto factors = result.factors.find(original);
  if (factors == result.factors.end())
    return;
  // Copied out first: inserting may move the map's entries.
  FixedFactors fixed = factors->second;
  result.factors[copy] = std::move(fixed);
  if (auto partial = result.partial.find(original);
      partial != result.partial.end()) {
    Layout::AxisList axes = partial->second;
    result.partial[copy] = std::move(axes);
  }
  std::vector<std::string> origins = result.origins.lookup(original);
  for (std::string &origin : origins)
    origin += " (of the op it copies in an earlier micro-batch)";
  result.origins[copy] = std::move(origins);
}

FailureOr<FixedStrategies>
mlir::loom::dist::resolveFixedStrategies(func::FuncOp func, const Mesh &mesh,
                                         FlatSymbolRefAttr meshRef,
                                         const ShardingSpec &spec) {
  FixedStrategyResolver resolver(func, mesh, meshRef, spec);
  if (failed(resolver.run()))
    return failure();
  return std::move(resolver.result);
}
