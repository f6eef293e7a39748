//===- InputFile.cpp - Read only regular files ----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/InputFile.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace loom::support {

/// What a file of `type` is, for "it is a directory".
static const char *describeFileType(fs::file_type type) {
  switch (type) {
  case fs::file_type::directory:
    return "a directory";
  case fs::file_type::fifo:
    return "a FIFO";
  case fs::file_type::socket:
    return "a socket";
  case fs::file_type::block:
    return "a block device";
  case fs::file_type::character:
    return "a character device";
  case fs::file_type::symlink:
    return "a symbolic link";
  default:
    return "not a regular file";
  }
}

std::optional<std::string> checkRegularFile(const std::string &path) {
  std::string what = "cannot read `" + path + "`: ";
  if (path.empty())
    return "cannot read a file with an empty name";
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec) {
    if (ec.value() == ELOOP)
      return what + ec.message() + " (a symlink loop)";
    return what + ec.message();
  }
  if (status.type() == fs::file_type::not_found)
    return what + std::strerror(ENOENT);
  if (status.type() != fs::file_type::regular)
    return what + "it is " + describeFileType(status.type()) +
           ", expected a regular file";
  return std::nullopt;
}

std::optional<std::string> readRegularFile(const std::string &path,
                                           std::string &bytes) {
  if (auto error = checkRegularFile(path))
    return error;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return "cannot read `" + path + "`: " + std::strerror(errno);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    return "cannot read `" + path + "`: read failed";
  bytes = buffer.str();
  return std::nullopt;
}

bool pathExists(const std::string &path) {
  std::error_code ec;
  fs::file_status status = fs::symlink_status(path, ec);
  return !ec && status.type() != fs::file_type::not_found;
}

} // namespace loom::support
