//===- TrainOptionsTest.cpp - Flags of the training executable ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The training executable's command line: values in both spellings, the
// defaults, every conversion error naming its flag, the combinations each
// mode needs, and which command lines mean training rather than the
// harness's one step from tensor files.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/TrainOptions.h"

#include "gtest/gtest.h"

using namespace loom::runtime;
using namespace loom::runtime::trainer;

namespace {

std::optional<std::string> parse(std::vector<std::string> args,
                                 TrainOptions &options) {
  return parseTrainOptions(args, options);
}

TEST(TrainOptionsTest, ParsesEveryFlagInBothSpellings) {
  TrainOptions o;
  ASSERT_EQ(
      parse({"--data", "t.bin", "--steps=20", "--seed", "7", "--log-every=5",
             "--ckpt-dir", "ck", "--ckpt-every", "10", "--resume",
             "--dtype=f64", "--data-format", "uint16",
             "--data-order=sequential", "--verify-calls", "--report-pipeline",
             "--report-transfers", "--skip-memory-check"},
            o),
      std::nullopt);
  EXPECT_EQ(o.data, "t.bin");
  EXPECT_EQ(o.steps, 20);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_TRUE(o.seedGiven);
  EXPECT_EQ(o.logEvery, 5);
  EXPECT_EQ(o.ckptDir, "ck");
  EXPECT_EQ(o.ckptEvery, 10);
  EXPECT_TRUE(o.resume);
  EXPECT_FALSE(o.f32);
  EXPECT_EQ(o.dataFormat, io::TokenFormat::UInt16);
  EXPECT_TRUE(o.sequentialData);
  EXPECT_TRUE(o.verifyCalls);
  EXPECT_TRUE(o.reportPipeline);
  EXPECT_TRUE(o.reportTransfers);
  EXPECT_TRUE(o.skipMemoryCheck);
}

TEST(TrainOptionsTest, InjectNonfiniteTakesAListOfSteps) {
  TrainOptions o;
  ASSERT_EQ(parse({"--data", "t.bin", "--steps", "9",
                   "--inject-nonfinite-at-step", "3,4,10"},
                  o),
            std::nullopt);
  EXPECT_EQ(o.injectNonfiniteAt, (std::vector<int64_t>{3, 4, 10}));
  TrainOptions bad;
  EXPECT_EQ(parse({"--data", "t.bin", "--steps", "9",
                   "--inject-nonfinite-at-step", "3,0"},
                  bad),
            std::optional<std::string>(
                "--inject-nonfinite-at-step expects an integer >= 1, got `0`"));
  TrainOptions empty;
  EXPECT_EQ(parse({"--data", "t.bin", "--steps", "9",
                   "--inject-nonfinite-at-step", "3,"},
                  empty),
            std::optional<std::string>(
                "--inject-nonfinite-at-step expects an integer >= 1, got ``"));
}

TEST(TrainOptionsTest, DefaultsTrainInF32AndLogEveryStep) {
  TrainOptions o;
  ASSERT_EQ(parse({"--data", "t.bin", "--steps", "3"}, o), std::nullopt);
  EXPECT_TRUE(o.f32);
  EXPECT_EQ(o.logEvery, 1);
  EXPECT_EQ(o.ckptEvery, 0);
  EXPECT_FALSE(o.seedGiven);
  EXPECT_EQ(o.dataFormat, io::TokenFormat::Auto);
  EXPECT_FALSE(o.sequentialData);
  EXPECT_FALSE(o.reportPipeline);
  EXPECT_FALSE(o.reportTransfers);
  EXPECT_FALSE(o.skipMemoryCheck);
}

TEST(TrainOptionsTest, BadValuesNameTheirFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const Case cases[] = {
      {{"--data", "t", "--steps", "0"},
       "--steps expects an integer >= 1, got `0`"},
      {{"--data", "tokens\xff.bin", "--steps", "1"},
       "--data: the path is not UTF-8 (byte 6 is not part of a UTF-8 "
       "character); checkpoints record it in their JSON manifest, so rename "
       "the file"},
      {{"--data", "t", "--steps", "2x"},
       "--steps expects an integer >= 1, got `2x`"},
      {{"--data", "t", "--steps", "1", "--seed", "-1"},
       "--seed expects an integer >= 0, got `-1`"},
      {{"--data", "t", "--steps", "1", "--log-every", "0"},
       "--log-every expects an integer >= 1, got `0`"},
      {{"--data", "t", "--steps", "1", "--dtype", "bf16"},
       "--dtype expects f32 or f64, got `bf16`"},
      {{"--data", "t", "--steps", "1", "--data-order", "shuffled"},
       "--data-order expects random or sequential, got `shuffled`"},
      {{"--data", "t", "--steps", "1", "--data-format", "u8"},
       "--data-format expects auto, llmc, uint16 or int32, got `u8`"},
      {{"--data", "t", "--steps"}, "`--steps` expects a value"},
      {{"--resume=yes"}, "`--resume` takes no value"},
  };
  for (const Case &c : cases) {
    TrainOptions o;
    std::optional<std::string> error = parse(c.args, o);
    ASSERT_TRUE(error.has_value()) << c.error;
    EXPECT_EQ(*error, c.error);
  }
  TrainOptions o;
  std::optional<std::string> error = parse({"--inputs", "x"}, o);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->rfind("unknown flag `--inputs` (usage: --data", 0), 0u)
      << *error;
}

