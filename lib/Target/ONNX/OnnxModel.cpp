//===- OnnxModel.cpp - The plain model view's helpers ---------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Names of dtypes and nodes for messages, and the decoding of raw tensor
// bytes (little-endian, as ONNX's raw_data is defined), shared by the
// protobuf reader and the translator.
//
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"
#include "Translator.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir::loom::onnx_import;

const char *mlir::loom::onnx_import::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return "f64";
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I1:
    return "i1";
  }
  return "?";
}

int64_t ConstTensor::numElements() const {
  return mlir::loom::onnx_import::numElements(shape);
}

std::string Node::describe() const {
  return "node '" + name + "' (" + opType + ")";
}

static double halfToDouble(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1f,
      mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0)
    value = std::ldexp(double(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? std::numeric_limits<double>::quiet_NaN()
                     : std::numeric_limits<double>::infinity();
  else
    value = std::ldexp(double(mantissa | 0x400), exponent - 25);
  return sign ? -value : value;
}

static double bf16ToDouble(uint16_t bits) {
  uint32_t word = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

template <typename T> static T load(const std::string &raw, int64_t i) {
  T value;
  std::memcpy(&value, raw.data() + i * sizeof(T), sizeof(T));
  return value;
}

double ConstTensor::rawAt(int64_t i) const {
  switch (dtype) {
  case DType::F64:
    return load<double>(*raw, i);
  case DType::F32:
    return load<float>(*raw, i);
  case DType::F16:
    return halfToDouble(load<uint16_t>(*raw, i));
  case DType::BF16:
    return bf16ToDouble(load<uint16_t>(*raw, i));
  case DType::I64:
    return double(load<int64_t>(*raw, i));
  case DType::I32:
    return load<int32_t>(*raw, i);
  case DType::I1:
    return load<uint8_t>(*raw, i) != 0;
  }
  return 0;
}

void ConstTensor::materialize() {
  if (!raw)
    return;
  int64_t n = numElements();
  if (isFloat(dtype)) {
    floats.resize(n);
    for (int64_t i = 0; i < n; ++i)
      floats[i] = rawAt(i);
  } else {
    ints.resize(n);
    for (int64_t i = 0; i < n; ++i)
      ints[i] =
          dtype == DType::I64 ? load<int64_t>(*raw, i) : int64_t(rawAt(i));
  }
  raw.reset();
}
