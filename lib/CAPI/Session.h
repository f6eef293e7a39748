//===- Session.h - The C API's handles behind the opaque types --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What `LoomStatus`, `LoomSession` and `LoomTensorList` are, shared by the
// files of lib/CAPI and private to them. A session owns an MLIR context
// whose diagnostic handler collects the errors of the current call (for the
// status it returns) and forwards every diagnostic to the caller's
// callback; the loaded graph stays untouched and each run works on a copy,
// so one session compiles the same graph with different options.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CAPI_SESSION_H
#define LOOM_LIB_CAPI_SESSION_H

#include "loom-c/Loom.h"
#include "loom/Driver/Driver.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>
#include <vector>

struct LoomStatus {
  LoomStatusCode code;
  std::string message;
};

struct LoomTensorList {
  struct Entry {
    std::string name;
    LoomDType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
    bool hasData;
  };
  std::vector<Entry> entries;
};

struct LoomSession {
  LoomSession();
  ~LoomSession();

  mlir::MLIRContext context;
  /// Holds the buffers of the loaded graph (a fresh one per load).
  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  /// The options as set; each run copies them and fills in the phase and
  /// the outputs.
  mlir::loom::CompileOptions options;
  /// Temporary files holding `cluster-json` and `strategy-json`, removed
  /// with the session.
  std::string clusterFile, strategyFile;

  /// The graph as loaded, and its name in diagnostics.
  mlir::OwningOpRef<mlir::ModuleOp> loaded;
  std::string sourceName;
  /// The result of the last successful run, its phase and its outputs.
  mlir::OwningOpRef<mlir::ModuleOp> result;
  mlir::loom::Phase resultPhase = mlir::loom::Phase::Import;
  std::string irText;
  bool irValid = false;
  std::string planJson;
  bool hasPlan = false;
  std::string report;

  LoomDiagnosticCallback callback = nullptr;
  void *userData = nullptr;
  bool printDiagnostics = false;
  /// The error lines of the current call (see `beginCall`).
  std::vector<std::string> errors;

  /// Starts a call that may fail: forgets earlier calls' errors.
  void beginCall() { errors.clear(); }
  /// A status of `code` whose message is `summary` followed by the errors
  /// the diagnostics of this call reported (and their notes). The code
  /// becomes LOOM_STATUS_UNIMPLEMENTED when an error says something is "not
  /// implemented yet".
  LoomStatus *fail(LoomStatusCode code, const llvm::Twine &summary);
  /// Forgets the last run's result and outputs.
  void clearResult();
  /// The module later calls read: the last result, else the loaded graph.
  mlir::ModuleOp getCurrentModule() {
    return result ? *result : (loaded ? *loaded : mlir::ModuleOp());
  }

private:
  void handleDiagnostic(mlir::Diagnostic &diag);
};

namespace mlir::loom::capi {

/// A new status; `code` must not be LOOM_STATUS_OK.
LoomStatus *makeStatus(LoomStatusCode code, const llvm::Twine &message);

/// The string view of a session-owned string.
inline LoomStringRef wrap(const std::string &text) {
  return LoomStringRef{text.c_str(), text.size()};
}

} // namespace mlir::loom::capi

#endif // LOOM_LIB_CAPI_SESSION_H
