//===- KernelCallTableTest.cpp - The one emission table -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Every `loom` op has an entry in the emission table (an op added to the
// dialect without one fails here, not in a user's emission) exactly when the
// interpreter has a kernel for it, so does every `dist` op a step calls, an
// entry says what a call passes without naming a target, and an op of
// another dialect has none.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/KernelCallTable.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/InitAllDialects.h"
#include "loom/Interpreter/KernelRegistry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom::emit;

namespace {

/// An emitter that computes no index scalars: enough for entries that need
/// none.
class NoScalars : public KernelCallContext {
public:
  FailureOr<std::string> scalar(Operation *user, Value) override {
    return user->emitError("no index scalars here");
  }
  FailureOr<std::string> globalBlock(Operation *op,
                                     std::vector<int64_t> &) override {
    return op->emitError("no blocks here");
  }
  StringRef targetName() const override { return "test"; }
  FailureOr<std::string> peer(Operation *op, StringRef, int64_t) override {
    return op->emitError("no mesh here");
  }
  int64_t numRanks() const override { return 1; }
  LogicalResult checkTensor(Operation *, Type, const Twine &) override {
    return success();
  }
};

TEST(KernelCallTableTest, EveryLoomOpHasAnEntry) {
  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  const KernelCallTable &table = KernelCallTable::get();
  int loomOps = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "loom")
      continue;
    ++loomOps;
    EXPECT_TRUE(table.contains(name.getTypeID()))
        << name.getStringRef().str()
        << " has no kernel call table entry (lib/Target/Common/"
           "LoomKernelCalls.cpp; docs/Codegen.md, \"The emission table\")";
  }
  // The dialect was found: it has more ops than any one family.
  EXPECT_GE(loomOps, 50);
}

TEST(KernelCallTableTest, EveryDistOpInAStepHasAnEntry) {
  // `dist.mesh` is a module-level declaration and `dist.axis_index` an index
  // scalar the step computes from the rank's coordinates
  // (StepEmitterBase); every other dist op is a call.
  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  const KernelCallTable &table = KernelCallTable::get();
  int distOps = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "dist")
      continue;
    ++distOps;
    bool notACall = name.getStringRef() == "dist.mesh" ||
                    name.getStringRef() == "dist.axis_index";
    EXPECT_EQ(table.contains(name.getTypeID()), !notACall)
        << name.getStringRef().str()
        << " (lib/Target/Common/DistKernelCalls.cpp)";
  }
  EXPECT_GE(distOps, 15);
}

TEST(KernelCallTableTest, EmitsWhatTheInterpreterRuns) {
  // The emitted programs are checked against the interpreter, which runs the
  // same host kernels through its own adapters (lib/Interpreter/Kernels):
  // an op one of them knows and the other does not is a gap in the proof.
  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  const KernelCallTable &table = KernelCallTable::get();
  const mlir::loom::interp::KernelRegistry &interpreter =
      mlir::loom::interp::KernelRegistry::getDefault();
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "loom")
      continue;
    EXPECT_EQ(table.contains(name.getTypeID()),
              interpreter.lookup(name.getStringRef()) != nullptr)
        << name.getStringRef().str();
  }
}

TEST(KernelCallTableTest, EntriesSayWhatIsPassedNotHowATargetWritesIt) {
  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @forward(%a: tensor<3x2xf32>, %b: tensor<3x5xf32>,
                       %m: tensor<3x5xf32>, %v: tensor<3x5xf32>,
                       %step: tensor<i64>) -> tensor<2x5xf32> {
      %0 = loom.matmul %a, %b {transpose_lhs} : (tensor<3x2xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
      %p, %nm, %nv = loom.adamw_update %b, %b, %m, %v, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.95, eps = 1.0e-8, weight_decay = 0.1} : (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<i64>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
      %1 = arith.addf %0, %0 : tensor<2x5xf32>
      return %1 : tensor<2x5xf32>
    }
  )mlir",
                                                             &context);
  ASSERT_TRUE(module);
  auto func = cast<func::FuncOp>(module->getBody()->front());
  auto ops = func.getBody().front().without_terminator();
  auto it = ops.begin();
  Operation *matmul = &*it++;
  Operation *adamw = &*it++;
  Operation *addf = &*it++;
  const KernelCallTable &table = KernelCallTable::get();
  NoScalars noScalars;

  // A GEMM: runs on the BLAS handle, writes one result, passes both
  // operands with their shapes, then the transposes, then the result.
  const KernelCallTable::Entry *entry = table.lookup(matmul);
  ASSERT_NE(entry, nullptr);
  FailureOr<KernelCall> call = entry->describe(matmul, noScalars);
  ASSERT_TRUE(succeeded(call));
  EXPECT_EQ(call->kernel, "matmul");
  EXPECT_EQ(call->executor, Executor::Blas);
  ASSERT_EQ(call->results.size(), 1u);
  EXPECT_EQ(call->results[0].result, matmul->getResult(0));
  EXPECT_FALSE(call->results[0].updates);
  using K = CallArg::Kind;
  std::vector<K> kinds;
  for (const CallArg &arg : call->args)
    kinds.push_back(arg.kind);
  EXPECT_EQ(kinds, (std::vector<K>{K::Buffer, K::Shape, K::Buffer, K::Shape,
                                   K::Text, K::Text, K::Buffer}));
  EXPECT_EQ(call->args[4].text, "true");
  EXPECT_EQ(call->args[5].text, "false");

  // An optimizer update: each new state may take its old state's buffer,
  // the step is a scalar the kernel reads (the target decides how), and
  // the learning rate comes with its (absent) per-step factor.
  entry = table.lookup(adamw);
  ASSERT_NE(entry, nullptr);
  call = entry->describe(adamw, noScalars);
  ASSERT_TRUE(succeeded(call));
  EXPECT_EQ(call->kernel, "adamwUpdate");
  ASSERT_EQ(call->results.size(), 3u);
  EXPECT_EQ(call->results[0].updates, adamw->getOperand(0));
  EXPECT_EQ(call->results[1].updates, adamw->getOperand(2));
  EXPECT_EQ(call->results[2].updates, adamw->getOperand(3));
  ASSERT_GE(call->args.size(), 7u);
  EXPECT_EQ(call->args[5].kind, K::Scalar);
  EXPECT_EQ(call->args[5].value, adamw->getOperand(4));
  EXPECT_EQ(call->args[6].kind, K::LearningRate);
  EXPECT_FALSE(call->args[6].value);
  ASSERT_EQ(call->templateArgs.size(), 2u);
  EXPECT_EQ(call->templateArgs[1].kind, TemplateArg::Kind::ScalarStorageOf);

  // Another dialect's op: no entry (the emitters report it at the op).
  EXPECT_EQ(table.lookup(addf), nullptr);
}

} // namespace
