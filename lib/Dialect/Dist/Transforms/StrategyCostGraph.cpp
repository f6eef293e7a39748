//===- StrategyCostGraph.cpp - A training step as a search problem --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Walk the entry block: the first op of each `loom.fwd` id with a
//    sharding rule is a node, the other ops of that id its followers; every
//    op's global FLOPs add to the model FLOPs. A node's layer is the first
//    integer component of a parameter name it consumes (`h.3.`), else the
//    previous node's, reset to -1 by a parameter without one (`ln_f`).
// 2. Per node, candidates: every way of giving each free mesh axis (in
//    mesh order, so a factor split by two axes takes them major-first in
//    mesh order) to one factor or none, on top of the fixed factors, that
//    verifyFactorAxes accepts. Their costs (CandidateCost) are computed once
//    per signature (op, attributes, types, operand kinds, fixed factors,
//    followers, layer role): identical layers hit the cache.
//    A candidate's memory has three parts: persistent (parameters,
//    gradients, optimizer states), kept for the backward (the results and
//    operands its followers read, at the candidate's layouts) and
//    transient (its followers' results and its results' gradients);
//    getNodeMemory charges them per outer choice (docs/Search.md, "Memory").
// 3. Edges: for each operand produced by another node, a matrix of forward
//    plus backward redistribution costs, again cached by the signatures of
//    both ends; a parameter consumed by a second node gets an edge from its
//    first consumer pricing the forward reshard of its copy.
//
// Attention split on a sequence (context parallelism) is left out of the
// candidates until the partition phase implements it.
//
// Followers are priced from their global cost divided by the candidate's
// parallelism (the product of the axes it uses): backward ops follow their
// forward op's strategy, so they split alike. Optimizer updates split like
// their parameter (and over the data-parallel axes under ZeRO).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/StrategyCostGraph.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Analysis/Strategy/OpLayouts.h"
#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Interfaces/CostOpInterface.h"
#include "loom/Interfaces/ShardingRuleOpInterface.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using ::mlir::loom::kBackwardAttrName;
using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kParamAttrName;

#define DEBUG_TYPE "dist-search-strategy"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

std::string mlir::loom::dist::getComputeTypeName(Operation *op) {
  auto name = [](Type type) -> std::string {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !isa<FloatType>(tensor.getElementType()))
      return "";
    std::string text;
    llvm::raw_string_ostream os(text);
    tensor.getElementType().print(os);
    return text;
  };
  // A GEMM whose float operands are all exact widenings of one narrower
  // type (loom-widen-param-grads' weight gradients: bf16 operands cast to
  // f32 for an f32 result) is the GEMM of the narrow operands with an f32
  // output, which runs at the narrow type's rate (cuBLAS GemmEx with bf16
  // A and B and an f32 C).
  if (isa<MatmulOp>(op)) {
    std::string narrow;
    bool allWidened = op->getNumOperands() > 0;
    for (Value operand : op->getOperands()) {
      auto cast = operand.getDefiningOp<CastOp>();
      std::string source = cast ? name(cast.getInput().getType()) : "";
      bool widening = cast && !source.empty() &&
                      getElementBytes(cast.getInput().getType()) <
                          getElementBytes(cast.getResult().getType());
      if (!widening || (!narrow.empty() && narrow != source)) {
        allWidened = false;
        break;
      }
      narrow = source;
    }
    if (allWidened)
      return narrow;
  }
  for (Type type : op->getResultTypes())
    if (std::string text = name(type); !text.empty())
      return text;
  for (Type type : op->getOperandTypes())
    if (std::string text = name(type); !text.empty())
      return text;
  return "f32";
}

static std::vector<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape().vec();
}

static int64_t getValueElementBytes(Value value) {
  return getElementBytes(cast<RankedTensorType>(value.getType()));
}

static bool isFloatTensor(Value value) {
  return isa<FloatType>(
      cast<RankedTensorType>(value.getType()).getElementType());
}

/// The local bytes of a tensor of `shape` under `layout` (0 if it does not
/// fit, which candidates never produce).
static double getLocalBytes(const Mesh &mesh, const Layout &layout,
                            const std::vector<int64_t> &shape,
                            int64_t elementBytes) {
  ValueOrError<std::vector<int64_t>> local = layout.getLocalShape(mesh, shape);
  if (!local)
    return 0;
  return double(getNumElements(*local)) * elementBytes;
}

