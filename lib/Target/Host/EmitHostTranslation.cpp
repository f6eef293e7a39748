//===- EmitHostTranslation.cpp - The --emit-host translation --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Registers `loom-translate --emit-host`. The program is emitted whole
// before anything is written, so an op without an emission pattern leaves
// no output (mlir-translate keeps its `-o` file only on success, and the
// directory's files are written only after the emission succeeded).
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/Target/Host/HostEmitter.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::loom {

namespace {
llvm::cl::OptionCategory &getCategory() {
  static llvm::cl::OptionCategory category("--emit-host options");
  return category;
}
} // namespace

void registerEmitHostTranslation() {
  static llvm::cl::opt<std::string> entry(
      "emit-host-entry",
      llvm::cl::desc("the function to emit (default: train_step, else "
                     "forward)"),
      llvm::cl::cat(getCategory()));
  static llvm::cl::opt<std::string> dir(
      "emit-host-dir",
      llvm::cl::desc("write train_step.cpp, main.cpp and CMakeLists.txt "
                     "into this directory (`-o DIR/` does the same)"),
      llvm::cl::cat(getCategory()));

  static TranslateFromMLIRRegistration emitHost(
      "emit-host",
      "Emit the per-rank host C++ program (MPI) of a partitioned step",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module to emit");
        HostEmitOptions options;
        options.entry = entry.getValue();
        HostProgramFiles files;
        if (failed(emitHostProgram(module, options, files)))
          return failure();
        if (dir.empty()) {
          os << files.front().second;
          return success();
        }
        if (std::error_code ec = llvm::sys::fs::create_directories(dir))
          return module.emitError()
                 << "cannot create directory `" << dir << "`: " << ec.message();
        for (const auto &[name, contents] : files) {
          llvm::SmallString<256> path(dir.getValue());
          llvm::sys::path::append(path, name);
          std::error_code ec;
          llvm::raw_fd_ostream file(path, ec);
          if (ec)
            return module.emitError()
                   << "cannot write `" << path << "`: " << ec.message();
          file << contents;
          os << path << "\n";
        }
        return success();
      },
      [](DialectRegistry &registry) { registerAllDialects(registry); });
}

} // namespace mlir::loom
