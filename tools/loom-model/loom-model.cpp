//===- loom-model.cpp - Build a model's single-device loss graph ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom-model {gpt2|llama|transformer|tfm-lm} [--preset NAME] [size flags]
//            [--format mlir|json] -o FILE
//
// Starts from the family's preset (its smallest one without --preset),
// applies the size flags on top, checks the combination, builds the loss
// graph with the LoomModels library and writes it, printing `parameters: N`.
// Nothing is written unless the whole graph was built: the output file is
// opened only after building and kept only after printing succeeded.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/Models.h"
#include "loom/Frontend/Models/ParameterCount.h"
#include "loom/Support/CommandLine.h"
#include "loom/Target/GraphJSON/GraphJSON.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace mlir::loom::models;
namespace cl = llvm::cl;

static cl::OptionCategory category("loom-model options");

static cl::opt<std::string>
    familyArg(cl::Positional, cl::desc("<gpt2|llama|transformer|tfm-lm>"),
              cl::cat(category));
static cl::opt<std::string>
    presetArg("preset",
              cl::desc("Start from a named preset (case-insensitive; "
                       "aliases such as gpt2-xl, 8B: see --list-presets)"),
                                      cl::value_desc("name"),
                                      cl::cat(category));
static cl::opt<bool> listPresets(
    "list-presets",
    cl::desc("Print the presets (of the family, or of every family), their "
             "aliases and sizes, and exit"),
    cl::cat(category));

static cl::opt<int64_t> layersArg("layers", cl::desc("Layers (encoder layers)"),
                                  cl::cat(category));
static cl::opt<int64_t>
    decoderLayersArg("decoder-layers",
                     cl::desc("Decoder layers (transformer; default --layers)"),
                     cl::cat(category));
static cl::opt<int64_t> hiddenArg("hidden", cl::desc("Model width"),
                                  cl::cat(category));
static cl::opt<int64_t> headsArg("heads", cl::desc("Attention heads"),
                                 cl::cat(category));
static cl::opt<int64_t> kvHeadsArg("kv-heads",
                                   cl::desc("Key/value heads (llama)"),
                                   cl::cat(category));
static cl::opt<int64_t>
    ffnArg("ffn",
           cl::desc("Feed-forward width (default: the family's "
                    "multiple of --hidden when --hidden is given)"),
           cl::cat(category));
static cl::opt<int64_t> vocabArg("vocab", cl::desc("Vocabulary size"),
                                 cl::cat(category));
static cl::opt<int64_t>
    seqArg("seq",
           cl::desc("Sequence length (gpt2: block size; transformer: "
                    "source length)"),
           cl::cat(category));
static cl::opt<int64_t>
    tgtSeqArg("tgt-seq", cl::desc("Target length (transformer; default --seq)"),
              cl::cat(category));
static cl::opt<int64_t> batchArg("batch", cl::desc("Global batch size"),
                                 cl::cat(category));
static cl::opt<double> ropeThetaArg("rope-theta", cl::desc("RoPE base (llama)"),
                                    cl::cat(category));
static cl::opt<double> normEpsArg("norm-eps",
                                  cl::desc("LayerNorm / RMSNorm epsilon"),
                                  cl::cat(category));
static cl::opt<double> dropoutArg("dropout",
                                  cl::desc("Dropout probability at the "
                                           "family's dropout sites"),
                                  cl::cat(category));
static cl::opt<std::string> geluArg("gelu",
                                    cl::desc("GELU form: tanh or none (erf)"),
                                    cl::value_desc("tanh|none"),
                                    cl::cat(category));
static cl::opt<std::string>
    biasArg("bias",
            cl::desc("Biases in every Linear and LayerNorm (gpt2; nanoGPT's "
                     "bias, default true)"),
            cl::value_desc("true|false"), cl::cat(category));
static cl::opt<std::string> tieEmbeddingsArg(
    "tie-embeddings",
    cl::desc("lm_head shares transformer.wte.weight (gpt2; default true); "
             "false adds lm_head.weight"),
    cl::value_desc("true|false"), cl::cat(category));
static cl::opt<std::string> dtypeArg("dtype",
                                     cl::desc("Element type (default f32)"),
                                     cl::value_desc("f32|bf16|f16|f64"),
                                     cl::cat(category));
static cl::opt<std::string>
    formatArg("format",
              cl::desc("Output format (default: json for a .json output, "
                       "else mlir)"),
              cl::value_desc("mlir|json"), cl::cat(category));
static cl::opt<std::string> outputArg("o",
                                      cl::desc("Output file ('-' for "
                                               "stdout)"),
                                      cl::value_desc("file"),
                                      cl::cat(category));
