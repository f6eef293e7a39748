//===- loom-translate.cpp - Loom's importers, exporters and emitters ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// mlir-translate for Loom: converts between Loom IR and the formats outside
// MLIR (graph JSON, generated host and CUDA code, reports). Run with --help
// for the registered translations.
//
// `--emit-host` and `--emit-cuda` write a program of several files: with
// `-o DIR` naming an existing directory, or ending in `/`, the files go into
// DIR (the translation's `--emit-host-dir` / `--emit-cuda-dir`) and their
// names to stdout.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllTranslations.h"
#include "loom/Support/Flags.h"
#include "loom/Support/InputFile.h"
#include "loom/Support/InputLimits.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

/// Rewrites `--emit-host ... -o DIR` into `--emit-host-dir=DIR -o -`, and
/// likewise for `--emit-cuda`.
static std::vector<std::string> rewriteOutputDir(int argc, char **argv) {
  std::vector<std::string> args(argv, argv + argc);
  std::string target;
  for (const std::string &arg : args)
    for (const char *emitter : {"host", "cuda"})
      if (arg == std::string("--emit-") + emitter ||
          arg == std::string("-emit-") + emitter)
        target = emitter;
  if (target.empty())
    return args;
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    std::string dir;
    if (arg == "-o" && i + 1 < args.size())
      dir = args[i + 1];
    else if (arg.starts_with("-o="))
      dir = arg.drop_front(3).str();
    else
      continue;
    if (dir.empty() || !(llvm::StringRef(dir).ends_with("/") ||
                         llvm::sys::fs::is_directory(dir)))
      return args;
    args.erase(args.begin() + i, args.begin() + i + (arg == "-o" ? 2 : 1));
    args.push_back("--emit-" + target + "-dir=" + dir);
    return args;
  }
  return args;
}

/// The first flag given more than once, as every Loom tool refuses it
/// (docs/Testing.md, "Bad input"). mlirTranslateMain parses and runs in one
/// call, so the flags are counted here, by spelling, before it: `-x` and
/// `--x` are one flag, `--x=v` and `--x v` too. Values never start with a
/// dash (`-o -` writes to stdout); `--` ends the flags.
static std::optional<std::string>
findRepeatedFlag(const std::vector<std::string> &args) {
  loom::support::FlagOccurrences occurrences;
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    if (arg == "--")
      break;
    if (arg == "-" || !arg.starts_with("-"))
      continue;
    llvm::StringRef name = arg.ltrim('-').split('=').first;
    std::string flag = (name.size() > 1 ? "--" : "-") + name.str();
    if (auto error = occurrences.add(flag))
      return error;
  }
  return std::nullopt;
}

/// Checks the textual IR a translation from MLIR reads against the input
/// limits before MLIR's parser sees it (docs/Testing.md, "Bad input"): the
/// parser overflows the stack on deep nesting, and a name that is not UTF-8
/// aborts the JSON writers. The input is the one positional argument (`-o`
/// takes the next); imports (`--import-*`) read JSON or ONNX, whose readers
/// check their own limits, and standard input is left to the parser.
static std::optional<std::string>
checkMlirInput(const std::vector<std::string> &args) {
  std::string input;
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    if (arg.ltrim('-').starts_with("import-"))
      return std::nullopt;
    if (arg == "-o") {
      ++i;
      continue;
    }
    if (!arg.starts_with("-"))
      input = arg.str();
  }
  std::string text;
  if (input.empty() || loom::support::readRegularFile(input, text))
    return std::nullopt; // MLIR's reader reports a file it cannot read.
  if (auto problem = loom::support::checkIRText(text))
    return input + ":" + std::to_string(problem->position.line) + ":" +
           std::to_string(problem->position.column) + ": " + problem->message;
  return std::nullopt;
}

int main(int argc, char **argv) {
  if (auto repeated =
          findRepeatedFlag(std::vector<std::string>(argv, argv + argc))) {
    llvm::errs() << "loom-translate: error: " << *repeated << "\n";
    return 1;
  }
  if (auto problem =
          checkMlirInput(std::vector<std::string>(argv, argv + argc))) {
    llvm::errs() << "loom-translate: error: " << *problem << "\n";
    return 1;
  }
  mlir::loom::registerAllTranslations();
  std::vector<std::string> args = rewriteOutputDir(argc, argv);
  std::vector<char *> pointers;
  for (std::string &arg : args)
    pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  return mlir::failed(mlir::mlirTranslateMain(static_cast<int>(args.size()),
                                              pointers.data(),
                                              "Loom translation driver"));
}
