//===- InputLimits.cpp - Limits every Loom reader enforces ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/InputLimits.h"

#include <cstdio>
#include <limits>
#include <unistd.h>

namespace loom::support {

TextPosition getTextPosition(std::string_view text, size_t offset) {
  TextPosition position;
  position.offset = offset;
  if (offset > text.size())
    offset = text.size();
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++position.line;
      position.column = 1;
    } else {
      ++position.column;
    }
  }
  return position;
}

std::optional<TextPosition> findTooDeepNesting(std::string_view text,
                                               int maxDepth) {
  // The open brackets, innermost last; never more than maxDepth of them.
  std::string open;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
    case '"':
      // A string literal ends at its closing quote (or, unterminated, at the
      // end of the line, where MLIR's lexer stops too); `\` escapes a byte.
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < text.size() && text[i + 1] == '/')
        while (i < text.size() && text[i] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (static_cast<int>(open.size()) >= maxDepth)
        return getTextPosition(text, i);
      open.push_back(c);
      break;
    case ')':
    case ']':
    case '}':
    case '>': {
      if (c == '>' && i > 0 && text[i - 1] == '-')
        break; // `->` in a function type or an affine map.
      char opener = c == ')' ? '(' : c == ']' ? '[' : c == '}' ? '{' : '<';
      if (!open.empty() && open.back() == opener)
        open.pop_back();
      break;
    }
    default:
      break;
    }
  }
  return std::nullopt;
}

std::string describeTooDeepNesting(int maxDepth) {
  return "brackets nested deeper than " + std::to_string(maxDepth) +
         " levels (the input limit, docs/Testing.md \"Bad input\")";
}

std::optional<size_t> findInvalidUTF8(std::string_view text) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
  size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned char b = bytes[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t length;
    unsigned char low = 0x80, high = 0xBF; // Range of the second byte.
    if (b >= 0xC2 && b <= 0xDF) {
      length = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      length = 3;
      if (b == 0xE0)
        low = 0xA0; // No overlong forms.
      else if (b == 0xED)
        high = 0x9F; // No surrogates.
    } else if (b >= 0xF0 && b <= 0xF4) {
      length = 4;
      if (b == 0xF0)
        low = 0x90;
      else if (b == 0xF4)
        high = 0x8F; // Nothing past U+10FFFF.
    } else {
      return i;
    }
    if (i + length > n || bytes[i + 1] < low || bytes[i + 1] > high)
      return i;
    for (size_t k = 2; k < length; ++k)
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xBF)
        return i;
    i += length;
  }
  return std::nullopt;
}

/// The value of a hex digit, or -1.
static int getHexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::optional<NonUTF8StringLiteral>
findNonUTF8StringLiteral(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n')
        ++i;
      continue;
    }
    if (text[i] != '"')
      continue;
    // Decode the literal as MLIR's lexer does; it ends at its closing quote
    // or, unterminated, at the end of the line (the parser reports that).
    size_t start = i;
    std::string value;
    for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i) {
      if (text[i] != '\\' || i + 1 >= text.size()) {
        value.push_back(text[i]);
        continue;
      }
      char next = text[++i];
      int high = getHexDigit(next);
      int low = i + 1 < text.size() ? getHexDigit(text[i + 1]) : -1;
      if (high >= 0 && low >= 0) {
        value.push_back(static_cast<char>(high * 16 + low));
        ++i;
      } else {
        value.push_back(next == 'n' ? '\n' : next == 't' ? '\t' : next);
      }
    }
    if (std::optional<size_t> bad = findInvalidUTF8(value))
      return NonUTF8StringLiteral{getTextPosition(text, start), *bad,
                                  static_cast<unsigned char>(value[*bad])};
  }
  return std::nullopt;
}

std::optional<TextProblem> checkIRText(std::string_view text) {
  if (std::optional<TextPosition> tooDeep = findTooDeepNesting(text))
    return TextProblem{*tooDeep, describeTooDeepNesting()};
  if (std::optional<NonUTF8StringLiteral> bad =
          findNonUTF8StringLiteral(text)) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02X", bad->byte);
    return TextProblem{
        bad->position,
        "string literal is not UTF-8: byte " + std::string(hex) + " at byte " +
            std::to_string(bad->valueOffset) +
            " of its value (names reach plan JSON, checkpoint manifests and "
            "messages, which must be UTF-8; docs/Testing.md \"Bad input\")"};
  }
  return std::nullopt;
}

std::optional<int64_t>
getCheckedElementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      return std::nullopt;
    count *= dim;
  }
  return count;
}

std::optional<int64_t> getCheckedByteSize(int64_t count, int64_t elementBytes) {
  if (count < 0 || elementBytes < 0)
    return std::nullopt;
  if (elementBytes != 0 &&
      count > std::numeric_limits<int64_t>::max() / elementBytes)
    return std::nullopt;
  return count * elementBytes;
}

int64_t getPhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return std::numeric_limits<int64_t>::max();
  std::optional<int64_t> bytes = getCheckedByteSize(pages, pageSize);
  return bytes ? *bytes : std::numeric_limits<int64_t>::max();
}

std::string formatBytes(int64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB",
                                      "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  return text;
}

std::optional<std::string> checkTensorSize(const std::vector<int64_t> &shape,
                                           int64_t elementBytes) {
  std::string dims;
  for (int64_t dim : shape)
    dims += (dims.empty() ? "" : "x") + std::to_string(dim);
  std::string what = "a tensor of shape [" + dims + "]";
  std::optional<int64_t> count = getCheckedElementCount(shape);
  if (!count)
    return what + " has more elements than int64 holds (" +
           std::to_string(std::numeric_limits<int64_t>::max()) + ")";
  std::optional<int64_t> bytes = getCheckedByteSize(*count, elementBytes);
  if (!bytes)
    return what + " has " + std::to_string(*count) + " elements of " +
           std::to_string(elementBytes) +
           " bytes, more bytes than int64 holds";
  int64_t memory = getPhysicalMemoryBytes();
  if (*bytes > memory)
    return what + " needs " + std::to_string(*bytes) + " bytes (" +
           formatBytes(*bytes) + "), more than the host's memory (" +
           formatBytes(memory) + ")";
  return std::nullopt;
}

} // namespace loom::support
