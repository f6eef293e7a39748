//===- LrSchedule.cpp - Learning-rate schedules of the trainer ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. rateAt: warmup, then the kind's formula (LrSchedule.h);
// 2. resolve: the checks that need the compiled rate and the run's length;
// 3. the checkpoint's spelling of a schedule: decimal text that round-trips
//    (%.17g), so a resumed run computes the same rates bit for bit.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/LrSchedule.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace loom::runtime::trainer {

namespace {

std::string formatExact(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

std::string formatShort(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

} // namespace

const char *lrScheduleKindName(LrScheduleKind kind) {
  switch (kind) {
  case LrScheduleKind::Constant:
    return "constant";
  case LrScheduleKind::Cosine:
    return "cosine";
  case LrScheduleKind::Linear:
    return "linear";
  case LrScheduleKind::Step:
    return "step";
  }
  return "constant";
}

std::optional<LrScheduleKind> parseLrScheduleKind(const std::string &name) {
  for (LrScheduleKind kind : {LrScheduleKind::Constant, LrScheduleKind::Cosine,
                              LrScheduleKind::Linear, LrScheduleKind::Step})
    if (name == lrScheduleKindName(kind))
      return kind;
  return std::nullopt;
}

double LrSchedule::rateAt(int64_t s, double lr) const {
  if (s < warmupSteps)
    return lr * double(s + 1) / double(warmupSteps + 1);
  switch (kind) {
  case LrScheduleKind::Constant:
    return lr;
  case LrScheduleKind::Cosine:
  case LrScheduleKind::Linear: {
    if (s >= decaySteps)
      return minLr;
    double ratio = double(s - warmupSteps) / double(decaySteps - warmupSteps);
    double coefficient = kind == LrScheduleKind::Cosine
                             ? 0.5 * (1.0 + std::cos(M_PI * ratio))
                             : 1.0 - ratio;
    return minLr + coefficient * (lr - minLr);
  }
  case LrScheduleKind::Step:
    return lr * std::pow(stepGamma, double((s - warmupSteps) / stepEvery));
  }
  return lr;
}

std::optional<std::string> LrSchedule::resolve(double lr, int64_t steps) {
  bool decays =
      kind == LrScheduleKind::Cosine || kind == LrScheduleKind::Linear;
  if (decays && decaySteps == 0)
    decaySteps = steps;
  if (decays && decaySteps <= warmupSteps)
    return "--decay-steps (" + std::to_string(decaySteps) +
           (decaySteps == steps ? ", from --steps" : "") +
           ") must exceed --warmup-steps (" + std::to_string(warmupSteps) + ")";
  if (decays && minLr > lr)
    return "--min-lr " + formatShort(minLr) +
           " exceeds the compiled learning rate " + formatShort(lr) +
           " (loomc --lr), which the schedule decays from";
  if (kind != LrScheduleKind::Constant || warmupSteps > 0)
    if (!(lr > 0))
      return std::string("--lr-schedule ") + lrScheduleKindName(kind) +
             (warmupSteps ? " with --warmup-steps" : "") +
             " scales the compiled learning rate, and this program was "
             "compiled with none (loomc --lr 0, or no optimizer)";
  return std::nullopt;
}

std::string LrSchedule::describe() const {
  std::string text = lrScheduleKindName(kind);
  std::string details;
  auto add = [&](const std::string &item) {
    details += (details.empty() ? "" : ", ") + item;
  };
  if (warmupSteps)
    add("warmup " + std::to_string(warmupSteps));
  if (kind == LrScheduleKind::Cosine || kind == LrScheduleKind::Linear) {
    add("min_lr " + formatShort(minLr));
    add("decay " + std::to_string(decaySteps));
  }
  if (kind == LrScheduleKind::Step) {
    add("gamma " + formatShort(stepGamma));
    add("every " + std::to_string(stepEvery));
  }
  return details.empty() ? text : text + " (" + details + ")";
}

void LrSchedule::toMetadata(
    std::map<std::string, std::string> &metadata) const {
  metadata["lr_schedule"] = lrScheduleKindName(kind);
  metadata["lr_warmup_steps"] = std::to_string(warmupSteps);
  metadata["lr_min"] = formatExact(minLr);
  metadata["lr_decay_steps"] = std::to_string(decaySteps);
  metadata["lr_step_gamma"] = formatExact(stepGamma);
  metadata["lr_step_every"] = std::to_string(stepEvery);
}

std::optional<std::string>
LrSchedule::fromMetadata(const std::map<std::string, std::string> &metadata,
                         std::optional<LrSchedule> &out) {
  out.reset();
  auto kindIt = metadata.find("lr_schedule");
  // Checkpoints written before schedules existed ran at the compiled rate.
  if (kindIt == metadata.end())
    return std::nullopt;
  LrSchedule schedule;
  std::optional<LrScheduleKind> kind = parseLrScheduleKind(kindIt->second);
  if (!kind)
    return "metadata `lr_schedule` is `" + kindIt->second +
           "`, expected constant, cosine, linear or step";
  schedule.kind = *kind;
  auto text = [&](const char *key, std::string &value) -> bool {
    auto it = metadata.find(key);
    if (it == metadata.end())
      return false;
    value = it->second;
    return true;
  };
  for (const char *key :
       {"lr_warmup_steps", "lr_decay_steps", "lr_step_every"}) {
    std::string value;
    if (!text(key, value))
      return std::string("metadata has `lr_schedule` but no `") + key + "`";
    char *end = nullptr;
    errno = 0;
    long long number = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end || errno == ERANGE || number < 0)
      return std::string("metadata `") + key + "` is `" + value +
             "`, expected an integer >= 0";
    std::string name = key;
    (name == "lr_warmup_steps"  ? schedule.warmupSteps
     : name == "lr_decay_steps" ? schedule.decaySteps
                                : schedule.stepEvery) = number;
  }
  for (const char *key : {"lr_min", "lr_step_gamma"}) {
    std::string value;
    if (!text(key, value))
      return std::string("metadata has `lr_schedule` but no `") + key + "`";
    char *end = nullptr;
    double number = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || !std::isfinite(number))
      return std::string("metadata `") + key + "` is `" + value +
             "`, expected a finite number";
    (std::string(key) == "lr_min" ? schedule.minLr : schedule.stepGamma) =
        number;
  }
  if (schedule.kind == LrScheduleKind::Step && schedule.stepEvery < 1)
    return "metadata `lr_step_every` must be >= 1 for the step schedule";
  out = schedule;
  return std::nullopt;
}

bool LrSchedule::operator==(const LrSchedule &other) const {
  return kind == other.kind && warmupSteps == other.warmupSteps &&
         minLr == other.minLr && decaySteps == other.decaySteps &&
         stepGamma == other.stepGamma && stepEvery == other.stepEvery;
}

} // namespace loom::runtime::trainer
