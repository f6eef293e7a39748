//===- DeviceError.h - Data errors found by CUDA kernels --------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A host kernel returns a Status when its data is wrong (an id or label out of
// range, an integer division by zero). A CUDA kernel cannot return anything,
// and checking on the host would stall the stream; instead the kernels that
// validate data record the first failure of a step in one DeviceError in
// device memory, tagged with the op that failed, and the program reads it
// once at the end of the step (cuda::Session::finish) and turns it into the
// same kind of Status the host kernel gives.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_DEVICEERROR_H
#define LOOM_RUNTIME_CUDA_DEVICEERROR_H

#include <cstdint>
#include <string>

namespace loom::runtime::cuda {

/// What went wrong; selects the message of describeDeviceError.
enum class DeviceErrorKind : int64_t {
  None = 0,
  /// embedding: `value` (an id) at `index` is outside [0, bound).
  IdOutOfRange = 1,
  /// cross_entropy: label `value` at `index` is outside [0, bound) and is not
  /// the ignore index `extra`.
  LabelOutOfRange = 2,
  /// binary div on integers: a zero divisor at `index`.
  IntegerDivisionByZero = 3,
};

/// The first data error of a step, in device memory. `tag` is 0 while no
/// error happened; the first failing kernel swaps in its own (non-zero) tag
/// and then fills in the rest.
struct DeviceError {
  unsigned long long tag;
  int64_t kind;
  int64_t value, index, bound, extra;
};

/// Where a kernel reports: the slot (nullptr: do not check) and the tag that
/// names the op (1 + the op's position in the emitted step, by convention).
struct ErrorSink {
  DeviceError *slot = nullptr;
  unsigned long long tag = 1;
};

/// The message of a recorded error, worded as the host kernel words it.
std::string describeDeviceError(const DeviceError &error);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_DEVICEERROR_H
