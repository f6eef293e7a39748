//===- MetricsLog.cpp - The trainer's machine-readable metrics ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. open: read the old file line by line, keep the steps up to the run's
//    first, write them to `<path>.tmp` and rename it over the file (so a
//    crash leaves the old file or the new one, never a mix);
// 2. append: format the record with nlohmann::json (doubles in their
//    shortest round-tripping form) and write the line with one write(2) on
//    an O_APPEND descriptor.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/MetricsLog.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>

namespace loom::runtime::trainer {

using host::Status;

namespace {

Status systemError(const std::string &what, const std::string &path) {
  return Status::failure("--metrics: cannot " + what + " `" + path +
                         "`: " + std::strerror(errno));
}

/// Writes all of `text` to `fd`; a short write of a regular file only
/// happens when the disk fills, which the loop reports.
Status writeAll(int fd, const std::string &text, const std::string &path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return systemError("write", path);
    done += static_cast<size_t>(n);
  }
  return Status::success();
}

} // namespace

MetricsLog::~MetricsLog() {
  if (fd >= 0)
    ::close(fd);
}

Status MetricsLog::open(const std::string &path, int64_t firstStep,
                        MetricsLog &out) {
  // 1. The lines to keep.
  std::string kept;
  {
    std::ifstream in(path);
    std::string line;
    int64_t number = 0;
    while (in && std::getline(in, line)) {
      ++number;
      if (line.empty())
        continue;
      nlohmann::json object =
          nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      auto step = object.is_object() ? object.find("step") : object.end();
      if (!object.is_object() || step == object.end() ||
          !step->is_number_integer())
        return Status::failure("--metrics: `" + path + "` line " +
                               std::to_string(number) +
                               " is not a JSON object with an integer "
                               "`step` (not a metrics file of this trainer?)");
      if (step->get<int64_t>() <= firstStep)
        kept += line + "\n";
    }
  }
  std::string temporary = path + ".tmp";
  int tmp = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (tmp < 0)
    return systemError("create", temporary);
  Status written = writeAll(tmp, kept, temporary);
  if (::close(tmp) != 0 && written.ok())
    written = systemError("close", temporary);
  if (!written.ok())
    return written;
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    return systemError("rename `" + temporary + "` to", path);

  // 2. Append from here on.
  out.fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
  if (out.fd < 0)
    return systemError("open", path);
  out.path = path;
  return Status::success();
}

std::string MetricsLog::format(const MetricsRecord &record) {
  nlohmann::ordered_json object = {
      {"step", record.step}, {"loss", record.loss}, {"lr", record.lr}};
  if (record.gradNorm)
    object["grad_norm"] = *record.gradNorm;
  if (record.skipped)
    object["skipped"] = *record.skipped;
  object["step_ms"] = record.stepSeconds * 1e3;
  object["tokens_per_s"] = record.tokensPerSecond;
  if (record.mfu)
    object["mfu"] = *record.mfu;
  return object.dump();
}

Status MetricsLog::append(const MetricsRecord &record) {
  return writeAll(fd, format(record) + "\n", path);
}

std::string MetricsLog::formatEvaluation(int64_t step, double loss) {
  nlohmann::ordered_json object = {
      {"step", step}, {"val_loss", loss}, {"val_ppl", std::exp(loss)}};
  return object.dump();
}

Status MetricsLog::appendEvaluation(int64_t step, double loss) {
  return writeAll(fd, formatEvaluation(step, loss) + "\n", path);
}

} // namespace loom::runtime::trainer
