//===- loom-data.cpp - Token files for training ---------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom-data encode --input TEXT --output TOKENS.bin
//                  [--format llmc|uint16|int32] [--tokenizer bytes|gpt2]
// loom-data inspect TOKENS.bin [--format auto|llmc|uint16|int32] [--vocab N]
// loom-data batch TOKENS.bin --batch B --seq T --step S [--seed N]
//                 [--mesh dp=2,tp=2 --layout '[["dp"], ["tp"]]' --rank R]
//                 [-o BATCH.safetensors]
//
// `encode` tokenizes text byte by byte (vocabulary 256), or with GPT-2's BPE
// through tiktoken (`--tokenizer gpt2`, Tiktoken.h), into a token file
// (include/loom/Runtime/IO/TokenFile.h); `inspect` checks a token file and
// prints its layout, size and id range; `batch` prints the inputs and labels
// of one step's batch, or one rank's block of it, exactly as a training
// program reads them (docs/Checkpoints.md, "Token files").
//
//===----------------------------------------------------------------------===//

#include "Tiktoken.h"

#include "loom/Runtime/IO/SafeTensors.h"
#include "loom/Runtime/IO/TensorFile.h"
#include "loom/Runtime/IO/TokenFile.h"
#include "loom/Support/CommandLine.h"
#include "loom/Support/Flags.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace loom::runtime;
namespace cl = llvm::cl;
using loom::runtime::host::Status;

static cl::SubCommand encodeCommand("encode",
                                    "tokenize a text file byte by byte");
static cl::SubCommand inspectCommand("inspect", "check and describe a token "
                                                "file");
static cl::SubCommand
    batchCommand("batch", "print one step's batch (or a rank's block)");

static cl::opt<std::string> input("input", cl::desc("text file to encode"),
                                  cl::value_desc("TEXT"), cl::Required,
                                  cl::sub(encodeCommand));
static cl::opt<std::string> output("output", cl::desc("token file to write"),
                                   cl::value_desc("TOKENS.bin"), cl::Required,
                                   cl::sub(encodeCommand));
static cl::opt<std::string>
    encodeFormat("format",
                 cl::desc("llmc (llm.c header + uint16, default), uint16 "
                          "(headerless, nanoGPT) or int32 (headerless)"),
                 cl::init("llmc"), cl::sub(encodeCommand));

static cl::opt<std::string>
    tokenizer("tokenizer",
              cl::desc("bytes (each byte a token, vocabulary 256; default) or "
                       "gpt2 (GPT-2's BPE, vocabulary 50257, through the "
                       "Python package tiktoken)"),
              cl::init("bytes"), cl::sub(encodeCommand));

static cl::opt<std::string> tokenPath(cl::Positional, cl::desc("<TOKENS.bin>"),
                                      cl::Required, cl::sub(inspectCommand),
                                      cl::sub(batchCommand));
static cl::opt<std::string>
    readFormat("format",
               cl::desc("auto (llm.c if the magic is there, else uint16), "
                        "llmc, uint16 or int32"),
               cl::init("auto"), cl::sub(inspectCommand),
               cl::sub(batchCommand));
static cl::opt<int64_t> vocab("vocab",
                              cl::desc("vocabulary size ids must stay below "
                                       "(0: unchecked)"),
                              cl::init(0), cl::sub(inspectCommand),
                              cl::sub(batchCommand));

static cl::opt<int64_t> batchSize("batch", cl::desc("global batch size"),
                                  cl::Required, cl::sub(batchCommand));
static cl::opt<int64_t> seqLen("seq", cl::desc("sequence length"), cl::Required,
                               cl::sub(batchCommand));
static cl::opt<int64_t> step("step", cl::desc("training step"), cl::init(0),
                             cl::sub(batchCommand));
static cl::opt<uint64_t> seed("seed", cl::desc("sampling seed"), cl::init(0),
                              cl::sub(batchCommand));
static cl::opt<bool> sequential("sequential",
                                cl::desc("contiguous windows instead of "
                                         "random ones"),
                                cl::sub(batchCommand));
static cl::opt<std::string> meshText("mesh",
                                     cl::desc("device mesh, e.g. dp=2,tp=2"),
                                     cl::sub(batchCommand));
