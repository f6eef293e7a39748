//===- Interpreter.cpp - Reference interpreter over simulated ranks -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. prepare: find the mesh, read each argument's and result's layout and
//    derive its global shape from its local type.
// 2. run: cut every global argument into each rank's block (a partial
//    argument is held whole by the first member of each partial group and
//    as zeros by the others), then advance the ranks under the scheduler:
//    each rank runs until it waits (a group collective, a receive with no
//    message); a collective whose whole group waits at it runs; no movement
//    at all is a deadlock and an error. After each op a rank frees the
//    values that die there and counts the bytes it holds (its peak is
//    `--report-memory`, by the liveness rules of dist::analyzeMemory).
// 3. assemble each global result from the ranks that hold coordinate 0 on
//    its replicated axes (checking that the other replicas agree), adding
//    the blocks of ranks that differ only in partial axes.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/Interpreter.h"

#include "RingAttention.h"

#include "loom/Dialect/AttributeNames.h"
#include "loom/Analysis/Cost/InPlaceReuse.h"
#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Runtime/Host/Elementwise.h"
#include "loom/Runtime/Host/Shape.h"
#include "loom/Support/InputLimits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

using ::mlir::loom::kInputAttrName;

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;
using dist::Layout;
using dist::Mesh;

std::string describeOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "`" << op->getName() << "`";
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << " at " << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
       << loc.getColumn();
  return text;
}

static std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static std::vector<std::string> axisNames(ArrayAttr axes) {
  std::vector<std::string> names;
  for (Attribute a : axes)
    names.push_back(cast<StringAttr>(a).getValue().str());
  return names;
}

//===----------------------------------------------------------------------===//
// Blocks of global tensors
//===----------------------------------------------------------------------===//

/// The block of `global` at `offset` with shape `shape`.
static HostTensor extractBlock(const HostTensor &global, const Shape &offset,
                               const Shape &shape) {
  HostTensor block = HostTensor::allocate(global.getKind(), shape);
  std::vector<int64_t> limits(shape.size()), strides(shape.size(), 1);
  for (size_t d = 0; d < shape.size(); ++d)
    limits[d] = offset[d] + shape[d];
  dispatchStorage(global.getKind(), [&](auto zero) {
    using T = decltype(zero);
    host::slice<T>(global.data<T>(), global.getShape(), offset, limits, strides,
                   block.mutableData<T>());
  });
  return block;
}

/// Adds `block` into `global` at `offset` (host::accumulateBlock, which the
/// harness of emitted programs uses too, so both assemble results alike).
static void accumulateBlock(HostTensor &global, const HostTensor &block,
                            const Shape &offset) {
  dispatchStorage(global.getKind(), [&](auto zero) {
    using T = decltype(zero);
    host::accumulateBlock<T>(block.data<T>(), block.getShape(), offset,
                             global.mutableData<T>(), global.getShape());
  });
}

/// Piece `index` of `n` equal pieces of `t` along `dim`.
static HostTensor pieceOf(const HostTensor &t, int64_t dim, int64_t index,
                          int64_t n) {
  Shape offset(t.getShape().size(), 0), shape = t.getShape();
  shape[dim] /= n;
  offset[dim] = index * shape[dim];
  return extractBlock(t, offset, shape);
}

/// Concatenates `parts` along `dim`.
static HostTensor concatAlong(const std::vector<HostTensor> &parts,
                              int64_t dim) {
  Shape shape = parts.front().getShape();
  shape[dim] = 0;
  for (const HostTensor &p : parts)
    shape[dim] += p.getShape()[dim];
  HostTensor out = HostTensor::allocate(parts.front().getKind(), shape);
  dispatchStorage(out.getKind(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<const T *> data;
    std::vector<Shape> shapes;
    for (const HostTensor &p : parts) {
      data.push_back(p.data<T>());
      shapes.push_back(p.getShape());
    }
    host::concat<T>(data, shapes, dim, out.mutableData<T>());
  });
  return out;
}

/// Combines `parts` elementwise in order: a sum (or, for i1, an or) or a
/// NaN-propagating max.
static HostTensor combine(const std::vector<HostTensor> &parts,
                          dist::ReductionKind kind) {
  HostTensor out =
      HostTensor::allocate(parts.front().getKind(), parts.front().getShape());
  int64_t n = out.getNumElements();
  dispatchStorage(out.getKind(), [&](auto zero) {
    using T = decltype(zero);
    T *dst = out.mutableData<T>();
    std::copy(parts[0].data<T>(), parts[0].data<T>() + n, dst);
    for (size_t p = 1; p < parts.size(); ++p) {
      const T *src = parts[p].data<T>();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, uint8_t>) {
          dst[i] = dst[i] | src[i];
        } else if (kind == dist::ReductionKind::Sum) {
          dst[i] += src[i];
        } else if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(src[i]) || std::isnan(dst[i]))
            dst[i] = std::numeric_limits<T>::quiet_NaN();
          else
            dst[i] = std::max(dst[i], src[i]);
        } else {
          dst[i] = std::max(dst[i], src[i]);
        }
      }
    }
  });
  return out;
}

//===----------------------------------------------------------------------===//
// Preparation
//===----------------------------------------------------------------------===//

