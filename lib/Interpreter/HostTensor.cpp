//===- HostTensor.cpp - Tensors of the reference interpreter --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/HostTensor.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cassert>
#include <cmath>
#include <cstring>

namespace mlir::loom::interp {

const char *storageKindName(StorageKind kind) {
  switch (kind) {
  case StorageKind::F32:
    return "f32";
  case StorageKind::F64:
    return "f64";
  case StorageKind::I64:
    return "i64";
  case StorageKind::Bool:
    return "i1";
  }
  return "?";
}

size_t storageSize(StorageKind kind) {
  switch (kind) {
  case StorageKind::F32:
    return 4;
  case StorageKind::F64:
  case StorageKind::I64:
    return 8;
  case StorageKind::Bool:
    return 1;
  }
  return 1;
}

StorageKind storageKindFor(Type type, StorageKind floatKind) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  if (isa<FloatType>(type))
    return floatKind;
  if (type.isInteger(1))
    return StorageKind::Bool;
  return StorageKind::I64;
}

HostTensor HostTensor::allocate(StorageKind kind, Shape shape) {
  HostTensor t;
  t.kind = kind;
  t.shape = std::move(shape);
  t.storage = std::make_shared<std::vector<uint8_t>>(t.getByteSize(), 0);
  return t;
}

HostTensor HostTensor::reshaped(Shape newShape) const {
  HostTensor t = *this;
  t.shape = std::move(newShape);
  assert(t.getNumElements() == getNumElements() && "reshape changes size");
  return t;
}

double HostTensor::getAsDouble(int64_t i) const {
  return dispatchStorage(kind, [&](auto zero) {
    using T = decltype(zero);
    return static_cast<double>(data<T>()[i]);
  });
}

bool HostTensor::sameValues(const HostTensor &other) const {
  if (kind != other.kind || shape != other.shape)
    return false;
  int64_t n = getNumElements();
  return dispatchStorage(kind, [&](auto zero) {
    using T = decltype(zero);
    const T *a = data<T>(), *b = other.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if (a[i] == b[i])
        continue;
      if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(a[i]) && std::isnan(b[i]))
          continue;
      return false;
    }
    return true;
  });
}

std::string HostTensor::formatShape(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void HostTensor::checkKind(StorageKind expected) const {
  assert(storage && "tensor has no storage");
  assert(kind == expected && "element access with the wrong C++ type");
  (void)expected;
}

} // namespace mlir::loom::interp
