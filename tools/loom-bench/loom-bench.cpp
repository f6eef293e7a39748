//===- loom-bench.cpp - Loom's benchmarks ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom-bench <benchmark> [options]
//
// Runs one benchmark and prints what it measured as `key: value` lines, the
// numbers docs/Performance.md records with the command that produced them.
// `loom-bench <benchmark> --help` lists a benchmark's options.
//
//===----------------------------------------------------------------------===//

#include "BenchCommands.h"

#include "loom/Support/CommandLine.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::loom::bench;

namespace {

/// One row per benchmark.
struct BenchCommand {
  llvm::cl::SubCommand &command;
  int (*run)();
};

} // namespace

static const BenchCommand kCommands[] = {
    {dpCommand, runDpBench},
    {searchCommand, runSearchBench},
};

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --help lists the subcommands and their flags, not the options LLVM's
  // libraries register at the top level (--help-hidden shows them).
  llvm::cl::HideUnrelatedOptions(
      llvm::ArrayRef<const llvm::cl::OptionCategory *>(),
      llvm::cl::SubCommand::getTopLevel());
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "Loom benchmarks; name one to run it\n");
  if (auto repeated = loom::support::findRepeatedFlag()) {
    llvm::errs() << "loom-bench: error: " << *repeated << "\n";
    return 1;
  }
  for (const BenchCommand &entry : kCommands)
    if (entry.command)
      return entry.run();
  llvm::errs() << "loom-bench: error: name a benchmark:";
  for (const BenchCommand &entry : kCommands)
    llvm::errs() << " " << entry.command.getName();
  llvm::errs() << " (see loom-bench --help)\n";
  return 1;
}
