//===- FlagsTest.cpp - Each flag at most once, values in range ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The flags rule of docs/Testing.md ("Bad input"): a repeated flag is an
// error naming it unless it is repeatable, and the range checks name the
// flag, the bound, what a special value means and the value found.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/Flags.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace loom::support;

namespace {

TEST(FlagsTest, SecondOccurrenceIsAnErrorUnlessRepeatable) {
  FlagOccurrences flags({"--inputs"});
  EXPECT_EQ(flags.add("--steps"), std::nullopt);
  EXPECT_EQ(flags.add("--inputs"), std::nullopt);
  EXPECT_EQ(flags.add("--inputs"), std::nullopt);
  EXPECT_EQ(flags.add("--seed"), std::nullopt);
  EXPECT_EQ(flags.add("--steps"),
            "--steps: expected at most once, given 2 times (each flag at "
            "most once unless documented as repeatable)");
}

TEST(FlagsTest, RangeChecksNameFlagBoundAndValue) {
  EXPECT_EQ(checkAtLeast("--vocab", 0, 0, "0: unchecked"), std::nullopt);
  EXPECT_EQ(checkAtLeast("--vocab", -5, 0, "0: unchecked"),
            "--vocab: expected a value >= 0 (0: unchecked), found -5");
  EXPECT_EQ(checkAtLeast("--batch", 0, 1),
            "--batch: expected a value >= 1, found 0");
  EXPECT_EQ(checkFiniteAtLeast("--rtol", 1e-5, 0.0), std::nullopt);
  EXPECT_EQ(checkFiniteAtLeast("--rtol", -1e-5, 0.0),
            "--rtol: expected a finite value >= 0, found -1e-05");
  EXPECT_EQ(checkFiniteAtLeast("--atol", INFINITY, 0.0),
            "--atol: expected a finite value >= 0, found inf");
  EXPECT_EQ(checkFiniteAtLeast("--atol", NAN, 0.0),
            "--atol: expected a finite value >= 0, found nan");
}

} // namespace
