//===- JSON.cpp - Strict JSON for every Loom reader -----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. nlohmann's SAX parser drives a handler that forwards every event to
//    nlohmann's own DOM builder, so the value built is exactly what
//    `json::parse` would build.
// 2. Before forwarding, the handler keeps one frame per open array or
//    object (its keys so far, or its element count): a key already in the
//    frame, or a frame past the depth limit, stops the parse.
// 3. The input iterator counts the bytes the lexer consumed, which gives
//    the position of every event (SAX events carry none).
//
//===----------------------------------------------------------------------===//

#include "loom/Support/JSON.h"

#include "loom/Support/InputLimits.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <vector>

using json = nlohmann::json;

namespace loom::support {

std::string JSONError::format() const {
  std::string text = "line " + std::to_string(line) + ", column " +
                     std::to_string(column) + ": ";
  if (!path.empty())
    text += "`" + path + "`: ";
  return text + message;
}

namespace {

/// A `const char *` that records how far the lexer has read.
class CountingIterator {
public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  CountingIterator(const char *current, const char **latest)
      : current(current), latest(latest) {}

  reference operator*() const { return *current; }
  CountingIterator &operator++() {
    *latest = ++current;
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const CountingIterator &other) const {
    return current == other.current;
  }
  bool operator!=(const CountingIterator &other) const {
    return current != other.current;
  }

private:
  const char *current;
  const char **latest;
};

/// An open array or object.
struct Frame {
  bool isObject = false;
  /// Objects: each key so far and the offset where it ended.
  std::map<std::string, size_t> keys;
  /// Objects: the key of the value being read.
  std::string key;
  /// Arrays: the elements started so far.
  size_t elements = 0;
};

class StrictHandler {
public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  StrictHandler(json &root, std::string_view text, const char **latest,
                JSONPathStyle style)
      : dom(root, /*allow_exceptions_=*/false), text(text), latest(latest),
        style(style) {}

  std::optional<JSONError> error;

  bool null() { return element() && dom.null(); }
  bool boolean(bool value) { return element() && dom.boolean(value); }
  bool number_integer(number_integer_t value) {
    return element() && dom.number_integer(value);
  }
  bool number_unsigned(number_unsigned_t value) {
    return element() && dom.number_unsigned(value);
  }
  bool number_float(number_float_t value, const string_t &spelling) {
    return element() && dom.number_float(value, spelling);
  }
  bool string(string_t &value) { return element() && dom.string(value); }
  bool binary(binary_t &value) { return element() && dom.binary(value); }

  bool start_object(std::size_t size) {
    if (!element() || !open(/*isObject=*/true))
      return false;
    return dom.start_object(size);
  }
  bool key(string_t &name) {
    Frame &frame = frames.back();
    size_t end = offset();
    auto [it, inserted] = frame.keys.emplace(name, end);
    frame.key = name;
    if (!inserted) {
      TextPosition first = getTextPosition(text, keyStart(it->second));
      fail(JSONError::Kind::DuplicateKey, keyStart(end),
           "duplicate key `" + name + "`, already given at line " +
               std::to_string(first.line) + ", column " +
               std::to_string(first.column) +
               " (each key may appear once in an object)",
           path());
      return false;
    }
    return dom.key(name);
  }
  bool end_object() {
    frames.pop_back();
    return dom.end_object();
  }
  bool start_array(std::size_t size) {
    if (!element() || !open(/*isObject=*/false))
      return false;
    return dom.start_array(size);
  }
  bool end_array() {
    frames.pop_back();
    return dom.end_array();
  }

  template <typename Exception>
  bool parse_error(std::size_t position, const std::string &,
                   const Exception &exception) {
    // nlohmann counts the characters read (the end of the text counts as
    // one), so the offending one is the last.
    size_t at = std::min(position, text.size());
    if (at > 0)
      --at;
    // "[json.exception.parse_error.101] parse error at line 1, column 5:
    // syntax error while parsing value - ...": keep what follows the column.
    std::string message = exception.what();
    size_t columnPos = message.find("column ");
    if (columnPos != std::string::npos) {
      size_t colon = message.find(": ", columnPos);
      if (colon != std::string::npos)
        message = message.substr(colon + 2);
    }
    if (message.empty())
      message = "not a JSON document";
    fail(JSONError::Kind::Syntax, at, "invalid JSON: " + message, path());
    return false;
  }

private:
  nlohmann::detail::json_sax_dom_parser<json> dom;
  std::string_view text;
  const char **latest;
  JSONPathStyle style;
  std::vector<Frame> frames;

