//===- JSONTest.cpp - Strict JSON: duplicate keys, depth, positions -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/JSON.h"

#include "loom/Support/InputLimits.h"

#include <gtest/gtest.h>

using namespace loom::support;
using json = nlohmann::json;

namespace {

TEST(JSONTest, ParsesWhatNlohmannParses) {
  json value;
  EXPECT_FALSE(parseJSON(R"({"a": [1, 2.5, "x", null, true], "b": {}})", value));
  EXPECT_EQ(value, json::parse(R"({"a": [1, 2.5, "x", null, true], "b": {}})"));
  // The same key in two objects is not a duplicate.
  EXPECT_FALSE(parseJSON(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}}])", value));
  EXPECT_EQ(value[1]["a"], 2);
}

TEST(JSONTest, DuplicateKeyNamesItsPathAndBothPositions) {
  json value;
  std::optional<JSONError> error =
      parseJSON("{\"ops\": [{}, {\"attrs\": {\"eps\": 1,\n  \"eps\": 2}}]}",
                value);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind, JSONError::Kind::DuplicateKey);
  EXPECT_EQ(error->path, "ops[1].attrs.eps");
  EXPECT_EQ(error->line, 2u);
  EXPECT_EQ(error->column, 3u);
  EXPECT_EQ(error->format(),
            "line 2, column 3: `ops[1].attrs.eps`: duplicate key `eps`, "
            "already given at line 1, column 25 (each key may appear once in "
            "an object)");
  EXPECT_TRUE(value.is_null()) << "nothing half-built is returned";

  // JSON pointers for the readers that speak them (cluster specs).
  error = parseJSON(R"({"a/b": {"x": 1, "x": 2}})", value,
                    JSONPathStyle::Pointer);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->path, "/a~1b/x");
  // Escapes do not hide a duplicate: "\u0061" is "a".
  error = parseJSON(R"({"a": 1, "\u0061": 2})", value);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->path, "a");
}

TEST(JSONTest, NestingIsBoundedWithoutRecursion) {
  json value;
  std::string ok = std::string(kMaxNestingDepth, '[') +
                   std::string(kMaxNestingDepth, ']');
  EXPECT_FALSE(parseJSON(ok, value));
  std::string deep = "{\"a\": " + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  std::optional<JSONError> error = parseJSON(deep, value);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind, JSONError::Kind::TooDeep);
  // The object is level 1, so the 256th `[` (column 7 + 255) is one too many.
  EXPECT_EQ(error->column, 7u + kMaxNestingDepth - 1);
  // The middle of a long path is elided.
  EXPECT_EQ(error->path.rfind("a[0][0][0][0][0][0][0]...[0]", 0), 0u)
      << error->path;
}

TEST(JSONTest, SyntaxErrorsHaveAPosition) {
  json value;
  std::optional<JSONError> error = parseJSON("{\"a\": 1,\n \"b\": }", value);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind, JSONError::Kind::Syntax);
  EXPECT_EQ(error->line, 2u);
  EXPECT_EQ(error->column, 7u);
  EXPECT_EQ(error->path, "b");
  EXPECT_EQ(error->message.rfind("invalid JSON: syntax error", 0), 0u)
      << error->message;
  // Empty text, trailing garbage and ill-formed UTF-8 are syntax errors.
  EXPECT_TRUE(parseJSON("", value));
  EXPECT_TRUE(parseJSON("{} x", value));
  EXPECT_TRUE(parseJSON("[\"\xff\"]", value));
}

TEST(JSONTest, Int64ReadsOnlyIntegersThatFit) {
  json value;
  ASSERT_FALSE(parseJSON("[-5, 0, 9223372036854775807, 9223372036854775808, "
                         "18446744073709551615, 1.5, \"3\"]",
                         value));
  EXPECT_EQ(getInt64(value[0]), -5);
  EXPECT_EQ(getInt64(value[1]), 0);
  EXPECT_EQ(getInt64(value[2]), INT64_MAX);
  // get<int64_t> wraps these to negative numbers; getInt64 refuses them.
  EXPECT_EQ(value[4].get<int64_t>(), -1);
  EXPECT_EQ(getInt64(value[3]), std::nullopt);
  EXPECT_EQ(getInt64(value[4]), std::nullopt);
  EXPECT_EQ(getInt64(value[5]), std::nullopt);
  EXPECT_EQ(getInt64(value[6]), std::nullopt);
}

} // namespace
