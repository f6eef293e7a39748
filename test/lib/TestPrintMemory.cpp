//===- TestPrintMemory.cpp - Print the peak memory of each function -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `-test-print-memory` prints dist::analyzeMemory's breakdown of every
// function with a body, one line each:
//
//   @<function> peak=P parameters=A gradients=G optimizer_states=S
//     activations=X other=O
//
// (on one line), so lit tests can check the liveness rules and what
// recompute removes, and compare with `loom-run --report-memory`.
//
// With `stage=S` it analyzes the ranks of pipeline stage S (docs/Pipeline.md).
// With `top=N` it then says where the peak is and lists the N largest values
// live there, one line each, to find what a memory model misses:
//
//   peak at op <index> <op name> (fwd <id>)
//   <bytes> <category> <kind> <defining op or argument name> <type>
//
// The kind is `argument`, `collective` (a `dist` op's result: a reshard),
// `forward` (an ancestor of the loss), `recompute` (a clone of a forward op
// made by loom-recompute: marked `loom.recompute`, or with the name,
// attributes and types of a forward op and its operands or their clones),
// `backward` (any other op with a `loom.fwd` id: gradients
// and optimizer updates) or `other`.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <tuple>

using namespace mlir;

namespace {
struct TestPrintMemoryPass
    : public PassWrapper<TestPrintMemoryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintMemoryPass)

  TestPrintMemoryPass() = default;
  TestPrintMemoryPass(const TestPrintMemoryPass &pass) : PassWrapper(pass) {}

  StringRef getArgument() const final { return "test-print-memory"; }
  StringRef getDescription() const final {
    return "Print the peak live bytes of every function and their breakdown "
           "(test only)";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      std::optional<int64_t> onStage;
      if (stage >= 0)
        onStage = stage;
      loom::dist::MemoryBreakdown memory =
          loom::dist::analyzeMemory(func, onStage);
      llvm::outs() << "@" << func.getSymName() << " peak=" << memory.getPeak()
                   << " parameters=" << memory.parameters
                   << " gradients=" << memory.gradients
                   << " optimizer_states=" << memory.optimizerStates
                   << " activations=" << memory.activations
                   << " other=" << memory.other << "\n";
      if (top > 0 && memory.peakOp)
        printTop(func, memory.peakOp, onStage);
    }
  }

  Option<int64_t> stage{
      *this, "stage",
      llvm::cl::desc("For a pipelined program, the stage whose ranks to "
                     "analyze (-1: the whole program)"),
      llvm::cl::init(-1)};
  Option<unsigned> top{*this, "top",
                       llvm::cl::desc("List the N largest values live at the "
                                      "peak"),
                       llvm::cl::init(0)};

private:
  static StringRef getCategoryName(loom::dist::MemoryCategory category) {
    switch (category) {
    case loom::dist::MemoryCategory::Parameters:
      return "parameters";
    case loom::dist::MemoryCategory::Gradients:
      return "gradients";
    case loom::dist::MemoryCategory::OptimizerStates:
      return "optimizer_states";
    case loom::dist::MemoryCategory::Activations:
      return "activations";
    case loom::dist::MemoryCategory::Other:
      return "other";
    }
    return "other";
  }

  void printTop(func::FuncOp func, Operation *peakOp,
                std::optional<int64_t> onStage) {
    Block &block = func.getBody().front();
    llvm::DenseSet<Operation *> forward = loom::dist::getForwardOps(func);
    // Recomputed clones: a non-forward op with the name, attributes (the
    // `loom.fwd` id among them) and result types of a forward op, whose
    // operands are that op's operands or clones of them.
    // Attributes and types are uniqued: their pointers identify them.
    using Key = std::tuple<StringRef, const void *, const void *>;
    std::map<Key, std::vector<Operation *>> byKey;
    auto getKey = [](Operation *op) {
      return Key(op->getName().getStringRef(),
                 op->getAttrDictionary().getAsOpaquePointer(),
                 op->getNumResults()
                     ? op->getResult(0).getType().getAsOpaquePointer()
                     : nullptr);
    };
    for (Operation &op : block)
      if (forward.contains(&op))
        byKey[getKey(&op)].push_back(&op);
    llvm::DenseMap<Operation *, Operation *> cloneOf;
    for (Operation &op : block) {
      if (forward.contains(&op) || !op.hasAttr("loom.fwd"))
        continue;
      auto it = byKey.find(getKey(&op));
      if (it == byKey.end())
        continue;
      for (Operation *original : it->second) {
        bool same =
            original->getNumOperands() == op.getNumOperands() &&
            llvm::all_of(
                llvm::zip_equal(original->getOperands(), op.getOperands()),
                [&](auto pair) {
                  auto [from, to] = pair;
                  if (from == to)
                    return true;
                  Operation *def = to.getDefiningOp();
                  return def && cloneOf.lookup(def) == from.getDefiningOp();
                });
        if (same) {
          cloneOf[&op] = original;
          break;
        }
      }
    }
    unsigned index = 0;
    for (Operation &op : block) {
      if (&op == peakOp)
        break;
      ++index;
    }
    llvm::outs() << "  peak at op " << index << " " << peakOp->getName();
    if (auto id = peakOp->getAttrOfType<IntegerAttr>("loom.fwd"))
      llvm::outs() << " (fwd " << id.getInt() << ")";
    llvm::outs() << "\n";
    std::vector<loom::dist::LiveValue> live =
        loom::dist::getLiveValuesAtPeak(func, onStage);
    for (const loom::dist::LiveValue &entry :
         ArrayRef(live).take_front(std::min<size_t>(top, live.size()))) {
      llvm::outs() << "  " << entry.bytes << " "
                   << getCategoryName(entry.category) << " ";
      if (auto arg = dyn_cast<BlockArgument>(entry.value)) {
        llvm::outs() << "argument " << arg.getArgNumber();
        if (auto name = func.getArgAttr(arg.getArgNumber(), "loom.name"))
          llvm::outs() << " " << name;
        if (auto param = func.getArgAttr(arg.getArgNumber(), "loom.param"))
          llvm::outs() << " " << param;
      } else {
        Operation *def = entry.value.getDefiningOp();
        auto id = def->getAttrOfType<IntegerAttr>("loom.fwd");
        StringRef kind = "other";
        if (def->getDialect() && def->getDialect()->getNamespace() == "dist")
          kind = "collective";
        else if (forward.contains(def))
          kind = "forward";
        else if (def->hasAttr("loom.recompute") || cloneOf.count(def))
          kind = "recompute";
        else if (id)
          kind = "backward";
        llvm::outs() << kind << " " << def->getName();
        if (id)
          llvm::outs() << " fwd " << id.getInt();
      }
      llvm::outs() << " " << entry.value.getType() << "\n";
    }
  }
};
} // namespace

void mlir::loom::test::registerTestPrintMemoryPass() {
  PassRegistration<TestPrintMemoryPass>();
}
