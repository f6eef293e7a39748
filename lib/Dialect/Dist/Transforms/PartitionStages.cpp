//===- PartitionStages.cpp - Split the per-rank step into stages ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Turns a partitioned `@train_step` whose ops carry `dist.stage` into the
// pipelined program of docs/Pipeline.md:
//
//   1. the mesh gets the pipeline axis as its major axis (a new mesh of that
//      axis alone when the stages are single devices);
//   2. an op without a stage (the collectives and rewrites partitioning
//      added) takes its first staged producer's stage (and chunk), else its
//      first staged user's;
//   3. each carried argument (parameter, optimizer state, step) is owned by
//      the stage whose result replaces it; every result gets the stage that
//      computes it (`dist.stage` result attribute);
//   4. a value (or an owned argument) read by another stage is sent once
//      per reading stage by a `dist.send`/`dist.recv` pair with a unique
//      tag, and that stage reads the received value;
//   5. each stage's ops are ordered by its schedule: an op of micro-batch m
//      belongs to unit F(m) or B(m) (`loom.backward`; of its `dist.chunk`
//      under interleaved 1F1B); an op's unit is the
//      earliest (in its stage's unit order, Schedule.h) of its own and its
//      readers' on any stage (a label count needed by B(0) runs before
//      B(0); a layout change of a gradient another stage needs for B(m)
//      runs in B(m)); its position is the op's key; a topological sort
//      takes the least (key, program position) first; receives sit right
//      before their first reader, sends right after their producer;
//   6. the block becomes: operand-free unstaged ops, stage 0's ops, ...,
//      the last stage's ops, the return.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <limits>
#include <map>
#include <queue>
#include <tuple>

using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;

namespace mlir::loom::dist {
#define GEN_PASS_DEF_PARTITIONSTAGESPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

static constexpr int64_t kNoKey = std::numeric_limits<int64_t>::max();

namespace {

struct PartitionStagesPass
    : public dist::impl::PartitionStagesPassBase<PartitionStagesPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// The name a carried argument or result goes by.
std::string getCarryName(DictionaryAttr attrs) {
  if (!attrs)
    return "";
  if (auto param = attrs.getAs<ParamAttr>(kParamAttrName))
    return param.getName().str();
  if (auto name = attrs.getAs<StringAttr>(kNameAttrName))
    return name.getValue().str();
  return "";
}

/// Step 1: the mesh with the pipeline axis in front.
FailureOr<FlatSymbolRefAttr> addPipelineAxis(ModuleOp module,
                                             const PipelineInfo &info) {
  SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
  OpBuilder builder(module.getContext());
  if (meshes.size() > 1) {
    module.emitError("dist-partition-stages: expected at most one dist.mesh, "
                     "found ")
        << meshes.size();
    return failure();
  }
  if (meshes.empty()) {
    builder.setInsertionPointToStart(module.getBody());
    auto mesh = MeshOp::create(builder, module.getLoc(), "mesh",
                               ArrayRef<int64_t>{info.stages},
                               builder.getStrArrayAttr({info.axis}));
    return FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  }
  MeshOp mesh = meshes.front();
  SmallVector<StringRef> axes;
  for (Attribute axis : mesh.getAxes())
    axes.push_back(cast<StringAttr>(axis).getValue());
  if (llvm::is_contained(axes, info.axis)) {
    mesh.emitError("dist-partition-stages: the mesh already has an axis `")
        << info.axis << "`; the pipeline axis must be new";
    return failure();
  }
  SmallVector<int64_t> shape{info.stages};
  llvm::append_range(shape, mesh.getShape());
  axes.insert(axes.begin(), info.axis);
  mesh.setShape(shape);
  mesh.setAxesAttr(builder.getStrArrayAttr(axes));
  return FlatSymbolRefAttr::get(mesh.getSymNameAttr());
}

} // namespace

void PartitionStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  FailureOr<std::optional<PipelineInfo>> maybeInfo = getPipelineInfo(module);
  if (failed(maybeInfo))
    return signalPassFailure();
  if (!*maybeInfo || (*maybeInfo)->stages <= 1)
    return;
  const PipelineInfo &info = **maybeInfo;
  int64_t numStages = info.stages;
  auto entry = module.lookupSymbol<func::FuncOp>(entryName);
  if (!entry || entry.isExternal()) {
    module.emitError("dist-partition-stages: no function @")
        << entryName << " with a body";
    return signalPassFailure();
  }
  Block &block = entry.getBody().front();
  Operation *terminator = block.getTerminator();
  Builder b(context);

  // Step 1.
  FailureOr<FlatSymbolRefAttr> meshRef = addPipelineAxis(module, info);
  if (failed(meshRef))
    return signalPassFailure();

