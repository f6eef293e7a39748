//===- TrainOptions.cpp - Flags of the emitted training executable --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. split `--flag=value` and `--flag value`; switches take no value;
// 2. convert each value, naming the flag in every error;
// 3. check the combination of flags (what each mode needs).
// Each flag at most once (docs/Testing.md, "Bad input").
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/TrainOptions.h"
#include "loom/Support/Flags.h"
#include "loom/Support/InputLimits.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>

namespace loom::runtime::trainer {

namespace {

const std::set<std::string> &switches() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out;
    for (const TrainFlag &flag : trainFlags())
      if (!flag.takesValue)
        out.insert(flag.name);
    return out;
  }();
  return names;
}

const std::set<std::string> &valued() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out;
    for (const TrainFlag &flag : trainFlags())
      if (flag.takesValue)
        out.insert(flag.name);
    return out;
  }();
  return names;
}

/// Parses a decimal integer of at least `min`.
std::optional<std::string> parseCount(const std::string &flag,
                                      const std::string &text, int64_t min,
                                      int64_t &out) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || value < min)
    return flag + " expects an integer >= " + std::to_string(min) + ", got `" +
           text + "`";
  out = value;
  return std::nullopt;
}

/// Parses a finite decimal number of at least `min` (above it when
/// `strict`).
std::optional<std::string> parseReal(const std::string &flag,
                                     const std::string &text, double min,
                                     bool strict, double &out) {
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || errno == ERANGE || !std::isfinite(value) ||
      (strict ? !(value > min) : !(value >= min)))
    return flag + " expects a finite number " + (strict ? "> " : ">= ") +
           (min == 0 ? std::string("0") : std::to_string(min)) + ", got `" +
           text + "`";
  out = value;
  return std::nullopt;
}

} // namespace

const std::vector<TrainFlag> &trainFlags() {
  static const std::vector<TrainFlag> flags = {
      {"--data", true, "the token file to train on"},
      {"--data-format", true, "auto, llmc, uint16 or int32 (default auto)"},
      {"--data-order", true,
       "random (windows drawn by seed and step; default) or sequential"},
      {"--steps", true, "train until this many steps are done"},
      {"--seed", true, "initializers, batch sampling and dropout (default 0)"},
      {"--log-every", true, "rank 0 logs every K steps and the last"},
      {"--ckpt-dir", true, "checkpoints go to DIR/step-N"},
      {"--ckpt-every", true, "checkpoint every K steps (default: the last)"},
      {"--resume", false, "continue from the latest checkpoint of --ckpt-dir"},
      {"--dtype", true, "f32 (default) or f64"},
      {"--init-only", false, "write the step-0 checkpoint and stop"},
      {"--print-layouts", false,
       "print the model state's layouts as JSON and stop"},
      {"--verify-calls", false, "check that group members make the same call"},
      {"--report-pipeline", false,
       "pipelines: print each rank's most micro-batches in flight"},
      {"--report-transfers", false,
       "print the bytes each logged step copied to and from the device"},
      {"--report-memory", false,
       "print each rank's step memory next to the predicted peak"},
      {"--skip-memory-check", false,
       "start even if a rank's state and step arena exceed its share of "
       "the machine's available memory"},
      {"--lr-schedule", true, "constant (default), cosine, linear or step"},
      {"--warmup-steps", true, "linear warmup over the first N steps"},
      {"--min-lr", true, "cosine and linear: the final rate"},
      {"--decay-steps", true,
       "cosine and linear: the step from which the rate is --min-lr"},
      {"--step-gamma", true, "step: the factor of each decay (default 0.1)"},
      {"--step-every", true, "step: steps between decays"},
      {"--metrics", true, "rank 0 appends one JSON object per logged step"},
      {"--grad-accum", true,
       "micro-steps per optimizer step (the step's compiled micro-batches)"},
      {"--eval-data", true, "the held-out token file"},
      {"--eval-every", true,
       "evaluate every K steps (default: after the last)"},
      {"--eval-steps", true, "batches per evaluation (default 10)"},
      {"--init-from", true,
       "pretrained weights: a safetensors file, a sharded index, or a "
       "directory holding either"},
      {"--init-format", true,
       "how --init-from names and lays out the weights: loom, nanogpt or hf"},
      {"--inject-nonfinite-at-step", true,
       "test hook (fp16-mixed): these steps' gradients become inf/NaN"},
  };
  return flags;
}

const char *trainUsage() {
  return "--data TOKENS.bin --steps N [--seed S] [--log-every K] "
         "[--ckpt-dir DIR [--ckpt-every K] [--resume]] [--dtype f32|f64] "
         "[--data-format auto|llmc|uint16|int32] [--data-order "
         "random|sequential] [--init-only] [--print-layouts] "
         "[--verify-calls] [--report-pipeline] [--report-transfers] "
         "[--report-memory] [--skip-memory-check] "
         "[--lr-schedule constant|cosine|linear|step] [--warmup-steps N] "
         "[--min-lr X] [--decay-steps N] [--step-gamma X] [--step-every N] "
         "[--metrics FILE.jsonl] [--grad-accum N] [--eval-data TOKENS.bin "
         "[--eval-every K] [--eval-steps M]] [--init-from WEIGHTS "
         "--init-format loom|nanogpt|hf] [--inject-nonfinite-at-step "
         "K[,K...]]";
}

