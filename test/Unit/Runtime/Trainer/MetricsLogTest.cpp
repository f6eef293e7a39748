//===- MetricsLogTest.cpp - The trainer's metrics file --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The line format (every field, `mfu` only when known), and that opening
// for a run starting at step S keeps exactly the lines up to S (so a resumed
// run's file equals an uninterrupted run's), refusing a file that is not a
// metrics log.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/MetricsLog.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace loom::runtime::trainer;

namespace {

std::string readAll(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temporaryPath(const char *name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid()) +
         ".jsonl";
}

TEST(MetricsLogTest, FormatsOneObjectPerStep) {
  MetricsRecord record;
  record.step = 3;
  record.loss = 2.5;
  record.lr = 0.25;
  record.stepSeconds = 0.5;
  record.tokensPerSecond = 1024;
  EXPECT_EQ(MetricsLog::format(record),
            R"({"step":3,"loss":2.5,"lr":0.25,"step_ms":500.0,)"
            R"("tokens_per_s":1024.0})");
  record.mfu = 0.125;
  record.gradNorm = 1.5;
  EXPECT_EQ(MetricsLog::format(record),
            R"({"step":3,"loss":2.5,"lr":0.25,"grad_norm":1.5,"step_ms":500.0,)"
            R"("tokens_per_s":1024.0,"mfu":0.125})");
}

TEST(MetricsLogTest, ALossScaledStepSaysWhetherItWasSkipped) {
  MetricsRecord record;
  record.step = 5;
  record.loss = 2.5;
  record.lr = 0.25;
  record.stepSeconds = 0.5;
  record.tokensPerSecond = 1024;
  record.skipped = true;
  EXPECT_EQ(MetricsLog::format(record),
            R"({"step":5,"loss":2.5,"lr":0.25,"skipped":true,)"
            R"("step_ms":500.0,"tokens_per_s":1024.0})");
  record.skipped = false;
  EXPECT_NE(MetricsLog::format(record).find(R"("skipped":false)"),
            std::string::npos);
}

TEST(MetricsLogTest, FormatsAnEvaluation) {
  // The perplexity is exp of the loss: exp(log 8) is 8 up to rounding.
  std::string line = MetricsLog::formatEvaluation(200, std::log(8.0));
  EXPECT_EQ(line.rfind(R"({"step":200,"val_loss":2.0794415416798)", 0), 0u)
      << line;
  EXPECT_NE(line.find(R"("val_ppl":7.99999999999999)"), std::string::npos)
      << line;
}

TEST(MetricsLogTest, ResumingKeepsTheLinesUpToItsStep) {
  std::string path = temporaryPath("metrics");
  {
    MetricsLog log;
    ASSERT_TRUE(MetricsLog::open(path, 0, log).ok());
    for (int64_t step = 1; step <= 4; ++step) {
      MetricsRecord record;
      record.step = step;
      ASSERT_TRUE(log.append(record).ok());
    }
  }
  {
    // Resumed from the checkpoint of step 2: steps 3 and 4 go.
    MetricsLog log;
    ASSERT_TRUE(MetricsLog::open(path, 2, log).ok());
    MetricsRecord record;
    record.step = 3;
    record.loss = 7;
    ASSERT_TRUE(log.append(record).ok());
  }
  std::string text = readAll(path);
  EXPECT_EQ(text.find(R"("step":4)"), std::string::npos);
  EXPECT_NE(text.find(R"({"step":3,"loss":7.0)"), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  {
    // A run from scratch starts the file over.
    MetricsLog log;
    ASSERT_TRUE(MetricsLog::open(path, 0, log).ok());
  }
  EXPECT_EQ(readAll(path), "");
  std::remove(path.c_str());
}

TEST(MetricsLogTest, RefusesAFileThatIsNotAMetricsLog) {
  std::string path = temporaryPath("notmetrics");
  {
    std::ofstream out(path);
    out << "{\"step\": 1}\nstep 2 | loss 3\n";
  }
  MetricsLog log;
  loom::runtime::host::Status status = MetricsLog::open(path, 5, log);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "--metrics: `" + path +
                "` line 2 is not a JSON object with an integer `step` (not a "
                "metrics file of this trainer?)");
  std::remove(path.c_str());
}

} // namespace