/// The ring attention pricing of an attention candidate whose shared
/// self-attention sequence factor is split over `ringAxes` (C devices), or
/// nothing for other candidates. dist.ring_attention balances the causal
/// work over the ring (zigzag split), so the forward costs the global
/// attention over the candidate's parallelism, like the gradient follower
/// already does. Its communication, per device:
///   - exchanges into and out of zigzag order, not overlapped: forward q, k,
///     v in and out, lse back; backward q, k, v, out, dout, lse in and dq,
///     dk, dv back; each priced as one ring step of its bytes;
///   - the ring: forward C - 1 steps of the k/v block, backward C - 1 of the
///     k/v block and C of its dk/dv accumulators. A step's transfer overlaps
///     the block compute of the step (on backends that overlap; the host
///     runtime does not), so only what exceeds the compute of C - 1 steps
///     is charged.
struct RingCost {
  double forwardSeconds;
  double commSeconds;
};
static std::optional<RingCost>
getRingAttentionCost(Operation *op, const OpShardingRule &rule,
                     const FactorAxes &candidate, const OpLayouts &layouts,
                     const ClusterCostModel &model, double globalForward,
                     double backwardSeconds, int64_t parallelism) {
  auto attention = dyn_cast<AttentionOp>(op);
  if (!attention)
    return std::nullopt;
  std::vector<int64_t> q = getShape(attention.getQuery());
  std::vector<int64_t> k = getShape(attention.getKey());
  if (q[2] != k[2])
    return std::nullopt;
  Layout::AxisList ringAxes;
  for (auto [factor, axes] : llvm::enumerate(candidate))
    if (rule.getFactors()[factor].kind == FactorKind::OpPartitioned)
      ringAxes = axes;
  if (ringAxes.empty())
    return std::nullopt;
  const Mesh &mesh = model.getMesh();
  double ring = double(mesh.getGroupSize(ringAxes));
  std::vector<int64_t> localQ =
      *layouts.operands[0].getLocalShape(mesh, getShape(attention.getQuery()));
  int64_t elementBytes = getValueElementBytes(attention.getQuery());
  auto bytesOf = [&](unsigned operand) {
    return getLocalBytes(mesh, layouts.operands[operand],
                         getShape(op->getOperand(operand)), elementBytes);
  };
  double qBytes = bytesOf(0), kvBytes = bytesOf(1) + bytesOf(2);
  double outBytes = getLocalBytes(
      mesh, layouts.results[0], getShape(attention.getResult()), elementBytes);
  double lseBytes =
      double(localQ[0] * localQ[1] * localQ[2]) * (elementBytes >= 8 ? 8 : 4);
  // One ring step of `bytes` per device: an all_gather's n - 1 steps of
  // the same block, divided by n - 1.
  auto step = [&](double bytes) {
    return model
               .getCollectiveTime(CollectiveKind::AllGather, ringAxes, bytes,
                                  bytes * ring)
               .seconds /
           (ring - 1);
  };
  double forward = globalForward / double(parallelism);
  double exchanges = step(qBytes + kvBytes) + step(outBytes + lseBytes) +
                     step(qBytes + kvBytes + 2 * outBytes + lseBytes) +
                     step(qBytes + kvBytes);
  double forwardRing = (ring - 1) * step(kvBytes);
  double backwardRing = (2 * ring - 1) * step(kvBytes);
  double exposed =
      std::max(0.0, forwardRing - forward * (ring - 1) / ring) +
      std::max(0.0, backwardRing - backwardSeconds * (ring - 1) / ring);
  return RingCost{forward, exchanges + exposed};
}

int64_t mlir::loom::dist::getLayerIndex(StringRef name) {
  SmallVector<StringRef> parts;
  name.split(parts, '.');
  for (StringRef part : parts) {
    int64_t index;
    if (!part.empty() && !part.getAsInteger(10, index))
      return index;
  }
  return -1;
}

StrategyCostGraphBuilder::StrategyCostGraphBuilder(
    func::FuncOp func, const ClusterCostModel &model,
    const FixedStrategies &fixed, Layout::AxisList dataParallelAxes)
    : func(func), model(model), fixed(fixed),
      dataParallelAxes(std::move(dataParallelAxes)),
      planner(std::make_unique<RedistributionPlanner>(
          std::make_shared<ClusterCostModel>(model))) {}

bool StrategyCostGraphBuilder::usesEveryAxis() const {
  for (const Mesh::Axis &axis : model.getMesh().getAxes()) {
    if (axis.size == 1)
      continue;
    bool used = llvm::any_of(nodes, [&](const SearchNode &node) {
      return llvm::any_of(node.candidates, [&](const FactorAxes &candidate) {
        return llvm::any_of(candidate, [&](const Layout::AxisList &axes) {
          return llvm::is_contained(axes, axis.name);
        });
      });
    });
    if (!used)
      return false;
  }
  return true;
}

bool StrategyCostGraphBuilder::hasLayers() const {
  return llvm::any_of(nodes,
                      [](const SearchNode &node) { return node.layer >= 0; });
}

std::vector<std::vector<unsigned>>
StrategyCostGraphBuilder::getLayerHint() const {
  std::map<int64_t, std::vector<unsigned>> byLayer;
  for (auto [index, node] : llvm::enumerate(nodes))
    if (node.layer >= 0)
      byLayer[node.layer].push_back(index);
  std::vector<std::vector<unsigned>> layers;
  if (byLayer.size() < 2)
    return layers;
  for (auto &[layer, ids] : byLayer)
    layers.push_back(std::move(ids));
  return layers;
}

std::string StrategyCostGraphBuilder::getSignature(Operation *op) const {
  func::FuncOp func = this->func;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << "{";
  for (NamedAttribute attr : op->getAttrs()) {
    StringRef name = attr.getName().getValue();
    if (name == kFwdAttrName || name.starts_with("dist."))
      continue;
    os << name << "=" << attr.getValue() << ",";
  }
  os << "}(";
  Block &body = func.getBody().front();
  for (OpOperand &operand : op->getOpOperands()) {
    os << operand.get().getType();
    if (auto arg = dyn_cast<BlockArgument>(operand.get());
        arg && arg.getOwner() == &body) {
      unsigned index = arg.getArgNumber();
      if (func.getArgAttr(index, kInputAttrName))
        os << ":input";
      else if (func.getArgAttr(index, kParamAttrName))
        os << (parameterOwner.lookup(index) == nodeOf.lookup(op) ? ":own"
                                                                 : ":shared");
    }
    os << ",";
  }
  os << ")->(";
  for (OpResult result : op->getResults()) {
    os << result.getType();
    for (Operation *user : result.getUsers())
      if (isa<func::ReturnOp>(user))
        os << ":returned";
    os << ",";
  }
  os << ")";
  auto it = fixed.factors.find(op);
  if (it != fixed.factors.end()) {
    os << "fixed[";
    for (const auto &axes : it->second) {
      if (!axes) {
        os << "?;";
        continue;
      }
      for (const std::string &axis : *axes)
        os << axis << " ";
      os << ";";
    }
    os << "]";
  }
  unsigned index = nodeOf.lookup(op);
  os << "layer:" << (nodes[index].layer >= 0)
     << (index > 0 && nodes[index - 1].layer != nodes[index].layer ? "first"
                                                                   : "");
  os << "followers[";
  for (Operation *follower : followers.lookup(op)) {
    os << follower->getName() << "(";
    for (Type type : follower->getOperandTypes())
      os << type << ",";
    os << ")";
  }
  os << "]";
  return text;
}

