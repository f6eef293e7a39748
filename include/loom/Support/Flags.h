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
// the tools built on llvm::cl. checkAtLeast and checkFiniteAtLeast are the
// range checks made where a flag or pass option is parsed, so that a
// negative value is refused instead of read as "absent". Plain C++, so
// emitted programs link it.
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

/// The range check of an integer flag or option `name`: the message
/// "NAME: expected a value >= MIN (NOTE), found VALUE" when `value` < `min`
/// (NOTE says what a special value such as 0 means; omitted when empty).
std::optional<std::string> checkAtLeast(std::string_view name, int64_t value,
                                        int64_t min,
                                        std::string_view note = "");

/// The same for a real value, which must also be finite (nan and inf are
/// refused).
std::optional<std::string> checkFiniteAtLeast(std::string_view name,
                                              double value, double min,
                                              std::string_view note = "");

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
