//===- CommandLine.h - The flags rule for llvm::cl tools --------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Since LLVM 15 a `cl::opt` given twice keeps the last value without a word.
// Loom's tools refuse it (docs/Testing.md, "Bad input"): after
// `cl::ParseCommandLineOptions`, findRepeatedFlag looks at every registered
// option and reports a `cl::opt` that occurred more than once. `cl::list`
// options are the documented repeatable ones (`loom-run --inputs`). Unlike
// the rest of LoomSupport this needs LLVM (library LoomSupportCommandLine).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_COMMANDLINE_H
#define LOOM_SUPPORT_COMMANDLINE_H

#include <optional>
#include <string>

namespace loom::support {

/// After the command line is parsed: the message (Flags.h's
/// describeRepeatedFlag) for the first `cl::opt` of the top level or of
/// any subcommand given more than once, in name order; nullopt if none.
std::optional<std::string> findRepeatedFlag();

} // namespace loom::support

#endif // LOOM_SUPPORT_COMMANDLINE_H
