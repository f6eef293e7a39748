//===- Failure.cpp - Report a failed runtime call and stop ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/Failure.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace loom::runtime {

static std::atomic<int> explicitRank{-1};

void setReportedRank(int rank) { explicitRank = rank; }

int reportedRank() {
  if (int rank = explicitRank; rank >= 0)
    return rank;
  // Launchers export the rank before main() runs; use it until the
  // communicator is initialized.
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"}) {
    const char *value = std::getenv(name);
    if (!value || !*value)
      continue;
    char *end = nullptr;
    long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && rank >= 0 && rank <= 1 << 30)
      return static_cast<int>(rank);
  }
  return -1;
}

std::string formatCallFailure(const CallSite &site, std::string_view detail) {
  std::string text = "loom: ";
  if (int rank = reportedRank(); rank >= 0)
    text += "rank " + std::to_string(rank) + ": ";
  text.append(site.call);
  text += " failed at ";
  // Only the file name: build paths differ between machines.
  std::string_view file = site.file;
  if (size_t slash = file.find_last_of('/'); slash != std::string_view::npos)
    file.remove_prefix(slash + 1);
  text.append(file);
  text += ":" + std::to_string(site.line) + ": ";
  text.append(detail);
  return text;
}

void reportCallFailure(const CallSite &site, std::string_view detail) {
  std::string text = formatCallFailure(site, detail);
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
  std::exit(1);
}

} // namespace loom::runtime
