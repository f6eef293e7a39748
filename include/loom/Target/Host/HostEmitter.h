//===- HostEmitter.h - Per-rank C++ from a partitioned step -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loom-translate --emit-host`: turns the partitioned training step (local
// types, `dist.layout` on arguments and results, dist collectives) into a
// host program of one MPI process per mesh device. The program is
// `train_step.cpp` (one step function per rank, specialized to it: mesh
// coordinates, block offsets, axis indices and peer ranks are constants;
// every `loom` op is a call to its host kernel, every collective a
// Communicator call, each after the op it came from in a comment), the
// `main.cpp` that hands them to the harness (LoomRuntimeHarness), and a
// `CMakeLists.txt` that builds both against Loom's runtime libraries.
// The calls are the interpreter's (lib/Interpreter), so the program's
// results equal `loom-run`'s bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_HOST_HOSTEMITTER_H
#define LOOM_TARGET_HOST_HOSTEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::loom {

/// Settings of one emission.
struct HostEmitOptions {
  /// The function to emit; `train_step`, else `forward`, when empty.
  std::string entry;
};

/// The files of an emitted program: (file name, contents), in the order
/// train_step.cpp, main.cpp, CMakeLists.txt.
using HostProgramFiles = std::vector<std::pair<std::string, std::string>>;

/// Emits the host program of `module`. An op without an emission pattern, a
/// type the host runtime does not hold (i1, dynamic shapes) and a function
/// the emitter cannot run (several blocks, several meshes) are errors at
/// the op or function; nothing is returned then.
LogicalResult emitHostProgram(ModuleOp module, const HostEmitOptions &options,
                              HostProgramFiles &files);

/// Registers the `--emit-host` translation (and its `--emit-host-entry` and
/// `--emit-host-dir` options). Without `--emit-host-dir` it writes
/// train_step.cpp to the output; with it, all three files into the directory
/// (created if needed) and their names to the output.
void registerEmitHostTranslation();

} // namespace mlir::loom

#endif // LOOM_TARGET_HOST_HOSTEMITTER_H