TEST(TrainOptionsTest, EachModeNeedsItsFlags) {
  TrainOptions o;
  EXPECT_EQ(parse({"--steps", "3"}, o),
            "give the training data: --data TOKENS.bin (`loom-data encode` "
            "writes one)");
  o = TrainOptions();
  EXPECT_EQ(parse({"--data", "t"}, o),
            "give the number of steps to train: --steps N");
  o = TrainOptions();
  EXPECT_EQ(parse({"--data", "t", "--steps", "3", "--resume"}, o),
            "--resume reads the latest checkpoint under --ckpt-dir: give it");
  o = TrainOptions();
  EXPECT_EQ(parse({"--data", "t", "--steps", "3", "--ckpt-every", "2"}, o),
            "--ckpt-every needs --ckpt-dir");
  o = TrainOptions();
  EXPECT_EQ(parse({"--init-only"}, o),
            "--init-only writes the step-0 checkpoint: give --ckpt-dir");
  o = TrainOptions();
  EXPECT_EQ(parse({"--init-only", "--ckpt-dir", "c", "--resume"}, o),
            "--init-only and --resume exclude each other");
  // Neither needs data nor steps.
  o = TrainOptions();
  EXPECT_EQ(parse({"--init-only", "--ckpt-dir", "c"}, o), std::nullopt);
  o = TrainOptions();
  EXPECT_EQ(parse({"--print-layouts"}, o), std::nullopt);
  EXPECT_TRUE(o.printLayouts);
}

TEST(TrainOptionsTest, EachFlagAtMostOnce) {
  // The last value used to win without a word (docs/Testing.md, "Bad
  // input"); both spellings count, and switches too.
  TrainOptions o;
  EXPECT_EQ(parse({"--data", "t", "--steps", "3", "--steps=30"}, o),
            "--steps: expected at most once, given 2 times (each flag at "
            "most once unless documented as repeatable)");
  o = TrainOptions();
  EXPECT_EQ(parse({"--data", "t", "--steps", "3", "--resume", "--ckpt-dir", "c",
                   "--resume"},
                  o),
            "--resume: expected at most once, given 2 times (each flag at "
            "most once unless documented as repeatable)");
}

