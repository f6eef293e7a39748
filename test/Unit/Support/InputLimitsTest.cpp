//===- InputLimitsTest.cpp - Nesting, UTF-8 and size limits ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/InputLimits.h"

#include <gtest/gtest.h>

#include <limits>

using namespace loom::support;

namespace {

TEST(InputLimitsTest, NestingScanCountsBracketsOutsideStringsAndComments) {
  EXPECT_FALSE(findTooDeepNesting("func.func @f(%a: tensor<2xf32>) -> "
                                  "tensor<2xf32> { return %a : tensor<2xf32> }"));
  std::string deep = "x = " + std::string(300, '[');
  std::optional<TextPosition> at = findTooDeepNesting(deep);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->offset, 4u + kMaxNestingDepth);
  EXPECT_EQ(at->line, 1u);
  EXPECT_EQ(at->column, 5u + kMaxNestingDepth);
  // Mixed kinds count together; closing brackets pop their own kind only.
  EXPECT_TRUE(findTooDeepNesting(std::string(100, '(') + std::string(100, '{') +
                                 std::string(100, '<')));
  EXPECT_FALSE(findTooDeepNesting(std::string(200, '[') +
                                  std::string(200, ']') +
                                  std::string(200, '[')));
  // `->` closes nothing: 200 function types in a row stay shallow.
  std::string arrows;
  for (int i = 0; i < 300; ++i)
    arrows += "<(i32) -> i32>";
  EXPECT_FALSE(findTooDeepNesting(arrows));
  // Brackets in strings and comments do not count.
  EXPECT_FALSE(findTooDeepNesting("\"" + std::string(300, '[') + "\""));
  EXPECT_FALSE(findTooDeepNesting("\"\\\"" + std::string(300, '[') + "\""));
  EXPECT_FALSE(findTooDeepNesting("// " + std::string(300, '[') + "\nx"));
  EXPECT_TRUE(findTooDeepNesting("// x\n" + std::string(300, '[')));
}

TEST(InputLimitsTest, UTF8FollowsRFC3629) {
  EXPECT_FALSE(findInvalidUTF8("plain.name"));
  EXPECT_FALSE(findInvalidUTF8("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_EQ(findInvalidUTF8("ab\xff"), 2u);
  EXPECT_EQ(findInvalidUTF8("a\xc3"), 1u);          // truncated sequence
  EXPECT_EQ(findInvalidUTF8("\xc0\xaf"), 0u);       // overlong '/'
  EXPECT_EQ(findInvalidUTF8("\xe0\x80\xaf"), 0u);   // overlong, 3 bytes
  EXPECT_EQ(findInvalidUTF8("x\xed\xa0\x80"), 1u);  // surrogate U+D800
  EXPECT_EQ(findInvalidUTF8("\xf4\x90\x80\x80"), 0u); // past U+10FFFF
  EXPECT_EQ(findInvalidUTF8("\xe2\x82x"), 0u);      // bad continuation
}

TEST(InputLimitsTest, StringLiteralsOfIRAreDecodedAndCheckedForUTF8) {
  // Names in UTF-8, raw or escaped, pass; so do bytes in comments.
  EXPECT_FALSE(findNonUTF8StringLiteral(
      "func.func @\"caf\xC3\xA9\"() attributes {n = \"\\C3\\A9\"}"));
  EXPECT_FALSE(findNonUTF8StringLiteral("// \xFF\n\"ok\\n\\t\\\"\\\\\""));
  // An escaped byte: the literal's position and the byte in the value.
  std::optional<NonUTF8StringLiteral> escaped =
      findNonUTF8StringLiteral("x\n  loom.name = \"ab\\FF\"");
  ASSERT_TRUE(escaped);
  EXPECT_EQ(escaped->position.line, 2u);
  EXPECT_EQ(escaped->position.column, 15u);
  EXPECT_EQ(escaped->valueOffset, 2u);
  EXPECT_EQ(escaped->byte, 0xFF);
  // A raw byte, a lone continuation byte, a surrogate written as escapes.
  EXPECT_TRUE(findNonUTF8StringLiteral("@\"\xFE\""));
  EXPECT_TRUE(findNonUTF8StringLiteral("[\"ok\", \"\\80\"]"));
  EXPECT_TRUE(findNonUTF8StringLiteral("\"\\ED\\A0\\80\""));
  // `\"` does not end the literal, so the byte after it is inside it.
  EXPECT_TRUE(findNonUTF8StringLiteral("\"a\\\"\\FF\""));
  // An escape of a quote or backslash followed by hex-looking text.
  EXPECT_FALSE(findNonUTF8StringLiteral("\"\\\\FF\""));

  // checkIRText: nesting first, then the strings, each with a message.
  std::optional<TextProblem> deep =
      checkIRText(std::string(300, '[') + "\"\\FF\"");
  ASSERT_TRUE(deep);
  EXPECT_NE(deep->message.find("nested deeper than 256"), std::string::npos);
  std::optional<TextProblem> name = checkIRText("@\"\\FF\"");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->position.column, 2u);
  EXPECT_NE(name->message.find("string literal is not UTF-8: byte 0xFF at "
                               "byte 0 of its value"),
            std::string::npos);
  EXPECT_FALSE(checkIRText("func.func @f() { return }"));
}

TEST(InputLimitsTest, SizesAreCheckedAgainstInt64AndMemory) {
  constexpr int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(getCheckedElementCount({2, 3, 4}), 24);
  EXPECT_EQ(getCheckedElementCount({}), 1);
  EXPECT_EQ(getCheckedElementCount({0, max}), 0);
  EXPECT_FALSE(getCheckedElementCount({int64_t(1) << 32, int64_t(1) << 32}));
  EXPECT_FALSE(getCheckedElementCount({-1}));
  EXPECT_EQ(getCheckedByteSize(max / 8, 8), max / 8 * 8);
  EXPECT_FALSE(getCheckedByteSize(int64_t(1) << 62, 4));

  EXPECT_FALSE(checkTensorSize({1024, 1024}, 4));
  std::optional<std::string> overflow =
      checkTensorSize({int64_t(1) << 62}, 4);
  ASSERT_TRUE(overflow);
  EXPECT_EQ(*overflow, "a tensor of shape [4611686018427387904] has "
                       "4611686018427387904 elements of 4 bytes, more bytes "
                       "than int64 holds");
  std::optional<std::string> count =
      checkTensorSize({int64_t(1) << 40, int64_t(1) << 40}, 4);
  ASSERT_TRUE(count);
  EXPECT_NE(count->find("more elements than int64 holds"), std::string::npos);
  std::optional<std::string> memory = checkTensorSize({int64_t(1) << 60}, 4);
  ASSERT_TRUE(memory);
  EXPECT_NE(memory->find("more than the host's memory"), std::string::npos)
      << *memory;
  EXPECT_EQ(formatBytes(512), "512 bytes");
  EXPECT_EQ(formatBytes(int64_t(3) << 29), "1.5 GiB");
}

} // namespace