bool isTrainingCommandLine(int argc, char **argv) {
  static const std::set<std::string> training = {
      "--data",       "--init-only", "--resume",       "--ckpt-dir",
      "--ckpt-every", "--log-every", "--print-layouts"};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    arg = arg.substr(0, arg.find('='));
    if (training.count(arg))
      return true;
  }
  return false;
}

std::optional<std::string>
parseTrainOptions(const std::vector<std::string> &args, TrainOptions &options) {
  bool stepsGiven = false;
  loom::support::FlagOccurrences occurrences;
  std::set<std::string> given;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inlineValue;
    if (size_t eq = flag.find('='); eq != std::string::npos) {
      inlineValue = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (switches().count(flag) || valued().count(flag))
      if (auto repeated = occurrences.add(flag))
        return repeated;
    given.insert(flag);
    if (switches().count(flag)) {
      if (inlineValue)
        return "`" + flag + "` takes no value";
      if (flag == "--resume")
        options.resume = true;
      else if (flag == "--init-only")
        options.initOnly = true;
      else if (flag == "--print-layouts")
        options.printLayouts = true;
      else if (flag == "--report-pipeline")
        options.reportPipeline = true;
      else if (flag == "--report-transfers")
        options.reportTransfers = true;
      else if (flag == "--report-memory")
        options.reportMemory = true;
      else if (flag == "--skip-memory-check")
        options.skipMemoryCheck = true;
      else
        options.verifyCalls = true;
      continue;
    }
    if (!valued().count(flag))
      return "unknown flag `" + flag + "` (usage: " + trainUsage() + ")";
    std::string value;
    if (inlineValue) {
      value = *inlineValue;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return "`" + flag + "` expects a value";
    }

    if (flag == "--data") {
      if (value.empty())
        return "--data expects a token file";
      // Checkpoint manifests record the path in JSON, whose writer aborts on
      // bytes that are not UTF-8 (docs/Testing.md, "Bad input"); the
      // message cannot quote them.
      if (std::optional<size_t> bad = ::loom::support::findInvalidUTF8(value))
        return "--data: the path is not UTF-8 (byte " + std::to_string(*bad) +
               " is not part of a UTF-8 character); checkpoints record it "
               "in their JSON manifest, so rename the file";
      options.data = value;
    } else if (flag == "--data-format") {
      if (!io::parseTokenFormat(value, options.dataFormat).ok())
        return "--data-format expects auto, llmc, uint16 or int32, got `" +
               value + "`";
    } else if (flag == "--data-order") {
      if (value != "random" && value != "sequential")
        return "--data-order expects random or sequential, got `" + value + "`";
      options.sequentialData = value == "sequential";
    } else if (flag == "--steps") {
      if (auto error = parseCount(flag, value, 1, options.steps))
        return error;
      stepsGiven = true;
    } else if (flag == "--seed") {
      int64_t seed = 0;
      if (auto error = parseCount(flag, value, 0, seed))
        return error;
      options.seed = static_cast<uint64_t>(seed);
      options.seedGiven = true;
    } else if (flag == "--log-every") {
      if (auto error = parseCount(flag, value, 1, options.logEvery))
        return error;
    } else if (flag == "--ckpt-dir") {
      if (value.empty())
        return "--ckpt-dir expects a directory";
      options.ckptDir = value;
    } else if (flag == "--ckpt-every") {
      if (auto error = parseCount(flag, value, 1, options.ckptEvery))
        return error;
    } else if (flag == "--dtype") {
      if (value != "f32" && value != "f64")
        return "--dtype expects f32 or f64, got `" + value + "`";
      options.f32 = value == "f32";
    } else if (flag == "--lr-schedule") {
      std::optional<LrScheduleKind> kind = parseLrScheduleKind(value);
      if (!kind)
        return "--lr-schedule expects constant, cosine, linear or step, got "
               "`" +
               value + "`";
      options.schedule.kind = *kind;
      options.scheduleGiven = true;
    } else if (flag == "--warmup-steps") {
      if (auto error = parseCount(flag, value, 0, options.schedule.warmupSteps))
        return error;
      options.scheduleGiven = true;
    } else if (flag == "--min-lr") {
      if (auto error = parseReal(flag, value, 0, /*strict=*/false,
                                 options.schedule.minLr))
        return error;
      options.scheduleGiven = true;
    } else if (flag == "--decay-steps") {
      if (auto error = parseCount(flag, value, 1, options.schedule.decaySteps))
        return error;
      options.scheduleGiven = true;
    } else if (flag == "--step-gamma") {
      if (auto error = parseReal(flag, value, 0, /*strict=*/true,
                                 options.schedule.stepGamma))
        return error;
      options.scheduleGiven = true;
    } else if (flag == "--step-every") {
      if (auto error = parseCount(flag, value, 1, options.schedule.stepEvery))
        return error;
      options.scheduleGiven = true;
    } else if (flag == "--grad-accum") {
      if (auto error = parseCount(flag, value, 1, options.gradAccum))
        return error;
    } else if (flag == "--eval-data") {
      if (value.empty())
        return "--eval-data expects a token file (the held-out split)";
      options.evalData = value;
    } else if (flag == "--eval-every") {
      if (auto error = parseCount(flag, value, 1, options.evalEvery))
        return error;
    } else if (flag == "--eval-steps") {
      if (auto error = parseCount(flag, value, 1, options.evalSteps))
        return error;
    } else if (flag == "--init-from") {
      if (value.empty())
        return "--init-from expects a safetensors file of pretrained weights "
               "(or a sharded index JSON, or a directory holding either)";
      options.initFrom = value;
    } else if (flag == "--inject-nonfinite-at-step") {
      // A comma-separated list of steps, each >= 1.
      size_t start = 0;
      do {
        size_t comma = value.find(',', start);
        std::string item =
            value.substr(start, comma == std::string::npos ? std::string::npos
                                                           : comma - start);
        int64_t at = 0;
        if (auto error = parseCount(flag, item, 1, at))
          return error;
        options.injectNonfiniteAt.push_back(at);
        start = comma == std::string::npos ? comma : comma + 1;
      } while (start != std::string::npos);
    } else if (flag == "--init-format") {
      if (value != "loom" && value != "nanogpt" && value != "hf")
        return "--init-format expects loom, nanogpt or hf, got `" + value + "`";
      options.initFormat = value;
    } else if (flag == "--metrics") {
      if (value.empty())
        return "--metrics expects a file (one JSON object per logged step)";
      options.metrics = value;
    }
  }

  // Each schedule flag shapes some schedules only: elsewhere it would be
  // silently ignored.
  LrScheduleKind kind = options.schedule.kind;
  bool decays =
      kind == LrScheduleKind::Cosine || kind == LrScheduleKind::Linear;
  for (const char *flag : {"--min-lr", "--decay-steps"})
    if (given.count(flag) && !decays)
      return std::string(flag) +
             " applies to --lr-schedule cosine or linear, "
             "not " +
             lrScheduleKindName(kind);
  for (const char *flag : {"--step-gamma", "--step-every"})
    if (given.count(flag) && kind != LrScheduleKind::Step)
      return std::string(flag) + " applies to --lr-schedule step, not " +
             lrScheduleKindName(kind);
  if (kind == LrScheduleKind::Step && !given.count("--step-every"))
    return "--lr-schedule step needs --step-every N (steps between decays)";
  if (decays && given.count("--decay-steps") &&
      options.schedule.decaySteps <= options.schedule.warmupSteps)
    return "--decay-steps (" + std::to_string(options.schedule.decaySteps) +
           ") must exceed --warmup-steps (" +
           std::to_string(options.schedule.warmupSteps) + ")";

  // Evaluation flags shape an evaluation: without its data they would be
  // silently ignored.
  for (const char *flag : {"--eval-every", "--eval-steps"})
    if (given.count(flag) && options.evalData.empty())
      return std::string(flag) +
             " shapes the evaluation: give the held-out tokens with "
             "--eval-data TOKENS.bin";

  // Pretrained weights: where from and how they are laid out, and never on
  // top of a checkpoint (which has weights and optimizer states of its own).
  if (!options.initFrom.empty() && options.initFormat.empty())
    return "--init-from needs --init-format loom|nanogpt|hf: how the file "
           "names and lays out the weights (docs/Checkpoints.md, \"Weight "
           "formats\")";
  if (options.initFrom.empty() && !options.initFormat.empty())
    return "--init-format says how the --init-from file is laid out: give "
           "--init-from WEIGHTS";
  if (!options.initFrom.empty() && options.resume)
    return "--init-from and --resume exclude each other: --resume continues "
           "a checkpoint with its own weights and optimizer states; "
           "--init-from starts a new run from pretrained weights";

  if (options.printLayouts)
    return std::nullopt;
  if (options.initOnly) {
    if (options.ckptDir.empty())
      return "--init-only writes the step-0 checkpoint: give --ckpt-dir";
    if (options.resume)
      return "--init-only and --resume exclude each other";
    return std::nullopt;
  }
  if (options.data.empty())
    return "give the training data: --data TOKENS.bin (`loom-data encode` "
           "writes one)";
  if (!stepsGiven)
    return "give the number of steps to train: --steps N";
  if (options.resume && options.ckptDir.empty())
    return "--resume reads the latest checkpoint under --ckpt-dir: give it";
  if (options.ckptEvery && options.ckptDir.empty())
    return "--ckpt-every needs --ckpt-dir";
  return std::nullopt;
}

} // namespace loom::runtime::trainer