TEST(TrainOptionsTest, ParsesTheScheduleAndMetricsFlags) {
  TrainOptions o;
  ASSERT_EQ(parse({"--data", "t", "--steps", "100", "--lr-schedule=cosine",
                   "--warmup-steps", "10", "--min-lr", "6e-5",
                   "--decay-steps=90", "--metrics", "m.jsonl"},
                  o),
            std::nullopt);
  EXPECT_EQ(o.schedule.kind, LrScheduleKind::Cosine);
  EXPECT_EQ(o.schedule.warmupSteps, 10);
  EXPECT_EQ(o.schedule.minLr, 6e-5);
  EXPECT_EQ(o.schedule.decaySteps, 90);
  EXPECT_TRUE(o.scheduleGiven);
  EXPECT_EQ(o.metrics, "m.jsonl");

  o = TrainOptions();
  ASSERT_EQ(parse({"--data", "t", "--steps", "9", "--lr-schedule", "step",
                   "--step-gamma", "0.95", "--step-every", "3"},
                  o),
            std::nullopt);
  EXPECT_EQ(o.schedule.kind, LrScheduleKind::Step);
  EXPECT_EQ(o.schedule.stepGamma, 0.95);
  EXPECT_EQ(o.schedule.stepEvery, 3);

  o = TrainOptions();
  ASSERT_EQ(parse({"--data", "t", "--steps", "9"}, o), std::nullopt);
  EXPECT_EQ(o.schedule.kind, LrScheduleKind::Constant);
  EXPECT_FALSE(o.scheduleGiven);
}

TEST(TrainOptionsTest, ParsesTheEvaluationFlags) {
  TrainOptions o;
  ASSERT_EQ(parse({"--data", "t", "--steps", "100", "--eval-data", "v.bin",
                   "--eval-every=20", "--eval-steps", "4"},
                  o),
            std::nullopt);
  EXPECT_EQ(o.evalData, "v.bin");
  EXPECT_EQ(o.evalEvery, 20);
  EXPECT_EQ(o.evalSteps, 4);

  // Without --eval-every: only after the last step, over 10 batches.
  o = TrainOptions();
  ASSERT_EQ(parse({"--data", "t", "--steps", "9", "--eval-data", "v"}, o),
            std::nullopt);
  EXPECT_EQ(o.evalEvery, 0);
  EXPECT_EQ(o.evalSteps, 10);
}

TEST(TrainOptionsTest, EvaluationFlagsAreCheckedByName) {
  TrainOptions o;
  EXPECT_EQ(parse({"--data", "t", "--steps", "9", "--eval-every", "2"}, o),
            "--eval-every shapes the evaluation: give the held-out tokens "
            "with --eval-data TOKENS.bin");
  EXPECT_EQ(parse({"--data", "t", "--steps", "9", "--eval-steps", "2"}, o),
            "--eval-steps shapes the evaluation: give the held-out tokens "
            "with --eval-data TOKENS.bin");
  EXPECT_EQ(parse({"--data", "t", "--steps", "9", "--eval-data", "v",
                   "--eval-steps", "0"},
                  o),
            "--eval-steps expects an integer >= 1, got `0`");
  EXPECT_EQ(parse({"--data", "t", "--steps", "9", "--eval-data", "v",
                   "--eval-every", "x"},
                  o),
            "--eval-every expects an integer >= 1, got `x`");
  EXPECT_EQ(parse({"--data", "t", "--steps", "9", "--eval-data="}, o),
            "--eval-data expects a token file (the held-out split)");
}

TEST(TrainOptionsTest, ParsesTheInitFromFlags) {
  TrainOptions o;
  ASSERT_EQ(parse({"--data", "t", "--steps", "3", "--init-from",
                   "model.safetensors", "--init-format=hf"},
                  o),
            std::nullopt);
  EXPECT_EQ(o.initFrom, "model.safetensors");
  EXPECT_EQ(o.initFormat, "hf");
  // With --init-only: the step-0 checkpoint of the pretrained weights.
  o = TrainOptions();
  EXPECT_EQ(parse({"--init-only", "--ckpt-dir", "c", "--init-from", "w",
                   "--init-format", "loom"},
                  o),
            std::nullopt);
}