static cl::opt<bool> timingArg("timing",
                               cl::desc("Print build and print times to "
                                        "stderr"),
                               cl::cat(category));

/// Prints `loom-model: error: <message>` and returns the exit code 1.
static int fail(const llvm::Twine &message) {
  llvm::errs() << "loom-model: error: " << message << "\n";
  return 1;
}

/// Which flags a family reads; the others are rejected rather than ignored.
static bool flagApplies(ModelFamily family, const cl::Option &flag) {
  bool isLlama = family == ModelFamily::Llama;
  bool isTransformer = family == ModelFamily::Transformer;
  if (&flag == &kvHeadsArg || &flag == &ropeThetaArg)
    return isLlama;
  if (&flag == &decoderLayersArg || &flag == &tgtSeqArg)
    return isTransformer;
  if (&flag == &geluArg)
    return family == ModelFamily::GPT2 || isTransformer;
  if (&flag == &biasArg || &flag == &tieEmbeddingsArg)
    return family == ModelFamily::GPT2;
  return true;
}

/// The feed-forward width a family derives from the width when only
/// --hidden is given: nanoGPT's 4x, the seeds' 1x; Llama's is not a
/// multiple, so it keeps the preset's.
static std::optional<int64_t> derivedFfn(ModelFamily family, int64_t hidden) {
  switch (family) {
  case ModelFamily::GPT2:
    return 4 * hidden;
  case ModelFamily::Transformer:
  case ModelFamily::TransformerLM:
    return hidden;
  case ModelFamily::Llama:
    return std::nullopt;
  }
  llvm_unreachable("unknown model family");
}

/// Applies the command line to `config`; returns an error message on a bad
/// flag value.
static std::optional<std::string> applyFlags(ModelConfig &config) {
  ModelFamily family = config.family;
  const cl::Option *familyFlags[] = {
      &kvHeadsArg, &ropeThetaArg,     &decoderLayersArg, &tgtSeqArg,
      &geluArg,    &biasArg, &tieEmbeddingsArg};
  for (const cl::Option *flag : familyFlags)
    if (flag->getNumOccurrences() && !flagApplies(family, *flag))
      return ("--" + flag->ArgStr + " does not apply to " +
              getFamilyName(family))
          .str();

  auto set = [](cl::opt<int64_t> &flag, int64_t &field) {
    if (flag.getNumOccurrences())
      field = flag;
  };
  set(layersArg, config.layers);
  set(hiddenArg, config.hidden);
  set(headsArg, config.heads);
  set(ffnArg, config.ffn);
  set(vocabArg, config.vocab);
  set(seqArg, config.seq);
  set(batchArg, config.batch);
  set(kvHeadsArg, config.kvHeads);

  if (family == ModelFamily::Transformer) {
    // The decoder mirrors the encoder unless told otherwise.
    if (decoderLayersArg.getNumOccurrences())
      config.decoderLayers = decoderLayersArg;
    else if (layersArg.getNumOccurrences())
      config.decoderLayers = config.layers;
    if (tgtSeqArg.getNumOccurrences())
      config.tgtSeq = tgtSeqArg;
    else if (seqArg.getNumOccurrences())
      config.tgtSeq = config.seq;
  }
  if (hiddenArg.getNumOccurrences() && !ffnArg.getNumOccurrences())
    if (std::optional<int64_t> ffn = derivedFfn(family, config.hidden))
      config.ffn = *ffn;
  if (family != ModelFamily::Llama)
    config.kvHeads = config.heads;

  if (ropeThetaArg.getNumOccurrences())
    config.ropeTheta = ropeThetaArg;
  if (normEpsArg.getNumOccurrences())
    config.normEps = normEpsArg;
  if (dropoutArg.getNumOccurrences())
    config.dropout = dropoutArg;
  if (geluArg.getNumOccurrences()) {
    if (geluArg != "tanh" && geluArg != "none")
      return "expected --gelu tanh or none, got '" + geluArg + "'";
    config.geluTanh = geluArg == "tanh";
  }
  for (auto [flag, field] : {std::pair{&biasArg, &config.bias},
                             {&tieEmbeddingsArg, &config.tieEmbeddings}}) {
    if (!flag->getNumOccurrences())
      continue;
    std::optional<bool> value = parseBoolean(*flag);
    if (!value)
      return "expected --" + flag->ArgStr.str() + " true or false, got '" +
             flag->getValue() + "'";
    *field = *value;
  }
  if (dtypeArg.getNumOccurrences()) {
    std::optional<ElementType> type = parseElementType(dtypeArg);
    if (!type)
      return "expected --dtype f32, bf16, f16 or f64, got '" + dtypeArg + "'";
    config.elementType = *type;
  }
  return std::nullopt;
}

