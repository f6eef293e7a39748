//===- Flags.h - Each command-line flag at most once ------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The flags rule of docs/Testing.md ("Bad input"): a flag given twice is an
// error naming the flag, unless it is documented as repeatable (`--inputs`),
// instead of the last value winning without a word. FlagOccurrences is for
// the command lines parsed by hand (the emitted training executable and the
// harness); CommandLine.h applies the same rule, with the same message, to
// the tools built on llvm::cl. Plain C++, so emitted programs link it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_FLAGS_H
#define LOOM_SUPPORT_FLAGS_H

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace loom::support {

/// The message for `flag` (spelled as the user writes it, `--steps`) given
/// `count` > 1 times.
std::string describeRepeatedFlag(std::string_view flag, int64_t count);

/// Counts the flags of a command line as a hand-written parser meets them.
class FlagOccurrences {
public:
  /// `repeatable`: the flags documented as repeatable.
  explicit FlagOccurrences(std::set<std::string> repeatable = {})
      : repeatable(std::move(repeatable)) {}

  /// Records one occurrence of `flag`; returns the error if it was given
  /// before and is not repeatable.
  std::optional<std::string> add(const std::string &flag);

private:
  std::set<std::string> repeatable;
  std::map<std::string, int64_t> counts;
};

} // namespace loom::support

#endif // LOOM_SUPPORT_FLAGS_H