/// Every candidate strategy of an op: each free mesh axis goes to one factor
/// or none, in mesh order; fixed factors keep their axes.
static std::vector<FactorAxes>
enumerateCandidates(Operation *op, const OpShardingRule &rule,
                    const Mesh &mesh, const FixedFactors &fixedFactors) {
  size_t numFactors = rule.getFactors().size();
  FactorAxes base(numFactors);
  std::vector<std::string> freeAxes;
  for (size_t f = 0; f < numFactors && f < fixedFactors.size(); ++f)
    if (fixedFactors[f])
      base[f] = *fixedFactors[f];
  for (const Mesh::Axis &axis : mesh.getAxes()) {
    bool taken = llvm::any_of(base, [&](const Layout::AxisList &axes) {
      return llvm::is_contained(axes, axis.name);
    });
    if (!taken && axis.size > 1)
      freeAxes.push_back(axis.name);
  }
  std::vector<FactorAxes> candidates;
  FactorAxes current = base;
  std::function<void(size_t)> place = [&](size_t next) {
    if (next == freeAxes.size()) {
      // The partition phase must implement the candidate (cross-attention's
      // sequence splits are not; ring attention needs even blocks).
      if (verifyFactorAxes(rule, mesh, current).empty() &&
          isStrategySupported(op, rule, current, mesh))
        candidates.push_back(current);
      return;
    }
    place(next + 1); // Axis unused: the op is replicated over it.
    for (size_t f = 0; f < numFactors; ++f) {
      if (f < fixedFactors.size() && fixedFactors[f])
        continue;
      current[f].push_back(freeAxes[next]);
      place(next + 1);
      current[f].pop_back();
    }
  };
  place(0);
  return candidates;
}

LogicalResult StrategyCostGraphBuilder::analyzeNodes() {
  Block &body = func.getBody().front();
  // 1. Nodes, followers, layers and the model FLOPs.
  int64_t layer = -1;
  for (Operation &op : body) {
    if (auto costOp = dyn_cast<CostOpInterface>(&op))
      modelFlops += costOp.getCost(getGlobalShapes(&op)).flops;
    auto id = op.getAttrOfType<IntegerAttr>(kFwdAttrName);
    if (!id)
      continue;
    Operation *forward = fixed.forwardOps.lookup(id.getInt());
    if (forward != &op) {
      if (forward)
        followers[forward].push_back(&op);
      continue;
    }
    if (!isa<ShardingRuleOpInterface>(op))
      continue;
    for (Value operand : op.getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != &body)
        continue;
      if (auto param =
              func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName))
        layer = getLayerIndex(param.getName());
    }
    nodeOf[&op] = nodes.size();
    SearchNode node;
    node.op = &op;
    node.layer = layer;
    nodes.push_back(std::move(node));
    for (Value operand : op.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getOwner() == &body &&
          func.getArgAttr(arg.getArgNumber(), kParamAttrName))
        parameterOwner.try_emplace(arg.getArgNumber(), nodeOf[&op]);
  }

  std::set<int64_t> layerIndices;
  for (const SearchNode &node : nodes)
    if (node.layer >= 0)
      layerIndices.insert(node.layer);
  numLayers = layerIndices.size();

  // 2. Candidates and their costs, once per signature.
  std::map<std::string, unsigned> bySignature;
  for (unsigned index = 0; index < nodes.size(); ++index) {
    SearchNode &node = nodes[index];
    node.signature = getSignature(node.op);
    auto [it, inserted] = bySignature.try_emplace(node.signature, index);
    if (!inserted) {
      ++stats.nodeHits;
      node.candidates = nodes[it->second].candidates;
      node.costs = nodes[it->second].costs;
      continue;
    }
    ++stats.nodeMisses;
    if (failed(analyzeNode(index)))
      return failure();
  }

  // The largest transient a layer node cannot avoid (getNodeTransientBytes).
  for (const SearchNode &node : nodes) {
    if (node.layer < 0)
      continue;
    double smallest = kInfiniteCost;
    for (const CandidateCost &cost : node.costs)
      smallest =
          std::min(smallest, cost.transientBytes + cost.resultGradientBytes);
    if (!node.costs.empty())
      transientFloor = std::max(transientFloor, smallest);
  }

  return success();
}

LogicalResult StrategyCostGraphBuilder::analyze() {
  if (failed(analyzeNodes()))
    return failure();
  analyzeEdges();
  return success();
}

double StrategyCostGraphBuilder::getNodeCostLowerBound(
    const StrategyChoice &choice) const {
  double bound = 0;
  for (unsigned index = 0; index < nodes.size(); ++index) {
    double cheapest = kInfiniteCost;
    for (unsigned c = 0; c < nodes[index].candidates.size(); ++c)
      cheapest = std::min(cheapest, getNodeCost(index, c, choice));
    bound += cheapest;
  }
  return bound;
}

