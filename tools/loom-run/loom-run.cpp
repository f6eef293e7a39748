//===- loom-run.cpp - The reference interpreter's command line ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
//   loom-run FILE.mlir --entry NAME [--dtype f64|f32] [--ranks N] [--seed S]
//            [--rng-step N]
//            [--inputs F]... [--outputs F] [--report-memory]
//   loom-run --compare A B [--rtol R --atol A]
//
// The first form runs function NAME of FILE.mlir on global tensors read from
// safetensors (or `.npy`, named by the file's stem) files, prints one summary
// line per result and writes the results to a safetensors file. The second
// compares two tensor files and exits 1 when they differ. docs/Interpreter.md
// is the manual.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/Interpreter/EntrySignature.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Runtime/IO/Npy.h"
#include "loom/Runtime/IO/SafeTensors.h"
#include "loom/Support/CommandLine.h"
#include "loom/Support/Flags.h"
#include "loom/Support/InputFile.h"
#include "loom/Support/InputLimits.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

using namespace mlir;
using namespace mlir::loom::interp;
namespace io = ::loom::runtime::io;

static llvm::cl::OptionCategory category("loom-run options");

static llvm::cl::list<std::string>
    positional(llvm::cl::Positional,
               llvm::cl::desc("FILE.mlir | --compare A B"), llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    entryName("entry", llvm::cl::desc("the function to run"), llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    dtypeFlag("dtype", llvm::cl::desc("float precision: f64 (default) or f32"),
              llvm::cl::init("f64"), llvm::cl::cat(category));
static llvm::cl::opt<int64_t> ranksFlag(
    "ranks",
    llvm::cl::desc("simulated ranks (default: the mesh's device count)"),
    llvm::cl::init(0), llvm::cl::cat(category));
static llvm::cl::opt<uint64_t>
    seedFlag("seed", llvm::cl::desc("seed of random initializers and dropout"),
             llvm::cl::init(0), llvm::cl::cat(category));
static llvm::cl::opt<uint64_t> rngStepFlag(
    "rng-step",
    llvm::cl::desc("the 0-based training step whose dropout masks to draw "
                   "(an emitted trainer's step N uses N)"),
    llvm::cl::init(0), llvm::cl::cat(category));
static llvm::cl::list<std::string> inputFiles(
    "inputs",
    llvm::cl::desc("safetensors or .npy file of global inputs (repeatable)"), llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    outputFile("outputs",
               llvm::cl::desc("safetensors file to write the results to"), llvm::cl::cat(category));
static llvm::cl::opt<bool> reportMemoryFlag(
    "report-memory",
    llvm::cl::desc("print each rank's peak bytes of live values (at their "
                   "declared types)"), llvm::cl::cat(category));
static llvm::cl::opt<bool>
    compareFlag("compare", llvm::cl::desc("compare two tensor files"), llvm::cl::cat(category));
static llvm::cl::opt<double> rtolFlag("rtol",
                                      llvm::cl::desc("relative tolerance"),
                                      llvm::cl::init(1e-5), llvm::cl::cat(category));
static llvm::cl::opt<double> atolFlag("atol",
                                      llvm::cl::desc("absolute tolerance"),
                                      llvm::cl::init(1e-8), llvm::cl::cat(category));

/// Prints `loom-run: error: <message>` and returns the exit status 1.
static int fail(const std::string &message) {
  llvm::errs() << "loom-run: error: " << message << "\n";
  return 1;
}

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Reads a tensor file: safetensors, or `.npy` holding one tensor named by
/// the file's stem.
static std::optional<std::string> readTensorFile(const std::string &path,
                                                 io::TensorMap &tensors) {
  if (!endsWith(path, ".npy"))
    return io::readSafeTensors(path, tensors);
  io::TensorData tensor;
  if (auto error = io::readNpy(path, tensor))
    return error;
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem.resize(stem.size() - 4);
  tensors.clear();
  tensors.emplace(stem, std::move(tensor));
  return std::nullopt;
}

static std::string formatShape(const std::vector<int64_t> &shape) {
  return HostTensor::formatShape(shape);
}

/// FNV-1a (64-bit) of the bytes.
static uint64_t fnv1a(const std::vector<uint8_t> &bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) {
    hash ^= b;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

static void printSummary(const std::string &name, const io::TensorData &t) {
  std::vector<double> values = t.toDoubles();
  double sum = 0, absMax = 0;
  for (double v : values) {
    sum += v;
    absMax = std::fmax(absMax, std::fabs(v));
  }
  double mean = values.empty() ? 0.0 : sum / values.size();
  llvm::outs() << llvm::format(
      "%s: shape %s dtype %s mean %.9g absmax %.9g fnv1a64 %016" PRIx64 "\n",
      name.c_str(), formatShape(t.shape).c_str(),
      std::string(io::dtypeName(t.dtype)).c_str(), mean, absMax,
      fnv1a(t.bytes));
}

//===----------------------------------------------------------------------===//
// --compare
//===----------------------------------------------------------------------===//

static int compareFiles(const std::string &a, const std::string &b) {
  io::TensorMap left, right;
  if (auto error = readTensorFile(a, left))
    return fail(*error);
  if (auto error = readTensorFile(b, right))
    return fail(*error);
  double rtol = rtolFlag.getValue(), atol = atolFlag.getValue();
  int mismatches = 0;
  for (const auto &[name, l] : left) {
    auto it = right.find(name);
    if (it == right.end()) {
      llvm::outs() << name << ": only in " << a << "\n";
      ++mismatches;
      continue;
    }
    const io::TensorData &r = it->second;
    if (l.shape != r.shape) {
      llvm::outs() << name << ": shape " << formatShape(l.shape) << " in " << a
                   << " but " << formatShape(r.shape) << " in " << b << "\n";
      ++mismatches;
      continue;
    }
    std::vector<double> x = l.toDoubles(), y = r.toDoubles();
    double maxAbs = 0, maxRel = 0;
    bool ok = true;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i]) || std::isnan(y[i])) {
        if (!(std::isnan(x[i]) && std::isnan(y[i])))
          ok = false, maxAbs = maxRel = NAN;
        continue;
      }
      if (x[i] == y[i]) // equal infinities included
        continue;
      double diff = std::fabs(x[i] - y[i]);
      double rel = diff / std::fmax(std::fabs(y[i]), 1e-300);
      if (!(diff <= atol + rtol * std::fabs(y[i])))
        ok = false;
      maxAbs = std::fmax(maxAbs, diff);
      maxRel = std::fmax(maxRel, rel);
    }
    llvm::outs() << llvm::format(
        "%s: shape %s max_abs_err %.3e max_rel_err %.3e %s\n", name.c_str(),
        formatShape(l.shape).c_str(), maxAbs, maxRel, ok ? "ok" : "MISMATCH");
    if (!ok)
      ++mismatches;
  }
  size_t total = left.size();
  for (const auto &[name, r] : right)
    if (!left.count(name)) {
      llvm::outs() << name << ": only in " << b << "\n";
      ++mismatches;
      ++total;
    }
  std::string tolerances =
      llvm::formatv("(rtol {0}, atol {1})", llvm::format("%g", rtol),
                    llvm::format("%g", atol))
          .str();
  if (mismatches) {
    llvm::outs() << mismatches << " of " << total << " tensors differ "
                 << tolerances << "\n";
    return 1;
  }
  llvm::outs() << "all " << total << " tensors match " << tolerances << "\n";
  return 0;
}