  size_t offset() const { return static_cast<size_t>(*latest - text.data()); }

  /// The offset of the opening quote of the key whose closing quote is the
  /// byte before `end`.
  size_t keyStart(size_t end) const {
    size_t i = end >= 2 ? end - 2 : 0;
    while (i > 0) {
      if (text[i] == '"') {
        size_t slashes = 0;
        while (i > slashes && text[i - slashes - 1] == '\\')
          ++slashes;
        if (slashes % 2 == 0)
          return i;
      }
      --i;
    }
    return 0;
  }

  /// Notes that a value starts in the innermost container.
  bool element() {
    if (!frames.empty() && !frames.back().isObject)
      ++frames.back().elements;
    return true;
  }

  bool open(bool isObject) {
    if (static_cast<int>(frames.size()) >= kMaxNestingDepth) {
      fail(JSONError::Kind::TooDeep, offset() > 0 ? offset() - 1 : 0,
           "arrays and objects nested deeper than " +
               std::to_string(kMaxNestingDepth) +
               " levels (the input limit, docs/Testing.md \"Bad input\")",
           path());
      return false;
    }
    frames.emplace_back();
    frames.back().isObject = isObject;
    return true;
  }

  /// The path of the value being read; past 16 levels, the middle is
  /// elided ("a[0][0]...[0].b").
  std::string path() const {
    std::string text;
    size_t level = 0;
    for (const Frame &frame : frames) {
      ++level;
      if (frames.size() > 16 && level > 8 && level <= frames.size() - 8) {
        if (level == 9)
          text += style == JSONPathStyle::Pointer ? "/..." : "...";
        continue;
      }
      if (frame.isObject) {
        if (frame.keys.empty())
          break; // No key read yet: the object itself.
        if (style == JSONPathStyle::Pointer)
          text += "/" + escapePointer(frame.key);
        else
          text += (text.empty() ? "" : ".") + frame.key;
      } else {
        if (frame.elements == 0)
          break;
        std::string index = std::to_string(frame.elements - 1);
        text += style == JSONPathStyle::Pointer ? "/" + index
                                                : "[" + index + "]";
      }
    }
    return text;
  }

  static std::string escapePointer(const std::string &key) {
    std::string escaped;
    for (char c : key) {
      if (c == '~')
        escaped += "~0";
      else if (c == '/')
        escaped += "~1";
      else
        escaped += c;
    }
    return escaped;
  }

  void fail(JSONError::Kind kind, size_t at, std::string message,
            std::string where) {
    if (error)
      return;
    TextPosition position = getTextPosition(text, at);
    error = JSONError{kind, std::move(message), std::move(where),
                      position.line, position.column};
  }
};

} // namespace

std::optional<JSONError> parseJSON(std::string_view text, json &value,
                                   JSONPathStyle style) {
  value = json();
  const char *latest = text.data();
  StrictHandler handler(value, text, &latest, style);
  CountingIterator first(text.data(), &latest),
      last(text.data() + text.size(), &latest);
  bool parsed = json::sax_parse(first, last, &handler);
  if (parsed && !handler.error)
    return std::nullopt;
  value = json();
  if (handler.error)
    return handler.error;
  return JSONError{JSONError::Kind::Syntax, "invalid JSON", "", 1, 1};
}

std::optional<int64_t> getInt64(const json &value) {
  if (value.is_number_unsigned()) {
    uint64_t unsignedValue = value.get<uint64_t>();
    if (unsignedValue > uint64_t(INT64_MAX))
      return std::nullopt;
    return int64_t(unsignedValue);
  }
  if (value.is_number_integer())
    return value.get<int64_t>();
  return std::nullopt;
}

} // namespace loom::support
