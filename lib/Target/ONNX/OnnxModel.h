//===- OnnxModel.h - A plain view of an ONNX model --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What the ONNX importer needs from a ModelProto, in plain C++ types: the
// graph's nodes (name, op type, inputs, outputs, attributes), its inputs,
// outputs and initializers, and the opset. ModelReader.cpp fills it from the
// protobuf; it is the only file that includes the protobuf-generated header,
// so the rest of the importer (and every other file of Loom) compiles without
// protobuf's headers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TARGET_ONNX_ONNXMODEL_H
#define LOOM_LIB_TARGET_ONNX_ONNXMODEL_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::loom::onnx_import {

/// The element types Loom has; everything else an ONNX file may hold is
/// refused by name when it is read.
enum class DType { F64, F32, F16, BF16, I64, I32, I1 };

const char *dtypeName(DType dtype);
inline bool isFloat(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

/// A tensor with its data: floats as doubles (exact for every float type
/// Loom has), integers and booleans as int64.
struct ConstTensor {
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  /// An initializer's little-endian bytes as the file holds them, not yet
  /// decoded into `floats` / `ints`: the weights stay at their own size
  /// (not as doubles) until they turn out to be constants the importer
  /// folds (`materialize`).
  std::shared_ptr<const std::string> raw;

  int64_t numElements() const;
  /// Element `i` as a double, whatever the dtype, decoded or raw.
  double at(int64_t i) const {
    if (raw)
      return rawAt(i);
    return isFloat(dtype) ? floats[i] : double(ints[i]);
  }
  double rawAt(int64_t i) const;
  /// Decodes `raw` into `floats` / `ints` (nothing when already decoded).
  void materialize();
};

/// One attribute of a node; `kind` says which member holds its value.
struct Attribute {
  enum Kind { Int, Float, String, Ints, Floats, Tensor, Other } kind = Other;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  ConstTensor t;
};

struct Node {
  std::string name;   // the exporter's node name ("/h.0/attn/MatMul")
  std::string opType; // "MatMul"
  std::string domain; // "" or "ai.onnx" for the default domain
  std::vector<std::string> inputs; // "" where an optional input is absent
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attributes;

  const Attribute *attr(const std::string &key) const {
    auto it = attributes.find(key);
    return it == attributes.end() ? nullptr : &it->second;
  }
  /// "node '/h.0/attn/MatMul' (MatMul)": how every message names a node.
  std::string describe() const;
};

/// A graph input or output with its declared type (static dims only; a
/// symbolic or unknown dim is -1).
struct ValueInfo {
  std::string name;
  std::optional<DType> dtype;
  std::string dtypeText; // the ONNX type name, for messages
  std::vector<int64_t> shape;
  bool hasShape = false;
};

struct Model {
  int64_t opset = 0; // the default domain's version
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  /// Initializers in file order (their order is the parameters' order).
  std::vector<std::pair<std::string, ConstTensor>> initializers;
  std::vector<Node> nodes;
};

/// Parses the bytes of an `.onnx` file. On failure returns a message (no
/// file name) saying what is wrong: not a model (truncated, garbage), data
/// kept in external files, an element type Loom lacks, data that disagrees
/// with its declared shape, subgraphs.
bool readModel(const char *data, size_t size, Model &model, std::string &error);

/// Whether this build reads ONNX (libonnx-dev was found at configure time).
bool haveOnnxSupport();

} // namespace mlir::loom::onnx_import

#endif // LOOM_LIB_TARGET_ONNX_ONNXMODEL_H