/// Reads the `dist.layout` of one argument or result; `what` names it.
static std::optional<std::string>
readLayout(Attribute attr, Type type, const std::optional<Mesh> &mesh,
           const std::string &what, Layout &layout, Shape &globalShape) {
  // Scalars (a `dist.axis_index`, a step count) are rank-0 tensors.
  Shape local;
  if (auto tensorType = dyn_cast<RankedTensorType>(type)) {
    if (!tensorType.hasStaticShape())
      return what + " has type " + typeToString(type) +
             ", expected a statically shaped tensor";
    local.assign(tensorType.getShape().begin(), tensorType.getShape().end());
    // Its blocks across the mesh make the global tensor: that must not
    // overflow either (docs/Testing.md, "Bad input").
    int64_t devices = mesh ? mesh->getNumDevices() : 1;
    for (int64_t dim : local)
      if (dim > std::numeric_limits<int64_t>::max() / devices)
        return what + " has type " + typeToString(type) + ": dim " +
               std::to_string(dim) + " times the mesh's " +
               std::to_string(devices) + " devices overflows int64";
  } else if (!isa<IntegerType, IndexType, FloatType>(type)) {
    return what + " has type " + typeToString(type) +
           ", expected a tensor or a scalar";
  }
  if (!attr) {
    layout = Layout::getReplicated(local.size());
    globalShape = local;
    return std::nullopt;
  }
  auto layoutAttr = dyn_cast<dist::LayoutAttr>(attr);
  if (!layoutAttr)
    return what + ": `" + kLayoutAttrName.str() +
           "` expects a #dist.layout attribute";
  auto converted = layoutAttr.toLayout(*mesh);
  if (!converted)
    return what + ": " + converted.error();
  if (converted->getRank() != local.size())
    return what + ": layout of rank " + std::to_string(converted->getRank()) +
           " does not fit " + typeToString(type);
  layout = *converted;
  globalShape = layout.getGlobalShape(*mesh, local);
  return std::nullopt;
}

std::optional<std::string> Interpreter::prepare() {
  std::string fn = "@" + entry.getSymName().str();
  if (entry.isExternal())
    return "function " + fn + " has no body";
  if (!entry.getBody().hasOneBlock())
    return "function " + fn +
           " has several blocks; the interpreter runs "
           "straight-line functions";

  // The mesh: every layout and collective must name the same one.
  std::set<std::string> meshNames;
  auto noteLayout = [&](Attribute attr) {
    if (auto layout = dyn_cast_or_null<dist::LayoutAttr>(attr))
      meshNames.insert(layout.getMesh().getValue().str());
  };
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    noteLayout(entry.getArgAttr(i, kLayoutAttrName));
  for (unsigned i = 0; i < entry.getNumResults(); ++i)
    noteLayout(entry.getResultAttr(i, kLayoutAttrName));
  std::optional<std::string> bodyError;
  entry.walk([&](Operation *op) {
    // An op's own `dist.layout` (the layout of its result, which dropout
    // needs) names the mesh too.
    noteLayout(op->getAttr(kLayoutAttrName));
    if (op->getName().getDialectNamespace() != "dist")
      return;
    if (op->getNumRegions() == 0 && op != entry.getOperation())
      if (auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>("mesh"))
        meshNames.insert(meshRef.getValue().str());
  });
  if (meshNames.size() > 1)
    return "function " + fn + " uses several meshes (@" + *meshNames.begin() +
           ", @" + *std::next(meshNames.begin()) +
           "); the interpreter runs programs over one mesh";
  mesh.reset();
  if (!meshNames.empty()) {
    auto meshOp = SymbolTable::lookupNearestSymbolFrom<dist::MeshOp>(
        entry, StringAttr::get(entry.getContext(), *meshNames.begin()));
    if (!meshOp)
      return "function " + fn + " names mesh @" + *meshNames.begin() +
             ", which is not a `dist.mesh` of the module";
    auto m = meshOp.getMesh();
    if (!m)
      return "mesh @" + *meshNames.begin() + ": " + m.error();
    mesh = *m;
  }

  int64_t devices = mesh ? mesh->getNumDevices() : 1;
  if (options.ranks && *options.ranks != devices) {
    if (!mesh)
      return "--ranks " + std::to_string(*options.ranks) + ": function " + fn +
             " names no `dist.mesh`, so it runs on 1 rank";
    return "--ranks " + std::to_string(*options.ranks) +
           " does not match mesh @" + *meshNames.begin() + " " +
           mesh->toString() + ", which has " + std::to_string(devices) +
           " devices";
  }
  numRanks = devices;

  argLayouts.assign(entry.getNumArguments(), Layout::getReplicated(0));
  argShapes.assign(entry.getNumArguments(), {});
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    if (auto error = readLayout(entry.getArgAttr(i, kLayoutAttrName),
                                entry.getArgumentTypes()[i], mesh,
                                "argument #" + std::to_string(i) + " of " + fn,
                                argLayouts[i], argShapes[i]))
      return error;
  resultLayouts.assign(entry.getNumResults(), Layout::getReplicated(0));
  resultShapes.assign(entry.getNumResults(), {});
  for (unsigned i = 0; i < entry.getNumResults(); ++i)
    if (auto error = readLayout(entry.getResultAttr(i, kLayoutAttrName),
                                entry.getResultTypes()[i], mesh,
                                "result #" + std::to_string(i) + " of " + fn,
                                resultLayouts[i], resultShapes[i]))
      return error;
  if (bodyError)
    return bodyError;
  return checkSizes(fn);
}