LogicalResult StrategyCostGraphBuilder::analyzeNode(unsigned index) {
  SearchNode &node = nodes[index];
  Operation *op = node.op;
  const Mesh &mesh = model.getMesh();
  Block &body = func.getBody().front();
  OpShardingRule rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
  FixedFactors fixedFactors = fixed.factors.lookup(op);
  node.candidates = enumerateCandidates(op, rule, mesh, fixedFactors);
  if (node.candidates.empty())
    return op->emitOpError()
           << "has no valid strategy on mesh " << mesh.toString()
           << " that keeps its fixed factors";

  std::string typeName = getComputeTypeName(op);
  auto seconds = [&](Operation *priced,
                     const OpShapes &shapes) -> FailureOr<double> {
    auto costOp = dyn_cast<CostOpInterface>(priced);
    if (!costOp)
      return 0.0;
    ValueOrError<double> time = model.getComputeSeconds(
        costOp.getCost(shapes), getComputeTypeName(priced));
    if (!time)
      return priced->emitOpError() << "cannot be priced: " << time.error();
    return *time;
  };

  // Whether one of this node's followers (its backward ops) reads `value`.
  std::vector<Operation *> ownFollowers = followers.lookup(op);
  auto isReadByFollowers = [&](Value value) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      return llvm::is_contained(ownFollowers, user);
    });
  };

  // The op at global shapes (ring attention's forward is priced from it).
  FailureOr<double> globalForward = seconds(op, getGlobalShapes(op));
  if (failed(globalForward))
    return failure();
  double globalForwardSeconds = *globalForward;

  // Followers at global shapes, split later by the candidate's parallelism.
  double followerGlobal = 0;
  std::vector<std::pair<Operation *, double>> updates;
  for (Operation *follower : followers.lookup(op)) {
    FailureOr<double> time = seconds(follower, getGlobalShapes(follower));
    if (failed(time))
      return failure();
    if (isOptimizerUpdate(follower))
      updates.emplace_back(follower, *time);
    else
      followerGlobal += *time;
  }

  // Backward temporaries at global shapes: the followers' float results
  // (gradients, reshaped copies), less the optimizer update's (parameters
  // and states) and the parameter gradients (counted with the parameters).
  llvm::SmallPtrSet<Type, 4> parameterTypes;
  for (Value operand : op->getOperands())
    if (auto arg = dyn_cast<BlockArgument>(operand);
        arg && arg.getOwner() == &body &&
        func.getArgAttr(arg.getArgNumber(), kParamAttrName))
      parameterTypes.insert(operand.getType());
  double followerResultBytes = 0;
  for (Operation *follower : followers.lookup(op)) {
    if (isOptimizerUpdate(follower))
      continue;
    for (Value result : follower->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !isa<FloatType>(type.getElementType()) ||
          parameterTypes.contains(type))
        continue;
      followerResultBytes +=
          double(type.getNumElements()) * getElementBytes(type);
    }
  }

  Layout::AxisList zeroAxes;
  for (const std::string &axis : dataParallelAxes)
    if (mesh.findAxis(axis))
      zeroAxes.push_back(axis);

  for (const FactorAxes &candidate : node.candidates) {
    CandidateCost cost;
    ValueOrError<OpLayouts> layouts = deriveOpLayouts(rule, mesh, candidate);
    if (!layouts)
      return op->emitOpError() << "invalid candidate: " << layouts.error();
    OpShapes local;
    for (auto [value, layout] :
         llvm::zip_equal(op->getOperands(), layouts->operands)) {
      auto shape = layout.getLocalShape(mesh, getShape(value));
      local.operands.emplace_back(shape->begin(), shape->end());
    }
    for (auto [value, layout] :
         llvm::zip_equal(op->getResults(), layouts->results)) {
      auto shape = layout.getLocalShape(mesh, getShape(value));
      local.results.emplace_back(shape->begin(), shape->end());
    }
    FailureOr<double> forward = seconds(op, local);
    if (failed(forward))
      return failure();
    cost.forwardSeconds = *forward;
    int64_t parallelism = getParallelism(mesh, candidate);
    cost.followerSeconds = followerGlobal / parallelism;
    if (std::optional<RingCost> ring = getRingAttentionCost(
            op, rule, candidate, *layouts, model, globalForwardSeconds,
            cost.followerSeconds, parallelism)) {
      cost.forwardSeconds = ring->forwardSeconds;
      cost.forwardFromGlobal = true;
      cost.reshardSeconds += ring->commSeconds;
    }
    cost.transientBytes = followerResultBytes / parallelism;
    // The gradient of each float result arrives at the result's layout
    // (a consumer's backward reshards it there) and lives through this
    // node's backward (charged inside the layers, where it can be a whole
    // gathered width).
    for (auto [result, layout] :
         llvm::zip_equal(op->getResults(), layouts->results))
      if (isFloatTensor(result))
        cost.resultGradientBytes += getLocalBytes(
            mesh, layout, getShape(result), getValueElementBytes(result));
    // Operands (not parameters) at this candidate's layouts that its
    // followers read: the backward reads them as the op read them, which
    // after a reshard is the reshard's result, so they are kept at this
    // layout. Those the followers do not read die in the forward, before
    // the backward's peak: not counted.
    llvm::SmallPtrSet<Value, 4> seenOperands;
    for (auto [value, layout] :
         llvm::zip_equal(op->getOperands(), layouts->operands)) {
      auto arg = dyn_cast<BlockArgument>(value);
      if ((arg && arg.getOwner() == &body &&
           func.getArgAttr(arg.getArgNumber(), kParamAttrName)) ||
          !isFloatTensor(value) || !seenOperands.insert(value).second)
        continue;
      double bytes = getLocalBytes(mesh, layout, getShape(value),
                                   getValueElementBytes(value));
      if (isReadByFollowers(value))
        cost.activationBytes += bytes;
    }

    // The axes this candidate uses, in mesh order.
    Layout::AxisList used;
    for (const Mesh::Axis &axis : mesh.getAxes())
      if (llvm::any_of(candidate, [&](const Layout::AxisList &axes) {
            return llvm::is_contained(axes, axis.name);
          }))
        used.push_back(axis.name);

    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      const Layout &layout = layouts->operands[operand.getOperandNumber()];
      std::vector<int64_t> shape = getShape(value);
      int64_t elementBytes = getValueElementBytes(value);
      auto arg = dyn_cast<BlockArgument>(value);
      if (!arg || arg.getOwner() != &body)
        continue;
      unsigned argIndex = arg.getArgNumber();
      if (func.getArgAttr(argIndex, kInputAttrName)) {
        // Data inputs arrive split on their batch over the data-parallel
        // axes.
        std::vector<Layout::AxisList> dims(shape.size());
        if (!dims.empty())
          dims[0] = zeroAxes;
        ValueOrError<Layout> data = Layout::get(mesh, dims);
        if (!data || data->verifyShape(mesh, shape))
          continue;
        ValueOrError<RedistributionPlan> plan =
            planner->plan(mesh, shape, elementBytes, *data, layout);
        cost.reshardSeconds += plan ? plan->cost : kInfiniteCost;
        continue;
      }
      if (!func.getArgAttr(argIndex, kParamAttrName) ||
          parameterOwner.lookup(argIndex) != index)
        continue;
      double bytes = getLocalBytes(mesh, layout, shape, elementBytes);
      // The gradient is reduced in the type it is summed in: a
      // mixed-precision step whose gradient comes back to f32 through a
      // cast from the low type (`--grad-reduce-dtype bf16`) sends the low
      // type; the f32 one (loom-widen-param-grads) and an f32 step send f32.
      int64_t gradientElementBytes = elementBytes;
      int64_t reduceElementBytes = elementBytes;
      for (auto [update, time] : updates) {
        if (update->getOperand(0) != value || update->getNumOperands() < 2)
          continue;
        Value gradient = update->getOperand(1);
        gradientElementBytes = getValueElementBytes(gradient);
        reduceElementBytes = gradientElementBytes;
        if (auto cast = gradient.getDefiningOp<CastOp>())
          if (isFloatTensor(cast.getInput()))
            reduceElementBytes = std::min(
                reduceElementBytes, getValueElementBytes(cast.getInput()));
      }
      double gradientBytes =
          getLocalBytes(mesh, layout, shape, gradientElementBytes);
      double reduceBytes =
          getLocalBytes(mesh, layout, shape, reduceElementBytes);
      // The gradient is a pending sum over the axes that split work the
      // parameter does not have.
      Layout::AxisList partial;
      for (const std::string &axis : used)
        if (!layout.uses(axis))
          partial.push_back(axis);
      Layout::AxisList zeroGroup, rest;
      for (const std::string &axis : zeroAxes)
        if (!layout.uses(axis))
          zeroGroup.push_back(axis);
      for (const std::string &axis : partial)
        if (!llvm::is_contained(zeroGroup, axis))
          rest.push_back(axis);
      int64_t zeroSize = mesh.getGroupSize(zeroGroup);
      bool zeroPartial = llvm::any_of(zeroGroup, [&](const std::string &a) {
        return llvm::is_contained(partial, a);
      });
      if (!partial.empty())
        cost.syncSeconds +=
            model
                .getCollectiveTime(CollectiveKind::AllReduce, partial,
                                   reduceBytes, reduceBytes)
                .seconds;
      if (!rest.empty())
        cost.zeroSyncSeconds +=
            model
                .getCollectiveTime(CollectiveKind::AllReduce, rest, reduceBytes,
                                   reduceBytes)
                .seconds;
      if (zeroSize > 1) {
        if (zeroPartial)
          cost.zeroReduceSeconds +=
              model
                  .getCollectiveTime(CollectiveKind::ReduceScatter, zeroGroup,
                                     reduceBytes, reduceBytes / zeroSize)
                  .seconds;
        double gather =
            model
                .getCollectiveTime(CollectiveKind::AllGather, zeroGroup,
                                   bytes / zeroSize, bytes)
                .seconds;
        cost.zeroGatherSeconds += gather;
        // ZeRO-3 gathers it before each micro-batch's forward, and again
        // before the backward when a backward op reads it (a weight's
        // input gradient does; a bias's does not).
        bool backwardReads = llvm::any_of(value.getUsers(), [](Operation *u) {
          return u->hasAttr(kBackwardAttrName);
        });
        cost.zeroLayerGatherSeconds += gather * (backwardReads ? 2 : 1);
      }
      cost.parameterBytes += bytes;
      cost.gradientBytes += gradientBytes;
      cost.zeroParameterBytes += bytes / zeroSize;
      cost.zeroGradientBytes += gradientBytes / zeroSize;
      // The optimizer update of this parameter: its states and its time.
      for (auto [update, time] : updates) {
        if (update->getOperand(0) != value)
          continue;
        double states = update->getNumResults() - 1;
        int64_t blocks = 1;
        for (size_t dim = 0; dim < shape.size(); ++dim)
          blocks *= layout.getNumBlocks(mesh, dim);
        cost.followerSeconds += time / blocks;
        cost.updateSeconds += time / blocks;
        cost.optimizerBytes += states * bytes;
        cost.zeroOptimizerBytes += states * bytes / zeroSize;
      }
    }
    // Updates of parameters owned elsewhere (or of none) split like the op.
    for (auto [update, time] : updates) {
      auto arg = dyn_cast<BlockArgument>(update->getOperand(0));
      if (!arg || parameterOwner.lookup(arg.getArgNumber()) != index ||
          !llvm::is_contained(op->getOperands(), update->getOperand(0))) {
        cost.followerSeconds += time / parallelism;
        cost.updateSeconds += time / parallelism;
      }
    }

    for (auto [result, layout] :
         llvm::zip_equal(op->getResults(), layouts->results)) {
      std::vector<int64_t> shape = getShape(result);
      int64_t elementBytes = getValueElementBytes(result);
      bool returned = llvm::any_of(result.getUsers(), [](Operation *user) {
        return isa<func::ReturnOp>(user);
      });
      // A result the node's own followers read is kept at its layout; one
      // a consumer's followers read is counted by that consumer, at the
      // layout it reads it in.
      if (isReadByFollowers(result))
        cost.activationBytes +=
            getLocalBytes(mesh, layout, shape, elementBytes);
      if (returned && !layout.isReplicated()) {
        // Returned values are gathered whole (the loss, replicated).
        ValueOrError<Layout> whole = Layout::get(
            mesh, std::vector<Layout::AxisList>(shape.size()));
        ValueOrError<RedistributionPlan> plan =
            planner->plan(mesh, shape, elementBytes, layout, *whole);
        cost.reshardSeconds += plan ? plan->cost : kInfiniteCost;
      }
    }
    if (node.layer >= 0 && (index == 0 || nodes[index - 1].layer != node.layer) &&
        op->getNumOperands() > 0) {
      Value input = op->getOperand(0);
      cost.layerInputBytes = getLocalBytes(mesh, layouts->operands[0],
                                           getShape(input),
                                           getValueElementBytes(input));
    }
    node.costs.push_back(cost);
  }
  return success();
}

