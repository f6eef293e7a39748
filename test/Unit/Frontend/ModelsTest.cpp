//===- ModelsTest.cpp - The model builders' graphs ------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Builds every preset of every family and a small configuration of each,
// and checks what the rest of Loom relies on: the parameters the graph
// declares add up to the family's formula, every argument is marked, the
// inputs come last in the documented order, and a bad configuration is a
// diagnostic and a null module, never an assert.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/Models.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Frontend/Models/ParameterCount.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::models;

namespace {

constexpr ModelFamily kFamilies[] = {ModelFamily::GPT2, ModelFamily::Llama,
                                     ModelFamily::Transformer,
                                     ModelFamily::TransformerLM};

/// A few-layer, narrow configuration of `family` that still exercises
/// grouped-query attention and distinct source and target lengths.
ModelConfig smallConfig(ModelFamily family) {
  ModelConfig c = getDefaultConfig(family);
  c.layers = 2;
  c.decoderLayers = 3;
  c.hidden = 32;
  c.heads = 4;
  c.kvHeads = family == ModelFamily::Llama ? 2 : 4;
  c.ffn = family == ModelFamily::Llama ? 48 : 4 * 32;
  c.vocab = 50;
  c.seq = 8;
  c.tgtSeq = 6;
  c.batch = 2;
  return c;
}

func::FuncOp forward(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("forward");
}

/// The `loom.param` names of `@forward`'s arguments, in order.
std::vector<std::string> parameterNames(func::FuncOp func) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto param = func.getArgAttrOfType<ParamAttr>(i, "loom.param"))
      names.push_back(param.getName().str());
  return names;
}

/// The `loom.input` roles of `@forward`'s arguments, in order.
std::vector<InputRole> inputRoles(func::FuncOp func) {
  std::vector<InputRole> roles;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto input = func.getArgAttrOfType<InputRoleAttr>(i, "loom.input"))
      roles.push_back(input.getValue());
  return roles;
}

TEST(ModelsTest, EveryPresetDeclaresExactlyItsFormulasParameters) {
  for (ModelFamily family : kFamilies) {
    for (llvm::StringRef name : getPresetNames(family)) {
      MLIRContext context;
      ModelConfig config = *getPreset(family, name);
      OwningOpRef<ModuleOp> module = buildModel(config, context);
      ASSERT_TRUE(module) << name.str();
      EXPECT_EQ(countModuleParameters(*module), countParameters(config))
          << name.str();
    }
  }
}

TEST(ModelsTest, SmallConfigsMatchTheFormulaAndMarkEveryArgument) {
  for (ModelFamily family : kFamilies) {
    MLIRContext context;
    ModelConfig config = smallConfig(family);
    OwningOpRef<ModuleOp> module = buildModel(config, context);
    ASSERT_TRUE(module) << getFamilyName(family).str();
    EXPECT_EQ(countModuleParameters(*module), countParameters(config));
    func::FuncOp func = forward(*module);
    ASSERT_TRUE(func);
    // Parameters first, then the data inputs; each argument is one or the
    // other.
    size_t params = parameterNames(func).size();
    size_t inputs = inputRoles(func).size();
    EXPECT_EQ(params + inputs, func.getNumArguments());
    for (unsigned i = 0; i < params; ++i)
      EXPECT_TRUE(func.getArgAttr(i, "loom.param")) << i;
    // One rank-0 result: the loss.
    ASSERT_EQ(func.getNumResults(), 1u);
    EXPECT_EQ(cast<RankedTensorType>(func.getResultTypes()[0]).getRank(), 0);
  }
}

TEST(ModelsTest, GPT2BiasAndTyingFlagsMatchTheFormula) {
  // nanoGPT's bias=False drops every Linear and LayerNorm bias; untied,
  // lm_head.weight [V, H] comes last (nanoGPT's named_parameters order).
  for (bool bias : {true, false}) {
    for (bool tie : {true, false}) {
      MLIRContext context;
      ModelConfig config = smallConfig(ModelFamily::GPT2);
      config.bias = bias;
      config.tieEmbeddings = tie;
      OwningOpRef<ModuleOp> module = buildModel(config, context);
      ASSERT_TRUE(module);
      EXPECT_EQ(countModuleParameters(*module), countParameters(config));
      std::vector<std::string> names = parameterNames(forward(*module));
      int64_t biases = std::count_if(names.begin(), names.end(),
                                     [](const std::string &name) {
                                       return llvm::StringRef(name).ends_with(
                                           ".bias");
                                     });
      // Per layer: ln_1, c_attn, c_proj, ln_2, c_fc, c_proj; then ln_f.
      EXPECT_EQ(biases, bias ? 6 * config.layers + 1 : 0);
      EXPECT_EQ(names.back(), tie ? "transformer.ln_f." +
                                        std::string(bias ? "bias" : "weight")
                                  : "lm_head.weight");
      EXPECT_EQ(std::count(names.begin(), names.end(), "lm_head.weight"),
                tie ? 0 : 1);
    }
  }
  // V*H + S*H + L*(12H^2 + 4H) + H + V*H: no biases, untied.
  ModelConfig c = smallConfig(ModelFamily::GPT2);
  c.bias = c.tieEmbeddings = false;
  int64_t h = c.hidden;
  EXPECT_EQ(countParameters(c), c.vocab * h + c.seq * h +
                                    c.layers * (12 * h * h + 2 * h) + h +
                                    c.vocab * h);
}