std::optional<std::string> Interpreter::checkSizes(const std::string &fn) {
  // Every tensor is allocated at its type's size: check the element counts
  // and byte sizes (int64, the host's memory) before anything is.
  auto check = [&](Type type, const Shape &shape,
                   const std::string &what) -> std::optional<std::string> {
    StorageKind kind = storageKindFor(type, options.floatKind);
    int64_t elementBytes = static_cast<int64_t>(storageSize(kind));
    if (auto error = ::loom::support::checkTensorSize(shape, elementBytes))
      return what + " of type " + typeToString(type) + " (held as " +
             storageKindName(kind) + "): " + *error;
    return std::nullopt;
  };
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    if (auto error = check(entry.getArgumentTypes()[i], argShapes[i],
                           "argument #" + std::to_string(i) + " of " + fn +
                               " (global shape)"))
      return error;
  std::optional<std::string> sizeError;
  entry.walk([&](Operation *op) {
    for (OpResult result : op->getResults()) {
      auto tensorType = dyn_cast<RankedTensorType>(result.getType());
      if (!tensorType || !tensorType.hasStaticShape())
        continue;
      Shape shape(tensorType.getShape().begin(), tensorType.getShape().end());
      if (auto error =
              check(tensorType, shape,
                    describeOp(op) + ": result #" +
                        std::to_string(result.getResultNumber()))) {
        sizeError = error;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return sizeError;
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

namespace {
/// One simulated rank.
struct RankState {
  enum class Status { Running, Waiting, Done };
  ValueMap values;
  size_t pc = 0;
  Status status = Status::Running;
  std::vector<HostTensor> results;
  /// Bytes of the values held now and at most, each at its declared type
  /// (dist::getValueBytes).
  int64_t liveBytes = 0;
  int64_t peakBytes = 0;
  /// Pipelines: micro-batches whose forward began and whose backward has
  /// not ended, now and at most.
  std::set<int64_t> inFlight;
  int64_t peakInFlight = 0;
};

/// A message of a `dist.send` not yet received.
struct Message {
  Operation *send;
  int64_t tag;
  HostTensor tensor;
};

/// Runs the ranks of one `Interpreter::run`.
class Execution {
public:
  Execution(func::FuncOp entry, const KernelRegistry &registry,
            const RunOptions &options, const std::optional<Mesh> &mesh,
            int64_t numRanks)
      : registry(registry), options(options), mesh(mesh), ranks(numRanks),
        inPlace(entry) {
    // Each value dies after its last user, or right after its definition
    // when nothing uses it; loop-carried arguments (parameters, optimizer
    // states) live on until the value carried into them takes their
    // storage (the in-place rule, noteResults), or to the end. These are
    // the liveness rules of dist::analyzeMemory, so the measured peak is
    // the predicted one.
    llvm::DenseMap<Value, size_t> lastUse;
    for (BlockArgument arg : entry.getArguments())
      lastUse[arg] = 0;
    for (Operation &op : entry.getBody().front()) {
      for (Value operand : op.getOperands())
        lastUse[operand] = ops.size();
      for (Value result : op.getResults())
        lastUse[result] = ops.size();
      ops.push_back(&op);
    }
    dying.resize(ops.size());
    // A pipelined program: each op runs on its stage's ranks only, and a
    // micro-batch is in flight from its first forward op to its last
    // backward op (docs/Pipeline.md).
    auto module = entry->getParentOfType<ModuleOp>();
    if (auto pipeline =
            module->getAttrOfType<dist::PipelineAttr>(dist::kPipelineAttrName))
      if (mesh && mesh->findAxis(pipeline.getAxis().str()))
        pipelineAxis = *mesh->findAxis(pipeline.getAxis().str());
    opStage.resize(ops.size());
    llvm::DenseSet<Operation *> activationOps =
        dist::getActivationOps(entry.getBody().front(), [&](unsigned i) {
          return static_cast<bool>(entry.getArgAttr(i, kInputAttrName));
        });
    startsMicroBatch.resize(ops.size());
    for (auto [index, op] : llvm::enumerate(ops)) {
      startsMicroBatch[index] = activationOps.contains(op) &&
                                !op->hasAttr(dist::kBackwardAttrName);
      opStage[index] = dist::getOpStage(op);
      std::optional<int64_t> key = dist::getInFlightKey(op);
      if (key && op->hasAttr(dist::kBackwardAttrName))
        lastBackward[{opStage[index].value_or(-1), *key}] = index;
    }
    for (BlockArgument arg : entry.getArguments())
      if (!dist::isCarriedArgument(entry, arg.getArgNumber()))
        dying[lastUse[arg]].push_back(arg);
    if (pipelineAxis) {
      llvm::DenseMap<Operation *, size_t> indexOf;
      for (auto [index, op] : llvm::enumerate(ops))
        indexOf[op] = index;
      for (BlockArgument arg : entry.getArguments()) {
        std::set<int64_t> stages;
        for (Operation *user : arg.getUsers())
          if (!isa<func::ReturnOp>(user))
            stages.insert(opStage[indexOf[user]].value_or(-1));
        argStages.push_back({arg, stages});
      }
    }
    for (Operation *op : ops)
      for (Value result : op->getResults())
        dying[lastUse[result]].push_back(result);
  }

  /// Runs every rank to the end; `ranks[r].results` holds the results.
  std::optional<std::string> runAll(std::vector<RankState> &initial);

  /// The pipeline stage of rank `r` (0 without a pipeline).
  int64_t getStage(int64_t r) const {
    return pipelineAxis ? mesh->getCoordinates(r)[*pipelineAxis] : 0;
  }
  /// Whether op `index` runs on rank `r`.
  bool runsOn(size_t index, int64_t r) const {
    return !pipelineAxis || !opStage[index] || *opStage[index] == getStage(r);
  }

private:
  enum class Outcome { Advanced, Waits, Finished };

  /// Runs one op on rank `r`, or reports that the rank must wait.
  std::optional<std::string> step(int64_t r, Outcome &outcome);
  /// Runs the group collective every rank of `group` waits at.
  std::optional<std::string> runCollective(Operation *op,
                                           const std::vector<int64_t> &group);
  std::optional<std::string> deadlock();
  /// Counts the results op `index` bound on rank `r` and updates its peak.
  /// A result that took an argument's storage (the in-place rule) drops
  /// that argument first, so the storage is counted once, as
  /// dist::analyzeMemory counts it.
  void noteResults(int64_t r, size_t index) {
    RankState &state = ranks[r];
    for (Value result : ops[index]->getResults()) {
      if (!state.values.count(result.getAsOpaquePointer()))
        continue;
      if (std::optional<BlockArgument> donor = inPlace.getDonor(result))
        if (state.values.erase(donor->getAsOpaquePointer()))
          state.liveBytes -= dist::getValueBytes(donor->getType());
      state.liveBytes += dist::getValueBytes(result.getType());
    }
    state.peakBytes = std::max(state.peakBytes, state.liveBytes);
  }
  /// Frees the values of rank `r` that die at op `index`, so that a run
  /// holds only live tensors (a training step's activations would otherwise
  /// all stay in memory).
  void release(int64_t r, size_t index) {
    RankState &state = ranks[r];
    for (Value value : dying[index])
      if (state.values.erase(value.getAsOpaquePointer()))
        state.liveBytes -= dist::getValueBytes(value.getType());
  }
  std::string at(int64_t r, Operation *op) {
    return "rank " + std::to_string(r) + ": " + describeOp(op) + ": ";
  }
  /// The rank whose coordinate on `axis` is `coordinate`, other coordinates
  /// as `r`'s.
  int64_t peer(int64_t r, StringRef axis, int64_t coordinate) {
    std::vector<int64_t> coords = mesh->getCoordinates(r);
    coords[*mesh->findAxis(axis)] = coordinate;
    return mesh->getRank(coords);
  }

  const KernelRegistry &registry;
  const RunOptions &options;
  const std::optional<Mesh> &mesh;
  std::vector<Operation *> ops;
  /// For each op, the values that die once it has run.
  std::vector<std::vector<Value>> dying;
  std::vector<RankState> ranks;
  /// Which values take a carried argument's storage (allocate() writes
  /// them there; noteResults drops the argument).
  dist::InPlaceReuse inPlace;
  /// Pending messages by (sender, receiver), in send order.
  std::map<std::pair<int64_t, int64_t>, std::deque<Message>> mailboxes;
  /// The index of the pipeline axis in the mesh, for a pipelined program.
  std::optional<size_t> pipelineAxis;
  /// Per op, its `dist.stage`.
  std::vector<std::optional<int64_t>> opStage;
  /// Per op: a forward op computing activations (its micro-batch is in
  /// flight once it ran).
  std::vector<bool> startsMicroBatch;
  /// Pipelines: the stages whose ops read each argument (-1: every stage);
  /// a rank holds only those its stage reads.
  std::vector<std::pair<Value, std::set<int64_t>>> argStages;
  /// Per (stage, micro-batch), the index of its last backward op.
  std::map<std::pair<int64_t, int64_t>, size_t> lastBackward;
};
} // namespace

static bool isGroupCollective(Operation *op) {
  return isa<dist::AllGatherOp, dist::AllReduceOp, dist::ReduceScatterOp,
             dist::AllToAllOp, dist::CollectivePermuteOp, dist::BroadcastOp,
             dist::RingAttentionOp, dist::RingAttentionGradOp>(op);
}

bool isRoundedToLowPrecision(Value result) {
  Type element = getElementTypeOrSelf(result.getType());
  if (!element.isBF16() && !element.isF16())
    return false;
  Operation *op = result.getDefiningOp();
  if (!op)
    return false;
  // Ring attention stores its float results as loom ops do.
  if (isa<dist::RingAttentionOp, dist::RingAttentionGradOp>(op))
    return true;
  // Collectives move rounded elements, except the sums.
  if (auto reduce = dyn_cast<dist::AllReduceOp>(op))
    return reduce.getKind() == dist::ReductionKind::Sum;
  if (isa<dist::ReduceScatterOp>(op))
    return true;
  return isa_and_nonnull<LoomDialect>(op->getDialect()) &&
         !isa<CastOp, ReshapeOp>(op);
}

/// Rounds the float elements of `tensor` in place to `element` (bf16 or
/// f16), the low-precision result rule.
static void roundInPlace(HostTensor &tensor, Type element) {
  host::CastTarget target =
      element.isBF16() ? host::CastTarget::BF16 : host::CastTarget::F16;
  dispatchFloat(tensor.getKind(), [&](auto zero) {
    using T = decltype(zero);
    host::roundToPrecision<T>(tensor.mutableData<T>(), tensor.getNumElements(),
                              target);
  });
}

/// The value of an `arith.constant` in the run's storage.
static std::optional<std::string>
constantValue(arith::ConstantOp op, StorageKind floatKind, HostTensor &out) {
  Attribute value = op.getValue();
  Type type = op.getType();
  Shape shape;
  if (auto tensorType = dyn_cast<RankedTensorType>(type))
    shape.assign(tensorType.getShape().begin(), tensorType.getShape().end());
  out = HostTensor::allocate(storageKindFor(type, floatKind), shape);
  int64_t n = out.getNumElements();
  std::vector<double> floats;
  std::vector<int64_t> ints;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (isa<FloatType>(dense.getElementType()))
      for (const APFloat &f : dense.getValues<APFloat>())
        floats.push_back(f.convertToDouble());
    else
      for (const APInt &i : dense.getValues<APInt>())
        ints.push_back(i.getBitWidth() == 1 ? int64_t(!i.isZero())
                                            : i.getSExtValue());
  } else if (auto f = dyn_cast<FloatAttr>(value)) {
    floats.push_back(f.getValueAsDouble());
  } else if (auto i = dyn_cast<IntegerAttr>(value)) {
    ints.push_back(i.getType().isInteger(1) ? int64_t(!i.getValue().isZero())
                                            : i.getValue().getSExtValue());
  } else {
    return std::string("constant kind is not supported (expected dense "
                       "elements or a scalar)");
  }
  dispatchStorage(out.getKind(), [&](auto zero) {
    using T = decltype(zero);
    T *dst = out.mutableData<T>();
    for (int64_t k = 0; k < n; ++k) {
      if (!floats.empty())
        dst[k] = static_cast<T>(floats[floats.size() == 1 ? 0 : k]);
      else
        dst[k] = static_cast<T>(ints[ints.size() == 1 ? 0 : k]);
    }
  });
  return std::nullopt;
}

std::optional<std::string> Execution::step(int64_t r, Outcome &outcome) {
  RankState &state = ranks[r];
  Operation *op = ops[state.pc];
  KernelContext ctx(state.values, options.floatKind, r, options.seed,
                    mesh ? &*mesh : nullptr, static_cast<int64_t>(ranks.size()),
                    options.rngStep);
  ctx.setInPlace(&inPlace);
  outcome = Outcome::Advanced;

  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    // A pipelined rank returns only what its stage computed; the others
    // stay empty and are assembled from their stage's ranks.
    for (Value v : ret.getOperands())
      state.results.push_back(state.values.count(v.getAsOpaquePointer())
                                  ? ctx.get(v)
                                  : HostTensor());
    outcome = Outcome::Finished;
    return std::nullopt;
  }
  if (!runsOn(state.pc, r)) {
    ++state.pc;
    return std::nullopt;
  }
  if (pipelineAxis)
    if (std::optional<int64_t> key = dist::getInFlightKey(op)) {
      // Under interleaved 1F1B a key is one (chunk, micro-batch) pair.
      if (startsMicroBatch[state.pc])
        state.inFlight.insert(*key);
      state.peakInFlight = std::max(
          state.peakInFlight, static_cast<int64_t>(state.inFlight.size()));
      auto last = lastBackward.find({getStage(r), *key});
      if (last != lastBackward.end() && last->second == state.pc)
        state.inFlight.erase(*key);
    }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    HostTensor value;
    if (auto error = constantValue(constant, options.floatKind, value))
      return at(r, op) + *error;
    ctx.bind(constant.getResult(), value);
    ++state.pc;
    return std::nullopt;
  }
  if (isa<arith::AddIOp, arith::MulIOp>(op)) {
    // Integer index arithmetic of partitioned code: a block's global offset
    // from dist.axis_index (e.g. the first row of a vocab-parallel shard).
    if (!op->getResult(0).getType().isIntOrIndex())
      return at(r, op) + "integer arithmetic runs on scalars only";
    int64_t lhs = ctx.get(op->getOperand(0)).data<int64_t>()[0];
    int64_t rhs = ctx.get(op->getOperand(1)).data<int64_t>()[0];
    HostTensor &out = ctx.allocate(op->getResult(0));
    out.mutableData<int64_t>()[0] =
        isa<arith::AddIOp>(op) ? lhs + rhs : lhs * rhs;
    ++state.pc;
    return std::nullopt;
  }
  if (op->getName().getDialectNamespace() == "dist") {
    if (isGroupCollective(op)) {
      outcome = Outcome::Waits;
      return std::nullopt;
    }
    if (auto annotate = dyn_cast<dist::AnnotateOp>(op)) {
      // A constraint for the strategy search; the value is unchanged.
      ctx.bind(annotate.getResult(), ctx.get(annotate.getInput()));
    } else if (isa<dist::ReshardOp>(op)) {
      if (ranks.size() > 1)
        return at(r, op) + "reshards must be lowered to collectives "
                           "(-dist-lower-reshards) before an SPMD run";
      ctx.bind(op->getResult(0), ctx.get(op->getOperand(0)));
    } else if (auto index = dyn_cast<dist::AxisIndexOp>(op)) {
      HostTensor &out = ctx.allocate(index.getResult());
      out.mutableData<int64_t>()[0] =
          mesh->getCoordinates(r)[*mesh->findAxis(index.getAxis())];
    } else if (auto slice = dyn_cast<dist::AllSliceOp>(op)) {
      std::vector<std::string> axes = axisNames(slice.getAxes());
      HostTensor piece = pieceOf(
          ctx.get(slice.getInput()), static_cast<int64_t>(slice.getDim()),
          mesh->getGroupIndex(r, axes), mesh->getGroupSize(axes));
      ctx.bind(slice.getResult(), piece);
    } else if (auto send = dyn_cast<dist::SendOp>(op)) {
      int64_t to = peer(r, send.getAxis(), static_cast<int64_t>(send.getTo()));
      // A send to oneself does nothing: a program that runs one instruction
      // stream on every stage sends only from the stages that are not `to`.
      if (to != r)
        mailboxes[{r, to}].push_back(
            {op, static_cast<int64_t>(send.getTag()), ctx.get(send.getInput())});
    } else if (auto recv = dyn_cast<dist::RecvOp>(op)) {
      int64_t from =
          peer(r, recv.getAxis(), static_cast<int64_t>(recv.getFrom()));
      if (from == r) {
        // Receiving from oneself yields zeros (see the send above).
        ctx.allocate(recv.getResult());
      } else {
        auto &box = mailboxes[{from, r}];
        auto tag = static_cast<int64_t>(recv.getTag());
        auto found = llvm::find_if(
            box, [&](const Message &message) { return message.tag == tag; });
        if (found == box.end()) {
          outcome = Outcome::Waits;
          return std::nullopt;
        }
        Message message = *found;
        box.erase(found);
        auto type = cast<RankedTensorType>(recv.getResult().getType());
        if (message.tensor.getShape() !=
            Shape(type.getShape().begin(), type.getShape().end()))
          return at(r, op) + "receives " + typeToString(type) + " but " +
                 describeOp(message.send) + " on rank " + std::to_string(from) +
                 " sent shape " +
                 HostTensor::formatShape(message.tensor.getShape());
        ctx.bind(recv.getResult(), message.tensor);
      }
    } else {
      return at(r, op) + "unsupported op; the interpreter runs loom, dist, "
                         "arith.constant, arith.addi, arith.muli and "
                         "func.return ops";
    }
    ++state.pc;
    return std::nullopt;
  }
  if (op->getName().getDialectNamespace() == "loom") {
    const KernelFn *kernel = registry.lookup(op->getName().getStringRef());
    if (!kernel)
      return at(r, op) + "op `" + op->getName().getStringRef().str() +
             "` has no interpreter kernel yet";
    if (auto error = (*kernel)(op, ctx))
      return at(r, op) + *error;
    // A bf16 or f16 result: computed in the run's float type, then rounded
    // once to its own. The tensor is fresh: only loom.reshape, which is not
    // rounded, shares its operand's storage.
    for (Value result : op->getResults()) {
      if (!isRoundedToLowPrecision(result))
        continue;
      HostTensor out = ctx.get(result);
      roundInPlace(out, getElementTypeOrSelf(result.getType()));
    }
    ++state.pc;
    return std::nullopt;
  }
  return at(r, op) + "unsupported op; the interpreter runs loom, dist, "
                     "arith.constant, arith.addi, arith.muli and "
                     "func.return ops";
}

std::optional<std::string>
Execution::runCollective(Operation *op, const std::vector<int64_t> &group) {
  int64_t n = static_cast<int64_t>(group.size());
  if (isa<dist::RingAttentionOp, dist::RingAttentionGradOp>(op)) {
    // Many operands and results: the group's blocks go in whole.
    std::vector<std::vector<HostTensor>> operands;
    for (int64_t member : group) {
      KernelContext ctx(ranks[member].values, options.floatKind, member, 0);
      operands.emplace_back();
      for (Value operand : op->getOperands())
        operands.back().push_back(ctx.get(operand));
    }
    auto results = runRingAttention(op, operands);
    for (int64_t i = 0; i < n; ++i)
      for (auto [result, value] :
           llvm::zip_equal(op->getResults(), (*results)[i])) {
        if (isRoundedToLowPrecision(result))
          roundInPlace(value, getElementTypeOrSelf(result.getType()));
        ranks[group[i]].values[result.getAsOpaquePointer()] = value;
      }
    return std::nullopt;
  }
  std::vector<HostTensor> inputs;
  for (int64_t member : group)
    inputs.push_back(
        KernelContext(ranks[member].values, options.floatKind, member, 0)
            .get(op->getOperand(0)));
  std::vector<HostTensor> outputs(n);
  if (auto gather = dyn_cast<dist::AllGatherOp>(op)) {
    HostTensor all = concatAlong(inputs, static_cast<int64_t>(gather.getDim()));
    outputs.assign(n, all);
  } else if (auto reduce = dyn_cast<dist::AllReduceOp>(op)) {
    outputs.assign(n, combine(inputs, reduce.getKind()));
  } else if (auto scatter = dyn_cast<dist::ReduceScatterOp>(op)) {
    HostTensor sum = combine(inputs, dist::ReductionKind::Sum);
    for (int64_t i = 0; i < n; ++i)
      outputs[i] = pieceOf(sum, static_cast<int64_t>(scatter.getDim()), i, n);
  } else if (auto a2a = dyn_cast<dist::AllToAllOp>(op)) {
    auto split = static_cast<int64_t>(a2a.getSplitDim());
    auto concat = static_cast<int64_t>(a2a.getConcatDim());
    for (int64_t i = 0; i < n; ++i) {
      std::vector<HostTensor> pieces;
      for (int64_t j = 0; j < n; ++j)
        pieces.push_back(pieceOf(inputs[j], split, i, n));
      outputs[i] = concatAlong(pieces, concat);
    }
  } else if (auto permute = dyn_cast<dist::CollectivePermuteOp>(op)) {
    int64_t shift = static_cast<int64_t>(permute.getShift());
    for (int64_t j = 0; j < n; ++j)
      outputs[((j + shift) % n + n) % n] = inputs[j];
  } else if (auto broadcast = dyn_cast<dist::BroadcastOp>(op)) {
    outputs.assign(n, inputs[static_cast<int64_t>(broadcast.getRoot())]);
  }
  // A sum of bf16 or f16 blocks: added in the run's float type, then
  // rounded once to its own (as loom ops are).
  if (isRoundedToLowPrecision(op->getResult(0)))
    for (HostTensor &out : outputs)
      roundInPlace(out, getElementTypeOrSelf(op->getResult(0).getType()));
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Shape expected(type.getShape().begin(), type.getShape().end());
  for (int64_t i = 0; i < n; ++i) {
    if (outputs[i].getShape() != expected)
      return at(group[i], op) + "computes shape " +
             HostTensor::formatShape(outputs[i].getShape()) +
             ", but the result type is " + typeToString(type);
    Value result = op->getResult(0);
    if (!inPlace.getDonor(result)) {
      ranks[group[i]].values[result.getAsOpaquePointer()] = outputs[i];
      continue;
    }
    // A result that takes an argument's storage (ZeRO's gathered parameter
    // in the place of the old one) is copied there (allocate).
    KernelContext ctx(ranks[group[i]].values, options.floatKind, group[i], 0);
    ctx.setInPlace(&inPlace);
    HostTensor &slot = ctx.allocate(result);
    if (slot.getKind() == outputs[i].getKind() &&
        slot.getByteSize() == outputs[i].getByteSize())
      std::copy_n(outputs[i].rawData(), slot.getByteSize(),
                  slot.mutableRawData());
    else
      slot = outputs[i];
  }
  return std::nullopt;
}

std::optional<std::string> Execution::deadlock() {
  std::string message = "the ranks cannot make progress (a deadlock or "
                        "mismatched collectives):";
  for (size_t r = 0; r < ranks.size(); ++r) {
    message += "\n  rank " + std::to_string(r) + ": ";
    if (ranks[r].status == RankState::Status::Done) {
      message += "finished";
      continue;
    }
    Operation *op = ops[ranks[r].pc];
    message += "waits in " + describeOp(op);
    if (isGroupCollective(op)) {
      std::vector<int64_t> group =
          mesh->getGroup(r, axisNames(op->getAttrOfType<ArrayAttr>("axes")));
      message += " for group {";
      for (size_t i = 0; i < group.size(); ++i)
        message += (i ? ", " : "") + std::to_string(group[i]);
      message += "}";
    } else if (auto recv = dyn_cast<dist::RecvOp>(op)) {
      message += " for rank " +
                 std::to_string(peer(r, recv.getAxis(),
                                     static_cast<int64_t>(recv.getFrom())));
    }
  }
  return message;
}

std::optional<std::string> Execution::runAll(std::vector<RankState> &initial) {
  ranks = std::move(initial);
  using Status = RankState::Status;
  // The arguments are held from the start, on a pipeline only by the stages
  // that read them (another stage's parameters never reach a rank).
  for (auto [r, state] : llvm::enumerate(ranks))
    for (auto &[arg, stages] : argStages)
      if (!stages.count(-1) && !stages.count(getStage(r)))
        state.values.erase(arg.getAsOpaquePointer());
  for (RankState &state : ranks) {
    state.liveBytes = 0;
    for (auto &[key, tensor] : state.values)
      state.liveBytes +=
          dist::getValueBytes(Value::getFromOpaquePointer(key).getType());
    state.peakBytes = state.liveBytes;
  }
  while (true) {
    bool progress = false;
    // Advance every rank as far as it goes on its own.
    for (size_t r = 0; r < ranks.size(); ++r) {
      while (ranks[r].status != Status::Done) {
        Outcome outcome;
        size_t index = ranks[r].pc;
        if (auto error = step(r, outcome))
          return error;
        if (outcome == Outcome::Waits) {
          ranks[r].status = Status::Waiting;
          break;
        }
        noteResults(r, index);
        if (outcome == Outcome::Advanced)
          release(r, index);
        progress = true;
        ranks[r].status =
            outcome == Outcome::Finished ? Status::Done : Status::Running;
      }
    }
    if (llvm::all_of(
            ranks, [](const RankState &s) { return s.status == Status::Done; }))
      break;
    // Run each collective whose whole group waits at it.
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (ranks[r].status != Status::Waiting)
        continue;
      Operation *op = ops[ranks[r].pc];
      if (!isGroupCollective(op))
        continue;
      std::vector<int64_t> group =
          mesh->getGroup(r, axisNames(op->getAttrOfType<ArrayAttr>("axes")));
      bool ready = llvm::all_of(group, [&](int64_t m) {
        return ranks[m].status == Status::Waiting && ops[ranks[m].pc] == op;
      });
      if (!ready)
        continue;
      if (auto error = runCollective(op, group))
        return error;
      for (int64_t m : group) {
        noteResults(m, ranks[m].pc);
        release(m, ranks[m].pc);
        ++ranks[m].pc;
        ranks[m].status = Status::Running;
      }
      progress = true;
    }
    // A waiting receive is retried by the next sweep; if nothing ran in this
    // one, nothing will.
    for (RankState &s : ranks)
      if (s.status == Status::Waiting && isa<dist::RecvOp>(ops[s.pc]))
        s.status = Status::Running;
    if (!progress)
      return deadlock();
  }
  for (auto &[route, box] : mailboxes)
    if (!box.empty())
      return describeOp(box.front().send) + " from rank " +
             std::to_string(route.first) + " to rank " +
             std::to_string(route.second) +
             " is never received (no matching `dist.recv`)";
  initial = std::move(ranks);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Runs
//===----------------------------------------------------------------------===//

std::optional<size_t> Interpreter::getPipelineAxisIndex() const {
  auto module = entry->getParentOfType<ModuleOp>();
  auto pipeline =
      module->getAttrOfType<dist::PipelineAttr>(dist::kPipelineAttrName);
  if (!pipeline || !mesh)
    return std::nullopt;
  return mesh->findAxis(pipeline.getAxis().str());
}

std::optional<std::string> Interpreter::run(const std::vector<HostTensor> &args,
                                            std::vector<HostTensor> &results) {
  if (args.size() != entry.getNumArguments())
    return "expected " + std::to_string(entry.getNumArguments()) +
           " arguments, got " + std::to_string(args.size());
  std::vector<RankState> ranks(numRanks);
  for (unsigned i = 0; i < args.size(); ++i) {
    StorageKind kind =
        storageKindFor(entry.getArgumentTypes()[i], options.floatKind);
    if (args[i].getShape() != argShapes[i] || args[i].getKind() != kind)
      return "argument #" + std::to_string(i) + " expects " +
             storageKindName(kind) + " " +
             HostTensor::formatShape(argShapes[i]) + ", got " +
             storageKindName(args[i].getKind()) + " " +
             HostTensor::formatShape(args[i].getShape());
    const Layout &layout = argLayouts[i];
    for (int64_t r = 0; r < numRanks; ++r) {
      HostTensor local = args[i];
      if (mesh) {
        auto offset = layout.getBlockOffset(*mesh, argShapes[i], r);
        auto shape = layout.getLocalShape(*mesh, argShapes[i]);
        if (!offset || !shape)
          return "argument #" + std::to_string(i) + ": " +
                 (!offset ? offset.error() : shape.error());
        local = extractBlock(args[i], *offset, *shape);
        // A pending sum: the first member of each partial group holds the
        // value, the others zeros.
        if (mesh->getGroupIndex(r, layout.getPartialAxes()) != 0)
          local = HostTensor::allocate(local.getKind(), local.getShape());
      }
      ranks[r].values[entry.getArgument(i).getAsOpaquePointer()] = local;
    }
  }

  Execution execution(entry, registry, options, mesh, numRanks);
  if (auto error = execution.runAll(ranks))
    return error;
  peakLiveBytes.clear();
  peakInFlight.clear();
  for (const RankState &state : ranks) {
    peakLiveBytes.push_back(state.peakBytes);
    peakInFlight.push_back(state.peakInFlight);
  }

  results.clear();
  for (unsigned i = 0; i < entry.getNumResults(); ++i) {
    if (!mesh) {
      results.push_back(ranks[0].results[i]);
      continue;
    }
    const Layout &layout = resultLayouts[i];
    // A pipelined result lives on the ranks of the stage that computes it.
    std::optional<int64_t> stage;
    std::optional<size_t> pipelineAxis;
    if (auto attr = entry.getResultAttrOfType<IntegerAttr>(
            i, dist::kStageAttrName)) {
      pipelineAxis = getPipelineAxisIndex();
      if (pipelineAxis)
        stage = attr.getInt();
    }
    auto onStage = [&](int64_t r) {
      return !stage || mesh->getCoordinates(r)[*pipelineAxis] == *stage;
    };
    int64_t first = 0;
    while (!onStage(first))
      ++first;
    HostTensor global = HostTensor::allocate(ranks[first].results[i].getKind(),
                                             resultShapes[i]);
    // Axes the layout does not use hold replicas: take coordinate 0 and
    // check that the others agree.
    std::vector<std::string> replicated;
    for (auto [index, axis] : llvm::enumerate(mesh->getAxes()))
      if (!layout.uses(axis.name) && (!pipelineAxis || index != *pipelineAxis))
        replicated.push_back(axis.name);
    for (int64_t r = 0; r < numRanks; ++r) {
      if (!onStage(r))
        continue;
      const HostTensor &local = ranks[r].results[i];
      int64_t replica = mesh->getGroupIndex(r, replicated);
      if (replica != 0) {
        int64_t canonical = mesh->getGroup(r, replicated).front();
        if (!local.sameValues(ranks[canonical].results[i]))
          return "result #" + std::to_string(i) +
                 " is replicated over the unused mesh axes, but rank " +
                 std::to_string(r) + " holds other values than rank " +
                 std::to_string(canonical) +
                 " (give the result a `dist.layout` saying how it is spread)";
        continue;
      }
      auto offset = layout.getBlockOffset(*mesh, resultShapes[i], r);
      if (!offset)
        return "result #" + std::to_string(i) + ": " + offset.error();
      accumulateBlock(global, local, *offset);
    }
    results.push_back(global);
  }
  return std::nullopt;
}

} // namespace mlir::loom::interp