void StrategyCostGraphBuilder::analyzeEdges() {
  const Mesh &mesh = model.getMesh();
  Block &body = func.getBody().front();
  // Layouts per node and candidate, computed lazily.
  std::vector<std::vector<OpLayouts>> layouts(nodes.size());
  auto getLayouts = [&](unsigned index) -> const std::vector<OpLayouts> & {
    std::vector<OpLayouts> &cached = layouts[index];
    if (cached.empty()) {
      OpShardingRule rule =
          cast<ShardingRuleOpInterface>(nodes[index].op).getShardingRule();
      for (const FactorAxes &candidate : nodes[index].candidates)
        cached.push_back(*deriveOpLayouts(rule, mesh, candidate));
    }
    return cached;
  };
  std::map<std::string, std::shared_ptr<const std::vector<double>>> cache;

  for (unsigned consumer = 0; consumer < nodes.size(); ++consumer) {
    Operation *op = nodes[consumer].op;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      unsigned operandIndex = operand.getOperandNumber();
      std::optional<unsigned> producer;
      std::optional<unsigned> sourceOperand;
      unsigned resultIndex = 0;
      if (auto result = dyn_cast<OpResult>(value)) {
        auto it = nodeOf.find(result.getOwner());
        if (it == nodeOf.end())
          continue;
        producer = it->second;
        resultIndex = result.getResultNumber();
      } else if (auto arg = dyn_cast<BlockArgument>(value);
                 arg && arg.getOwner() == &body &&
                 func.getArgAttr(arg.getArgNumber(), kParamAttrName)) {
        unsigned owner = parameterOwner.lookup(arg.getArgNumber());
        if (owner == consumer)
          continue;
        producer = owner;
        for (OpOperand &use : nodes[owner].op->getOpOperands())
          if (use.get() == value)
            sourceOperand = use.getOperandNumber();
      }
      if (!producer || *producer == consumer)
        continue;
      std::string key = nodes[*producer].signature + "#" +
                        (sourceOperand ? "arg" + std::to_string(*sourceOperand)
                                       : std::to_string(resultIndex)) +
                        "->" + nodes[consumer].signature + "#" +
                        std::to_string(operandIndex);
      auto it = cache.find(key);
      if (it != cache.end()) {
        ++stats.edgeHits;
        edges.push_back({*producer, consumer, it->second});
        continue;
      }
      ++stats.edgeMisses;
      std::vector<int64_t> shape = getShape(value);
      int64_t elementBytes = getValueElementBytes(value);
      bool backward = !sourceOperand && isFloatTensor(value);
      const std::vector<OpLayouts> &from = getLayouts(*producer);
      const std::vector<OpLayouts> &to = getLayouts(consumer);
      // The consumer's operand gradient: split like the operand, a pending
      // sum over the axes splitting work the operand lacks.
      std::vector<std::optional<Layout>> gradients;
      for (auto [j, candidate] : llvm::enumerate(nodes[consumer].candidates)) {
        const Layout &wanted = to[j].operands[operandIndex];
        Layout::AxisList partial;
        for (const Mesh::Axis &axis : mesh.getAxes()) {
          bool usedByOp = llvm::any_of(candidate, [&](const auto &axes) {
            return llvm::is_contained(axes, axis.name);
          });
          if (usedByOp && !wanted.uses(axis.name))
            partial.push_back(axis.name);
        }
        ValueOrError<Layout> gradient =
            Layout::get(mesh, wanted.getDims(), partial);
        gradients.push_back(gradient ? std::optional<Layout>(*gradient)
                                     : std::nullopt);
      }
      auto matrix = std::make_shared<std::vector<double>>();
      matrix->reserve(from.size() * to.size());
      for (size_t i = 0; i < from.size(); ++i) {
        const Layout &source = sourceOperand
                                   ? from[i].operands[*sourceOperand]
                                   : from[i].results[resultIndex];
        ValueOrError<Layout> whole = Layout::get(mesh, source.getDims());
        for (size_t j = 0; j < to.size(); ++j) {
          double total = 0;
          ValueOrError<RedistributionPlan> forward = planner->plan(
              mesh, shape, elementBytes, source, to[j].operands[operandIndex]);
          total += forward ? forward->cost : kInfiniteCost;
          if (backward && gradients[j] && whole) {
            ValueOrError<RedistributionPlan> back = planner->plan(
                mesh, shape, elementBytes, *gradients[j], *whole);
            total += back ? back->cost : kInfiniteCost;
          }
          matrix->push_back(total);
        }
      }
      cache.emplace(key, matrix);
      edges.push_back({*producer, consumer, matrix});
    }
  }
  LLVM_DEBUG(llvm::dbgs() << "mesh " << mesh.toString() << ": "
                          << nodes.size() << " nodes, " << edges.size()
                          << " edges, planner " << planner->getNumSearches()
                          << " searches, " << planner->getNumCacheHits()
                          << " cache hits\n");
}

