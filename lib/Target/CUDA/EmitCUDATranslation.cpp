//===- EmitCUDATranslation.cpp - The --emit-cuda translation --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Registers `loom-translate --emit-cuda`. As with `--emit-host`, the program
// is emitted whole before anything is written, so an op without a CUDA
// pattern leaves no output.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/Target/CUDA/CUDAEmitter.h"
#include "loom/Target/Common/EmitterSupport.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::loom {

namespace {
llvm::cl::OptionCategory &getCategory() {
  static llvm::cl::OptionCategory category("--emit-cuda options");
  return category;
}
} // namespace

void registerEmitCUDATranslation() {
  static llvm::cl::opt<std::string> entry(
      "emit-cuda-entry",
      llvm::cl::desc("the function to emit (default: train_step, else "
                     "forward)"),
      llvm::cl::cat(getCategory()));
  static llvm::cl::opt<std::string> dir(
      "emit-cuda-dir",
      llvm::cl::desc("write train_step.cu, main.cpp and CMakeLists.txt "
                     "into this directory (`-o DIR/` does the same)"),
      llvm::cl::cat(getCategory()));
  static llvm::cl::opt<std::string> arch(
      "emit-cuda-arch",
      llvm::cl::desc("default CMAKE_CUDA_ARCHITECTURES of the emitted "
                     "CMakeLists.txt"),
      llvm::cl::init("90a;80"), llvm::cl::cat(getCategory()));

  static TranslateFromMLIRRegistration emitCUDA(
      "emit-cuda",
      "Emit the per-rank CUDA C++ program (kernels, cuBLAS, NCCL) of a "
      "partitioned step",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module to emit");
        CUDAEmitOptions options;
        options.entry = entry.getValue();
        options.architectures = arch.getValue();
        CUDAProgramFiles files;
        if (failed(emitCUDAProgram(module, options, files)))
          return failure();
        return emit::writeProgramFiles(module, files, dir.getValue(), os);
      },
      [](DialectRegistry &registry) { registerAllDialects(registry); });
}

} // namespace mlir::loom
