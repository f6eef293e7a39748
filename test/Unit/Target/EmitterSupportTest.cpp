//===- EmitterSupportTest.cpp - Literals the per-rank emitters print ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The host and CUDA emitters print attribute values as C++ literals; the
// emitted programs are only right if those literals read back as the same
// values, which these check without compiling a program.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/EmitterSupport.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace mlir::loom::emit;

namespace {

TEST(EmitterSupportTest, DoubleLiteralsReadBackBitForBit) {
  for (double v : {0.1, 1e-8, 0.999, 1.0 / 3.0, 6.02214076e23, -2.5, 1.0,
                   0.0, std::numeric_limits<double>::min(),
                   std::numeric_limits<double>::max()}) {
    std::string text = doubleLiteral(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
    // Reads as a double in C++, not an int.
    EXPECT_NE(text.find_first_of(".eEn"), std::string::npos) << text;
  }
  EXPECT_EQ(doubleLiteral(2.0), "2.0");
  EXPECT_EQ(doubleLiteral(0.5), "0.5");
}

TEST(EmitterSupportTest, StringLiteralsEscapeQuotesBackslashesAndNewlines) {
  EXPECT_EQ(stringLiteral("tp"), "\"tp\"");
  EXPECT_EQ(stringLiteral("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
}

TEST(EmitterSupportTest, ShapeAndAxisLiterals) {
  EXPECT_EQ(shapeLiteral({}), "{}");
  EXPECT_EQ(shapeLiteral({2, 8, 16}), "{2, 8, 16}");
  EXPECT_EQ(axesLiteral({"dp", "tp"}), "{\"dp\", \"tp\"}");
  EXPECT_EQ(boolLiteral(true), "true");
  EXPECT_EQ(boolLiteral(false), "false");
}

} // namespace
