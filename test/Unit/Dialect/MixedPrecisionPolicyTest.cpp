//===- MixedPrecisionPolicyTest.cpp - The mixed-precision policy table ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loom-mixed-precision` reads one table (`lookupPrecisionRule`). Every op
// of the `loom` dialect must have a rule there: an op added to the dialect
// without one fails here, before a model that uses it fails the pass.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/MixedPrecision.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/InitAllDialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom;

namespace {

class MixedPrecisionPolicyTest : public ::testing::Test {
protected:
  MixedPrecisionPolicyTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  template <typename OpTy> std::optional<PrecisionRule> rule() {
    return lookupPrecisionRule(OperationName(OpTy::getOperationName(),
                                             &context));
  }

  MLIRContext context;
};

TEST_F(MixedPrecisionPolicyTest, EveryLoomOpHasARule) {
  int64_t count = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "loom")
      continue;
    ++count;
    EXPECT_TRUE(lookupPrecisionRule(name).has_value())
        << "`" << name.getStringRef().str()
        << "` has no rule in the mixed-precision policy "
           "(lib/Dialect/Loom/Transforms/MixedPrecision.cpp)";
  }
  EXPECT_GT(count, 40);
}

TEST_F(MixedPrecisionPolicyTest, RulesFollowAutocast) {
  EXPECT_EQ(rule<MatmulOp>(), PrecisionRule::Low);
  EXPECT_EQ(rule<AttentionOp>(), PrecisionRule::Low);
  EXPECT_EQ(rule<EmbeddingOp>(), PrecisionRule::Low);
  EXPECT_EQ(rule<LayerNormOp>(), PrecisionRule::F32);
  EXPECT_EQ(rule<RmsNormOp>(), PrecisionRule::F32);
  EXPECT_EQ(rule<SoftmaxOp>(), PrecisionRule::F32);
  EXPECT_EQ(rule<LogSoftmaxOp>(), PrecisionRule::F32);
  EXPECT_EQ(rule<CrossEntropyOp>(), PrecisionRule::F32);
  EXPECT_EQ(rule<ReduceSumOp>(), PrecisionRule::F32);
  EXPECT_EQ(rule<ReduceMeanOp>(), PrecisionRule::F32);
  EXPECT_EQ(rule<AddOp>(), PrecisionRule::Follow);
  EXPECT_EQ(rule<GeluOp>(), PrecisionRule::Follow);
  EXPECT_EQ(rule<ReshapeOp>(), PrecisionRule::Follow);
  EXPECT_EQ(rule<CastOp>(), PrecisionRule::AsWritten);
  EXPECT_EQ(rule<arith::ConstantOp>(), PrecisionRule::AsWritten);
  EXPECT_EQ(rule<AttentionGradOp>(), PrecisionRule::AfterAutodiff);
  EXPECT_EQ(rule<AdamwUpdateOp>(), PrecisionRule::AfterAutodiff);
  // Ops of other dialects have none: the pass names them in an error.
  EXPECT_EQ(rule<arith::AddFOp>(), std::nullopt);
}

TEST_F(MixedPrecisionPolicyTest, PrecisionNames) {
  EXPECT_EQ(getLowPrecisionType(&context, "f32"), Type());
  EXPECT_EQ(getLowPrecisionType(&context, "bf16-mixed"),
            Type(BFloat16Type::get(&context)));
  EXPECT_EQ(getLowPrecisionType(&context, "fp16-mixed"),
            Type(Float16Type::get(&context)));
  EXPECT_EQ(getLowPrecisionType(&context, "bf16"), std::nullopt);
  EXPECT_EQ(stringifyPrecisionRule(PrecisionRule::Follow), "follow");
}

} // namespace