static const ModelFamily kFamilies[] = {
    ModelFamily::GPT2, ModelFamily::Llama, ModelFamily::Transformer,
    ModelFamily::TransformerLM};

/// `--list-presets`: the family's presets, one a line, with their aliases
/// and sizes.
static void printPresets(ModelFamily family, llvm::raw_ostream &os) {
  os << getFamilyName(family) << " presets (names are case-insensitive):\n";
  for (const PresetNames &preset : getPresets(family)) {
    ModelConfig c = *getPreset(family, preset.name);
    std::string aliases = llvm::join(preset.getAliases(), ", ");
    std::string sizes;
    llvm::raw_string_ostream sz(sizes);
    sz << "layers " << c.layers;
    if (family == ModelFamily::Transformer)
      sz << "+" << c.decoderLayers;
    sz << ", hidden " << c.hidden << ", heads " << c.heads;
    if (family == ModelFamily::Llama)
      sz << " (kv " << c.kvHeads << ")";
    sz << ", ffn " << c.ffn << ", vocab " << c.vocab << ", seq " << c.seq;
    os << "  " << llvm::left_justify(preset.name, 12) << " "
       << llvm::left_justify(aliases.empty() ? "-" : aliases, 22) << " "
       << sizes << ": " << countParameters(c) << " parameters\n";
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Loom model builder: writes the single-device loss graph of a GPT-2, "
      "Llama, encoder-decoder Transformer or TransformerEncoder LM\n");
  if (auto repeated = ::loom::support::findRepeatedFlag())
    return fail(*repeated);

  if (listPresets && familyArg.empty()) {
    for (ModelFamily family : kFamilies)
      printPresets(family, llvm::outs());
    return 0;
  }
  if (familyArg.empty())
    return fail("expected a model family (gpt2, llama, transformer or "
                "tfm-lm), found none");
  std::optional<ModelFamily> family = parseFamilyName(familyArg);
  if (!family)
    return fail("expected a model family (gpt2, llama, transformer or "
                "tfm-lm), found '" +
                familyArg + "'");

  if (listPresets) {
    printPresets(*family, llvm::outs());
    return 0;
  }

  ModelConfig config = getDefaultConfig(*family);
  if (presetArg.getNumOccurrences()) {
    std::optional<ModelConfig> preset = getPreset(*family, presetArg);
    if (!preset)
      return fail(llvm::toString(makeUnknownPresetError(*family, presetArg)));
    config = *preset;
  }
  if (std::optional<std::string> error = applyFlags(config))
    return fail(*error);
  if (llvm::Error error = validateConfig(config))
    return fail(llvm::toString(std::move(error)));

  if (outputArg.empty())
    return fail("expected an output file (-o FILE), found none");
  std::string format = formatArg;
  if (format.empty())
    format = llvm::StringRef(outputArg).ends_with(".json") ? "json" : "mlir";
  if (format != "mlir" && format != "json")
    return fail("expected --format mlir or json, got '" + format + "'");

  using Clock = std::chrono::steady_clock;
  MLIRContext context;
  Clock::time_point start = Clock::now();
  OwningOpRef<ModuleOp> module = buildModel(config, context);
  if (!module)
    return fail("building the " + getFamilyName(*family) +
                " graph failed (see the diagnostics above)");
  Clock::time_point built = Clock::now();

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputArg, &errorMessage);
  if (!output)
    return fail(errorMessage);
  if (format == "json") {
    // The exporter writes nothing on failure; the file is then not kept.
    if (failed(mlir::loom::exportGraphJson(*module, output->os())))
      return fail("exporting the graph as JSON failed (see the diagnostics "
                  "above)");
  } else {
    module->print(output->os());
  }
  output->os().flush();
  if (output->os().has_error()) {
    output->os().clear_error();
    return fail("could not write '" + outputArg + "'");
  }
  output->keep();
  Clock::time_point printed = Clock::now();

  // With the graph on stdout, the count goes to stderr so the IR stays
  // parseable.
  llvm::raw_ostream &report = outputArg == "-" ? llvm::errs() : llvm::outs();
  report << "parameters: " << countModuleParameters(*module) << "\n";
  if (timingArg) {
    auto ms = [](Clock::duration d) {
      return std::chrono::duration<double, std::milli>(d).count();
    };
    llvm::errs() << llvm::format("build: %.1f ms, print: %.1f ms\n",
                                 ms(built - start), ms(printed - built));
  }
  return 0;
}
