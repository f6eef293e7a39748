//===- InputLimits.h - Limits every Loom reader enforces --------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The input-limits policy of docs/Testing.md ("Bad input") as code: one
// number per limit and the checks that enforce them, shared by the
// compiler's readers, the tools and the runtime. Plain C++, no LLVM or MLIR,
// so emitted programs link it too.
//
//   - nesting: JSON documents and textual IR nest at most kMaxNestingDepth
//     brackets deep (the MLIR parser recurses per level and overflows the
//     stack near 3000 nested regions on an 8 MiB stack);
//   - sizes: a tensor's element count and byte size fit in int64_t and its
//     bytes in the host's physical memory, checked before anything is
//     allocated;
//   - files: every file read is checked to be a regular file first
//     (InputFile.h); JSON keys are unique (JSON.h); names are UTF-8.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_INPUTLIMITS_H
#define LOOM_SUPPORT_INPUTLIMITS_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom::support {

/// The deepest nesting of brackets any reader accepts: JSON arrays and
/// objects, and `(`, `[`, `{`, `<` in textual IR. Real inputs nest fewer
/// than 20 levels.
constexpr int kMaxNestingDepth = 256;

/// A position in a text, 1-based line and column (in bytes).
struct TextPosition {
  size_t offset = 0;
  size_t line = 1;
  size_t column = 1;
};

/// The line and column of byte `offset` of `text`.
TextPosition getTextPosition(std::string_view text, size_t offset);

/// Scans MLIR textual IR for brackets nested deeper than `maxDepth`,
/// skipping string literals and `//` comments, without building anything.
/// Returns the position of the first bracket past the limit, or nullopt.
/// The scan is a guard, not a parser: a closing bracket that matches no
/// open one is ignored (the parser reports it), and `->` is not a bracket.
std::optional<TextPosition> findTooDeepNesting(std::string_view text,
                                               int maxDepth = kMaxNestingDepth);

/// What findTooDeepNesting found, for a message after its position.
std::string describeTooDeepNesting(int maxDepth = kMaxNestingDepth);

/// The offset of the first byte of `text` that is not part of well-formed
/// UTF-8 (RFC 3629: no overlong forms, surrogates or code points past
/// U+10FFFF), or nullopt when all of it is.
std::optional<size_t> findInvalidUTF8(std::string_view text);

/// A string literal of textual IR whose value is not UTF-8: where the
/// literal starts (its opening quote), and the first bad byte of its value
/// after MLIR's escapes (`\\`, `\"`, `\n`, `\t`, `\XX`) are decoded.
struct NonUTF8StringLiteral {
  TextPosition position;
  size_t valueOffset = 0;
  unsigned char byte = 0;
};

/// Scans MLIR textual IR for a string literal (symbol names, `loom.name`,
/// `#loom.param` names, mesh axes, dictionary keys, locations) whose value
/// is not UTF-8, skipping `//` comments; nullopt when every one is. Every
/// such string can reach a JSON writer (plans, manifests, safetensors
/// headers), which refuses the bytes, or a message.
std::optional<NonUTF8StringLiteral>
findNonUTF8StringLiteral(std::string_view text);

/// A problem in an input text, found before it is parsed.
struct TextProblem {
  TextPosition position;
  std::string message;
};

/// The input limits on textual IR, checked before MLIR's parser by every
/// reader of `.mlir` files: nesting depth, then UTF-8 string literals.
std::optional<TextProblem> checkIRText(std::string_view text);

/// The element count of a tensor of `shape`, or nullopt when a dim is
/// negative or the product overflows int64_t.
std::optional<int64_t> getCheckedElementCount(const std::vector<int64_t> &shape);

/// `count * elementBytes`, or nullopt when it overflows int64_t.
std::optional<int64_t> getCheckedByteSize(int64_t count, int64_t elementBytes);

/// The host's physical memory in bytes (sysconf), the bound on one tensor's
/// bytes; INT64_MAX where the system does not say.
int64_t getPhysicalMemoryBytes();

/// Checks that a tensor of `shape` with `elementBytes`-byte elements can be
/// allocated on this host: its element count and byte size fit in int64_t
/// and the bytes in the physical memory. Returns the problem ("tensor of
/// 4611686018427387904 elements of 4 bytes: 18446744073709551616 bytes
/// overflow int64"), or nullopt.
std::optional<std::string> checkTensorSize(const std::vector<int64_t> &shape,
                                           int64_t elementBytes);

/// "1.5 GiB": a byte count for messages.
std::string formatBytes(int64_t bytes);

} // namespace loom::support

#endif // LOOM_SUPPORT_INPUTLIMITS_H
