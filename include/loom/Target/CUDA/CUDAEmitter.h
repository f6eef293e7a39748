//===- CUDAEmitter.h - Per-rank CUDA C++ from a partitioned step -*- C++
//-*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loom-translate --emit-cuda`: the CUDA counterpart of `--emit-host`
// (Target/Host/HostEmitter.h). It turns the partitioned training step into a
// program of one process per GPU: `train_step.cu` (one step function per
// rank, specialized to it; every value a device buffer of the step's
// cuda::Workspace; every `loom` op a launch of its CUDA kernel or a cuBLAS
// GEMM, every collective an NCCL Communicator call, each after the op it
// came from in a comment), the `main.cpp` that hands them to the training
// loop (LoomRuntimeTrainer, the host program's flags) or to the harness
// (LoomRuntimeHarness: one step from tensor files, as `loom-run` reads and
// writes them), and a `CMakeLists.txt` that builds both with nvcc against
// Loom's runtime libraries. The step functions have the host steps'
// signature, so the trainer, the harness, the ProgramSpec and the comparison
// with `loom-run --compare` are shared with the host path.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_CUDA_CUDAEMITTER_H
#define LOOM_TARGET_CUDA_CUDAEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::loom {

/// Settings of one emission.
struct CUDAEmitOptions {
  /// The function to emit; `train_step`, else `forward`, when empty.
  std::string entry;
  /// CMAKE_CUDA_ARCHITECTURES of the emitted CMakeLists.txt when the build
  /// does not set it.
  std::string architectures = "90a;80";
};

/// The files of an emitted program: (file name, contents), in the order
/// train_step.cu, main.cpp, CMakeLists.txt.
using CUDAProgramFiles = std::vector<std::pair<std::string, std::string>>;

/// Emits the CUDA program of `module`. An op without a CUDA pattern, a type
/// the runtime does not hold and a function the emitter cannot run are
/// errors at the op or function; nothing is returned then.
LogicalResult emitCUDAProgram(ModuleOp module, const CUDAEmitOptions &options,
                              CUDAProgramFiles &files);

/// Registers the `--emit-cuda` translation (and its `--emit-cuda-entry`,
/// `--emit-cuda-dir` and `--emit-cuda-arch` options). Without
/// `--emit-cuda-dir` it writes train_step.cu to the output; with it, all
/// three files into the directory and their names to the output.
void registerEmitCUDATranslation();

} // namespace mlir::loom

#endif // LOOM_TARGET_CUDA_CUDAEMITTER_H
