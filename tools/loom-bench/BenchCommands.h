//===- BenchCommands.h - loom-bench's subcommands ---------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Each benchmark is an llvm::cl subcommand with its own options, defined in
// its own file with a function that runs it once the command line is parsed.
// Adding one: a file that defines the subcommand and its options, its two
// declarations here, and one row in the table in loom-bench.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_BENCH_BENCHCOMMANDS_H
#define LOOM_TOOLS_LOOM_BENCH_BENCHCOMMANDS_H

#include "llvm/Support/CommandLine.h"

namespace mlir::loom::bench {

/// `loom-bench dp`: the strategy search's DP solver on a synthetic
/// Transformer cost graph (DpBench.cpp).
extern llvm::cl::SubCommand dpCommand;
int runDpBench();

/// `loom-bench search`: JSON → searched plan in process, timed per phase
/// (SearchBench.cpp).
extern llvm::cl::SubCommand searchCommand;
int runSearchBench();

} // namespace mlir::loom::bench

#endif // LOOM_TOOLS_LOOM_BENCH_BENCHCOMMANDS_H