static cl::opt<std::string>
    layoutText("layout", cl::desc("layout of the [batch, seq] tokens tensor"),
               cl::sub(batchCommand));
static cl::opt<int64_t> rank("rank", cl::desc("rank whose block to print"),
                             cl::init(0), cl::sub(batchCommand));
static cl::opt<std::string>
    batchOutput("o",
                cl::desc("also write the block as `input_ids` and `labels` "
                         "(I64) to this safetensors file, the inputs loom-run "
                         "and the emitted programs read"),
                cl::value_desc("FILE.safetensors"), cl::sub(batchCommand));

static int fail(const std::string &message) {
  llvm::errs() << "loom-data: error: " << message << "\n";
  return 1;
}

static int runEncode() {
  io::TokenFormat format;
  if (Status status = io::parseTokenFormat(encodeFormat, format); !status)
    return fail(status.message());
  if (format == io::TokenFormat::Auto)
    return fail("--format must be llmc, uint16 or int32");
  if (tokenizer != "bytes" && tokenizer != "gpt2")
    return fail("--tokenizer expects bytes or gpt2, got `" + tokenizer + "`");
  // Read here for both: for gpt2 it gives a missing file this tool's
  // message rather than a Python traceback.
  std::string text;
  if (auto error = io::readWholeFile(input, text))
    return fail(*error);
  std::vector<int32_t> tokens;
  if (tokenizer == "gpt2") {
    if (auto error = loom::data::encodeGpt2(input, tokens))
      return fail(*error);
  } else {
    tokens = io::encodeBytes(text);
  }
  if (Status status = io::writeTokenFile(output, format, tokens); !status)
    return fail(status.message());
  llvm::outs() << "wrote " << tokens.size() << " tokens ("
               << (tokenizer == "gpt2" ? "GPT-2 BPE, vocab 50257"
                                       : "byte-level, vocab 256")
               << ") to " << output << " as " << io::tokenFormatName(format)
               << "\n";
  return 0;
}

static Status openTokens(io::TokenFile &file) {
  if (auto error =
          loom::support::checkAtLeast("--vocab", vocab, 0, "0: unchecked"))
    return Status::failure(*error);
  io::TokenFormat format;
  if (Status status = io::parseTokenFormat(readFormat, format); !status)
    return status;
  return io::TokenFile::open(tokenPath, format, vocab, file);
}

static int runInspect() {
  io::TokenFile file;
  if (Status status = openTokens(file); !status)
    return fail(status.message());
  llvm::outs() << "file: " << tokenPath << "\n";
  llvm::outs() << "format: " << io::tokenFormatName(file.getFormat());
  if (file.getFormat() == io::TokenFormat::Llmc)
    llvm::outs() << " (version " << file.getLlmcVersion() << ")";
  llvm::outs() << ", " << (file.getTokenBytes() == 2 ? "uint16" : "32-bit")
               << " tokens\n";
  llvm::outs() << "tokens: " << file.getNumTokens() << "\n";
  // Every id is read (and checked against --vocab), in chunks: token files
  // can be far larger than memory.
  int64_t minId = 0, maxId = -1;
  std::vector<int32_t> chunk;
  std::vector<int32_t> first;
  for (int64_t at = 0; at < file.getNumTokens(); at += 1 << 20) {
    int64_t count = std::min<int64_t>(1 << 20, file.getNumTokens() - at);
    chunk.resize(static_cast<size_t>(count));
    if (Status status = file.read(at, count, chunk.data()); !status)
      return fail(status.message());
    for (int32_t id : chunk) {
      minId = maxId < 0 ? id : std::min<int64_t>(minId, id);
      maxId = std::max<int64_t>(maxId, id);
    }
    if (at == 0)
      first.assign(chunk.begin(), chunk.begin() + std::min<int64_t>(count, 48));
  }
  if (maxId >= 0)
    llvm::outs() << "ids: [" << minId << ", " << maxId << "]\n";
  llvm::outs() << "first tokens:";
  for (size_t i = 0; i < std::min<size_t>(first.size(), 16); ++i)
    llvm::outs() << " " << first[i];
  llvm::outs() << "\n";
  // Ids below 256 are bytes under the byte-level tokenizer.
  if (maxId >= 0 && maxId < 256) {
    std::string preview(first.begin(), first.end());
    llvm::outs() << "as bytes: \"";
    llvm::outs().write_escaped(preview);
    llvm::outs() << "\"\n";
  }
  return 0;
}

