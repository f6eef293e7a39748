//===- Flags.cpp - Each command-line flag at most once --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/Flags.h"

namespace loom::support {

std::string describeRepeatedFlag(std::string_view flag, int64_t count) {
  return std::string(flag) + ": expected at most once, given " +
         std::to_string(count) +
         " times (each flag at most once unless documented as repeatable)";
}

std::optional<std::string> FlagOccurrences::add(const std::string &flag) {
  int64_t count = ++counts[flag];
  if (count > 1 && !repeatable.count(flag))
    return describeRepeatedFlag(flag, count);
  return std::nullopt;
}

} // namespace loom::support
