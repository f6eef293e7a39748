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

#include "loom/Frontend/Models/ModelOptions.h"
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

static cl::opt<std::string> layersArg("layers", cl::desc("Layers (encoder layers)"),
                                  cl::cat(category));
static cl::opt<std::string>
    decoderLayersArg("decoder-layers",
                     cl::desc("Decoder layers (transformer; default --layers)"),
                     cl::cat(category));
static cl::opt<std::string> hiddenArg("hidden", cl::desc("Model width"),
                                  cl::cat(category));
static cl::opt<std::string> headsArg("heads", cl::desc("Attention heads"),
                                 cl::cat(category));
static cl::opt<std::string> kvHeadsArg("kv-heads",
                                   cl::desc("Key/value heads (llama)"),
                                   cl::cat(category));
static cl::opt<std::string>
    ffnArg("ffn",
           cl::desc("Feed-forward width (default: the family's "
                    "multiple of --hidden when --hidden is given)"),
           cl::cat(category));
static cl::opt<std::string> vocabArg("vocab", cl::desc("Vocabulary size"),
                                 cl::cat(category));
static cl::opt<std::string>
    seqArg("seq",
           cl::desc("Sequence length (gpt2: block size; transformer: "
                    "source length)"),
           cl::cat(category));
static cl::opt<std::string>
    tgtSeqArg("tgt-seq", cl::desc("Target length (transformer; default --seq)"),
              cl::cat(category));
static cl::opt<std::string> batchArg("batch", cl::desc("Global batch size"),
                                 cl::cat(category));
static cl::opt<std::string> ropeThetaArg("rope-theta", cl::desc("RoPE base (llama)"),
                                    cl::cat(category));
static cl::opt<std::string> normEpsArg("norm-eps",
                                  cl::desc("LayerNorm / RMSNorm epsilon"),
                                  cl::cat(category));
static cl::opt<std::string> dropoutArg("dropout",
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

/// The model flags given on the command line, as settings for
/// applyModelOptions (the C API's and Python's model options are the same
/// keys): one implementation of what each means for each family.
static std::vector<ModelSetting> getModelSettings() {
  const cl::opt<std::string> *flags[] = {
      &presetArg,    &layersArg,  &decoderLayersArg, &hiddenArg, &headsArg,
      &kvHeadsArg,   &ffnArg,     &vocabArg,         &seqArg,    &tgtSeqArg,
      &batchArg,     &ropeThetaArg, &normEpsArg,     &dropoutArg, &geluArg,
      &biasArg,      &tieEmbeddingsArg, &dtypeArg};
  std::vector<ModelSetting> settings;
  for (const cl::opt<std::string> *flag : flags)
    if (flag->getNumOccurrences())
      settings.push_back({flag->ArgStr.str(), flag->getValue()});
  return settings;
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

  llvm::Expected<ModelConfig> config =
      applyModelOptions(*family, getModelSettings(), OptionSpelling::Flag);
  if (!config)
    return fail(llvm::toString(config.takeError()));

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
  OwningOpRef<ModuleOp> module = buildModel(*config, context);
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
