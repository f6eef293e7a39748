//===- EntrySignature.cpp - Names and initial values of arguments ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/EntrySignature.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Runtime/Host/Random.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cmath>

using ::mlir::loom::kFileShapeAttrName;
using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kParamAttrName;

namespace mlir::loom::interp {

using ::loom::runtime::io::DType;
using ::loom::runtime::io::TensorData;

std::string getArgumentName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(index, kNameAttrName))
    return name.getValue().str();
  if (auto param = func.getArgAttrOfType<ParamAttr>(index, kParamAttrName))
    return param.getName().str();
  if (auto input = func.getArgAttrOfType<InputRoleAttr>(index, kInputAttrName))
    return stringifyInputRole(input.getValue()).str();
  return "arg" + std::to_string(index);
}

std::string getResultName(func::FuncOp func, unsigned index) {
  if (auto name = func.getResultAttrOfType<StringAttr>(index, kNameAttrName))
    return name.getValue().str();
  if (func.getNumResults() == 1) {
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
    if (type && type.getRank() == 0 && isa<FloatType>(type.getElementType()))
      return "loss";
  }
  return "result" + std::to_string(index);
}

static std::optional<Shape> toShape(DenseI64ArrayAttr attr) {
  if (!attr)
    return std::nullopt;
  return Shape(attr.asArrayRef().begin(), attr.asArrayRef().end());
}

std::optional<Shape> getArgumentFileShape(func::FuncOp func, unsigned index) {
  return toShape(
      func.getArgAttrOfType<DenseI64ArrayAttr>(index, kFileShapeAttrName));
}

std::optional<Shape> getResultFileShape(func::FuncOp func, unsigned index) {
  return toShape(
      func.getResultAttrOfType<DenseI64ArrayAttr>(index, kFileShapeAttrName));
}

std::optional<std::string> initializeArgument(func::FuncOp func, unsigned index,
                                              const Shape &globalShape,
                                              StorageKind floatKind,
                                              uint64_t seed, HostTensor &out) {
  std::string name = getArgumentName(func, index);
  Type type = func.getArgumentTypes()[index];
  out = HostTensor::allocate(storageKindFor(type, floatKind), globalShape);
  if (auto param = func.getArgAttrOfType<ParamAttr>(index, kParamAttrName)) {
    InitializerAttr init = param.getInit();
    switch (init.getKind()) {
    case InitKind::Zeros:
      return std::nullopt;
    case InitKind::Ones:
      dispatchFloat(out.getKind(), [&](auto zero) {
        using T = decltype(zero);
        std::fill_n(out.mutableData<T>(), out.getNumElements(), T(1));
      });
      return std::nullopt;
    case InitKind::Normal:
    case InitKind::Uniform:
    case InitKind::ScaledNormal: {
      // The counter-based RNG keyed by (seed, tensor id of the name) and
      // each element's global index, over the whole global tensor: the
      // interpreter cuts the ranks' blocks out of it afterwards, so a
      // sharded run starts from the same values as a single-device one.
      if (!out.isFloat())
        return "parameter `" + name + "` has a random initializer but a " +
               "non-float type";
      ArrayRef<double> args = init.getArgs();
      uint64_t id = ::loom::runtime::host::tensorIdFromName(name);
      Shape offset(globalShape.size(), 0);
      dispatchFloat(out.getKind(), [&](auto zero) {
        using T = decltype(zero);
        T *data = out.mutableData<T>();
        if (init.getKind() == InitKind::Uniform)
          ::loom::runtime::host::fillUniform<T>(
              data, globalShape, offset, globalShape, seed, id, args[0],
              args[1]);
        else
          ::loom::runtime::host::fillNormal<T>(
              data, globalShape, offset, globalShape, seed, id, 0.0,
              init.getKind() == InitKind::Normal
                  ? args[0]
                  : args[0] / std::sqrt(args[1]));
      });
      return std::nullopt;
    }
    }
  }
  if (auto named = func.getArgAttrOfType<StringAttr>(index, kNameAttrName)) {
    // The learning-rate factor starts at 1: the compiled rate.
    if (named.getValue() == ::mlir::loom::kLrScaleArgName && out.isFloat())
      dispatchFloat(out.getKind(), [&](auto zero) {
        using T = decltype(zero);
        std::fill_n(out.mutableData<T>(), out.getNumElements(), T(1));
      });
    // A state with `loom.initial_value` (the loss scale) starts there.
    if (auto initial = func.getArgAttrOfType<FloatAttr>(
            index, ::mlir::loom::kInitialValueAttrName);
        initial && out.isFloat())
      dispatchFloat(out.getKind(), [&](auto zero) {
        using T = decltype(zero);
        std::fill_n(out.mutableData<T>(), out.getNumElements(),
                    static_cast<T>(initial.getValueAsDouble()));
      });
    return std::nullopt; // any other named state starts at zero
  }
  return "argument `" + name + "` (#" + std::to_string(index) +
         ") has no data in the inputs and no initializer";
}

