//===- Interpreter.h - Interpreter over simulated ranks ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Runs a `func.func` of `loom`, `dist`, `arith.constant` and `func.return` ops
// on the CPU, as the single-device program it is or as an SPMD program over
// the ranks of a `dist.mesh`, so that partitioned ≡ single-device can be
// checked numerically.
//
// Arguments and results are *global* tensors. In an SPMD run the function's
// types are per-rank (local) types, and each argument and result carries its
// layout as a `dist.layout` attribute (replicated when absent); the
// interpreter cuts every global argument into each rank's block, runs all
// ranks, and assembles each global result from the ranks' blocks, summing
// over the layout's partial axes.
//
// The ranks run in one thread under a deterministic scheduler: each rank
// runs until it reaches a collective or a receive that cannot complete yet;
// a collective runs once every member of its group has reached it. When no
// rank can move the run stops with an error that says where each rank waits
// (a deadlock or mismatched collectives), so a wrong program never hangs.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_INTERPRETER_H
#define LOOM_INTERPRETER_INTERPRETER_H

#include "loom/Analysis/Layout/Layout.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Interpreter/HostTensor.h"
#include "loom/Interpreter/KernelRegistry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::loom::interp {

/// The name of the argument and result attribute holding a `#dist.layout`.
using ::mlir::loom::kLayoutAttrName;

/// The settings of one run.
struct RunOptions {
  /// How floats are computed: F64 (default) or F32.
  StorageKind floatKind = StorageKind::F64;
  /// The number of simulated ranks; by default the mesh's device count (1
  /// without a mesh). When given it must equal the device count.
  std::optional<int64_t> ranks;
  /// Seeds dropout and random initializers.
  uint64_t seed = 0;
  /// The 0-based training step the run stands for: dropout draws from
  /// (seed, rngStep), as step rngStep of an emitted trainer does.
  uint64_t rngStep = 0;
};

/// Runs one entry function. Construct, `prepare`, then `run` (any number of
/// times).
class Interpreter {
public:
  Interpreter(func::FuncOp entry, const KernelRegistry &registry,
              RunOptions options)
      : entry(entry), registry(registry), options(options) {}

  /// Checks that the function can run (one block, static tensor types,
  /// layouts that fit, one mesh whose device count matches the ranks) and
  /// derives the global shapes. Returns an error message or nullopt.
  std::optional<std::string> prepare();

  int64_t getNumRanks() const { return numRanks; }
  /// The global shape of argument `index` (its type's shape on one rank).
  const Shape &getArgumentShape(unsigned index) const {
    return argShapes[index];
  }
  const Shape &getResultShape(unsigned index) const {
    return resultShapes[index];
  }

  /// Runs every rank on the global arguments `args` (one per argument, with
  /// the global shapes and the run's storage kinds) and returns the global
  /// results in `results`. Returns an error message or nullopt.
  std::optional<std::string> run(const std::vector<HostTensor> &args,
                                 std::vector<HostTensor> &results);

  /// After a successful `run`: per rank, the most bytes of live values it
  /// held at once, each value counted at its declared type (what a device
  /// would hold, whatever precision the run computes in). Values die after
  /// their last use and loop-carried arguments live to the end or until the
  /// value carried into them takes their storage (dist::InPlaceReuse), the
  /// rules of `dist::analyzeMemory`, so both give the same number.
  const std::vector<int64_t> &getPeakLiveBytes() const {
    return peakLiveBytes;
  }

  /// After a successful `run` of a pipelined program (docs/Pipeline.md):
  /// per rank, the most micro-batches whose forward had begun and whose
  /// backward had not ended at once (0 without a pipeline).
  const std::vector<int64_t> &getPeakInFlightMicroBatches() const {
    return peakInFlight;
  }

private:
  /// Checks that every tensor the run allocates (arguments at their global
  /// shape, op results) has an element count and byte size that fit int64
  /// and the host's memory; `fn` names the function.
  std::optional<std::string> checkSizes(const std::string &fn);

  /// The index of the pipeline axis (`dist.pipeline`) in the mesh.
  std::optional<size_t> getPipelineAxisIndex() const;

  func::FuncOp entry;
  const KernelRegistry &registry;
  RunOptions options;

  int64_t numRanks = 1;
  /// The mesh of the SPMD program, if it names one.
  std::optional<dist::Mesh> mesh;
  /// The layout of each argument and result (replicated when absent).
  std::vector<dist::Layout> argLayouts, resultLayouts;
  std::vector<Shape> argShapes, resultShapes;
  std::vector<int64_t> peakLiveBytes;
  std::vector<int64_t> peakInFlight;
};

/// Whether the elements of op result `result` are rounded to its element
/// type after the op computed them: the result is bf16 or f16 (held widened
/// in the run's float storage) and the op computes new values: a `loom` op
/// other than `loom.cast` (which rounds itself) and `loom.reshape` (which
/// shares its operand's rounded elements), or a summing collective
/// (`dist.all_reduce sum`, `dist.reduce_scatter`); other collectives move
/// rounded elements. The interpreter and the host emitter both follow it
/// (docs/MixedPrecision.md, "Rounding").
bool isRoundedToLowPrecision(Value result);

/// Describes `op` for messages: "`loom.matmul` at model.mlir:12:8".
std::string describeOp(Operation *op);

} // namespace mlir::loom::interp

#endif // LOOM_INTERPRETER_INTERPRETER_H
