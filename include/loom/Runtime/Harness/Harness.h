//===- Harness.h - Runs an emitted training step on MPI ranks ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The `main` of the host programs that `loom-translate --emit-host` writes.
// The emitted code holds one step function, which every rank runs with its
// own mesh coordinates, and a ProgramSpec: the mesh, and for every argument
// and result its name, element kind, global and local shape and layout, as
// the compiler read them from the `dist.layout` attributes; each rank's
// block is computed from the layout at run time (Placements.h). The harness
// does what `loom-run` does around the interpreter, on real MPI ranks:
//
//   1. reads the global inputs (safetensors or .npy, `--inputs`, by argument
//      name) or initializes an argument without data (its parameter
//      initializer, over the global tensor, or zeros for a named state);
//   2. cuts this rank's block of every argument (host::slice; a partial
//      argument is held by the first member of its partial group, zeros
//      elsewhere);
//   3. runs the rank's step once, or `--steps N` times feeding the
//      loop-carried results (a result named like an argument) back, the
//      i-th run with StepContext{--seed, i};
//   4. gathers every result's blocks on rank 0, checks that replicas agree,
//      adds partial blocks in rank order (host::accumulateBlock) and writes
//      the global results (`--outputs`), printing loom-run's summary lines.
//
// So `loom-run --compare` can check an emitted program against the
// interpreter bit for bit. Plain C++17 over the Host, IO and MPI runtimes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HARNESS_HARNESS_H
#define LOOM_RUNTIME_HARNESS_HARNESS_H

#include "loom/Runtime/Harness/Placements.h"
#include "loom/Runtime/Host/Status.h"
#include "loom/Runtime/IO/TensorFile.h"
#include "loom/Runtime/MPI/Communicator.h"
#include "loom/Runtime/Support/Broadcast.h"
#include "loom/Runtime/Support/Transfers.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom::runtime::harness {

using host::Status;

/// How an argument without data in the inputs starts (`#loom.param`
/// initializers; `State` is an argument with a `loom.name`: zeros).
enum class Init { None, Zeros, Ones, Normal, Uniform, ScaledNormal, State };

/// One argument or result of the step, as the compiler sees it.
struct TensorSpec {
  /// The name that keys it in tensor files (loom-run's naming).
  std::string name;
  /// Held as int64_t (integer and index types), else in the run's float type.
  bool isInteger = false;
  /// The dtype of its declared element type, used for integer results.
  io::DType declaredDType = io::DType::F64;
  Shape globalShape;
  Shape localShape;
  /// Arguments only: the initializer and its two parameters (normal: std;
  /// uniform: low, high; scaled_normal: std, factor; a named state: its
  /// initial value, 0 unless `loom.initial_value` gives one).
  Init init = Init::None;
  double initArgs[2] = {0, 0};
  /// Its `#dist.layout` body (`[["dp"], []]`, BlockLayout's spelling);
  /// empty in programs emitted before layouts were recorded (replicated).
  std::string layout;
  /// Pipelined programs: the stage that computes this result or owns this
  /// argument (updates it); -1 when every stage holds it (data inputs) or
  /// the program is not pipelined. A rank of another stage never reads the
  /// argument, and its step leaves the result as the caller passed it.
  int64_t stage = -1;
  /// The shape its ecosystem's files give it when the program holds it as a
  /// row-major view of that shape (`loom.file_shape`); empty otherwise.
  /// Checkpoint manifests record it so that merged files use it.
  Shape fileShape;
};

/// Everything the harness needs to know about the emitted program.
struct ProgramSpec {
  /// The entry function, for messages.
  std::string entry;
  /// The mesh, axis names and sizes in order.
  std::vector<std::pair<std::string, int64_t>> mesh;
  std::vector<TensorSpec> arguments, results;
  /// (result, argument) pairs that `--steps` feeds back.
  std::vector<std::pair<size_t, size_t>> carried;
  /// Pipelined programs: the pipeline axis (a name in `mesh`) and its size;
  /// empty and 0 otherwise.
  std::string pipelineAxis;
  int64_t numStages = 0;
  /// The learning rate compiled into the optimizer updates (`--lr`), which
  /// the `lr_scale` argument multiplies; 0 when the step has no update or
  /// its updates differ in rate.
  double learningRate = 0;
  /// For the trainer's MFU (`--metrics`): the plan's global model FLOPs per
  /// step (0: not searched), and the cluster's dense peak FLOP/s per device
  /// by dtype name (`f32`, `bf16`, ...; empty when the module records no
  /// cluster), with the dtype of the step's matmuls (`bf16` under mixed
  /// precision; the run's `--dtype` otherwise).
  double modelFlopsPerStep = 0;
  /// The micro-batches one step splits its batch into and accumulates the
  /// gradients of before its update (`loomc --micro-batches`), 1 without.
  int64_t microBatches = 1;
  std::vector<std::pair<std::string, double>> peakFlopsPerSecond;
  std::string matmulDType;
  /// The model's vocabulary: the rows of the table the token ids index
  /// (the first embedding's), which the trainer checks every id it reads
  /// against; 0 when the program has no embedding of an argument.
  int64_t vocabSize = 0;
  /// Host programs: each stage's step arena in bytes (one entry when not
  /// pipelined) for f32 and f64 runs, the larger of the training and the
  /// evaluation step's. The trainer counts it with the model state against
  /// the machine's memory before it allocates anything. Empty in CUDA
  /// programs, whose arena is on the device.
  std::vector<std::array<int64_t, 2>> hostArenaBytes;
  /// Adds a step's `kArenaBytes_<entry>` table to hostArenaBytes, keeping
  /// the larger entry of each stage.
  void addHostArena(const int64_t (*table)[2], size_t stages);

