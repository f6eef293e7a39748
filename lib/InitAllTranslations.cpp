//===- InitAllTranslations.cpp - Register loom-translate's modes ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllTranslations.h"

#include "loom/InitAllDialects.h"
#include "loom/Target/CUDA/CUDAEmitter.h"
#include "loom/Target/GraphJSON/GraphJSON.h"
#include "loom/Target/Host/HostEmitter.h"
#include "loom/Target/ONNX/ONNX.h"
#include "loom/Target/OpCensus/OpCensus.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

void mlir::loom::registerAllTranslations() {
  // Function-local statics: registering twice would be a duplicate-flag error.
  static TranslateFromMLIRRegistration opCensus(
      "op-census", "Write a JSON count of the ops in each function",
      [](ModuleOp module, raw_ostream &os) {
        return writeOpCensus(module, os);
      },
      [](DialectRegistry &registry) { registerAllDialects(registry); });

  // Graph JSON. The import takes the file name from the source manager so
  // that its diagnostics name the file the user gave.
  static TranslateToMLIRRegistration importGraph(
      "import-graph-json", "Import a graph JSON file into the loom dialect",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        return importGraphJson(buffer->getBuffer(),
                               buffer->getBufferIdentifier(), context);
      },
      [](DialectRegistry &registry) { registerAllDialects(registry); });
  static TranslateFromMLIRRegistration exportGraph(
      "export-graph-json", "Export @forward as a graph JSON file",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module to export");
        return exportGraphJson(module, os);
      },
      [](DialectRegistry &registry) { registerAllDialects(registry); });

  // ONNX models (torch.onnx.export): to IR, or to the graph JSON the
  // import goes through (to read or edit what was translated). The user's
  // word on which initializers train, as loomc's flags of the same names.
  static llvm::cl::list<std::string> onnxConstants(
      "onnx-constants", llvm::cl::CommaSeparated,
      llvm::cl::value_desc("name,name"),
      llvm::cl::desc("--import-onnx: initializers to hold as constants "
                     "(buffers), whatever their use"));
  static llvm::cl::list<std::string> onnxParameters(
      "onnx-parameters", llvm::cl::CommaSeparated,
      llvm::cl::value_desc("name,name"),
      llvm::cl::desc("--import-onnx: initializers to train, whatever their "
                     "use"));
  static TranslateToMLIRRegistration importOnnxModel(
      "import-onnx", "Import an ONNX model into the loom dialect",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        OnnxImportOptions options;
        options.constants.assign(onnxConstants.begin(), onnxConstants.end());
        options.parameters.assign(onnxParameters.begin(), onnxParameters.end());
        return importOnnx(buffer->getBuffer(), buffer->getBufferIdentifier(),
                          context, options);
      },
      [](DialectRegistry &registry) { registerAllDialects(registry); });

  // Per-rank host C++ (MPI) of a partitioned step.
  registerEmitHostTranslation();
  // Per-rank CUDA C++ (kernels, cuBLAS, NCCL) of a partitioned step.
  registerEmitCUDATranslation();
}
