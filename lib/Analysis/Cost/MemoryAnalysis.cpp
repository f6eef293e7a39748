//===- MemoryAnalysis.cpp - Peak live bytes of a training step ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A liveness sweep over the entry block, with the rules the reference
// interpreter applies when it frees values (docs/CostModel.md, "Memory"):
//
//   1. number the ops of the block 0..n-1 (the terminator is n-1); a value
//      is live at every step from its start (0 for arguments, its defining
//      op otherwise) to its end (its last user; its start when unused;
//      n-1 for loop-carried arguments, but k-1 for one whose storage the
//      value carried into it takes at op k, by the in-place rule of
//      InPlaceReuse.h: the storage is counted once, the argument's until
//      op k and the new value's from there);
//   2. classify every value: names of arguments and results say parameters,
//      optimizer states and gradients; optimizer updates say which values
//      are gradients and updated copies; the forward ops are the ancestors
//      of the returned `loss`, and a forward result used by any other op
//      (except the return) is an activation kept for backward;
//   3. add each value's bytes to its category over [start, end] with a
//      difference array and keep the first step whose total is largest;
//      `getLiveValuesAtPeak` lists the values whose interval covers it.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "loom/Analysis/Cost/InPlaceReuse.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <array>

using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;

using namespace mlir;
using namespace mlir::loom;

namespace mlir::loom::dist {

int64_t getValueBytes(Type type) {
  auto elementBytes = [](Type element) -> int64_t {
    if (element.isIndex())
      return 8;
    if (!element.isIntOrFloat())
      return 0;
    return (static_cast<int64_t>(element.getIntOrFloatBitWidth()) + 7) / 8;
  };
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    if (!shaped.hasRank() || !shaped.hasStaticShape())
      return 0;
    return shaped.getNumElements() * elementBytes(shaped.getElementType());
  }
  return elementBytes(type);
}

/// The ecosystem name of an argument: its `#loom.param` name, else its
/// `loom.name`, else empty.
static StringRef getArgumentName(func::FuncOp entry, unsigned index) {
  if (auto param = entry.getArgAttrOfType<ParamAttr>(index, kParamAttrName))
    return param.getName();
  if (auto name = entry.getArgAttrOfType<StringAttr>(index, kNameAttrName))
    return name.getValue();
  return {};
}

static StringRef getResultName(func::FuncOp entry, unsigned index) {
  if (auto name = entry.getResultAttrOfType<StringAttr>(index, kNameAttrName))
    return name.getValue();
  return {};
}

bool isCarriedArgument(func::FuncOp entry, unsigned index) {
  if (entry.getArgAttr(index, kParamAttrName))
    return true;
  auto name = entry.getArgAttrOfType<StringAttr>(index, kNameAttrName);
  if (!name)
    return false;
  for (unsigned r = 0; r < entry.getNumResults(); ++r)
    if (getResultName(entry, r) == name.getValue())
      return true;
  return false;
}

namespace {
using Category = MemoryCategory;
constexpr Category Parameters = MemoryCategory::Parameters;
constexpr Category Gradients = MemoryCategory::Gradients;
constexpr Category OptimizerStates = MemoryCategory::OptimizerStates;
constexpr Category Activations = MemoryCategory::Activations;
constexpr Category Other = MemoryCategory::Other;
constexpr unsigned kNumCategories = 5;

/// What a name says about a value: the name of a parameter, `<param>.grad`,
/// or `<param>.<state>`; `Other` for anything else.
class NameClassifier {
public:
  explicit NameClassifier(func::FuncOp entry) {
    for (unsigned i = 0; i < entry.getNumArguments(); ++i)
      if (auto param = entry.getArgAttrOfType<ParamAttr>(i, kParamAttrName))
        params.insert(param.getName());
  }

  Category classify(StringRef name) const {
    if (name.empty())
      return Other;
    if (params.contains(name))
      return Parameters;
    size_t dot = name.rfind('.');
    while (dot != StringRef::npos && dot > 0) {
      if (params.contains(name.take_front(dot)))
        return name.drop_front(dot + 1) == "grad" ? Gradients : OptimizerStates;
      dot = name.take_front(dot).rfind('.');
    }
    return Other;
  }

private:
  llvm::StringSet<> params;
};
} // namespace

namespace {
/// One value's live interval and category.
struct Interval {
  Value value;
  int64_t start, end, bytes;
  Category category;
};

/// Every value of the entry block with its interval (steps 1 and 2).
struct Liveness {
  std::vector<Interval> intervals;
  int64_t numSteps = 0;
  llvm::SmallVector<Operation *> ops;
};
} // namespace

