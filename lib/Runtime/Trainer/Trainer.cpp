//===- Trainer.cpp - The per-rank training loop of emitted programs -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. parse the flags (the same on every rank; rank 0 reports errors), set up
//    MPI, the mesh and the communicator;
// 2. read the program's roles off its spec: the `input_ids` and `labels`
//    arguments, the `loss` result (replicated), the model state (every other
//    argument: parameters, optimizer states, the step counter) and the
//    loop-carried pairs, whose layouts must agree;
// 3. build this rank's blocks of the model state: the initializers drawn
//    at the block's offset (a slice of the single-device draw), or the latest
//    checkpoint's blocks after checking that it belongs to this plan; with
//    `--init-from`, the parameters' blocks of pretrained weights instead
//    (InitFrom.h);
// 4. per step: read this rank's block of the step's batch, set the
//    schedule's learning-rate factor (`lr_scale`), run the step
//    (StepContext: run seed and RNG step, for dropout), move
//    each carried result into its argument, log on rank 0 (and append to
//    `--metrics`), checkpoint every K steps and after the last (the
//    schedule and the last rate go in the manifest's metadata);
// 5. with `--eval-data`, every `--eval-every` steps (and before the first
//    step of a fresh run) and after the last, run the forward-only
//    evaluation step (`@eval_step`, another entry of the same program over
//    the same layouts, fed the same state buffers) on the first
//    `--eval-steps` batches of the held-out file in file order; rank 0
//    logs `step N | val loss X | val ppl Y`.
//
// Pipelined programs (ProgramSpec::pipelineAxis): a rank initializes,
// carries, checkpoints and loads only the model state its stage owns; the
// loss comes from the first rank of the stage that computes it and is sent
// to rank 0, which prints every line; `--report-pipeline` gathers each
// rank's most micro-batches in flight (harness::pipelineInFlight) on rank 0.
//
// Resident state: each step's StepContext says whether the carried arguments
// are the previous step's results (every step of a run but its first) and
// whether the host reads the carried results afterwards (checkpoint steps,
// the last step), so a CUDA step keeps the model state on the device;
// `--report-transfers` prints rank 0's bytes copied to and from the device
// in each logged step (deviceTransfers(); 0 for host programs), and
// `--report-memory` every rank's step memory after training (stepMemory()).
//
// Failures outside a step go through agree(): every rank learns whether some
// rank failed, the failing rank (rank 0 when all fail alike) prints why and
// all exit 1, so no rank waits forever on another.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/Trainer.h"
#include "loom/Runtime/Harness/Placements.h"
#include "loom/Runtime/Host/Random.h"
#include "loom/Runtime/Host/Shape.h"
#include "loom/Runtime/IO/Checkpoint.h"
#include "loom/Runtime/IO/TokenFile.h"
#include "loom/Runtime/Layout/BlockLayout.h"
#include "loom/Runtime/Support/Memory.h"
#include "loom/Runtime/Support/StepMemory.h"
#include "loom/Runtime/Support/Transfers.h"
#include "loom/Runtime/Trainer/InitFrom.h"
#include "loom/Runtime/Trainer/LrSchedule.h"
#include "loom/Runtime/Trainer/MemoryCheck.h"
#include "loom/Runtime/Trainer/MetricsLog.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <type_traits>

