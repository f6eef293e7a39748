//===- ModelReader.cpp - ONNX protobuf to the plain model view ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The one file that includes the protobuf-generated ONNX header (Debian's
// libonnx-dev, `onnx/onnx-ml.pb.h`): it parses the bytes with protobuf and
// copies what the importer uses into OnnxModel.h's plain structs, checking
// each tensor's data against its declared shape. Keeping protobuf here keeps
// its large headers out of every other translation unit.
//
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"

#include "loom/Support/InputLimits.h"

// onnx_pb.h defines ONNX_API and includes onnx-ml.pb.h (ONNX_ML).
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace mlir::loom::onnx_import;
namespace pb = ::onnx;

bool mlir::loom::onnx_import::haveOnnxSupport() { return true; }

/// The Loom dtype of an ONNX element type, or nothing (with its ONNX name in
/// `name`) for the types Loom lacks (uint8, int8, strings, complex, ...).
static std::optional<DType> convertElementType(int32_t type,
                                               std::string &name) {
  name = pb::TensorProto_DataType_Name(
      static_cast<pb::TensorProto_DataType>(type));
  switch (type) {
  case pb::TensorProto::DOUBLE:
    return DType::F64;
  case pb::TensorProto::FLOAT:
    return DType::F32;
  case pb::TensorProto::FLOAT16:
    return DType::F16;
  case pb::TensorProto::BFLOAT16:
    return DType::BF16;
  case pb::TensorProto::INT64:
    return DType::I64;
  case pb::TensorProto::INT32:
    return DType::I32;
  case pb::TensorProto::BOOL:
    return DType::I1;
  default:
    return std::nullopt;
  }
}

/// Moves `proto`'s data into `out`, checking that the element count the
/// data holds is the one its dims declare. Raw bytes (what exporters
/// write) are kept undecoded when `keepRaw` (ConstTensor::raw).
static bool convertTensor(pb::TensorProto &proto, ConstTensor &out,
                          std::string &error, bool keepRaw) {
  std::string what = "tensor '" + proto.name() + "'";
  if (proto.data_location() == pb::TensorProto::EXTERNAL) {
    error = what + " keeps its data in an external file; Loom reads "
                   "self-contained models (export without external data)";
    return false;
  }
  std::string typeName;
  std::optional<DType> dtype = convertElementType(proto.data_type(), typeName);
  if (!dtype) {
    error = what + " has element type " + typeName +
            ", which Loom lacks (expected DOUBLE, FLOAT, FLOAT16, BFLOAT16, "
            "INT64, INT32 or BOOL)";
    return false;
  }
  out.dtype = *dtype;
  out.shape.assign(proto.dims().begin(), proto.dims().end());
  int64_t count = 1;
  for (int64_t dim : out.shape) {
    if (dim < 0 || (dim > 0 && count > (int64_t(1) << 40) / dim)) {
      error = what + " declares an invalid shape";
      return false;
    }
    count *= dim;
  }
  const std::string &raw = proto.raw_data();
  bool hasRaw = proto.has_raw_data();
  size_t elementSize = 0;
  int64_t found = 0;
  switch (out.dtype) {
  case DType::F64:
    elementSize = 8;
    found = hasRaw ? int64_t(raw.size() / 8) : proto.double_data_size();
    break;
  case DType::F32:
    elementSize = 4;
    found = hasRaw ? int64_t(raw.size() / 4) : proto.float_data_size();
    break;
  case DType::F16:
  case DType::BF16:
    elementSize = 2;
    found = hasRaw ? int64_t(raw.size() / 2) : proto.int32_data_size();
    break;
  case DType::I64:
    elementSize = 8;
    found = hasRaw ? int64_t(raw.size() / 8) : proto.int64_data_size();
    break;
  case DType::I32:
    elementSize = 4;
    found = hasRaw ? int64_t(raw.size() / 4) : proto.int32_data_size();
    break;
  case DType::I1:
    elementSize = 1;
    found = hasRaw ? int64_t(raw.size()) : proto.int32_data_size();
    break;
  }
  if (found != count || (hasRaw && raw.size() != size_t(count) * elementSize)) {
    error =
        what + " declares " + std::to_string(count) + " element(s) (shape [";
    for (size_t d = 0; d < out.shape.size(); ++d)
      error += (d ? ", " : "") + std::to_string(out.shape[d]);
    error += "]) but its data holds " +
             (hasRaw ? std::to_string(raw.size()) + " byte(s)"
                     : std::to_string(found) + " element(s)");
    return false;
  }
  if (hasRaw) {
    out.raw = std::make_shared<const std::string>(
        std::move(*proto.mutable_raw_data()));
    if (!keepRaw)
      out.materialize();
    return true;
  }
  if (isFloat(out.dtype))
    out.floats.resize(count);
  else
    out.ints.resize(count);
  // f16 and bf16 values sit in int32_data as their bit patterns: decoded as
  // raw bytes are.
  std::string bits;
  for (int64_t i = 0; i < count; ++i) {
    switch (out.dtype) {
    case DType::F64:
      out.floats[i] = proto.double_data(i);
      break;
    case DType::F32:
      out.floats[i] = proto.float_data(i);
      break;
    case DType::F16:
    case DType::BF16: {
      uint16_t word = uint16_t(proto.int32_data(i));
      bits.append(reinterpret_cast<const char *>(&word), sizeof(word));
      break;
    }
    case DType::I64:
      out.ints[i] = proto.int64_data(i);
      break;
    case DType::I32:
      out.ints[i] = proto.int32_data(i);
      break;
    case DType::I1:
      out.ints[i] = proto.int32_data(i) != 0;
      break;
    }
  }
  if (out.dtype == DType::F16 || out.dtype == DType::BF16) {
    out.floats.clear();
    out.raw = std::make_shared<const std::string>(std::move(bits));
    out.materialize();
  }
  return true;
}

