//===- ShardingSpecLoadTest.cpp - A parallel config is parsed once --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The driver, the search and dist-insert-reshards each read `--parallel-config`
// and `--strategy` by their option text; `getShardingSpec` parses each
// distinct input once and shares the result, parses again when a file's bytes
// change, and caches nothing it could not read.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/LayoutAssignment.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

using namespace mlir::loom::dist;

namespace {

std::string writeFile(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream file(path);
  file << text;
  return path;
}

TEST(ShardingSpecLoadTest, EachConfigIsParsedOncePerCompile) {
  std::string path = writeFile("loom-parse-once.json",
                               R"({"data_parallel": 2, "model_parallel": 2,
                                   "pipeline_stage": 2, "micro_batch_num": 4,
                                   "recompute": true})");
  size_t before = getNumShardingSpecParses();
  std::shared_ptr<const LoadedShardingSpec> first = getShardingSpec("", path);
  ASSERT_TRUE(first->error.empty()) << first->error;
  EXPECT_EQ(first->spec.pipelineStages, 2);
  EXPECT_EQ(first->spec.microBatches, 4);
  EXPECT_TRUE(first->spec.recompute);
  // What the driver asks before building the pipeline, and what the passes
  // read, are the same parse.
  EXPECT_EQ(getRequestedPipeline("", path).stages, 2);
  EXPECT_TRUE(requestsRecompute("", path));
  ShardingSpec copy;
  EXPECT_EQ(loadShardingSpec("", path, copy), "");
  EXPECT_EQ(copy.mesh, first->spec.mesh);
  EXPECT_EQ(getShardingSpec("", path), first);
  EXPECT_EQ(getNumShardingSpecParses(), before + 1);

  // The same bytes inline are another input (errors would quote it).
  EXPECT_NE(getShardingSpec("", R"({"data_parallel": 2})"), first);
  EXPECT_EQ(getNumShardingSpecParses(), before + 2);

  // An edited file is parsed again.
  writeFile("loom-parse-once.json", R"({"data_parallel": 4})");
  std::shared_ptr<const LoadedShardingSpec> edited = getShardingSpec("", path);
  ASSERT_TRUE(edited->error.empty()) << edited->error;
  EXPECT_EQ(edited->spec.pipelineStages, 1);
  EXPECT_EQ(getNumShardingSpecParses(), before + 3);
  std::remove(path.c_str());
}

TEST(ShardingSpecLoadTest, ErrorsAreKeptWithTheirInput) {
  std::string path = writeFile("loom-parse-once-bad.json", R"({"stages": 2})");
  std::shared_ptr<const LoadedShardingSpec> bad = getShardingSpec("", path);
  EXPECT_NE(bad->error.find("parallel config `" + path + "`: unknown key "
                            "`stages`"),
            std::string::npos)
      << bad->error;
  EXPECT_EQ(getShardingSpec("", path), bad);
  std::remove(path.c_str());

  // A file that cannot be read is not cached: once it exists, it is read.
  size_t before = getNumShardingSpecParses();
  std::string missing = ::testing::TempDir() + "loom-parse-once-missing.json";
  std::remove(missing.c_str());
  EXPECT_NE(getShardingSpec("", missing)->error.find("parallel config: "),
            std::string::npos);
  EXPECT_EQ(getNumShardingSpecParses(), before);
  writeFile("loom-parse-once-missing.json", R"({"data_parallel": 2})");
  EXPECT_EQ(getShardingSpec("", missing)->error, "");
  EXPECT_EQ(getNumShardingSpecParses(), before + 1);
  std::remove(missing.c_str());
}

} // namespace