  /// The number of ranks: the product of the mesh's axis sizes.
  int64_t numRanks() const;
  /// The pipeline stage of `rank` (its coordinate on the pipeline axis), or
  /// -1 when the program is not pipelined.
  int64_t stageOf(int64_t rank) const;
  /// Whether `rank` owns argument `index` (its stage's, or every stage's).
  bool ownsArgument(int64_t rank, size_t index) const;
  /// Whether `rank` computes result `index`.
  bool computesResult(int64_t rank, size_t index) const;
};

/// Micro-batches in flight on this process's rank: the emitted step calls
/// begin(m) before micro-batch m's first forward op on this rank's stage and
/// end(m) after its last backward op, so `current` counts the micro-batches
/// whose activations are alive and `max` the most at once (over every step
/// since the last reset). Pipelined programs only; `--report-pipeline`
/// prints it.
struct InFlightCounter {
  int64_t current = 0;
  int64_t max = 0;
  void begin(int64_t microBatch) {
    (void)microBatch;
    if (++current > max)
      max = current;
  }
  void end(int64_t microBatch) {
    (void)microBatch;
    --current;
  }
};

/// The process's counter (one rank per process).
InFlightCounter &pipelineInFlight();

/// `--report-pipeline`: gathers every rank's stage and pipelineInFlight().max
/// on rank 0, which prints `rank R stage S in-flight micro-batches K` per
/// rank, in rank order (or that the program is not pipelined). Collective
/// over MPI_COMM_WORLD.
void reportInFlight(const ProgramSpec &spec, int rank);

/// The buffers of one argument or result on one rank: float elements in the
/// run's type T, or int64_t elements.
template <typename T> struct Buffer {
  std::vector<T> floats;
  std::vector<int64_t> ints;
};

/// What a step draws its random numbers from besides the program: the run's
/// seed and the 0-based index of the training step (dropout's stream,
/// loom/Runtime/Support/Philox.h). The trainer passes (--seed, step); the
/// harness (--seed, iteration of --steps); loom-run (--seed, --rng-step).
///
/// The other two fields tell a step that keeps state on a device (the CUDA
/// step, docs/Codegen.md "Resident state") what it may skip; their defaults
/// (stage everything through the host) suit every caller that does not set
/// them, and host steps ignore both.
struct StepContext {
  uint64_t seed = 0;
  uint64_t step = 0;
  /// Every loop-carried argument (ProgramSpec::carried) the step reads is
  /// exactly the result this process's previous call of the same step
  /// function returned for it, untouched since: the step may use the copy it
  /// kept instead of the host buffer. The trainer sets it from the second
  /// step of a run on; false after initialization, a resume or anything else
  /// that rewrote the host state.
  bool carriedAreLastResults = false;
  /// The caller reads the carried results on the host after this step (a
  /// checkpoint, the last step). When false the step may leave their host
  /// buffers as the caller passed them; the other results are always
  /// written.
  bool hostNeedsCarried = true;
};

/// The step of every rank: reads `args` (one per argument, this rank's
/// blocks) and writes `results`, sized by the caller. It reads the rank's
/// mesh coordinates off `comm` (docs/Codegen.md, "One program for every
/// rank"). One exception to "reads": a host step whose optimizer updates a
/// loop-carried argument in place (docs/Codegen.md, "Memory") returns that
/// argument's buffer as the carried result and leaves the argument holding
/// the result's former buffer (its contents unspecified); its callers (the
/// trainer, the harness's --steps) replace every carried argument with its
/// result before the next step, so they never read what is left there.
template <typename T>
using StepFn = Status (*)(mpi::Communicator &comm, const StepContext &context,
                          const std::vector<Buffer<T>> &args,
                          std::vector<Buffer<T>> &results);

/// Runs the program: parses the command line (--inputs F (repeatable),
/// --outputs F, --dtype f64|f32, --seed S, --steps N, --verify-calls,
/// --report-pipeline),
/// initializes MPI, runs the step (`f64Step` or `f32Step`; null when the
/// program was built without that precision) on this rank and finalizes
/// MPI. Returns main's exit status.
int runMain(int argc, char **argv, const ProgramSpec &spec,
            StepFn<float> f32Step, StepFn<double> f64Step);

} // namespace loom::runtime::harness

#endif // LOOM_RUNTIME_HARNESS_HARNESS_H
