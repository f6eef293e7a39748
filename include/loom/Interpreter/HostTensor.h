//===- HostTensor.h - Tensors of the reference interpreter ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A value of the interpreter: a shape, a storage kind and dense row-major
// elements. The interpreter computes every floating-point tensor in the run's
// dtype (f64 by default, or f32) whatever its declared type, stores integer
// tensors (i64, i32, index) as int64_t and i1 tensors as uint8_t 0/1; the
// declared type only matters at the edges (casts, files). Storage is shared
// and immutable once a kernel has filled it, so a reshape or a value passed
// through a collective costs no copy.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_HOSTTENSOR_H
#define LOOM_INTERPRETER_HOSTTENSOR_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class Type;
} // namespace mlir

namespace mlir::loom::interp {

using ::loom::runtime::Shape;

/// How a tensor's elements are held.
enum class StorageKind { F32, F64, I64, Bool };

/// "f32", "f64", "i64", "i1".
const char *storageKindName(StorageKind kind);

/// Bytes per element.
size_t storageSize(StorageKind kind);

/// The C++ element type of each storage kind.
template <typename T> constexpr StorageKind storageKindOf();
template <> constexpr StorageKind storageKindOf<float>() {
  return StorageKind::F32;
}
template <> constexpr StorageKind storageKindOf<double>() {
  return StorageKind::F64;
}
template <> constexpr StorageKind storageKindOf<int64_t>() {
  return StorageKind::I64;
}
template <> constexpr StorageKind storageKindOf<uint8_t>() {
  return StorageKind::Bool;
}

/// The storage of values of type `type` (a tensor type or a scalar element
/// type) in a run whose floats are `floatKind`: floats in `floatKind`, i1 as
/// Bool, other integers and index as I64.
StorageKind storageKindFor(Type type, StorageKind floatKind);

/// A dense row-major tensor; copies share storage.
class HostTensor {
public:
  HostTensor() = default;

  /// A zero-filled tensor.
  static HostTensor allocate(StorageKind kind, Shape shape);

  StorageKind getKind() const { return kind; }
  const Shape &getShape() const { return shape; }
  int64_t getNumElements() const { return ::loom::runtime::numElements(shape); }
  size_t getByteSize() const { return getNumElements() * storageSize(kind); }
  bool isFloat() const {
    return kind == StorageKind::F32 || kind == StorageKind::F64;
  }

  /// The elements as `T`, which must match the storage kind (checked with
  /// an assert: kinds are the interpreter's own invariant, not user input).
  template <typename T> const T *data() const {
    checkKind(storageKindOf<T>());
    return reinterpret_cast<const T *>(storage->data());
  }
  /// Mutable elements; only for the kernel that fills a fresh tensor.
  template <typename T> T *mutableData() {
    checkKind(storageKindOf<T>());
    return reinterpret_cast<T *>(storage->data());
  }
  const uint8_t *rawData() const { return storage->data(); }
  uint8_t *mutableRawData() { return storage->data(); }

  /// The same elements under another shape with as many elements.
  HostTensor reshaped(Shape newShape) const;
  /// Whether no other tensor (a copy, a reshape, the caller's argument)
  /// shares these elements, so writing them changes this tensor only.
  bool ownsStorageAlone() const { return storage && storage.use_count() == 1; }

  /// Element `i` converted to double (for summaries and comparisons).
  double getAsDouble(int64_t i) const;

  /// Whether both tensors have the same kind, shape and values (NaN equals
  /// NaN, so replicas that agree compare equal).
  bool sameValues(const HostTensor &other) const;

  /// `[2, 3]`.
  static std::string formatShape(const Shape &shape);

private:
  void checkKind(StorageKind expected) const;

  StorageKind kind = StorageKind::F64;
  Shape shape;
  std::shared_ptr<std::vector<uint8_t>> storage;
};

/// Calls `fn(T())` with T the C++ type of a float storage kind.
template <typename Fn> auto dispatchFloat(StorageKind kind, Fn &&fn) {
  if (kind == StorageKind::F32)
    return fn(float());
  return fn(double());
}

/// Calls `fn(T())` with T the C++ type of any storage kind.
template <typename Fn> auto dispatchStorage(StorageKind kind, Fn &&fn) {
  switch (kind) {
  case StorageKind::F32:
    return fn(float());
  case StorageKind::I64:
    return fn(int64_t());
  case StorageKind::Bool:
    return fn(uint8_t());
  case StorageKind::F64:
    break;
  }
  return fn(double());
}

} // namespace mlir::loom::interp

#endif // LOOM_INTERPRETER_HOSTTENSOR_H
