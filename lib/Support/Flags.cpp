//===- Flags.cpp - Each command-line flag at most once --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/Flags.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace loom::support {

std::string describeRepeatedFlag(std::string_view flag, int64_t count) {
  return std::string(flag) + ": expected at most once, given " +
         std::to_string(count) +
         " times (each flag at most once unless documented as repeatable)";
}

/// The shortest of %.15g, %.16g and %.17g that reads back to `value`.
static std::string formatReal(double value) {
  char text[64];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

static std::string rangeMessage(std::string_view name, std::string_view min,
                                std::string_view note, std::string_view found,
                                bool finite) {
  std::string message = std::string(name) + ": expected a " +
                        (finite ? "finite " : "") +
                        "value >= " + std::string(min);
  if (!note.empty())
    message += " (" + std::string(note) + ")";
  return message + ", found " + std::string(found);
}

std::optional<std::string> checkAtLeast(std::string_view name, int64_t value,
                                        int64_t min, std::string_view note) {
  if (value >= min)
    return std::nullopt;
  return rangeMessage(name, std::to_string(min), note, std::to_string(value),
                      /*finite=*/false);
}

std::optional<std::string> checkFiniteAtLeast(std::string_view name,
                                              double value, double min,
                                              std::string_view note) {
  if (std::isfinite(value) && value >= min)
    return std::nullopt;
  return rangeMessage(name, formatReal(min), note, formatReal(value),
                      /*finite=*/true);
}

std::optional<std::string> FlagOccurrences::add(const std::string &flag) {
  int64_t count = ++counts[flag];
  if (count > 1 && !repeatable.count(flag))
    return describeRepeatedFlag(flag, count);
  return std::nullopt;
}

} // namespace loom::support