static bool convertValueInfo(const pb::ValueInfoProto &proto, ValueInfo &out,
                             std::string &error) {
  out.name = proto.name();
  if (!proto.type().has_tensor_type()) {
    error = "graph input/output '" + out.name + "' is not a tensor";
    return false;
  }
  const pb::TypeProto_Tensor &tensor = proto.type().tensor_type();
  out.dtype = convertElementType(tensor.elem_type(), out.dtypeText);
  out.hasShape = tensor.has_shape();
  for (const pb::TensorShapeProto_Dimension &dim : tensor.shape().dim())
    out.shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  return true;
}

static bool convertNode(const pb::NodeProto &proto, Node &out,
                        std::string &error) {
  out.name = proto.name();
  out.opType = proto.op_type();
  out.domain = proto.domain();
  out.inputs.assign(proto.input().begin(), proto.input().end());
  out.outputs.assign(proto.output().begin(), proto.output().end());
  for (const pb::AttributeProto &attr : proto.attribute()) {
    Attribute &a = out.attributes[attr.name()];
    switch (attr.type()) {
    case pb::AttributeProto::INT:
      a.kind = Attribute::Int;
      a.i = attr.i();
      break;
    case pb::AttributeProto::FLOAT:
      a.kind = Attribute::Float;
      a.f = attr.f();
      break;
    case pb::AttributeProto::STRING:
      a.kind = Attribute::String;
      a.s = attr.s();
      break;
    case pb::AttributeProto::INTS:
      a.kind = Attribute::Ints;
      a.ints.assign(attr.ints().begin(), attr.ints().end());
      break;
    case pb::AttributeProto::FLOATS:
      a.kind = Attribute::Floats;
      a.floats.assign(attr.floats().begin(), attr.floats().end());
      break;
    case pb::AttributeProto::TENSOR: {
      a.kind = Attribute::Tensor;
      pb::TensorProto copy = attr.t();
      if (!convertTensor(copy, a.t, error, /*keepRaw=*/false)) {
        error = out.describe() + ": attribute '" + attr.name() + "': " + error;
        return false;
      }
      break;
    }
    case pb::AttributeProto::GRAPH:
    case pb::AttributeProto::GRAPHS:
      error = out.describe() + " has a subgraph (attribute '" + attr.name() +
              "'): control flow (If, Loop, Scan) cannot be imported; Loom "
              "graphs are static";
      return false;
    default:
      a.kind = Attribute::Other;
      break;
    }
  }
  return true;
}

