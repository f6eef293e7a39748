//===- Support.cpp - Versions, statuses, phases and dtypes of the C API ---===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The parts of include/loom-c/Loom.h that need no session: the version
// queries, the status objects (NULL is success; an error owns its message),
// the spellings of phases and the element sizes of dtypes.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

using namespace mlir::loom;

LoomStatus *mlir::loom::capi::makeStatus(LoomStatusCode code,
                                         const llvm::Twine &message) {
  return new LoomStatus{code, message.str()};
}

const char *loomGetVersion(void) { return LOOM_VERSION_STRING; }

int loomGetApiVersion(void) { return LOOM_API_VERSION; }

LoomStatusCode loomStatusGetCode(const LoomStatus *status) {
  return status ? status->code : LOOM_STATUS_OK;
}

const char *loomStatusGetMessage(const LoomStatus *status) {
  return status ? status->message.c_str() : "";
}

void loomStatusDestroy(LoomStatus *status) { delete status; }

const char *loomStatusCodeGetName(LoomStatusCode code) {
  switch (code) {
  case LOOM_STATUS_OK:
    return "ok";
  case LOOM_STATUS_INVALID_ARGUMENT:
    return "invalid-argument";
  case LOOM_STATUS_FAILED_PRECONDITION:
    return "failed-precondition";
  case LOOM_STATUS_COMPILE_ERROR:
    return "compile-error";
  case LOOM_STATUS_IO_ERROR:
    return "io-error";
  case LOOM_STATUS_UNIMPLEMENTED:
    return "unimplemented";
  case LOOM_STATUS_RUNTIME_ERROR:
    return "runtime-error";
  case LOOM_STATUS_INTERNAL:
    return "internal";
  case LOOM_STATUS_MAX_ENUM:
    break;
  }
  return "unknown";
}

/// The C phases are the driver's, without codegen (which is an emit).
static bool isRunnablePhase(LoomPhase phase) {
  return phase >= LOOM_PHASE_IMPORT && phase <= LOOM_PHASE_PARTITION;
}

LoomStatus *loomPhaseParse(const char *name, LoomPhase *outPhase) {
  if (!name || !outPhase)
    return capi::makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                            "loomPhaseParse: name and outPhase must not be "
                            "NULL");
  std::optional<Phase> phase = parsePhase(name);
  if (!phase || *phase == Phase::Codegen)
    return capi::makeStatus(
        LOOM_STATUS_INVALID_ARGUMENT,
        llvm::Twine("unknown phase '") + name +
            "'; expected import, autodiff, sharding, pipeline or partition "
            "(code generation is loomSessionEmit)");
  *outPhase = static_cast<LoomPhase>(*phase);
  return nullptr;
}

const char *loomPhaseGetName(LoomPhase phase) {
  if (!isRunnablePhase(phase))
    return "unknown";
  // The driver's spellings are string literals.
  return stringifyPhase(static_cast<Phase>(phase)).data();
}

size_t loomDTypeGetSize(LoomDType dtype) {
  switch (dtype) {
  case LOOM_DTYPE_F64:
  case LOOM_DTYPE_I64:
    return 8;
  case LOOM_DTYPE_F32:
  case LOOM_DTYPE_I32:
    return 4;
  case LOOM_DTYPE_BOOL:
    return 1;
  case LOOM_DTYPE_MAX_ENUM:
    break;
  }
  return 0;
}

static_assert(int(LOOM_PHASE_PARTITION) == int(Phase::Partition) &&
                  int(LOOM_PHASE_IMPORT) == int(Phase::Import),
              "LoomPhase must number the phases as the driver does");
