//===- InputFileTest.cpp - Only regular files are read --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/InputFile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

namespace fs = std::filesystem;
using namespace loom::support;

namespace {

class InputFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/loom-input-file-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string dir;
};

TEST_F(InputFileTest, ReadsARegularFileAndThroughASymlink) {
  std::string path = dir + "/a.txt";
  std::ofstream(path) << "hello";
  fs::create_symlink(path, dir + "/link");
  std::string bytes;
  EXPECT_FALSE(readRegularFile(path, bytes));
  EXPECT_EQ(bytes, "hello");
  EXPECT_FALSE(readRegularFile(dir + "/link", bytes));
  EXPECT_EQ(bytes, "hello");
}

TEST_F(InputFileTest, RefusesDirectoriesFifosLoopsAndMissingFiles) {
  std::string bytes;
  EXPECT_EQ(checkRegularFile(dir),
            "cannot read `" + dir +
                "`: it is a directory, expected a regular file");
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Refused before it is opened: opening a FIFO would block.
  EXPECT_EQ(readRegularFile(fifo, bytes),
            "cannot read `" + fifo + "`: it is a FIFO, expected a regular file");
  fs::create_symlink(dir + "/loop2", dir + "/loop1");
  fs::create_symlink(dir + "/loop1", dir + "/loop2");
  std::optional<std::string> loop = checkRegularFile(dir + "/loop1");
  ASSERT_TRUE(loop);
  EXPECT_NE(loop->find("(a symlink loop)"), std::string::npos) << *loop;
  EXPECT_TRUE(pathExists(dir + "/loop1")) << "the reader reports the loop";
  std::optional<std::string> missing = checkRegularFile(dir + "/none");
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->find("No such file or directory"), std::string::npos);
  EXPECT_FALSE(pathExists(dir + "/none"));
  EXPECT_TRUE(checkRegularFile(""));
}

} // namespace