TEST(TrainOptionsTest, InitFromFlagsAreCheckedByName) {
  auto error = [](std::vector<std::string> extra) {
    TrainOptions o;
    std::vector<std::string> args = {"--data", "t", "--steps", "3"};
    args.insert(args.end(), extra.begin(), extra.end());
    return parse(args, o).value_or("");
  };
  EXPECT_NE(error({"--init-from", "w"})
                .find("--init-from needs --init-format loom|nanogpt|hf"),
            std::string::npos);
  EXPECT_NE(error({"--init-format", "hf"})
                .find("--init-format says how the --init-from file is laid "
                      "out"),
            std::string::npos);
  EXPECT_EQ(error({"--init-from", "w", "--init-format", "torch"}),
            "--init-format expects loom, nanogpt or hf, got `torch`");
  EXPECT_NE(error({"--init-from=", "--init-format", "hf"})
                .find("--init-from expects a safetensors file"),
            std::string::npos);
  EXPECT_NE(error({"--init-from", "w", "--init-format", "hf", "--resume",
                   "--ckpt-dir", "c"})
                .find("--init-from and --resume exclude each other"),
            std::string::npos);
}

TEST(TrainOptionsTest, ScheduleFlagsAreCheckedByName) {
  auto error = [](std::vector<std::string> extra) {
    TrainOptions o;
    std::vector<std::string> args = {"--data", "t", "--steps", "9"};
    args.insert(args.end(), extra.begin(), extra.end());
    return parse(args, o).value_or("");
  };
  EXPECT_EQ(error({"--lr-schedule", "exp"}),
            "--lr-schedule expects constant, cosine, linear or step, got "
            "`exp`");
  EXPECT_EQ(error({"--warmup-steps", "-1"}),
            "--warmup-steps expects an integer >= 0, got `-1`");
  EXPECT_EQ(error({"--lr-schedule", "cosine", "--min-lr", "nan"}),
            "--min-lr expects a finite number >= 0, got `nan`");
  EXPECT_EQ(error({"--lr-schedule", "step", "--step-every", "2", "--step-gamma",
                   "0"}),
            "--step-gamma expects a finite number > 0, got `0`");
  EXPECT_EQ(error({"--min-lr", "1e-5"}),
            "--min-lr applies to --lr-schedule cosine or linear, not "
            "constant");
  EXPECT_EQ(error({"--lr-schedule", "cosine", "--step-every", "2"}),
            "--step-every applies to --lr-schedule step, not cosine");
  EXPECT_EQ(error({"--lr-schedule", "step"}),
            "--lr-schedule step needs --step-every N (steps between decays)");
  EXPECT_EQ(error({"--lr-schedule", "linear", "--warmup-steps", "5",
                   "--decay-steps", "5"}),
            "--decay-steps (5) must exceed --warmup-steps (5)");
  EXPECT_EQ(error({"--metrics="}),
            "--metrics expects a file (one JSON object per logged step)");
  EXPECT_EQ(error({"--lr-schedule", "linear", "--lr-schedule", "cosine"}),
            "--lr-schedule: expected at most once, given 2 times (each flag "
            "at most once unless documented as repeatable)");
}

TEST(TrainOptionsTest, TrainingFlagsSelectTheTrainer) {
  auto training = [](std::vector<std::string> args) {
    std::vector<char *> argv = {const_cast<char *>("train_step")};
    for (std::string &arg : args)
      argv.push_back(arg.data());
    return isTrainingCommandLine(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_TRUE(training({"--data", "t.bin", "--steps", "2"}));
  EXPECT_TRUE(training({"--data=t.bin"}));
  EXPECT_TRUE(training({"--init-only"}));
  EXPECT_TRUE(training({"--print-layouts"}));
  EXPECT_TRUE(training({"--steps", "2", "--resume"}));
  // The harness's flags (one step from tensor files).
  EXPECT_FALSE(training({"--inputs", "b.safetensors", "--steps", "2"}));
  EXPECT_FALSE(training({}));
}

} // namespace