MicroBatchCompute
StrategyCostGraphBuilder::getMicroBatchCompute(unsigned node,
                                               unsigned candidate,
                                               int64_t microBatches) const {
  const CandidateCost &cost = nodes[node].costs[candidate];
  // A step split already (the follow-up search of a pipelined plan) has
  // one copy of each op per micro-batch, at its shapes: the stage problem
  // takes 1/M of their sum, one micro-batch's. Each copy is split further
  // into the remaining M / (the step's count) pieces.
  if (stepMicroBatches == 0)
    stepMicroBatches = getMicroBatchCount(func);
  double perMicro = 1.0 / double(std::max<int64_t>(microBatches, 1));
  if (microBatches <= stepMicroBatches || microBatches % stepMicroBatches)
    return {cost.forwardSeconds * perMicro,
            (cost.followerSeconds - cost.updateSeconds) * perMicro};
  int64_t pieces = microBatches / stepMicroBatches;
  if (!batchDims)
    batchDims = std::make_shared<const BatchDims>(BatchDims::analyze(func));
  if (microRepresentative.empty()) {
    // Nodes of identical layers share a signature and batch dims, and so
    // their micro-batch prices.
    std::map<std::string, unsigned> first;
    for (auto [index, searchNode] : llvm::enumerate(nodes)) {
      std::string key = searchNode.signature + "|batch:";
      for (Value value : searchNode.op->getOperands()) {
        auto type = dyn_cast<RankedTensorType>(value.getType());
        for (int64_t d = 0; type && d < type.getRank(); ++d)
          key += batchDims->isBatchDim(value, d) ? 'b' : '.';
        key += ',';
      }
      microRepresentative.push_back(first.try_emplace(key, index).first->second);
    }
  }
  unsigned representative = microRepresentative[node];
  if (microCache.empty())
    microCache.resize(nodes.size());
  auto &perCandidate = microCache[representative];
  if (perCandidate.empty())
    perCandidate.resize(nodes[representative].candidates.size());
  auto &priced = perCandidate[candidate];
  auto it = llvm::find_if(priced, [&](const auto &entry) {
    return entry.first == pieces;
  });
  if (it == priced.end()) {
    priced.emplace_back(pieces,
                        priceMicroBatch(representative, candidate, pieces));
    it = std::prev(priced.end());
  }
  double copies = double(stepMicroBatches);
  return {it->second.forwardSeconds / copies,
          it->second.followerSeconds / copies};
}

