//===- AvailableMemory.cpp - What the machine can still give a process ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/AvailableMemory.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

namespace loom::support {

namespace {

/// A non-negative decimal number at the start of `text` (after blanks);
/// nullopt if there is none or it does not fit in int64_t.
std::optional<int64_t> leadingNumber(std::string_view text, size_t &end) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
    ++i;
  size_t first = i;
  int64_t value = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
       ++i) {
    int digit = text[i] - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
      return std::nullopt;
    value = value * 10 + digit;
  }
  if (i == first)
    return std::nullopt;
  end = i;
  return value;
}

std::optional<std::string> readSmallFile(const char *path) {
  std::ifstream in(path);
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The (limit, usage) file pairs of the memory cgroups this process is in:
/// cgroup v2's memory.max and memory.current in its directory (from the
/// "0::PATH" line of /proc/self/cgroup), and cgroup v1's
/// memory.limit_in_bytes and memory.usage_in_bytes (from the "N:memory:PATH"
/// line, and at the controller's mount point, which is the container's own
/// group under a cgroup namespace). Files that do not exist are skipped.
std::vector<std::pair<std::string, std::string>> cgroupMemoryFiles() {
  std::vector<std::pair<std::string, std::string>> files;
  std::optional<std::string> self = readSmallFile("/proc/self/cgroup");
  if (!self)
    return files;
  std::istringstream lines(*self);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) == 0) {
      std::string dir = "/sys/fs/cgroup" + line.substr(3);
      files.emplace_back(dir + "/memory.max", dir + "/memory.current");
    } else if (size_t at = line.find(":memory:"); at != std::string::npos) {
      for (std::string dir : {"/sys/fs/cgroup/memory" + line.substr(at + 8),
                              std::string("/sys/fs/cgroup/memory")})
        files.emplace_back(dir + "/memory.limit_in_bytes",
                           dir + "/memory.usage_in_bytes");
    }
  }
  return files;
}

} // namespace

std::optional<int64_t> parseMemAvailable(std::string_view meminfo) {
  constexpr std::string_view key = "MemAvailable:";
  size_t at = 0;
  while ((at = meminfo.find(key, at)) != std::string_view::npos) {
    // The key starts a line.
    if (at == 0 || meminfo[at - 1] == '\n')
      break;
    at += key.size();
  }
  if (at == std::string_view::npos)
    return std::nullopt;
  std::string_view rest = meminfo.substr(at + key.size());
  size_t end = 0;
  std::optional<int64_t> kib = leadingNumber(rest, end);
  if (!kib || rest.substr(end, 3) != " kB" ||
      *kib > std::numeric_limits<int64_t>::max() / 1024)
    return std::nullopt;
  return *kib * 1024;
}

std::optional<int64_t> parseCgroupHeadroom(std::string_view max,
                                           std::string_view current) {
  size_t maxEnd = 0, currentEnd = 0;
  std::optional<int64_t> limit = leadingNumber(max, maxEnd);
  std::optional<int64_t> used = leadingNumber(current, currentEnd);
  // "max" (no limit) is not a number.
  if (!limit || !used)
    return std::nullopt;
  return std::max<int64_t>(*limit - *used, 0);
}

std::optional<AvailableMemory> availableHostMemory() {
  std::optional<AvailableMemory> available;
  if (std::optional<std::string> meminfo = readSmallFile("/proc/meminfo"))
    if (std::optional<int64_t> bytes = parseMemAvailable(*meminfo))
      available = AvailableMemory{*bytes, "MemAvailable in /proc/meminfo"};
  for (const auto &[limitFile, usageFile] : cgroupMemoryFiles()) {
    std::optional<std::string> limit = readSmallFile(limitFile.c_str());
    std::optional<std::string> usage = readSmallFile(usageFile.c_str());
    if (!limit || !usage)
      continue;
    if (std::optional<int64_t> headroom = parseCgroupHeadroom(*limit, *usage))
      if (!available || *headroom < available->bytes)
        available = AvailableMemory{
            *headroom,
            "the headroom under the memory cgroup's limit, " + limitFile};
  }
  return available;
}

} // namespace loom::support