  // Step 2.
  auto stageOf = [&](Operation *op) { return getOpStage(op); };
  for (Operation &op : block.without_terminator()) {
    if (std::optional<int64_t> stage = stageOf(&op)) {
      if (*stage < 0 || *stage >= numStages) {
        op.emitOpError("has dist.stage ")
            << *stage << " outside the pipeline's " << numStages << " stages";
        return signalPassFailure();
      }
      continue;
    }
    if (op.getNumOperands() == 0)
      continue;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (std::optional<int64_t> stage = stageOf(def)) {
          op.setAttr(kStageAttrName, b.getI64IntegerAttr(*stage));
          if (Attribute chunk = def->getAttr(kChunkAttrName))
            op.setAttr(kChunkAttrName, chunk);
          break;
        }
  }
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (stageOf(&op) || op.getNumOperands() == 0)
      continue;
    std::optional<int64_t> stage;
    for (Operation *user : op.getUsers())
      if ((stage = stageOf(user))) {
        if (Attribute chunk = user->getAttr(kChunkAttrName))
          op.setAttr(kChunkAttrName, chunk);
        break;
      }
    // Only argument-fed ops nothing staged reads are left: the last stage
    // (which computes the loss) keeps them.
    op.setAttr(kStageAttrName,
               b.getI64IntegerAttr(stage.value_or(numStages - 1)));
  }

  // Step 3.
  llvm::StringMap<unsigned> argByName;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    std::string name = getCarryName(entry.getArgAttrDict(i));
    if (!name.empty())
      argByName[name] = i;
  }
  DenseMap<Value, int64_t> argOwner;
  for (auto [i, result] : llvm::enumerate(terminator->getOperands())) {
    int64_t stage = numStages - 1;
    if (Operation *def = result.getDefiningOp()) {
      if (std::optional<int64_t> s = stageOf(def))
        stage = *s;
    } else {
      // An argument returned as it is: the stage that reads it, if any.
      stage = 0;
      for (Operation *user : result.getUsers())
        if (std::optional<int64_t> s = stageOf(user)) {
          stage = *s;
          break;
        }
    }
    entry.setResultAttr(i, kStageAttrName, b.getI64IntegerAttr(stage));
    auto it = argByName.find(getCarryName(entry.getResultAttrDict(i)));
    if (it != argByName.end())
      argOwner[entry.getArgument(it->second)] = stage;
  }

  // The units of step 5, before transfers hide the readers on other
  // stages: an op's unit is the earliest, in its stage's order, of its own
  // unit and its readers' units on any stage (the F(m) an activation is
  // sent for is F(m) here too, the B(m) a gradient is needed by B(m)).
  // Computed backwards over the program, so readers come first.
  // A unit: (backward, micro-batch, chunk).
  using UnitKey = std::tuple<bool, int64_t, int64_t>;
  std::vector<std::map<UnitKey, int64_t>> unitPosition(numStages);
  for (int64_t s = 0; s < numStages; ++s) {
    std::vector<::loom::pipeline::Unit> order =
        ::loom::pipeline::getStageUnitOrder(
            info.schedule, numStages, s, info.microBatches, info.virtualStages);
    for (auto [k, unit] : llvm::enumerate(order))
      unitPosition[s][{unit.backward, unit.microBatch, unit.chunk}] =
          static_cast<int64_t>(k);
  }
  DenseMap<Operation *, UnitKey> unitOf;
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    std::optional<int64_t> stage = stageOf(&op);
    if (!stage)
      continue;
    int64_t best = kNoKey;
    auto consider = [&](UnitKey candidate) {
      int64_t at = unitPosition[*stage].at(candidate);
      if (at < best) {
        best = at;
        unitOf[&op] = candidate;
      }
    };
    if (auto m = op.getAttrOfType<IntegerAttr>(kMicroBatchAttrName)) {
      UnitKey own{op.hasAttr(kBackwardAttrName), m.getInt(), getOpChunk(&op)};
      if (!unitPosition[*stage].count(own)) {
        op.emitOpError("belongs to micro-batch ")
            << m.getInt() << " of chunk " << getOpChunk(&op)
            << " but the pipeline has " << info.microBatches
            << " micro-batch(es) of " << info.virtualStages
            << " chunk(s) per stage";
        return signalPassFailure();
      }
      consider(own);
    }
    for (Operation *user : op.getUsers()) {
      auto it = unitOf.find(user);
      if (it != unitOf.end())
        consider(it->second);
    }
  }

  // Step 4. Values in definition order, so tags follow the program.
  OpBuilder builder(context);
  int64_t nextTag = 0;
  auto transfer = [&](Value value, int64_t from) -> LogicalResult {
    // The readers per stage.
    std::map<int64_t, SmallVector<OpOperand *>> readers;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == terminator)
        continue;
      std::optional<int64_t> stage = stageOf(user);
      if (stage && *stage != from)
        readers[*stage].push_back(&use);
    }
    for (auto &[to, uses] : readers) {
      if (nextTag > kMaxMessageTag) {
        entry.emitError("dist-partition-stages: more than ")
            << kMaxMessageTag + 1 << " transfers between stages in one step";
        return failure();
      }
      auto type = cast<RankedTensorType>(value.getType());
      if (Operation *def = value.getDefiningOp())
        builder.setInsertionPointAfter(def);
      else
        builder.setInsertionPointToStart(&block);
      auto send = SendOp::create(builder, value.getLoc(), value,
                                 meshRef->getValue(), info.axis, to, nextTag);
      send->setAttr(kStageAttrName, b.getI64IntegerAttr(from));
      builder.setInsertionPointToStart(&block);
      auto recv = RecvOp::create(builder, value.getLoc(), type,
                                 meshRef->getValue(), info.axis, from,
                                 nextTag);
      recv->setAttr(kStageAttrName, b.getI64IntegerAttr(to));
      ++nextTag;
      for (OpOperand *use : uses)
        use->set(recv.getResult());
    }
    return success();
  };
  for (BlockArgument arg : block.getArguments()) {
    auto owner = argOwner.find(arg);
    if (owner != argOwner.end() && failed(transfer(arg, owner->second)))
      return signalPassFailure();
  }
  SmallVector<Operation *> original;
  for (Operation &op : block.without_terminator())
    original.push_back(&op);
  for (Operation *op : original) {
    if (isa<RecvOp>(op))
      continue;
    std::optional<int64_t> stage = stageOf(op);
    if (!stage)
      continue;
    for (Value result : op->getResults())
      if (failed(transfer(result, *stage)))
        return signalPassFailure();
  }

  // Step 5. Keys: the unit's position in the op's stage order; a receive
  // takes its earliest reader's, a send its producer's.
  DenseMap<Operation *, int64_t> position, key;
  int64_t counter = 0;
  for (Operation &op : block.without_terminator())
    position[&op] = counter++;
  for (Operation &op : block.without_terminator()) {
    std::optional<int64_t> stage = stageOf(&op);
    auto unit = unitOf.find(&op);
    if (stage && unit != unitOf.end())
      key[&op] = unitPosition[*stage].at(unit->second);
    else
      key[&op] = kNoKey;
  }
  for (Operation &op : block.without_terminator())
    if (auto recv = dyn_cast<RecvOp>(op))
      for (Operation *user : recv->getUsers())
        if (user != terminator)
          key[&op] = std::min(key[&op], key[user]);
  // Priority: (key, program position, kind) with receives right before
  // their first reader (kind 0) and sends right after their producer
  // (kind 2); ties (the sends of one value) by the op's own position, so
  // the order never depends on where ops happen to sit in memory.
  using Priority = std::tuple<int64_t, int64_t, int, int64_t, Operation *>;
  DenseMap<Operation *, Priority> priority;
  for (Operation &op : block.without_terminator()) {
    if (!stageOf(&op))
      continue;
    int64_t own = position[&op];
    if (auto recv = dyn_cast<RecvOp>(op)) {
      int64_t first = kNoKey;
      for (Operation *user : recv->getUsers())
        first = std::min(first, position[user]);
      priority[&op] = {key[&op], first, 0, own, &op};
    } else if (auto send = dyn_cast<SendOp>(op)) {
      Operation *def = send.getInput().getDefiningOp();
      priority[&op] = def && stageOf(def)
                          ? Priority{key[def], position[def], 2, own, &op}
                          : Priority{-1, -1, 2, own, &op};
    } else {
      priority[&op] = {key[&op], position[&op], 1, own, &op};
    }
  }

  // Step 6. A topological sort per stage.
  SmallVector<Operation *> unstaged;
  std::vector<SmallVector<Operation *>> stageOps(numStages);
  for (Operation &op : block.without_terminator()) {
    if (std::optional<int64_t> stage = stageOf(&op))
      stageOps[*stage].push_back(&op);
    else
      unstaged.push_back(&op);
  }
  SmallVector<Operation *> order(unstaged.begin(), unstaged.end());
  for (int64_t s = 0; s < numStages; ++s) {
    DenseMap<Operation *, int64_t> pending;
    DenseMap<Operation *, SmallVector<Operation *>> dependents;
    for (Operation *op : stageOps[s]) {
      pending[op] = 0;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (stageOf(def) == s) {
            ++pending[op];
            dependents[def].push_back(op);
          }
    }
    std::priority_queue<Priority, std::vector<Priority>, std::greater<>>
        ready;
    for (Operation *op : stageOps[s])
      if (pending[op] == 0)
        ready.push(priority[op]);
    while (!ready.empty()) {
      Operation *op = std::get<4>(ready.top());
      ready.pop();
      order.push_back(op);
      for (Operation *dependent : dependents[op])
        if (--pending[dependent] == 0)
          ready.push(priority[dependent]);
    }
  }
  for (Operation *op : order)
    op->moveBefore(terminator);

  module->setAttr(kPipelineAttrName, info.toAttr(context));
  mlir::emitRemark(entry.getLoc(), "pipeline: ")
      << numStages << " stages, " << nextTag
      << " transfers between stages per step, schedule "
      << ::loom::pipeline::getScheduleKindName(info.schedule);
}