std::optional<DType> fileDTypeOf(Type elementType) {
  if (elementType.isF64())
    return DType::F64;
  if (elementType.isF32())
    return DType::F32;
  if (elementType.isBF16())
    return DType::BF16;
  if (elementType.isF16())
    return DType::F16;
  if (elementType.isInteger(1))
    return DType::Bool;
  if (elementType.isInteger(32))
    return DType::I32;
  if (elementType.isInteger(64) || elementType.isIndex())
    return DType::I64;
  return std::nullopt;
}

std::optional<std::string> tensorFromFile(const TensorData &data, Type declared,
                                          StorageKind floatKind,
                                          const std::string &what,
                                          HostTensor &out) {
  Type element = declared;
  if (auto shaped = dyn_cast<ShapedType>(declared))
    element = shaped.getElementType();
  std::optional<DType> declaredDType = fileDTypeOf(element);
  if (!declaredDType)
    return what + ": unsupported element type";
  bool accepted;
  std::string expected;
  if (isa<FloatType>(element)) {
    DType runDType = floatKind == StorageKind::F32 ? DType::F32 : DType::F64;
    accepted = data.dtype == *declaredDType || data.dtype == runDType;
    expected = std::string(dtypeName(*declaredDType));
    if (runDType != *declaredDType)
      expected += " or " + std::string(dtypeName(runDType));
  } else if (element.isInteger(1)) {
    accepted = data.dtype == DType::Bool;
    expected = "BOOL";
  } else {
    accepted = data.dtype == DType::I64 || data.dtype == DType::I32;
    expected = "I64 or I32";
  }
  if (!accepted)
    return what + ": expected " + expected + " data, found " +
           std::string(dtypeName(data.dtype));
  StorageKind kind = storageKindFor(element, floatKind);
  out = HostTensor::allocate(kind, data.shape);
  int64_t n = out.getNumElements();
  if (kind == StorageKind::F64 || kind == StorageKind::F32) {
    std::vector<double> values = data.toDoubles();
    dispatchFloat(kind, [&](auto zero) {
      using T = decltype(zero);
      T *dst = out.mutableData<T>();
      for (int64_t i = 0; i < n; ++i)
        dst[i] = static_cast<T>(values[i]);
    });
  } else {
    std::vector<int64_t> values = data.toInt64s();
    if (kind == StorageKind::I64)
      std::copy(values.begin(), values.end(), out.mutableData<int64_t>());
    else
      for (int64_t i = 0; i < n; ++i)
        out.mutableData<uint8_t>()[i] = values[i] != 0;
  }
  return std::nullopt;
}

TensorData tensorToFile(const HostTensor &tensor, Type declared) {
  Type element = declared;
  if (auto shaped = dyn_cast<ShapedType>(declared))
    element = shaped.getElementType();
  int64_t n = tensor.getNumElements();
  if (tensor.getKind() == StorageKind::F64 ||
      tensor.getKind() == StorageKind::F32) {
    TensorData data;
    data.dtype = tensor.getKind() == StorageKind::F64 ? DType::F64 : DType::F32;
    data.shape = tensor.getShape();
    data.bytes.assign(tensor.rawData(),
                      tensor.rawData() + tensor.getByteSize());
    return data;
  }
  std::vector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = tensor.getKind() == StorageKind::I64
                    ? tensor.data<int64_t>()[i]
                    : tensor.data<uint8_t>()[i];
  DType dtype = fileDTypeOf(element).value_or(DType::I64);
  return TensorData::fromInt64s(dtype, tensor.getShape(), values);
}

} // namespace mlir::loom::interp
