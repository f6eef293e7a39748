//===- TensorFile.h - Named tensors as stored in files ----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The in-memory form of a tensor file (safetensors, .npy): each tensor is its
// element type, shape and raw little-endian bytes, exactly as stored, so a
// file read and written again is byte-identical. Conversions to and from
// double and int64_t are here too: bf16 and f16 have no C++ type, and every
// reader of tensor files (the interpreter, checkpoint tools, per-rank
// programs) needs them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_IO_TENSORFILE_H
#define LOOM_RUNTIME_IO_TENSORFILE_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom::runtime::io {

/// The element types tensor files may hold (safetensors spelling).
enum class DType { F64, F32, BF16, F16, I64, I32, Bool };

/// The safetensors name: "F64", "F32", "BF16", "F16", "I64", "I32", "BOOL".
std::string_view dtypeName(DType dtype);

/// Parses a safetensors dtype name.
std::optional<DType> parseDType(std::string_view name);

/// Bytes per element.
int64_t dtypeSize(DType dtype);

bool isFloat(DType dtype);

/// One tensor: element type, shape and `numElements(shape) * dtypeSize`
/// little-endian bytes in row-major order.
struct TensorData {
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numElements() const;

  /// The elements as doubles (exact for every dtype but I64 beyond 2^53).
  std::vector<double> toDoubles() const;
  /// The elements as int64_t; floats are truncated. Meant for integer and
  /// bool tensors.
  std::vector<int64_t> toInt64s() const;

  /// Builds a tensor of `dtype` from doubles, rounding to nearest even.
  static TensorData fromDoubles(DType dtype, std::vector<int64_t> shape,
                                const std::vector<double> &values);
  /// Builds a tensor of `dtype` from integers (bool: `!= 0`).
  static TensorData fromInt64s(DType dtype, std::vector<int64_t> shape,
                               const std::vector<int64_t> &values);
};

/// Named tensors, ordered by name (safetensors headers are unordered).
using TensorMap = std::map<std::string, TensorData>;

/// Widens a bfloat16 bit pattern.
float bf16ToFloat(uint16_t bits);
/// Rounds to the nearest bfloat16 bit pattern (ties to even).
uint16_t floatToBF16(float value);
/// Widens an IEEE half bit pattern.
float f16ToFloat(uint16_t bits);
/// Rounds to the nearest IEEE half bit pattern (ties to even).
uint16_t floatToF16(float value);

/// Writes `bytes` to `path` atomically: to a temporary file in the same
/// directory, fsync'ed, renamed over `path` once complete, and the directory
/// fsync'ed, so a failed, interrupted or crashed write never leaves a partial
/// file under `path`. Returns an error message naming the
/// file, or nullopt.
std::optional<std::string> writeFileAtomically(const std::string &path,
                                               const std::string &bytes);

/// Reads the whole of the regular file `path` (loom/Support/InputFile.h:
/// a directory, FIFO or symlink loop is refused); returns an error message
/// naming the file.
std::optional<std::string> readWholeFile(const std::string &path,
                                         std::string &bytes);

} // namespace loom::runtime::io

#endif // LOOM_RUNTIME_IO_TENSORFILE_H
