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
//      n-1 for loop-carried arguments);
//   2. classify every value: names of arguments and results say parameters,
//      optimizer states and gradients; optimizer updates say which values
//      are gradients and updated copies; the forward ops are the ancestors
//      of the returned `loss`, and a forward result used by any other op
//      (except the return) is an activation kept for backward;
//   3. add each value's bytes to its category over [start, end] with a
//      difference array and keep the first step whose total is largest.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <array>

using namespace mlir;
using namespace mlir::loom;

namespace mlir::loom::dist {

static constexpr StringLiteral kNameAttrName = "loom.name";
static constexpr StringLiteral kParamAttrName = "loom.param";

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
enum Category { Parameters, Gradients, OptimizerStates, Activations, Other };
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

MemoryBreakdown analyzeMemory(func::FuncOp entry) {
  MemoryBreakdown breakdown;
  if (entry.isExternal() || !entry.getBody().hasOneBlock())
    return breakdown;
  Block &block = entry.getBody().front();
  llvm::DenseMap<Operation *, int64_t> index;
  for (Operation &op : block)
    index[&op] = static_cast<int64_t>(index.size());
  int64_t numSteps = static_cast<int64_t>(index.size());
  if (numSteps == 0)
    return breakdown;
  Operation *terminator = &block.back();
  NameClassifier names(entry);

  // 2. What the signature and the optimizer updates say.
  llvm::DenseMap<Value, Category> known;
  Value loss;
  for (auto [r, value] : llvm::enumerate(terminator->getOperands())) {
    StringRef name = getResultName(entry, r);
    if (name == "loss")
      loss = value;
    Category category = names.classify(name);
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
  // The forward ops: everything the loss depends on.
  llvm::DenseSet<Operation *> forward;
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
  auto isActivation = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || !forward.contains(def))
      return false;
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      return user != terminator && !forward.contains(user);
    });
  };

  // 1 and 3. Intervals into a difference array per category.
  std::vector<std::array<int64_t, kNumCategories>> delta(
      numSteps + 1, std::array<int64_t, kNumCategories>{});
  auto addValue = [&](Value value, int64_t start, int64_t end,
                      Category category) {
    int64_t bytes = getValueBytes(value.getType());
    delta[start][category] += bytes;
    delta[end + 1][category] -= bytes;
  };
  auto lastUse = [&](Value value, int64_t start) {
    int64_t end = start;
    for (Operation *user : value.getUsers())
      if (user->getBlock() == &block)
        end = std::max(end, index.lookup(user));
    return end;
  };
  for (BlockArgument arg : block.getArguments()) {
    unsigned i = arg.getArgNumber();
    int64_t end =
        isCarriedArgument(entry, i) ? numSteps - 1 : lastUse(arg, /*start=*/0);
    addValue(arg, 0, end, names.classify(getArgumentName(entry, i)));
  }
  for (Operation &op : block) {
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

  std::array<int64_t, kNumCategories> live{};
  int64_t peak = -1;
  for (int64_t step = 0; step < numSteps; ++step) {
    int64_t total = 0;
    for (unsigned c = 0; c < kNumCategories; ++c) {
      live[c] += delta[step][c];
      total += live[c];
    }
    if (total <= peak)
      continue;
    peak = total;
    breakdown.parameters = live[Parameters];
    breakdown.gradients = live[Gradients];
    breakdown.optimizerStates = live[OptimizerStates];
    breakdown.activations = live[Activations];
    breakdown.other = live[Other];
  }
  return breakdown;
}

} // namespace mlir::loom::dist
