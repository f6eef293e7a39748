//===- ModelOptionsTest.cpp - key=value model options, loom-model's rules -===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// parseModelOptions applies loom-model's rules to text settings: presets,
// sizes, the derived feed-forward width, the decoder mirroring the encoder,
// keys a family does not read, and bad values, each with its message.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/ModelOptions.h"

#include "gtest/gtest.h"

using namespace mlir::loom::models;

namespace {

/// The configuration of `settings`, failing the test on an error.
ModelConfig parse(ModelFamily family, llvm::StringRef settings) {
  llvm::Expected<ModelConfig> config = parseModelOptions(family, settings);
  if (!config) {
    ADD_FAILURE() << llvm::toString(config.takeError());
    return ModelConfig();
  }
  return *config;
}

/// The error of `settings`, or "" when they parse.
std::string error(ModelFamily family, llvm::StringRef settings) {
  llvm::Expected<ModelConfig> config = parseModelOptions(family, settings);
  if (config)
    return "";
  return llvm::toString(config.takeError());
}

TEST(ModelOptions, EmptyIsTheFamilyDefault) {
  ModelConfig config = parse(ModelFamily::Llama, "");
  ModelConfig expected = getDefaultConfig(ModelFamily::Llama);
  EXPECT_EQ(config.hidden, expected.hidden);
  EXPECT_EQ(config.layers, expected.layers);
  EXPECT_EQ(config.kvHeads, expected.kvHeads);
}

TEST(ModelOptions, SizesAndTheDerivedFeedForwardWidth) {
  ModelConfig gpt =
      parse(ModelFamily::GPT2, "layers=2, hidden=64,heads=4,vocab=128,seq=16,"
                               "batch=4,dropout=0.1,gelu=none,dtype=f64");
  EXPECT_EQ(gpt.layers, 2);
  EXPECT_EQ(gpt.hidden, 64);
  EXPECT_EQ(gpt.ffn, 256); // nanoGPT's 4 x hidden
  EXPECT_EQ(gpt.kvHeads, 4);
  EXPECT_EQ(gpt.vocab, 128);
  EXPECT_EQ(gpt.seq, 16);
  EXPECT_EQ(gpt.batch, 4);
  EXPECT_DOUBLE_EQ(gpt.dropout, 0.1);
  EXPECT_FALSE(gpt.geluTanh);
  EXPECT_EQ(gpt.elementType, ElementType::F64);
  // An explicit ffn wins; tfm-lm's derived width is 1 x hidden.
  EXPECT_EQ(parse(ModelFamily::GPT2, "hidden=64,heads=4,ffn=100").ffn, 100);
  EXPECT_EQ(parse(ModelFamily::TransformerLM, "hidden=64,heads=4").ffn, 64);
}

TEST(ModelOptions, TheDecoderMirrorsTheEncoder) {
  ModelConfig mirrored = parse(ModelFamily::Transformer, "layers=3,seq=12");
  EXPECT_EQ(mirrored.decoderLayers, 3);
  EXPECT_EQ(mirrored.tgtSeq, 12);
  ModelConfig own =
      parse(ModelFamily::Transformer, "layers=3,decoder-layers=1,seq=12,"
                                      "tgt-seq=6");
  EXPECT_EQ(own.decoderLayers, 1);
  EXPECT_EQ(own.tgtSeq, 6);
}

TEST(ModelOptions, PresetThenSizes) {
  std::optional<ModelConfig> preset =
      getPreset(ModelFamily::GPT2, getPresetNames(ModelFamily::GPT2).back());
  ASSERT_TRUE(preset.has_value());
  ModelConfig config =
      parse(ModelFamily::GPT2,
            ("preset=" + getPresetNames(ModelFamily::GPT2).back() + ",layers=1")
                .str());
  EXPECT_EQ(config.layers, 1);
  EXPECT_EQ(config.hidden, preset->hidden);
}

TEST(ModelOptions, PresetsAreLookedUpAsLoomModelLooksThemUp) {
  // The same lookup as `loom-model --preset`: any case, the aliases.
  EXPECT_EQ(parse(ModelFamily::GPT2, "preset=GPT2-XL").layers, 48);
  EXPECT_EQ(parse(ModelFamily::GPT2, "preset=350M").hidden, 1024);
  EXPECT_EQ(parse(ModelFamily::Llama, "preset=8B,layers=2").kvHeads, 8);
  EXPECT_EQ(error(ModelFamily::Llama, "preset=124m"),
            llvm::toString(makeUnknownPresetError(ModelFamily::Llama, "124m")));
}

TEST(ModelOptions, BiasAndTyingAreGPT2Switches) {
  ModelConfig config =
      parse(ModelFamily::GPT2, "bias=false,tie-embeddings=FALSE");
  EXPECT_FALSE(config.bias);
  EXPECT_FALSE(config.tieEmbeddings);
  config = parse(ModelFamily::GPT2, "");
  EXPECT_TRUE(config.bias);
  EXPECT_TRUE(config.tieEmbeddings);
  EXPECT_EQ(error(ModelFamily::GPT2, "bias=maybe"),
            "model option 'bias': expected true or false, found 'maybe'");
  EXPECT_EQ(error(ModelFamily::Llama, "tie-embeddings=true"),
            "model option 'tie-embeddings' does not apply to llama");
}

TEST(ModelOptions, BadSettingsSayWhat) {
  EXPECT_EQ(error(ModelFamily::GPT2, "kv-heads=2"),
            "model option 'kv-heads' does not apply to gpt2");
  EXPECT_EQ(error(ModelFamily::Llama, "decoder-layers=2"),
            "model option 'decoder-layers' does not apply to llama");
  EXPECT_EQ(error(ModelFamily::GPT2, "layers"),
            "model option 'layers': expected key=value");
  EXPECT_EQ(error(ModelFamily::GPT2, "layers=2,layers=3"),
            "model option 'layers' is given twice");
  EXPECT_EQ(error(ModelFamily::GPT2, "hidden=wide"),
            "model option 'hidden': expected an integer, found 'wide'");
  EXPECT_EQ(error(ModelFamily::GPT2, "dropout=lots"),
            "model option 'dropout': expected a number, found 'lots'");
  EXPECT_EQ(error(ModelFamily::GPT2, "gelu=erf"),
            "model option 'gelu': expected tanh or none, found 'erf'");
  EXPECT_EQ(error(ModelFamily::GPT2, "dtype=f8"),
            "model option 'dtype': expected f32, bf16, f16 or f64, found 'f8'");
  EXPECT_NE(error(ModelFamily::GPT2, "preset=huge")
                .find("unknown gpt2 preset 'huge'; expected one of "),
            std::string::npos);
  EXPECT_NE(
      error(ModelFamily::GPT2, "width=3").find("unknown model option 'width'"),
      std::string::npos);
  // The sizes are validated as loom-model validates them.
  EXPECT_NE(error(ModelFamily::GPT2, "hidden=10,heads=4"), "");
}

} // namespace
