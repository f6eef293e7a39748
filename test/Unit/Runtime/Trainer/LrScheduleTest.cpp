//===- LrScheduleTest.cpp - Learning-rate schedules of the trainer --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Each schedule's rate at its landmarks, written out from the public
// definitions (nanoGPT's get_lr, torch.optim.lr_scheduler.StepLR); the
// checks of resolve naming their flags; and the checkpoint's spelling
// round-tripping bit for bit. test_trainer_schedules.py compares the rates
// the emitted trainer uses with torch.optim.lr_scheduler itself.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/LrSchedule.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace loom::runtime::trainer;

namespace {

TEST(LrScheduleTest, ConstantIsTheCompiledRateExactly) {
  LrSchedule schedule;
  ASSERT_EQ(schedule.resolve(6e-4, 10), std::nullopt);
  for (int64_t s = 0; s < 10; ++s)
    EXPECT_EQ(schedule.rateAt(s, 6e-4), 6e-4);
}

TEST(LrScheduleTest, WarmupRampsAsNanoGpt) {
  LrSchedule schedule;
  schedule.warmupSteps = 4;
  ASSERT_EQ(schedule.resolve(1.0, 10), std::nullopt);
  // lr * (it + 1) / (warmup + 1), then the schedule.
  EXPECT_DOUBLE_EQ(schedule.rateAt(0, 1.0), 0.2);
  EXPECT_DOUBLE_EQ(schedule.rateAt(3, 1.0), 0.8);
  EXPECT_EQ(schedule.rateAt(4, 1.0), 1.0);
}

TEST(LrScheduleTest, CosineDecaysFromPeakToMinLrAndStays) {
  LrSchedule schedule;
  schedule.kind = LrScheduleKind::Cosine;
  schedule.warmupSteps = 2;
  schedule.minLr = 0.1;
  schedule.decaySteps = 12;
  ASSERT_EQ(schedule.resolve(1.0, 20), std::nullopt);
  EXPECT_EQ(schedule.rateAt(2, 1.0), 1.0);
  // Half way (ratio 0.5): min + (lr - min) / 2.
  EXPECT_DOUBLE_EQ(schedule.rateAt(7, 1.0), 0.55);
  EXPECT_EQ(schedule.rateAt(12, 1.0), 0.1);
  EXPECT_EQ(schedule.rateAt(19, 1.0), 0.1);
}

TEST(LrScheduleTest, LinearDecaysInEqualSteps) {
  LrSchedule schedule;
  schedule.kind = LrScheduleKind::Linear;
  schedule.minLr = 0.0;
  ASSERT_EQ(schedule.resolve(1.0, 4), std::nullopt);
  EXPECT_EQ(schedule.decaySteps, 4); // from --steps
  EXPECT_DOUBLE_EQ(schedule.rateAt(1, 1.0), 0.75);
  EXPECT_DOUBLE_EQ(schedule.rateAt(3, 1.0), 0.25);
}

TEST(LrScheduleTest, StepMultipliesByGammaEveryKSteps) {
  LrSchedule schedule;
  schedule.kind = LrScheduleKind::Step;
  schedule.stepGamma = 0.5;
  schedule.stepEvery = 3;
  ASSERT_EQ(schedule.resolve(2.0, 10), std::nullopt);
  EXPECT_EQ(schedule.rateAt(2, 2.0), 2.0);
  EXPECT_EQ(schedule.rateAt(3, 2.0), 1.0);
  EXPECT_EQ(schedule.rateAt(9, 2.0), 0.25);
}

TEST(LrScheduleTest, ResolveNamesTheFlagsThatDoNotFit) {
  LrSchedule cosine;
  cosine.kind = LrScheduleKind::Cosine;
  cosine.warmupSteps = 10;
  EXPECT_EQ(cosine.resolve(1.0, 10),
            "--decay-steps (10, from --steps) must exceed --warmup-steps "
            "(10)");
  LrSchedule high;
  high.kind = LrScheduleKind::Linear;
  high.minLr = 2.0;
  EXPECT_EQ(high.resolve(1.0, 10),
            "--min-lr 2 exceeds the compiled learning rate 1 (loomc --lr), "
            "which the schedule decays from");
  LrSchedule warm;
  warm.warmupSteps = 3;
  ASSERT_TRUE(warm.resolve(0.0, 10).has_value());
  EXPECT_NE(warm.resolve(0.0, 10)->find("compiled with none"),
            std::string::npos);
}

TEST(LrScheduleTest, MetadataRoundTripsBitForBit) {
  LrSchedule schedule;
  schedule.kind = LrScheduleKind::Cosine;
  schedule.warmupSteps = 7;
  schedule.minLr = 6e-5 / 3.0;
  schedule.decaySteps = 123;
  std::map<std::string, std::string> metadata;
  schedule.toMetadata(metadata);
  std::optional<LrSchedule> back;
  ASSERT_EQ(LrSchedule::fromMetadata(metadata, back), std::nullopt);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(*back == schedule);
  EXPECT_EQ(back->minLr, schedule.minLr);

  std::optional<LrSchedule> none;
  ASSERT_EQ(LrSchedule::fromMetadata({}, none), std::nullopt);
  EXPECT_FALSE(none.has_value());

  metadata["lr_min"] = "abc";
  EXPECT_EQ(LrSchedule::fromMetadata(metadata, back),
            "metadata `lr_min` is `abc`, expected a finite number");
}

} // namespace
