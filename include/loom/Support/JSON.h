//===- JSON.h - Strict JSON for every Loom reader ---------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The one JSON parser of Loom's readers (graph JSON, parallel configs,
// strategy files, cluster specs, safetensors headers, checkpoint manifests,
// plan and layout files). On top of nlohmann/json's RFC 8259 parser it
// refuses what the RFC leaves open and a last-wins reader would silently
// accept:
//
//   - a key given twice in one object (nlohmann keeps the last; a duplicate
//     once changed a model's GELU form without a word);
//   - nesting deeper than kMaxNestingDepth arrays and objects (InputLimits.h).
//
// Every error names its position (line, column) and the JSON path of the
// value at fault, in the reader's own spelling (`ops[2].attrs` or the JSON
// pointer `/ops/2/attrs`). It never throws (LLVM builds without exceptions).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_JSON_H
#define LOOM_SUPPORT_JSON_H

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loom::support {

/// How an error spells the path of a value.
enum class JSONPathStyle {
  Dotted,  // ops[2].attrs.approximate
  Pointer, // /ops/2/attrs/approximate (RFC 6901)
};

/// Why a document was refused.
struct JSONError {
  enum class Kind { Syntax, DuplicateKey, TooDeep };
  Kind kind = Kind::Syntax;
  /// What was expected and what was found, without the position.
  std::string message;
  /// The path of the value at fault ("" for the root).
  std::string path;
  /// Where, 1-based.
  size_t line = 1;
  size_t column = 1;

  /// "line 3, column 7: `ops[2].attrs.approximate`: duplicate key ...".
  std::string format() const;
};

/// Parses `text` into `value`, strictly (see the file comment). Returns the
/// error, or nullopt.
std::optional<JSONError> parseJSON(std::string_view text,
                                   nlohmann::json &value,
                                   JSONPathStyle style = JSONPathStyle::Dotted);

/// `value` as an int64_t, or nullopt unless it is an integer that fits:
/// nlohmann keeps 2^63 and above as unsigned, and `get<int64_t>()` would
/// wrap them to negative numbers (a step 2^64 - 1 read as -1).
std::optional<int64_t> getInt64(const nlohmann::json &value);

} // namespace loom::support

#endif // LOOM_SUPPORT_JSON_H