MicroBatchCompute
StrategyCostGraphBuilder::priceMicroBatch(unsigned node, unsigned candidate,
                                          int64_t microBatches) const {
  const SearchNode &searchNode = nodes[node];
  const CandidateCost &cost = searchNode.costs[candidate];
  const FactorAxes &axes = searchNode.candidates[candidate];
  const Mesh &mesh = model.getMesh();
  double perMicro = 1.0 / double(microBatches);
  // The analysis priced every op already, so pricing the same op at
  // smaller shapes succeeds; where it does not, 1/M of the batch's.
  auto seconds = [&](Operation *op,
                     const OpShapes &shapes) -> std::optional<double> {
    auto costOp = dyn_cast<CostOpInterface>(op);
    if (!costOp)
      return 0.0;
    ValueOrError<double> time =
        model.getComputeSeconds(costOp.getCost(shapes), getComputeTypeName(op));
    if (!time)
      return std::nullopt;
    return *time;
  };
  MicroBatchCompute linear{cost.forwardSeconds * perMicro,
                           (cost.followerSeconds - cost.updateSeconds) *
                               perMicro};
  int64_t parallelism = getParallelism(mesh, axes);
  Operation *op = searchNode.op;
  std::optional<OpShapes> global =
      batchDims->getMicroBatchShapes(op, microBatches);
  if (!global)
    return linear;
  MicroBatchCompute priced;
  if (cost.forwardFromGlobal) {
    std::optional<double> time = seconds(op, *global);
    if (!time)
      return linear;
    priced.forwardSeconds = *time / double(parallelism);
  } else {
    OpShardingRule rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
    ValueOrError<OpLayouts> layouts = deriveOpLayouts(rule, mesh, axes);
    if (!layouts)
      return linear;
    OpShapes local;
    auto localize = [&](ArrayRef<SmallVector<int64_t>> shapes,
                        ArrayRef<Layout> layoutsOf,
                        SmallVector<SmallVector<int64_t>> &out) {
      for (auto [shape, layout] : llvm::zip_equal(shapes, layoutsOf)) {
        std::vector<int64_t> whole(shape.begin(), shape.end());
        ValueOrError<std::vector<int64_t>> piece =
            layout.getLocalShape(mesh, whole);
        if (!piece)
          return false;
        out.emplace_back(piece->begin(), piece->end());
      }
      return true;
    };
    if (!localize(global->operands, layouts->operands, local.operands) ||
        !localize(global->results, layouts->results, local.results))
      return linear;
    std::optional<double> time = seconds(op, local);
    if (!time)
      return linear;
    priced.forwardSeconds = *time;
  }
  for (Operation *follower : followers.lookup(op)) {
    if (isOptimizerUpdate(follower))
      continue;
    std::optional<OpShapes> shapes =
        batchDims->getMicroBatchShapes(follower, microBatches);
    std::optional<double> time =
        shapes ? seconds(follower, *shapes) : std::nullopt;
    if (!time)
      return linear;
    priced.followerSeconds += *time / double(parallelism);
  }
  return priced;
}