static Liveness computeLiveness(func::FuncOp entry,
                                std::optional<int64_t> stage) {
  Liveness liveness;
  if (entry.isExternal() || !entry.getBody().hasOneBlock())
    return liveness;
  Block &block = entry.getBody().front();
  llvm::DenseMap<Operation *, int64_t> index;
  for (Operation &op : block) {
    index[&op] = static_cast<int64_t>(index.size());
    liveness.ops.push_back(&op);
  }
  int64_t numSteps = static_cast<int64_t>(index.size());
  liveness.numSteps = numSteps;
  if (numSteps == 0)
    return liveness;
  Operation *terminator = &block.back();
  NameClassifier names(entry);

  // 2. What the signature and the optimizer updates say.
  llvm::DenseMap<Value, Category> known;
  for (auto [r, value] : llvm::enumerate(terminator->getOperands())) {
    Category category = names.classify(getResultName(entry, r));
    if (category != Other)
      known.try_emplace(value, category);
  }
  for (Operation &op : block) {
    Value grad;
    if (auto adamw = dyn_cast<AdamwUpdateOp>(op))
      grad = adamw.getGrad();
    else if (auto sgd = dyn_cast<SgdUpdateOp>(op))
      grad = sgd.getGrad();
    else
      continue;
    known.try_emplace(grad, Gradients);
    for (auto [k, result] : llvm::enumerate(op.getResults()))
      known.try_emplace(result, k == 0 ? Parameters : OptimizerStates);
  }
  llvm::DenseSet<Operation *> forward = getForwardOps(entry);
  auto isActivation = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || !forward.contains(def))
      return false;
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      return user != terminator && !forward.contains(user);
    });
  };

  // 1. Intervals.
  auto addValue = [&](Value value, int64_t start, int64_t end,
                      Category category) {
    liveness.intervals.push_back(
        {value, start, end, getValueBytes(value.getType()), category});
  };
  auto lastUse = [&](Value value, int64_t start) {
    int64_t end = start;
    for (Operation *user : value.getUsers())
      if (user->getBlock() == &block)
        end = std::max(end, index.lookup(user));
    return end;
  };
  // A pipeline stage runs its own ops and the unstaged ones, and holds the
  // arguments those read.
  auto runs = [&](Operation *op) {
    std::optional<int64_t> opStage = getOpStage(op);
    return !stage || !opStage || *opStage == *stage;
  };
  // Where an argument's storage passes to the value carried into it, on
  // the ranks that compute that value.
  llvm::DenseMap<BlockArgument, int64_t> handedOver;
  InPlaceReuse inPlace(entry);
  for (auto [value, arg] : inPlace.getDonors())
    if (runs(value.getDefiningOp()))
      handedOver[arg] = index.lookup(value.getDefiningOp());
  for (BlockArgument arg : block.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (stage && llvm::none_of(arg.getUsers(), [&](Operation *user) {
          return user != terminator && runs(user);
        }))
      continue;
    int64_t end =
        isCarriedArgument(entry, i) ? numSteps - 1 : lastUse(arg, /*start=*/0);
    if (auto it = handedOver.find(arg); it != handedOver.end())
      end = it->second - 1;
    addValue(arg, 0, end, names.classify(getArgumentName(entry, i)));
  }
  for (Operation &op : block) {
    if (!runs(&op))
      continue;
    int64_t start = index.lookup(&op);
    for (Value result : op.getResults()) {
      Category category = Other;
      if (auto it = known.find(result); it != known.end())
        category = it->second;
      else if (isActivation(result))
        category = Activations;
      addValue(result, start, lastUse(result, start), category);
    }
  }
  return liveness;
}

llvm::DenseSet<Operation *> getForwardOps(func::FuncOp entry) {
  llvm::DenseSet<Operation *> forward;
  if (entry.isExternal() || !entry.getBody().hasOneBlock())
    return forward;
  Block &block = entry.getBody().front();
  Operation *terminator = &block.back();
  Value loss;
  for (auto [r, value] : llvm::enumerate(terminator->getOperands()))
    if (getResultName(entry, r) == "loss")
      loss = value;
  SmallVector<Operation *> worklist;
  if (Operation *def = loss ? loss.getDefiningOp() : nullptr)
    worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (op->getBlock() != &block || !forward.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  return forward;
}

/// Step 3: the category totals per step, into a difference array; returns
/// the first step whose total is largest (-1 for an empty block).
static int64_t findPeak(const Liveness &liveness, MemoryBreakdown &breakdown) {
  std::vector<std::array<int64_t, kNumCategories>> delta(
      liveness.numSteps + 1, std::array<int64_t, kNumCategories>{});
  for (const Interval &interval : liveness.intervals) {
    auto c = static_cast<unsigned>(interval.category);
    delta[interval.start][c] += interval.bytes;
    delta[interval.end + 1][c] -= interval.bytes;
  }
  std::array<int64_t, kNumCategories> live{};
  int64_t peak = -1, peakStep = -1;
  for (int64_t step = 0; step < liveness.numSteps; ++step) {
    int64_t total = 0;
    for (unsigned c = 0; c < kNumCategories; ++c) {
      live[c] += delta[step][c];
      total += live[c];
    }
    if (total <= peak)
      continue;
    peak = total;
    peakStep = step;
    breakdown.parameters = live[unsigned(Parameters)];
    breakdown.gradients = live[unsigned(Gradients)];
    breakdown.optimizerStates = live[unsigned(OptimizerStates)];
    breakdown.activations = live[unsigned(Activations)];
    breakdown.other = live[unsigned(Other)];
  }
  if (peakStep >= 0)
    breakdown.peakOp = liveness.ops[peakStep];
  return peakStep;
}

MemoryBreakdown analyzeMemory(func::FuncOp entry,
                              std::optional<int64_t> stage) {
  MemoryBreakdown breakdown;
  findPeak(computeLiveness(entry, stage), breakdown);
  return breakdown;
}

std::vector<LiveValue> getLiveValuesAtPeak(func::FuncOp entry,
                                           std::optional<int64_t> stage) {
  Liveness liveness = computeLiveness(entry, stage);
  MemoryBreakdown breakdown;
  int64_t step = findPeak(liveness, breakdown);
  std::vector<const Interval *> covering;
  for (const Interval &interval : liveness.intervals)
    if (interval.start <= step && step <= interval.end && interval.bytes > 0)
      covering.push_back(&interval);
  // Largest first; program order (arguments, then results) among equals.
  llvm::sort(covering, [](const Interval *a, const Interval *b) {
    if (a->bytes != b->bytes)
      return a->bytes > b->bytes;
    return a < b;
  });
  std::vector<LiveValue> live;
  for (const Interval *interval : covering)
    live.push_back({interval->value, interval->bytes, interval->category});
  return live;
}

} // namespace mlir::loom::dist