/// Checks that `text` (the `what` of a model) is UTF-8: names become graph
/// JSON, parameter and tensor names, and parts of messages, and the JSON
/// writer refuses other bytes (docs/Testing.md, "Bad input"). The message
/// shows the text; the importer prints its bad bytes as \xNN.
static bool checkUTF8(const std::string &text, const std::string &what,
                      std::string &error) {
  std::optional<size_t> bad = loom::support::findInvalidUTF8(text);
  if (!bad)
    return true;
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02X",
                static_cast<unsigned char>(text[*bad]));
  error = what + " '" + text + "' is not UTF-8 (byte " + hex + " at byte " +
          std::to_string(*bad) + ")";
  return false;
}

/// Every string of the model that the importer copies into graph JSON or a
/// message: value, node, initializer and attribute names, op types,
/// domains and string attributes.
static bool checkNamesAreUTF8(const Model &model, std::string &error) {
  for (const auto &[name, tensor] : model.initializers)
    if (!checkUTF8(name, "initializer name", error))
      return false;
  for (const std::vector<ValueInfo> *values : {&model.inputs, &model.outputs})
    for (const ValueInfo &value : *values)
      if (!checkUTF8(value.name, "graph input/output name", error))
        return false;
  for (const Node &node : model.nodes) {
    for (const std::string *text : {&node.name, &node.opType, &node.domain})
      if (!checkUTF8(*text, "node name, op type or domain", error))
        return false;
    for (const std::vector<std::string> *names : {&node.inputs, &node.outputs})
      for (const std::string &name : *names)
        if (!checkUTF8(name, "value name", error))
          return false;
    for (const auto &[key, attribute] : node.attributes)
      if (!checkUTF8(key, "attribute name", error) ||
          (attribute.kind == Attribute::String &&
           !checkUTF8(attribute.s, "string attribute", error)))
        return false;
  }
  return true;
}

bool mlir::loom::onnx_import::readModel(const char *data, size_t size,
                                        Model &model, std::string &error) {
  pb::ModelProto proto;
  if (size > size_t(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(data, int(size))) {
    error = "not a valid ONNX model: the protobuf does not parse (a "
            "truncated or corrupt file, or not ONNX)";
    return false;
  }
  if (!proto.has_graph() || proto.graph().node_size() == 0) {
    error = "not a valid ONNX model: it has no graph (or a graph without "
            "nodes; a truncated or non-ONNX file parses as an empty model)";
    return false;
  }
  for (const pb::OperatorSetIdProto &opset : proto.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      model.opset = opset.version();
  for (pb::TensorProto &init : *proto.mutable_graph()->mutable_initializer()) {
    ConstTensor tensor;
    if (!convertTensor(init, tensor, error, /*keepRaw=*/true)) {
      error = "initializer: " + error;
      return false;
    }
    model.initializers.emplace_back(init.name(), std::move(tensor));
  }
  const pb::GraphProto &graph = proto.graph();
  if (graph.sparse_initializer_size()) {
    error = "sparse initializers are not supported";
    return false;
  }
  for (const pb::ValueInfoProto &input : graph.input()) {
    model.inputs.emplace_back();
    if (!convertValueInfo(input, model.inputs.back(), error))
      return false;
  }
  for (const pb::ValueInfoProto &output : graph.output()) {
    model.outputs.emplace_back();
    if (!convertValueInfo(output, model.outputs.back(), error))
      return false;
  }
  for (const pb::NodeProto &node : graph.node()) {
    model.nodes.emplace_back();
    if (!convertNode(node, model.nodes.back(), error))
      return false;
  }
  return checkNamesAreUTF8(model, error);
}