//===----------------------------------------------------------------------===//
// Runs
//===----------------------------------------------------------------------===//

static int runFile(const std::string &path) {
  const std::string &entryName = ::entryName.getValue();
  const std::string &dtypeFlag = ::dtypeFlag.getValue();
  if (entryName.empty())
    return fail("missing --entry: name the function to run");
  RunOptions options;
  if (dtypeFlag == "f64")
    options.floatKind = StorageKind::F64;
  else if (dtypeFlag == "f32")
    options.floatKind = StorageKind::F32;
  else
    return fail("--dtype expects f64 or f32, got `" + dtypeFlag + "`");
  if (ranksFlag.getNumOccurrences()) {
    if (ranksFlag < 1)
      return fail("--ranks expects a positive count, got " +
                  std::to_string(int64_t(ranksFlag)));
    options.ranks = int64_t(ranksFlag);
  }
  options.seed = uint64_t(seedFlag);
  options.rngStep = uint64_t(rngStepFlag);

  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  if (path != "-")
    if (auto error = ::loom::support::checkRegularFile(path))
      return fail(*error);
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer)
    return fail("cannot read `" + path + "`: " + buffer.getError().message());
  // The MLIR parser recurses per nested bracket, and names must be UTF-8
  // (docs/Testing.md, "Bad input").
  llvm::StringRef text = (*buffer)->getBuffer();
  if (auto problem = ::loom::support::checkIRText(
          std::string_view(text.data(), text.size())))
    return fail(path + ":" + std::to_string(problem->position.line) + ":" +
                std::to_string(problem->position.column) + ": " +
                problem->message);
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse `" + path + "` (see the diagnostics above)");
  auto entry = module->lookupSymbol<func::FuncOp>(entryName);
  if (!entry)
    return fail("`" + path + "` has no function @" + entryName);

  Interpreter interpreter(entry, KernelRegistry::getDefault(), options);
  if (auto error = interpreter.prepare())
    return fail(*error);

  // Argument names must be unique: they are the keys of the input files.
  std::map<std::string, unsigned> argIndex;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    std::string name = getArgumentName(entry, i);
    if (!argIndex.emplace(name, i).second)
      return fail("arguments #" + std::to_string(argIndex[name]) + " and #" +
                  std::to_string(i) + " of @" + entryName +
                  " have the same name `" + name + "`");
  }

  std::vector<std::optional<HostTensor>> given(entry.getNumArguments());
  for (const std::string &file : inputFiles) {
    io::TensorMap tensors;
    if (auto error = readTensorFile(file, tensors))
      return fail(*error);
    for (auto &[name, data] : tensors) {
      auto it = argIndex.find(name);
      if (it == argIndex.end()) {
        std::string known;
        for (const auto &[argName, index] : argIndex)
          known += (known.empty() ? "" : ", ") + argName;
        return fail("`" + file + "`: tensor `" + name +
                    "` matches no argument of @" + entryName +
                    " (arguments: " + known + ")");
      }
      unsigned i = it->second;
      std::string what = "`" + file + "`: tensor `" + name + "`";
      if (given[i])
        return fail(what + " is given twice");
      // A view of its file shape reads the file's row-major data as is.
      std::optional<Shape> fileShape = getArgumentFileShape(entry, i);
      if (fileShape && data.shape == *fileShape)
        data.shape = interpreter.getArgumentShape(i);
      if (data.shape != interpreter.getArgumentShape(i))
        return fail(what + " has shape " + formatShape(data.shape) +
                    ", but argument #" + std::to_string(i) +
                    " expects the global shape " +
                    formatShape(fileShape ? *fileShape
                                          : interpreter.getArgumentShape(i)));
      HostTensor tensor;
      if (auto error = tensorFromFile(data, entry.getArgumentTypes()[i],
                                      options.floatKind, what, tensor))
        return fail(*error);
      given[i] = tensor;
    }
  }

  std::vector<HostTensor> args;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    if (given[i]) {
      args.push_back(*given[i]);
      continue;
    }
    HostTensor init;
    if (auto error =
            initializeArgument(entry, i, interpreter.getArgumentShape(i),
                               options.floatKind, options.seed, init))
      return fail(*error);
    args.push_back(init);
  }

  std::vector<HostTensor> results;
  if (auto error = interpreter.run(args, results))
    return fail(*error);

  io::TensorMap outputs;
  for (unsigned i = 0; i < results.size(); ++i) {
    std::string name = getResultName(entry, i);
    io::TensorData data = tensorToFile(results[i], entry.getResultTypes()[i]);
    if (std::optional<Shape> fileShape = getResultFileShape(entry, i))
      data.shape = *fileShape;
    printSummary(name, data);
    if (!outputs.emplace(name, std::move(data)).second)
      return fail("results of @" + entryName + " share the name `" + name +
                  "`");
  }
  if (!outputFile.empty())
    if (auto error = io::writeSafeTensors(outputFile, outputs))
      return fail(*error);
  if (reportMemoryFlag) {
    for (auto [rank, bytes] : llvm::enumerate(interpreter.getPeakLiveBytes()))
      llvm::outs() << "peak live bytes: " << bytes << " (rank " << rank
                   << ")\n";
    // A pipelined program also says how many micro-batches' activations
    // each rank held at once (docs/Pipeline.md).
    for (auto [rank, count] :
         llvm::enumerate(interpreter.getPeakInFlightMicroBatches()))
      if (count > 0)
        llvm::outs() << "peak micro-batches in flight: " << count << " (rank "
                     << rank << ")\n";
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Loom reference interpreter\n\n"
      "  loom-run FILE.mlir --entry NAME [--dtype f64|f32] [--ranks N]\n"
      "           [--seed S] [--rng-step N] [--inputs F]... [--outputs F]\n"
      "           [--report-memory]\n"
      "  loom-run --compare A B [--rtol R --atol A]\n");
  if (auto repeated = ::loom::support::findRepeatedFlag())
    return fail(*repeated);
  // Flags of the other form would be ignored without a word.
  const llvm::cl::Option *runFlags[] = {
      &entryName,  &dtypeFlag,       &ranksFlag,
      &seedFlag,   &rngStepFlag,     std::addressof(inputFiles),
      &outputFile, &reportMemoryFlag};
  const llvm::cl::Option *compareFlags[] = {&rtolFlag, &atolFlag};
  if (compareFlag) {
    for (const llvm::cl::Option *flag : runFlags)
      if (flag->getNumOccurrences())
        return fail("--" + flag->ArgStr.str() +
                    " applies to running a function, not to --compare");
    if (auto error =
            ::loom::support::checkFiniteAtLeast("--rtol", rtolFlag, 0.0))
      return fail(*error);
    if (auto error =
            ::loom::support::checkFiniteAtLeast("--atol", atolFlag, 0.0))
      return fail(*error);
    if (positional.size() != 2)
      return fail("--compare expects two tensor files, got " +
                  std::to_string(positional.size()));
    return compareFiles(positional[0], positional[1]);
  }
  for (const llvm::cl::Option *flag : compareFlags)
    if (flag->getNumOccurrences())
      return fail("--" + flag->ArgStr.str() +
                  " applies to --compare: give --compare A B");
  if (positional.size() != 1)
    return fail("expected one input file FILE.mlir, got " +
                std::to_string(positional.size()));
  return runFile(positional[0]);
}