double StrategyCostGraphBuilder::getNodeCost(unsigned node, unsigned candidate,
                                             const StrategyChoice &choice) const {
  const CandidateCost &cost = nodes[node].costs[candidate];
  double total = cost.forwardSeconds + cost.followerSeconds +
                 cost.reshardSeconds +
                 cost.getSyncSeconds(choice.zeroStage, choice.microBatches);
  if (choice.recompute && nodes[node].layer >= 0)
    total += cost.forwardSeconds;
  return total;
}

double
StrategyCostGraphBuilder::getNodeMemory(unsigned node, unsigned candidate,
                                        const StrategyChoice &choice) const {
  const CandidateCost &cost = nodes[node].costs[candidate];
  // Parameters and their gradients.
  double total = getNodeParameterBytes(node, candidate, choice) +
                 cost.getGradientBytes(choice.zeroStage) +
                 cost.getOptimizerBytes(choice.zeroStage);
  return total + getNodeActivationBytes(node, candidate, choice) +
         getNodeTransientBytes(node, candidate, choice);
}

double StrategyCostGraphBuilder::getNodeParameterBytes(
    unsigned node, unsigned candidate, const StrategyChoice &choice) const {
  const CandidateCost &cost = nodes[node].costs[candidate];
  if (choice.zeroStage < 3)
    return cost.getParameterBytes(choice.zeroStage);
  // ZeRO-3 gathers a layer's parameters one layer ahead and frees them
  // after the layer (ParameterGathers.cpp): the whole copies of two layers
  // are live at a time, charged to layer 0 (as recompute's one layer is).
  // The parameters outside the layers (embeddings, final norm, head) are
  // charged whole: the head's, gathered for its backward, are live at the
  // peak where the backward starts, and tied ones are read there.
  double gathered = 0;
  if (nodes[node].layer == 0)
    gathered = 2 * cost.parameterBytes;
  else if (nodes[node].layer < 0)
    gathered = cost.parameterBytes;
  return cost.zeroParameterBytes + gathered;
}

double StrategyCostGraphBuilder::getNodeActivationBytes(
    unsigned node, unsigned candidate, const StrategyChoice &choice) const {
  const CandidateCost &cost = nodes[node].costs[candidate];
  // Under recompute a layer keeps only its input, but the layer being
  // recomputed holds all its activations during its backward: one layer's
  // worth, charged to layer 0 (which the layered solve handles apart from
  // the identical layers after it).
  if (choice.recompute && nodes[node].layer > 0)
    return cost.layerInputBytes;
  if (choice.recompute && nodes[node].layer == 0)
    return cost.layerInputBytes + cost.activationBytes;
  return cost.activationBytes;
}

double StrategyCostGraphBuilder::getNodeTransientBytes(
    unsigned node, unsigned candidate, const StrategyChoice &choice) const {
  // Outside the layers (embedding, head, loss) transients are charged
  // whole: the head's backward runs while every activation is still live.
  // Inside a layer, a node's backward runs as the activations it read are
  // freed, and the peak holds one node's transients at a time (a max, not
  // a sum): a layer node is charged only the excess of its transient over
  // θ, the largest transient no candidate of any layer node avoids. That
  // is 0 for ordinary candidates and steers the solver away from those
  // with outsized transients (a whole-width gradient gathered for a
  // row-split projection) without charging every layer node's
  // temporaries as if they were live together.
  const CandidateCost &cost = nodes[node].costs[candidate];
  if (nodes[node].layer < 0)
    return cost.transientBytes;
  return std::max(0.0, cost.transientBytes + cost.resultGradientBytes -
                           transientFloor);
}

CostGraph StrategyCostGraphBuilder::build(const StrategyChoice &choice) const {
  CostGraph graph;
  for (auto [index, node] : llvm::enumerate(nodes)) {
    std::vector<double> cost, memory;
    for (unsigned c = 0; c < node.candidates.size(); ++c) {
      cost.push_back(getNodeCost(index, c, choice));
      memory.push_back(getNodeMemory(index, c, choice));
    }
    std::string name;
    llvm::raw_string_ostream os(name);
    os << node.op->getName() << " #" << index;
    graph.addNode(name, std::move(cost), std::move(memory));
  }
  for (const SearchEdge &edge : edges)
    graph.addEdge(edge.source, edge.destination, *edge.cost);
  return graph;
}