TEST(ModelsTest, InputsFollowTheContractOrder) {
  MLIRContext context;
  OwningOpRef<ModuleOp> gpt =
      buildModel(smallConfig(ModelFamily::GPT2), context);
  EXPECT_EQ(inputRoles(forward(*gpt)),
            (std::vector<InputRole>{InputRole::InputIds, InputRole::Labels}));
  OwningOpRef<ModuleOp> seq2seq =
      buildModel(smallConfig(ModelFamily::Transformer), context);
  EXPECT_EQ(inputRoles(forward(*seq2seq)),
            (std::vector<InputRole>{InputRole::InputIds, InputRole::Labels,
                                    InputRole::DecoderInputIds}));
  // Labels and decoder ids have the target length.
  func::FuncOp func = forward(*seq2seq);
  unsigned n = func.getNumArguments();
  EXPECT_EQ(
      cast<RankedTensorType>(func.getArgument(n - 3).getType()).getShape(),
      (ArrayRef<int64_t>{2, 8}));
  EXPECT_EQ(
      cast<RankedTensorType>(func.getArgument(n - 1).getType()).getShape(),
      (ArrayRef<int64_t>{2, 6}));
}

TEST(ModelsTest, GPT2TiesTheHeadToTheTokenEmbedding) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module =
      buildModel(smallConfig(ModelFamily::GPT2), context);
  func::FuncOp func = forward(*module);
  std::vector<std::string> names = parameterNames(func);
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "transformer.wte.weight");
  EXPECT_EQ(names.back(), "transformer.ln_f.bias");
  EXPECT_EQ(std::count(names.begin(), names.end(), "lm_head.weight"), 0);
  // The logits matmul reads wte (argument 0) transposed.
  auto loss = cast<func::ReturnOp>(func.front().getTerminator())
                  .getOperand(0)
                  .getDefiningOp<CrossEntropyOp>();
  ASSERT_TRUE(loss);
  auto head = loss.getLogits().getDefiningOp<MatmulOp>();
  ASSERT_TRUE(head);
  EXPECT_TRUE(head.getTransposeRhs());
  EXPECT_EQ(head.getRhs(), func.getArgument(0));
}

TEST(ModelsTest, LlamaAttendsWithGroupedHeadsAndRotaryEmbeddings) {
  MLIRContext context;
  ModelConfig config = smallConfig(ModelFamily::Llama);
  config.ropeTheta = 1234.0;
  OwningOpRef<ModuleOp> module = buildModel(config, context);
  int attentions = 0, ropes = 0;
  module->walk([&](AttentionOp op) {
    ++attentions;
    EXPECT_TRUE(op.getCausal());
    EXPECT_EQ(cast<RankedTensorType>(op.getQuery().getType()).getDimSize(1), 4);
    EXPECT_EQ(cast<RankedTensorType>(op.getKey().getType()).getDimSize(1), 2);
  });
  module->walk([&](RopeOp op) {
    ++ropes;
    EXPECT_EQ(op.getTheta().convertToDouble(), 1234.0);
  });
  EXPECT_EQ(attentions, 2);
  EXPECT_EQ(ropes, 4);
  std::vector<std::string> names = parameterNames(forward(*module));
  EXPECT_EQ(names.back(), "lm_head.weight");
}

TEST(ModelsTest, EncoderDecoderMasksOnlyTheDecoderSelfAttention) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module =
      buildModel(smallConfig(ModelFamily::Transformer), context);
  int causal = 0, full = 0;
  module->walk([&](AttentionOp op) { op.getCausal() ? ++causal : ++full; });
  // 2 encoder self-attentions and 3 cross-attentions attend everything; the
  // 3 decoder self-attentions are causal.
  EXPECT_EQ(causal, 3);
  EXPECT_EQ(full, 5);
  // The seed's loss masks the padding id 0.
  module->walk([&](CrossEntropyOp op) { EXPECT_EQ(op.getIgnoreIndex(), 0u); });
}

TEST(ModelsTest, DropoutSitesGetDistinctSeeds) {
  MLIRContext context;
  ModelConfig config = smallConfig(ModelFamily::GPT2);
  config.dropout = 0.1;
  OwningOpRef<ModuleOp> module = buildModel(config, context);
  std::vector<int64_t> seeds;
  module->walk([&](DropoutOp op) { seeds.push_back(op.getSeed()); });
  // Embeddings, then per block after the attention and the MLP.
  EXPECT_EQ(seeds, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(ModelsTest, InvalidConfigIsADiagnosticAndNoModule) {
  MLIRContext context;
  std::string message;
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  ModelConfig config = smallConfig(ModelFamily::Llama);
  config.kvHeads = 3;
  EXPECT_FALSE(buildModel(config, context));
  EXPECT_EQ(message, "--kv-heads (3) must divide --heads (4)");
  // A configuration of another family is refused too.
  EXPECT_FALSE(buildGPT2(smallConfig(ModelFamily::Llama), context));
  EXPECT_EQ(message, "expected a gpt2 configuration, found llama");
}

} // namespace