static void printRows(llvm::StringRef name, const std::vector<int32_t> &values,
                      int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    llvm::outs() << name << "[" << r << "]:";
    for (int64_t c = 0; c < cols; ++c)
      llvm::outs() << " " << values[r * cols + c];
    llvm::outs() << "\n";
  }
}

/// The flags of `batch` that need another one, and the range of each number.
static std::optional<std::string> checkBatchFlags() {
  // Without --mesh the whole batch is printed: a layout or a rank would be
  // ignored without a word.
  if (meshText.empty())
    for (const cl::Option *option :
         {static_cast<const cl::Option *>(&layoutText),
          static_cast<const cl::Option *>(&rank)})
      if (option->getNumOccurrences())
        return "--" + option->ArgStr.str() +
               " applies to one rank's block: give --mesh";
  using loom::support::checkAtLeast;
  if (auto error = checkAtLeast("--batch", batchSize, 1))
    return error;
  if (auto error = checkAtLeast("--seq", seqLen, 1))
    return error;
  if (auto error = checkAtLeast("--step", step, 0))
    return error;
  return checkAtLeast("--rank", rank, 0);
}

static int runBatch() {
  if (auto error = checkBatchFlags())
    return fail(*error);
  io::TokenFile file;
  if (Status status = openTokens(file); !status)
    return fail(status.message());
  io::BatchSpec spec;
  spec.batchSize = batchSize;
  spec.seqLen = seqLen;
  spec.seed = seed;
  spec.order = sequential ? io::BatchSpec::Order::Sequential
                          : io::BatchSpec::Order::Random;
  std::vector<int32_t> inputs, labels;
  std::vector<int64_t> shape = {batchSize, seqLen};
  if (meshText.empty()) {
    if (Status status = io::readGlobalBatch(file, spec, step, inputs, labels);
        !status)
      return fail(status.message());
  } else {
    layout::DeviceMesh mesh;
    if (Status status = layout::DeviceMesh::parse(meshText, mesh); !status)
      return fail("--mesh: " + status.message());
    layout::BlockLayout tokensLayout = layout::BlockLayout::replicated(2);
    if (!layoutText.empty())
      if (Status status =
              layout::BlockLayout::parse(layoutText, mesh, tokensLayout);
          !status)
        return fail("--layout: " + status.message());
    if (Status status = io::readLocalBatch(file, spec, step, mesh, tokensLayout,
                                           rank, inputs, labels, shape);
        !status)
      return fail(status.message());
  }
  llvm::outs() << "step " << step << " block [" << shape[0] << ", " << shape[1]
               << "]\n";
  printRows("inputs", inputs, shape[0], shape[1]);
  printRows("labels", labels, shape[0], shape[1]);
  if (!batchOutput.empty()) {
    io::TensorMap tensors;
    tensors.emplace("input_ids",
                    io::TensorData::fromInt64s(
                        io::DType::I64, shape,
                        std::vector<int64_t>(inputs.begin(), inputs.end())));
    tensors.emplace("labels",
                    io::TensorData::fromInt64s(
                        io::DType::I64, shape,
                        std::vector<int64_t>(labels.begin(), labels.end())));
    if (auto error = io::writeSafeTensors(batchOutput, tensors))
      return fail(*error);
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --help lists the subcommands and their flags, not the options LLVM's
  // libraries register at the top level (--help-hidden shows them).
  cl::HideUnrelatedOptions(llvm::ArrayRef<const cl::OptionCategory *>(),
                           cl::SubCommand::getTopLevel());
  cl::ParseCommandLineOptions(argc, argv, "Loom token files\n");
  if (auto repeated = loom::support::findRepeatedFlag())
    return fail(*repeated);
  if (encodeCommand)
    return runEncode();
  if (inspectCommand)
    return runInspect();
  if (batchCommand)
    return runBatch();
  return fail("name a command: encode, inspect or batch (see loom-data "
              "--help)");
}