namespace loom::runtime::trainer {

using harness::Buffer;
using harness::Init;
using harness::parseTensorLayout;
using harness::ProgramSpec;
using harness::StepFn;
using harness::TensorSpec;
using host::Status;

namespace {

//===----------------------------------------------------------------------===//
// Agreement between ranks
//===----------------------------------------------------------------------===//

/// What a failure agreed on by all ranks prints, and on which rank.
struct Failure {
  std::string message;
  /// Whether this rank prints it: the lowest failing rank does.
  bool report = false;
};

/// Collective over MPI_COMM_WORLD: succeeds on every rank iff `local`
/// succeeded on every rank. Otherwise the lowest failing rank reports its
/// own message (so an error every rank meets alike prints once), rank 0
/// says the job stops, and the others fail quietly.
std::optional<Failure> agree(const Status &local, int rank) {
  int mine = local.ok() ? INT_MAX : rank;
  int first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == INT_MAX)
    return std::nullopt;
  Failure failure;
  // Rank 0 also says that the job stops when another rank failed.
  failure.report = rank == first || rank == 0;
  failure.message = local.ok() ? "stopped: rank " + std::to_string(first) +
                                     " failed (its error is above or below)"
                               : local.message();
  return failure;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// FNV-1a 64 of `text`, for the plan's fingerprint.
uint64_t fnv1a(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

bool sameMesh(const layout::DeviceMesh &a, const layout::DeviceMesh &b) {
  if (a.getAxes().size() != b.getAxes().size())
    return false;
  for (size_t i = 0; i < a.getAxes().size(); ++i)
    if (a.getAxes()[i].name != b.getAxes()[i].name ||
        a.getAxes()[i].size != b.getAxes()[i].size)
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// The program's roles
//===----------------------------------------------------------------------===//

/// The step input that scales the compiled learning rate
/// (mlir::loom::kLrScaleArgName).
constexpr const char *kLrScaleArgument = "lr_scale";
/// The loss-scaling test hook's step input and the count of non-finite
/// gradient elements a loss-scaled step returns
/// (mlir::loom::kInjectNonfiniteArgName, kFoundInfResultName).
constexpr const char *kInjectNonfiniteArgument = "inject_nonfinite";
constexpr const char *kFoundInfResult = "found_inf";

/// What step 2 of the file comment reads off the spec.
/// `--report-memory`: rank 0 prints every rank's step memory (stepMemory():
/// the arena of the static memory plan and the other buffers of a step)
/// next to the liveness peak the compiler predicts for the rank, and how
/// far the rank's peak resident set grew during the first step. Collective.
void reportStepMemory(int64_t rank, int64_t numRanks) {
  const StepMemory &mine = stepMemory();
  int64_t record[4] = {mine.arenaBytes, mine.otherBytes,
                       mine.predictedPeakBytes, mine.firstStepRssGrowthBytes};
  std::vector<int64_t> all(rank == 0 ? 4 * numRanks : 0);
  MPI_Gather(record, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  if (rank != 0)
    return;
  for (int64_t r = 0; r < numRanks; ++r) {
    int64_t arena = all[4 * r], other = all[4 * r + 1],
            predicted = all[4 * r + 2], rss = all[4 * r + 3];
    if (predicted < 0) {
      std::printf("memory: rank %lld: the step recorded no memory plan (a "
                  "program emitted before its arena)\n",
                  static_cast<long long>(r));
      continue;
    }
    std::printf(
        "memory: rank %lld: arena %lld B + other buffers %lld B = "
        "%lld B; predicted liveness peak %lld B (ratio %.3f)\n",
        static_cast<long long>(r), static_cast<long long>(arena),
        static_cast<long long>(other), static_cast<long long>(arena + other),
        static_cast<long long>(predicted),
        predicted > 0 ? double(arena + other) / double(predicted) : 0.0);
    if (rss >= 0)
      std::printf("rss: rank %lld: the peak resident set grew %lld B in the "
                  "first step: the arena %lld B %s %lld B\n",
                  static_cast<long long>(r), static_cast<long long>(rss),
                  static_cast<long long>(arena), rss >= arena ? "+" : "-",
                  static_cast<long long>(rss >= arena ? rss - arena
                                                      : arena - rss));
  }
  std::fflush(stdout);
}

struct Program {
  const ProgramSpec *spec = nullptr;
  layout::DeviceMesh mesh;
  int rank = 0;
  /// Every argument's layout, parsed.
  std::vector<layout::BlockLayout> argLayouts;
  size_t inputIds = 0, labels = 0, loss = 0;
  /// The learning-rate factor the schedule feeds (absent in programs
  /// emitted before schedules, which train at the compiled rate).
  std::optional<size_t> lrScale;
  /// The global gradient norm a step compiled with clipping returns; it
  /// comes from the loss's rank like the loss.
  std::optional<size_t> gradNorm;
  /// A loss-scaled step's test-hook input and its count of non-finite
  /// gradient elements (not zero: the update was skipped).
  std::optional<size_t> injectNonfinite;
  std::optional<size_t> foundInf;
  /// The model state: arguments a checkpoint holds, by index.
  std::vector<size_t> state;
  /// The part of `state` this rank owns: all of it, but in a pipelined
  /// program only its stage's.
  std::vector<size_t> owned;
  /// The rank whose step computes the loss (rank 0 when not pipelined; the
  /// first rank of the loss's stage otherwise).
  int lossRank = 0;
  /// The plan's identity in checkpoints: mesh, state names, shapes, layouts.
  std::string plan;
};

Status readProgram(const ProgramSpec &spec, const layout::DeviceMesh &mesh,
                   int rank, Program &program) {
  program.spec = &spec;
  program.mesh = mesh;
  program.rank = rank;
  std::optional<size_t> inputIds, labels, loss;
  for (size_t i = 0; i < spec.arguments.size(); ++i) {
    const TensorSpec &arg = spec.arguments[i];
    layout::BlockLayout parsed;
    if (Status status = parseTensorLayout(arg, mesh, parsed); !status)
      return status;
    program.argLayouts.push_back(parsed);
    if (arg.name == "input_ids" || arg.name == "labels") {
      if (!arg.isInteger || arg.globalShape.size() != 2)
        return Status::failure("argument `" + arg.name + "` of @" + spec.entry +
                               " must be an integer [batch, seq] tensor, "
                               "found shape " +
                               formatShape(arg.globalShape));
      (arg.name == "input_ids" ? inputIds : labels) = i;
      continue;
    }
    if (arg.name == kLrScaleArgument) {
      if (arg.isInteger || !arg.globalShape.empty())
        return Status::failure("argument `" + arg.name + "` of @" + spec.entry +
                               " must be a rank-0 float tensor, found "
                               "shape " +
                               formatShape(arg.globalShape));
      program.lrScale = i;
      continue;
    }
    // Not model state: the trainer sets it every step (0, or inf at the
    // steps of --inject-nonfinite-at-step).
    if (arg.name == kInjectNonfiniteArgument) {
      if (arg.isInteger || !arg.globalShape.empty())
        return Status::failure("argument `" + arg.name + "` of @" + spec.entry +
                               " must be a rank-0 float tensor, found "
                               "shape " +
                               formatShape(arg.globalShape));
      program.injectNonfinite = i;
      continue;
    }
    if (arg.init == Init::None)
      return Status::failure(
          "argument `" + arg.name + "` of @" + spec.entry +
          " has no initializer and is not training data (`input_ids`, "
          "`labels`)");
    if (parsed.isPartial())
      return Status::failure("argument `" + arg.name +
                             "` has a partial layout (" + parsed.toString() +
                             "): the model state must hold values");
    program.state.push_back(i);
  }
  for (size_t i = 0; i < spec.results.size(); ++i) {
    if (spec.results[i].name == "loss")
      loss = i;
    if (spec.results[i].name == "grad_norm")
      program.gradNorm = i;
    if (spec.results[i].name == kFoundInfResult)
      program.foundInf = i;
  }
  if (!inputIds || !labels)
    return Status::failure("@" + spec.entry +
                           " has no `input_ids` and `labels` arguments: it "
                           "is not a training step");
  if (spec.arguments[*inputIds].globalShape !=
      spec.arguments[*labels].globalShape)
    return Status::failure(
        "`input_ids` " + formatShape(spec.arguments[*inputIds].globalShape) +
        " and `labels` " + formatShape(spec.arguments[*labels].globalShape) +
        " differ in shape");
  if (!loss)
    return Status::failure("@" + spec.entry + " has no `loss` result");
  layout::BlockLayout lossLayout;
  if (Status status = parseTensorLayout(spec.results[*loss], mesh, lossLayout);
      !status)
    return status;
  if (!spec.results[*loss].globalShape.empty() || lossLayout.isPartial())
    return Status::failure("the `loss` result must be a replicated scalar, "
                           "found shape " +
                           formatShape(spec.results[*loss].globalShape) +
                           " with layout " + lossLayout.toString());
  if (program.gradNorm) {
    const TensorSpec &norm = spec.results[*program.gradNorm];
    layout::BlockLayout normLayout;
    if (Status status = parseTensorLayout(norm, mesh, normLayout); !status)
      return status;
    if (!norm.globalShape.empty() || normLayout.isPartial() ||
        norm.stage != spec.results[*loss].stage)
      return Status::failure("the `grad_norm` result must be a replicated "
                             "scalar computed with the loss");
  }
  program.inputIds = *inputIds;
  program.labels = *labels;
  program.loss = *loss;
  for (size_t i : program.state)
    if (spec.ownsArgument(rank, i))
      program.owned.push_back(i);
  if (spec.results[*loss].stage >= 0) {
    int64_t r = 0;
    while (r < mesh.getNumDevices() &&
           spec.stageOf(r) != spec.results[*loss].stage)
      ++r;
    program.lossRank = static_cast<int>(r);
  }

  // A carried result must come back in its argument's layout: then the next
  // step reads it where it is, with no communication.
  for (auto [result, arg] : spec.carried) {
    const TensorSpec &r = spec.results[result];
    const TensorSpec &a = spec.arguments[arg];
    layout::BlockLayout resultLayout;
    if (Status status = parseTensorLayout(r, mesh, resultLayout); !status)
      return status;
    if (!(resultLayout == program.argLayouts[arg]) ||
        r.localShape != a.localShape)
      return Status::failure(
          "the updated `" + r.name + "` has layout " + resultLayout.toString() +
          " but the argument has " + program.argLayouts[arg].toString() +
          ": the plan does not keep it in place between steps");
  }

  program.plan = "@" + spec.entry + " on " + mesh.toString();
  std::string identity = mesh.toString();
  for (size_t i : program.state)
    identity += ";" + spec.arguments[i].name +
                formatShape(spec.arguments[i].globalShape) +
                program.argLayouts[i].toString();
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(fnv1a(identity)));
  program.plan += ", layouts " + std::string(hex);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Model state: initialization and checkpoints
//===----------------------------------------------------------------------===//

/// This rank's block of argument `index` at initialization: the global
/// initializer drawn over the block only (counter-based, keyed by the
/// global index, so it is the single-device value's slice).
template <typename T>
Status initializeBlock(const Program &program, size_t index, uint64_t seed,
                       Buffer<T> &out) {
  const TensorSpec &arg = program.spec->arguments[index];
  const layout::BlockLayout &layout = program.argLayouts[index];
  int64_t n = numElements(arg.localShape);
  bool random = arg.init == Init::Normal || arg.init == Init::Uniform ||
                arg.init == Init::ScaledNormal;
  if (arg.isInteger) {
    if (random)
      return Status::failure("parameter `" + arg.name +
                             "` has a random initializer but a non-float "
                             "type");
    out.ints.assign(n, arg.init == Init::Ones ? 1 : 0);
    return Status::success();
  }
  // A named state starts at its initial value (initArgs[0]: 0, or the loss
  // scale's `loom.initial_value`).
  out.floats.assign(n, arg.init == Init::Ones    ? T(1)
                       : arg.init == Init::State ? T(arg.initArgs[0])
                                                 : T(0));
  if (!random)
    return Status::success();
  std::vector<int64_t> offset =
      layout.getBlockOffset(program.mesh, arg.globalShape, program.rank);
  uint64_t id = host::tensorIdFromName(arg.name);
  if (arg.init == Init::Uniform)
    host::fillUniform<T>(out.floats.data(), arg.globalShape, offset,
                         arg.localShape, seed, id, arg.initArgs[0],
                         arg.initArgs[1]);
  else
    host::fillNormal<T>(out.floats.data(), arg.globalShape, offset,
                        arg.localShape, seed, id, 0.0,
                        arg.init == Init::Normal
                            ? arg.initArgs[0]
                            : arg.initArgs[0] / std::sqrt(arg.initArgs[1]));
  return Status::success();
}

template <typename T> io::DType floatDType() {
  return std::is_same_v<T, float> ? io::DType::F32 : io::DType::F64;
}

/// The dtype a checkpoint stores argument `arg` in.
template <typename T> io::DType stateDType(const TensorSpec &arg) {
  return arg.isInteger ? arg.declaredDType : floatDType<T>();
}

/// What a checkpoint records besides the tensors.
struct CheckpointInfo {
  int64_t step = 0;
  std::string dataFile;
  /// Seeds the batch sampling.
  uint64_t seed = 0;
  /// The RNG state of dropout (harness::StepContext): the run seed and the
  /// RNG step of the next training step. A run from scratch has rngStep =
  /// step; the manifest keeps both, so resuming restores the stream rather
  /// than re-deriving it.
  uint64_t rngSeed = 0;
  uint64_t rngStep = 0;
  /// The learning-rate schedule, and the rate of the last step taken (0
  /// before the first).
  LrSchedule schedule;
  double lr = 0;
  /// The checkpoint's schedule, when it recorded one (loadCheckpoint).
  std::optional<LrSchedule> storedSchedule;
};

/// Writes the checkpoint after `info.step` steps into
/// `<root>/step-N`: every rank its blocks, then rank 0 the manifest.
/// Collective.
template <typename T>
std::optional<Failure> writeCheckpoint(const Program &program,
                                       const std::string &root,
                                       const CheckpointInfo &info,
                                       const std::vector<Buffer<T>> &args) {
  const ProgramSpec &spec = *program.spec;
  std::string dir = io::checkpointStepDir(root, info.step);
  // A manifest left from an earlier run in this directory would vouch for
  // rank files while they are being replaced: it goes first.
  Status cleared = Status::success();
  if (program.rank == 0) {
    std::error_code ec;
    std::filesystem::remove(
        std::filesystem::path(dir) / io::kCheckpointManifestName, ec);
    if (ec)
      cleared = Status::failure("cannot remove the old manifest of `" + dir +
                                "`: " + ec.message());
  }
  if (auto failure = agree(cleared, program.rank))
    return failure;

  io::TensorMap blocks;
  for (size_t i : program.owned) {
    const TensorSpec &arg = spec.arguments[i];
    io::TensorData data;
    if (arg.isInteger) {
      data = io::TensorData::fromInt64s(arg.declaredDType, arg.localShape,
                                        args[i].ints);
    } else {
      data.dtype = floatDType<T>();
      data.shape = arg.localShape;
      const auto *bytes =
          reinterpret_cast<const uint8_t *>(args[i].floats.data());
      data.bytes.assign(bytes, bytes + args[i].floats.size() * sizeof(T));
    }
    blocks.emplace(arg.name, std::move(data));
  }
  io::CheckpointFile file;
  Status written =
      io::writeCheckpointShard(dir, program.rank, info.step, blocks, file);
  if (auto failure = agree(written, program.rank))
    return failure;

  // The manifest records each rank file's size and checksum.
  int64_t numRanks = program.mesh.getNumDevices();
  uint64_t mine[2] = {file.bytes, file.crc32c};
  std::vector<uint64_t> all(program.rank == 0 ? 2 * numRanks : 0);
  MPI_Gather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, 0,
             MPI_COMM_WORLD);
  Status manifestWritten = Status::success();
  if (program.rank == 0) {
    io::CheckpointManifest manifest;
    manifest.step = info.step;
    manifest.mesh = program.mesh;
    manifest.pipelineAxis = spec.pipelineAxis;
    for (size_t i : program.state) {
      const TensorSpec &arg = spec.arguments[i];
      io::CheckpointTensor tensor;
      tensor.shape = arg.globalShape;
      tensor.fileShape = arg.fileShape;
      tensor.dtype = stateDType<T>(arg);
      tensor.layout = program.argLayouts[i].toString();
      tensor.stage = arg.stage;
      manifest.tensors.emplace(arg.name, std::move(tensor));
    }
    for (int64_t r = 0; r < numRanks; ++r) {
      io::CheckpointFile f;
      f.name = io::checkpointFileName(r);
      f.bytes = all[2 * r];
      f.crc32c = static_cast<uint32_t>(all[2 * r + 1]);
      manifest.files.push_back(f);
    }
    manifest.plan = program.plan;
    manifest.dataFile = info.dataFile;
    manifest.dataSeed = info.seed;
    manifest.dataPosition = info.step;
    manifest.rngSeed = info.rngSeed;
    manifest.rngState = {info.rngStep};
    manifest.metadata["entry"] = spec.entry;
    manifest.metadata["dtype"] = std::is_same_v<T, float> ? "f32" : "f64";
    // The schedule is a function of the step: its parameters are its state.
    info.schedule.toMetadata(manifest.metadata);
    char lr[32];
    std::snprintf(lr, sizeof(lr), "%.17g", info.lr);
    manifest.metadata["lr"] = lr;
    manifestWritten = io::writeCheckpointManifest(dir, manifest);
  }
  return agree(manifestWritten, program.rank);
}

/// Loads this rank's blocks of the latest checkpoint under `root` into
/// `args`, after checking that it was written for this program's mesh and
/// layouts in this precision. Collective.
template <typename T>
std::optional<Failure> loadCheckpoint(const Program &program,
                                      const std::string &root,
                                      std::vector<Buffer<T>> &args,
                                      CheckpointInfo &info, std::string &dir) {
  const ProgramSpec &spec = *program.spec;
  auto check = [&]() -> Status {
    if (Status status = io::findLatestCheckpoint(root, dir); !status)
      return Status::failure("--resume: " + status.message());
    io::CheckpointManifest manifest;
    if (Status status = io::readCheckpointManifest(dir, manifest); !status)
      return status;
    std::string where = "checkpoint `" + dir + "`";
    if (!sameMesh(manifest.mesh, program.mesh))
      return Status::failure(
          where + " was written on mesh " + manifest.mesh.toString() + " (" +
          std::to_string(manifest.mesh.getNumDevices()) +
          " ranks), but this program runs on mesh " + program.mesh.toString() +
          ": re-cut it with `loom-ckpt reshard` (the layouts: this "
          "program's --print-layouts)");
    for (size_t i : program.state) {
      const TensorSpec &arg = spec.arguments[i];
      auto it = manifest.tensors.find(arg.name);
      if (it == manifest.tensors.end())
        return Status::failure(where + " has no tensor `" + arg.name +
                               "`, which this program trains");
      const io::CheckpointTensor &tensor = it->second;
      if (tensor.shape != arg.globalShape)
        return Status::failure(where + ": tensor `" + arg.name +
                               "` has shape " + formatShape(tensor.shape) +
                               ", this program's has " +
                               formatShape(arg.globalShape));
      if (tensor.dtype != stateDType<T>(arg))
        return Status::failure(where + ": tensor `" + arg.name + "` is " +
                               std::string(io::dtypeName(tensor.dtype)) +
                               ", but this run computes in " +
                               std::string(io::dtypeName(stateDType<T>(arg))) +
                               " (resume with the checkpoint's --dtype)");
      layout::BlockLayout stored;
      if (Status status =
              layout::BlockLayout::parse(tensor.layout, program.mesh, stored);
          !status)
        return Status::failure(where + ": tensor `" + arg.name +
                               "`: " + status.message());
      if (tensor.stage != arg.stage)
        return Status::failure(
            where + ": tensor `" + arg.name + "` belongs to stage " +
            std::to_string(tensor.stage) + ", but this program's stage " +
            std::to_string(arg.stage) +
            " owns it (a checkpoint of another pipeline split)");
      if (!(stored == program.argLayouts[i]))
        return Status::failure(
            where + ": tensor `" + arg.name + "` has layout " +
            stored.toString() + ", but this program's plan gives it " +
            program.argLayouts[i].toString() +
            " (a checkpoint of another plan: re-cut it with `loom-ckpt "
            "reshard`)");
    }
    if (manifest.tensors.size() != program.state.size())
      for (const auto &[name, tensor] : manifest.tensors) {
        bool known = false;
        for (size_t i : program.state)
          known = known || spec.arguments[i].name == name;
        if (!known)
          return Status::failure(where + " holds tensor `" + name +
                                 "`, which this program does not train");
      }
    if (Status status = io::verifyResumable(dir, manifest); !status)
      return status;

    io::TensorMap blocks;
    if (Status status =
            io::readCheckpointShard(dir, manifest, program.rank, blocks);
        !status)
      return Status::failure("rank " + std::to_string(program.rank) + ": " +
                             status.message());
    for (size_t i : program.owned) {
      const TensorSpec &arg = spec.arguments[i];
      const io::TensorData &data = blocks.at(arg.name);
      if (arg.isInteger) {
        args[i].ints = data.toInt64s();
        continue;
      }
      args[i].floats.resize(numElements(arg.localShape));
      std::copy(data.bytes.begin(), data.bytes.end(),
                reinterpret_cast<uint8_t *>(args[i].floats.data()));
    }
    // The RNG state is (seed, [next RNG step]) (verifyResumable);
    // checkpoints written before it was recorded have an empty state and
    // continue at their step.
    info.step = manifest.step;
    info.dataFile = manifest.dataFile;
    info.seed = manifest.dataSeed;
    info.rngSeed = manifest.rngSeed;
    info.rngStep = manifest.rngState.empty()
                       ? static_cast<uint64_t>(manifest.step)
                       : manifest.rngState[0];
    if (auto error =
            LrSchedule::fromMetadata(manifest.metadata, info.storedSchedule))
      return Status::failure(where + ": " + *error);
    return Status::success();
  };
  return agree(check(), program.rank);
}

/// `--init-from`: replaces the initial parameters in `args` with this
/// rank's blocks of the pretrained weights (InitFrom.h); optimizer states
/// and the step keep their initial zeros. Collective.
template <typename T>
std::optional<Failure> loadPretrained(const Program &program,
                                      const TrainOptions &options,
                                      std::vector<Buffer<T>> &args) {
  PretrainedTarget target;
  target.spec = program.spec;
  target.mesh = &program.mesh;
  target.rank = program.rank;
  target.layouts = &program.argLayouts;
  target.state = program.state;
  target.owned = program.owned;
  std::string where = "--init-from `" + options.initFrom + "` (" +
                      options.initFormat + "): ";
  double start = MPI_Wtime();
  io::WeightFile file;
  io::WeightBindings bindings;
  Status bound = Status::success();
  if (auto error = io::WeightFile::open(options.initFrom, file))
    bound = Status::failure("--init-from: " + *error);
  else if (auto error = bindPretrained(
               target, file, *io::parseWeightFormat(options.initFormat),
               bindings))
    bound = Status::failure(where + *error);
  // Every rank binds the same headers alike: rank 0 reports.
  if (auto failure = agree(bound, program.rank))
    return failure;
  Status read = Status::success();
  if (auto error = readPretrainedBlocks(target, file, bindings, args))
    read = Status::failure(where + "rank " + std::to_string(program.rank) +
                           ": " + *error);
  if (auto failure = agree(read, program.rank))
    return failure;
  if (program.rank == 0) {
    std::printf("initialized %zu parameters from %s (%s",
                parameterArguments(target).size(), options.initFrom.c_str(),
                options.initFormat.c_str());
    if (file.getShards().size() > 1)
      std::printf(", %zu shards", file.getShards().size());
    if (!bindings.skipped.empty())
      std::printf("; left out %zu tensors that are not weights",
                  bindings.skipped.size());
    // Every rank has its blocks once the last agreement returns.
    std::printf(") in %.2f s\n", MPI_Wtime() - start);
    std::fflush(stdout);
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The loop
//===----------------------------------------------------------------------===//

/// Reads this rank's block of the batch of `step` into the `input_ids` and
/// `labels` arguments (each by its own layout).
template <typename T>
Status readBatch(const Program &program, const io::TokenFile &file,
                 const io::BatchSpec &batch, int64_t step,
                 std::vector<Buffer<T>> &args) {
  std::vector<int32_t> inputs, labels;
  std::vector<int64_t> localShape;
  for (size_t index : {program.inputIds, program.labels}) {
    const TensorSpec &arg = program.spec->arguments[index];
    if (Status status = io::readLocalBatch(
            file, batch, step, program.mesh, program.argLayouts[index],
            program.rank, inputs, labels, localShape);
        !status)
      return Status::failure("rank " + std::to_string(program.rank) +
                             ": batch of step " + std::to_string(step) + ": " +
                             status.message());
    const std::vector<int32_t> &tokens =
        index == program.inputIds ? inputs : labels;
    args[index].ints.assign(tokens.begin(), tokens.end());
    if (localShape != arg.localShape)
      return Status::failure("`" + arg.name + "`: read a block of " +
                             formatShape(localShape) + ", the step expects " +
                             formatShape(arg.localShape));
  }
  return Status::success();
}

/// `12.3s`, `3m05s` or `2h07m`: a duration for the progress line.
std::string formatDuration(double seconds) {
  char text[32];
  if (seconds < 60)
    std::snprintf(text, sizeof(text), "%.1fs", seconds);
  else if (seconds < 3600)
    std::snprintf(text, sizeof(text), "%dm%02ds", int(seconds / 60),
                  int(seconds) % 60);
  else
    std::snprintf(text, sizeof(text), "%dh%02dm", int(seconds / 3600),
                  int(seconds / 60) % 60);
  return text;
}

/// The dense peak FLOP/s of one device of the cluster the program was
/// planned for, in the dtype its matmuls run in (a low-precision type under
/// mixed precision, else the run's); 0 when unknown.
double peakFlopsPerDevice(const ProgramSpec &spec, bool f32) {
  std::string dtype = spec.matmulDType == "bf16" || spec.matmulDType == "f16"
                          ? spec.matmulDType
                          : (f32 ? "f32" : "f64");
  for (const auto &[name, peak] : spec.peakFlopsPerSecond)
    if (name == dtype)
      return peak;
  return 0;
}

/// The held-out evaluation (`--eval-data`): the forward-only step over the
/// first `batches` batches of the file in file order (the same batches at
/// every evaluation, so the numbers compare along the run).
template <typename T> struct Evaluation {
  StepFn<T> step = nullptr;
  io::TokenFile file;
  io::BatchSpec batch;
  int64_t batches = 0;

  /// The mean loss over the batches, on rank 0 (the loss's rank sends it
  /// there in a pipelined program); the step reads the training state in
  /// `args`, whose `input_ids` and `labels` it overwrites. A failure inside
  /// stops the job, as in a training step.
  double run(const Program &program, mpi::Communicator &comm,
             const harness::StepContext &trainContext,
             std::vector<Buffer<T>> &args) const {
    std::vector<Buffer<T>> results(1);
    double sum = 0;
    for (int64_t i = 0; i < batches; ++i) {
      Status read = readBatch(program, file, batch, i, args);
      if (!read.ok())
        comm.abort(Status::failure("--eval-data: " + read.message()));
      if (program.lrScale)
        args[*program.lrScale].floats.assign(1, T(1));
      if (program.injectNonfinite)
        args[*program.injectNonfinite].floats.assign(1, T(0));
      results[0].floats.assign(1, T(0));
      // No dropout in the evaluation step; the context only says that the
      // host holds every argument (nothing is resident for this entry).
      harness::StepContext context{trainContext.seed, trainContext.step};
      Status ran = step(comm, context, args, results);
      if (!ran.ok())
        comm.abort(ran);
      sum += double(results[0].floats[0]);
    }
    double mean = sum / double(batches);
    if (program.lossRank != 0) {
      if (program.rank == program.lossRank)
        MPI_Send(&mean, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
      else if (program.rank == 0)
        MPI_Recv(&mean, 1, MPI_DOUBLE, program.lossRank, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    return mean;
  }
};

/// Rank 0 prints `step N | val loss X | val ppl Y` and appends it to the
/// metrics file.
void reportEvaluation(const Program &program, mpi::Communicator &comm,
                      MetricsLog &metrics, int64_t done, double loss) {
  if (program.rank != 0)
    return;
  std::printf("step %lld | val loss %.9g | val ppl %.6g\n",
              static_cast<long long>(done), loss, std::exp(loss));
  if (metrics.isOpen()) {
    Status written = metrics.appendEvaluation(done, loss);
    if (!written.ok())
      comm.abort(written);
  }
  std::fflush(stdout);
}

/// How many ranks of the job share this machine's memory. Collective.
int ranksOnThisMachine() {
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                          MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return 1;
  int size = 1;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return size;
}

/// Refuses, on every rank, a run some rank cannot hold (MemoryCheck.h),
/// before anything is allocated. Collective.
std::optional<Failure> checkMemory(const Program &program,
                                   const TrainOptions &options,
                                   int floatBytes) {
  if (options.skipMemoryCheck)
    return std::nullopt;
  int ranksHere = ranksOnThisMachine();
  std::optional<std::string> error =
      checkRankMemory(rankMemoryNeed(*program.spec, program.rank, floatBytes),
                      program.rank, ranksHere, support::availableHostMemory());
  return agree(error ? Status::failure(*error) : Status::success(),
               program.rank);
}

template <typename T>
std::optional<Failure>
train(const Program &program, const TrainOptions &options,
      mpi::Communicator &comm, StepFn<T> step, StepFn<T> evalStep) {
  const ProgramSpec &spec = *program.spec;
  if (auto failure = checkMemory(program, options, sizeof(T)))
    return failure;
  std::vector<Buffer<T>> args(spec.arguments.size());
  CheckpointInfo info;
  info.seed = options.seed;
  info.rngSeed = options.seed;
  info.dataFile = options.data;

  if (options.resume) {
    std::string dir;
    if (auto failure =
            loadCheckpoint(program, options.ckptDir, args, info, dir))
      return failure;
    if (program.rank == 0) {
      std::printf("resuming from %s at step %lld (seed %llu, rng step "
                  "%llu)\n",
                  dir.c_str(), static_cast<long long>(info.step),
                  static_cast<unsigned long long>(info.seed),
                  static_cast<unsigned long long>(info.rngStep));
      if (options.seedGiven && options.seed != info.seed)
        std::printf("note: --seed %llu ignored: the checkpoint's run draws "
                    "batches with seed %llu\n",
                    static_cast<unsigned long long>(options.seed),
                    static_cast<unsigned long long>(info.seed));
    }
    info.dataFile = options.data;
  } else {
    Status initialized = Status::success();
    for (size_t i : program.owned)
      if (initialized.ok())
        initialized = initializeBlock(program, i, options.seed, args[i]);
    if (auto failure = agree(initialized, program.rank))
      return failure;
    if (!options.initFrom.empty())
      if (auto failure = loadPretrained(program, options, args))
        return failure;
  }

  if (options.initOnly) {
    if (auto failure = writeCheckpoint(program, options.ckptDir, info, args))
      return failure;
    if (program.rank == 0)
      std::printf("wrote the initial checkpoint %s\n",
                  io::checkpointStepDir(options.ckptDir, 0).c_str());
    return std::nullopt;
  }

  // Gradient accumulation is compiled into the step (its micro-batches):
  // the flag must agree, or the user expects steps the program does not take.
  Status accumulating = Status::success();
  if (options.gradAccum && options.gradAccum != spec.microBatches)
    accumulating = Status::failure(
        "--grad-accum " + std::to_string(options.gradAccum) + ": @" +
        spec.entry + " accumulates over " + std::to_string(spec.microBatches) +
        " micro-batch" + (spec.microBatches == 1 ? "" : "es") +
        " of its batch of " +
        std::to_string(spec.arguments[program.inputIds].globalShape[0]) +
        " sequences; compile the model with an N-times batch and `loomc "
        "--micro-batches " +
        std::to_string(options.gradAccum) + "`");
  if (auto failure = agree(accumulating, program.rank))
    return failure;

  const TensorSpec &tokens = spec.arguments[program.inputIds];
  io::BatchSpec batch;
  batch.batchSize = tokens.globalShape[0];
  batch.seqLen = tokens.globalShape[1];
  batch.seed = info.seed;
  batch.order = options.sequentialData ? io::BatchSpec::Order::Sequential
                                       : io::BatchSpec::Order::Random;
  io::TokenFile file;
  // Every id read is checked against the model's vocabulary: a file
  // tokenized for another model fails by name instead of indexing past the
  // embedding.
  Status opened = io::TokenFile::open(options.data, options.dataFormat,
                                      spec.vocabSize, file);
  if (opened.ok() && file.getNumTokens() <= batch.seqLen)
    opened = Status::failure(
        "`" + options.data + "` holds " + std::to_string(file.getNumTokens()) +
        " tokens, too few for one sequence of " + std::to_string(batch.seqLen) +
        " inputs and its next-token label");
  if (auto failure = agree(opened, program.rank))
    return failure;

  // The held-out split, read as the training data is (its format, its
  // batch shape), in file order.
  Evaluation<T> evaluation;
  if (!options.evalData.empty()) {
    Status ready = Status::success();
    if (!evalStep)
      ready = Status::failure(
          "--eval-data: this program has no evaluation step (@eval_step, "
          "which `loomc --emit` derives from the training step): rebuild it "
          "with this loomc");
    if (ready.ok())
      ready = io::TokenFile::open(options.evalData, options.dataFormat,
                                  spec.vocabSize, evaluation.file);
    if (ready.ok() && evaluation.file.getNumTokens() <= batch.seqLen)
      ready = Status::failure("--eval-data: `" + options.evalData + "` holds " +
                              std::to_string(evaluation.file.getNumTokens()) +
                              " tokens, too few for one sequence of " +
                              std::to_string(batch.seqLen) +
                              " inputs and its next-token label");
    if (auto failure = agree(ready, program.rank))
      return failure;
    evaluation.step = evalStep;
    evaluation.batch = batch;
    evaluation.batch.seed = 0;
    evaluation.batch.order = io::BatchSpec::Order::Sequential;
    evaluation.batches = options.evalSteps;
  }
  auto evaluatesAfter = [&](int64_t done) {
    return evaluation.step &&
           ((options.evalEvery && done % options.evalEvery == 0) ||
            done == options.steps);
  };

  // The schedule: the command line's, or, resuming without schedule flags,
  // the checkpoint's (so it goes on where it stopped).
  bool keepStored =
      options.resume && !options.scheduleGiven && info.storedSchedule;
  info.schedule = keepStored ? *info.storedSchedule : options.schedule;
  double baseLr = spec.learningRate;
  Status scheduled = Status::success();
  if (auto error = info.schedule.resolve(baseLr, options.steps))
    scheduled = Status::failure(*error);
  bool scheduling = info.schedule.kind != LrScheduleKind::Constant ||
                    info.schedule.warmupSteps > 0;
  if (scheduled.ok() && scheduling && !program.lrScale)
    scheduled = Status::failure(
        "--lr-schedule: @" + spec.entry +
        " has no `lr_scale` argument to take the rate from (emitted before "
        "schedules, or without an optimizer): recompile it with loomc, or "
        "train at the compiled rate");
  if (auto failure = agree(scheduled, program.rank))
    return failure;
  Status hookable = Status::success();
  if (!options.injectNonfiniteAt.empty() && !program.injectNonfinite)
    hookable = Status::failure(
        "--inject-nonfinite-at-step: @" + spec.entry +
        " has no `inject_nonfinite` argument: only a loss-scaled step "
        "(loomc --precision fp16-mixed) has the hook");
  if (auto failure = agree(hookable, program.rank))
    return failure;
  int64_t skippedSteps = 0, scaledSteps = 0;
  if (program.rank == 0) {
    if (options.resume && options.scheduleGiven && info.storedSchedule &&
        !(*info.storedSchedule == info.schedule))
      std::printf("note: the learning-rate schedule changes at step %lld: "
                  "%s, was %s\n",
                  static_cast<long long>(info.step),
                  info.schedule.describe().c_str(),
                  info.storedSchedule->describe().c_str());
    if (scheduling)
      std::printf("learning rate: %s from %.9g\n",
                  info.schedule.describe().c_str(), baseLr);
    if (options.gradAccum)
      std::printf("gradient accumulation: %lld micro-batches of %lld "
                  "sequences per step\n",
                  static_cast<long long>(spec.microBatches),
                  static_cast<long long>(batch.batchSize / spec.microBatches));
  }

  // Rank 0 appends a JSON line per logged step; a resumed run first drops
  // the lines of steps after its checkpoint (the interrupted run's).
  MetricsLog metrics;
  Status metricsOpened = Status::success();
  if (program.rank == 0 && !options.metrics.empty())
    metricsOpened = MetricsLog::open(options.metrics, info.step, metrics);
  if (auto failure = agree(metricsOpened, program.rank))
    return failure;
  // The norm is computed inside the step, from gradients the trainer never
  // sees: a program compiled without it cannot report it.
  if (metrics.isOpen() && !program.gradNorm)
    std::printf("note: --metrics: no grad_norm: @%s does not compute the "
                "gradient norm (compile it with loomc --grad-norm, or "
                "--clip-norm)\n",
                spec.entry.c_str());

  double peak = peakFlopsPerDevice(spec, std::is_same_v<T, float>);

  std::vector<Buffer<T>> results(spec.results.size());
  double tokensPerStep = double(batch.batchSize * batch.seqLen);
  int64_t firstStep = info.step;
  // A run from scratch with periodic evaluation starts from the initial
  // model's loss, as nanoGPT's does.
  if (evaluation.step && options.evalEvery && firstStep == 0 &&
      firstStep < options.steps)
    reportEvaluation(
        program, comm, metrics, 0,
        evaluation.run(program, comm, {info.rngSeed, info.rngStep}, args));
  double runStart = MPI_Wtime();
  for (int64_t s = firstStep; s < options.steps; ++s) {
    double start = MPI_Wtime();
    Status read = readBatch(program, file, batch, s, args);
    if (!read.ok())
      comm.abort(read);
    // This step's rate, fed as a factor of the compiled one; `lr` is what
    // the update computes from it (the factor rounded to T, times the base
    // in f64), which is 1 and the compiled bits when nothing is scheduled.
    double lr = baseLr;
    if (program.lrScale) {
      double rate = info.schedule.rateAt(s, baseLr);
      T factor = baseLr > 0 ? static_cast<T>(rate / baseLr) : T(1);
      args[*program.lrScale].floats.assign(1, factor);
      lr = baseLr * static_cast<double>(factor);
    }
    if (program.injectNonfinite) {
      bool inject = std::find(options.injectNonfiniteAt.begin(),
                              options.injectNonfiniteAt.end(),
                              s + 1) != options.injectNonfiniteAt.end();
      args[*program.injectNonfinite].floats.assign(
          1, inject ? std::numeric_limits<T>::infinity() : T(0));
    }
    // Size the result buffers; the step writes every element it returns.
    // They are not cleared: a CUDA step that keeps the model state on the
    // device leaves the carried results' host buffers as they are, and
    // clearing them (the model and its two Adam moments, 1.5 GB for GPT-2
    // 124M) took most of the step on an H200 (docs/Performance.md).
    for (size_t i = 0; i < results.size(); ++i) {
      // Another stage's result: the step leaves it alone.
      if (!spec.computesResult(program.rank, i))
        continue;
      auto n = static_cast<size_t>(numElements(spec.results[i].localShape));
      if (spec.results[i].isInteger)
        results[i].ints.resize(n);
      else
        results[i].floats.resize(n);
    }
    // Dropout draws from (run seed, step): the masks change every step and
    // a resumed run draws the masks the uninterrupted one would.
    harness::StepContext context{info.rngSeed, info.rngStep};
    // From the second step of this run on, the carried arguments are the
    // previous step's results (swapped in below, read but never rewritten
    // by checkpoints), so a CUDA step may keep them on the device; it must
    // bring them to the host only when they are read there.
    int64_t done = s + 1;
    bool checkpoint = !options.ckptDir.empty() &&
                      ((options.ckptEvery && done % options.ckptEvery == 0) ||
                       done == options.steps);
    context.carriedAreLastResults = s > firstStep;
    // An evaluation after the step reads the state on the host.
    bool evaluate = evaluatesAfter(done);
    context.hostNeedsCarried = checkpoint || evaluate || done == options.steps;
    TransferCounts before = deviceTransfers();
    // The first step allocates what the step needs (its arena): how far the
    // resident set's peak rises above where it stands is what
    // `--report-memory` says the step costs the process.
    // (The peak is reset first: initialization may have held more.)
    ResidentSet rssBefore;
    if (s == firstStep && resetResidentSetPeak())
      rssBefore = residentSet();
    Status ran = step(comm, context, args, results);
    if (s == firstStep && rssBefore.current >= 0)
      stepMemory().firstStepRssGrowthBytes =
          std::max<int64_t>(residentSet().peak - rssBefore.current, 0);
    ++info.rngStep;
    if (!ran.ok())
      comm.abort(ran);
    // The plan keeps each carried value where its argument was: no copy,
    // no communication.
    for (auto [result, arg] : spec.carried)
      if (spec.computesResult(program.rank, result))
        std::swap(args[arg], results[result]);
    double seconds = MPI_Wtime() - start;
    TransferCounts after = deviceTransfers();
    bool log = done % options.logEvery == 0 || done == options.steps;
    // The loss, the gradient norm (when the step returns one) and whether
    // a loss-scaled step skipped its update (every step: they are counted).
    double logged[3] = {0, 0, 0};
    if (program.rank == program.lossRank) {
      if (log) {
        logged[0] = double(results[program.loss].floats[0]);
        if (program.gradNorm)
          logged[1] = double(results[*program.gradNorm].floats[0]);
      }
      if (program.foundInf)
        logged[2] = double(results[*program.foundInf].floats[0]) != 0.0;
    }
    if (program.foundInf && program.lossRank != 0) {
      if (program.rank == program.lossRank)
        MPI_Send(&logged[2], 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
      else if (program.rank == 0)
        MPI_Recv(&logged[2], 1, MPI_DOUBLE, program.lossRank, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    bool skipped = logged[2] != 0.0;
    scaledSteps += program.foundInf.has_value();
    skippedSteps += skipped;
    // A pipelined program's loss is on its last stage: rank 0 prints it,
    // so that every line of the log comes from one rank, in order.
    if (log && program.lossRank != 0) {
      if (program.rank == program.lossRank)
        MPI_Send(logged, 2, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
      else if (program.rank == 0)
        MPI_Recv(logged, 2, MPI_DOUBLE, program.lossRank, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    double loss = logged[0];
    info.lr = lr;
    if (program.rank == 0 && log) {
      std::printf("step %lld | loss %.9g | %.1f ms | %.0f tok/s | lr %.6g%s\n",
                  static_cast<long long>(done), loss, seconds * 1e3,
                  tokensPerStep / seconds, lr,
                  skipped ? " | skipped (inf/nan gradients)" : "");
      if (metrics.isOpen()) {
        MetricsRecord record;
        record.step = done;
        record.loss = loss;
        record.lr = lr;
        if (program.gradNorm)
          record.gradNorm = logged[1];
        if (program.foundInf)
          record.skipped = skipped;
        record.stepSeconds = seconds;
        record.tokensPerSecond = tokensPerStep / seconds;
        if (spec.modelFlopsPerStep > 0 && peak > 0)
          record.mfu = spec.modelFlopsPerStep / seconds /
                       (peak * double(program.mesh.getNumDevices()));
        Status written = metrics.append(record);
        if (!written.ok())
          comm.abort(written);
      }
      // Sparse logs mean a long run: say how far it is and how long the
      // rest takes at this run's average pace so far.
      if (options.logEvery > 1) {
        double elapsed = MPI_Wtime() - runStart;
        double eta =
            elapsed / double(done - firstStep) * double(options.steps - done);
        std::printf(
            "progress: step %lld of %lld (%.0f %%), elapsed %s, eta "
            "%s\n",
            static_cast<long long>(done), static_cast<long long>(options.steps),
            100.0 * double(done) / double(options.steps),
            formatDuration(elapsed).c_str(), formatDuration(eta).c_str());
      }
      if (options.reportTransfers)
        std::printf("transfers: %lld bytes to the device, %lld bytes to the "
                    "host\n",
                    static_cast<long long>(after.toDevice - before.toDevice),
                    static_cast<long long>(after.toHost - before.toHost));
      std::fflush(stdout);
    }
    if (evaluate)
      reportEvaluation(program, comm, metrics, done,
                       evaluation.run(program, comm, context, args));
    if (checkpoint) {
      info.step = done;
      if (auto failure = writeCheckpoint(program, options.ckptDir, info, args))
        return failure;
    }
  }
  if (program.rank == 0 && scaledSteps > 0)
    std::printf("loss scaling: %lld of %lld steps skipped (inf/nan "
                "gradients)\n",
                static_cast<long long>(skippedSteps),
                static_cast<long long>(scaledSteps));
  if (program.rank == 0 && firstStep >= options.steps)
    std::printf("the checkpoint is at step %lld: nothing to train for "
                "--steps %lld\n",
                static_cast<long long>(firstStep),
                static_cast<long long>(options.steps));
  Status waited = comm.waitSends();
  if (!waited.ok())
    comm.abort(waited);
  if (options.reportPipeline)
    harness::reportInFlight(spec, program.rank);
  if (options.reportMemory)
    reportStepMemory(program.rank, program.mesh.getNumDevices());
  return std::nullopt;
}

/// `{"name": "layout", ...}` of the model state: what `loom-ckpt reshard
/// --layouts` reads to re-cut a checkpoint for this program.
std::string layoutsJson(const Program &program) {
  std::string json = "{\n";
  for (size_t k = 0; k < program.state.size(); ++k) {
    size_t i = program.state[k];
    std::string layout = program.argLayouts[i].toString();
    std::string escaped;
    for (char c : layout) {
      if (c == '"' || c == '\\')
        escaped += '\\';
      escaped += c;
    }
    json += "  \"" + program.spec->arguments[i].name + "\": \"" + escaped +
            "\"" + (k + 1 < program.state.size() ? ",\n" : "\n");
  }
  return json + "}\n";
}

} // namespace

int runTrainer(int argc, char **argv, const ProgramSpec &spec,
               StepFn<float> f32Step, StepFn<double> f64Step,
               StepFn<float> f32Eval, StepFn<double> f64Eval) {
  std::string name = argv[0];
  name = name.substr(name.find_last_of('/') + 1);
  MPI_Init(&argc, &argv);
  keepFreedMemoryResident();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto report = [&](const Failure &failure) {
    if (failure.report)
      std::fprintf(stderr, "%s: error: %s\n", name.c_str(),
                   failure.message.c_str());
    MPI_Finalize();
    return 1;
  };
  // Errors every rank meets alike.
  auto fail = [&](const std::string &message) {
    return report(Failure{message, rank == 0});
  };

  TrainOptions options;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto error = parseTrainOptions(args, options))
    return fail(*error);
  if (options.f32 ? !f32Step : !f64Step)
    return fail(std::string("this program was built without its ") +
                (options.f32 ? "f32" : "f64") +
                " step functions (LOOM_STEP_DTYPES); run it with --dtype " +
                (options.f32 ? "f64" : "f32") + " or rebuild");

  std::vector<mpi::DeviceMesh::Axis> axes;
  for (const auto &[axis, size] : spec.mesh)
    axes.push_back({axis, size});
  mpi::DeviceMesh mesh;
  Status status = mpi::DeviceMesh::create(std::move(axes), mesh);
  if (!status.ok())
    return fail(status.message());
  Program program;
  if (Status read = readProgram(spec, mesh, rank, program); !read)
    return fail(read.message());
  if (options.printLayouts) {
    if (rank == 0)
      std::printf("%s", layoutsJson(program).c_str());
    MPI_Finalize();
    return 0;
  }

  mpi::CommunicatorOptions commOptions;
  commOptions.verifyCalls = options.verifyCalls;
  std::unique_ptr<mpi::Communicator> comm;
  status = mpi::Communicator::create(mesh, comm, commOptions);
  if (!status.ok())
    return fail(status.message());

  std::optional<Failure> failure =
      options.f32 ? train<float>(program, options, *comm, f32Step, f32Eval)
                  : train<double>(program, options, *comm, f64Step, f64Eval);
  std::fflush(stdout);
  comm.reset();
  if (failure)
    return report(*failure);
  MPI_Finalize();
  return 0;
}

} // namespace loom::runtime::trainer
