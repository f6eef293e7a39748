//===- DeviceError.cpp - Data errors found by CUDA kernels ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/DeviceError.h"

namespace loom::runtime::cuda {

std::string describeDeviceError(const DeviceError &error) {
  auto text = [](int64_t v) { return std::to_string(v); };
  switch (static_cast<DeviceErrorKind>(error.kind)) {
  case DeviceErrorKind::None:
    return "no error";
  case DeviceErrorKind::IdOutOfRange:
    return "id " + text(error.value) + " at index " + text(error.index) +
           " is outside [0, " + text(error.bound) + ")";
  case DeviceErrorKind::LabelOutOfRange:
    return "label " + text(error.value) + " at index " + text(error.index) +
           " is outside [0, " + text(error.bound) +
           ") and is not the ignore index " + text(error.extra);
  case DeviceErrorKind::IntegerDivisionByZero:
    return "integer division by zero";
  }
  return "unknown device error " + text(error.kind);
}

} // namespace loom::runtime::cuda
