//===- Translator.h - ONNX graph to Loom ops, internals ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The ONNX importer's working state. An ONNX value is either a *constant*
// (its data known at import time: constant nodes, non-trainable
// initializers, shapes, and everything computed from those alone, folded by
// ConstantFolding.cpp) or *symbolic* (a graph input, a trainable initializer,
// or computed from one): a Loom tensor produced by a `LoomOp` of the
// translator's op list. OpMappings.cpp builds that list node by node,
// Fusions.cpp rewrites patterns in it (attention, GELU, LayerNorm,
// RMSNorm), Translator.cpp drops what the loss does not use and writes the
// rest as graph JSON, and Import.cpp hands that to the graph-JSON importer:
// an ONNX model becomes the same IR as a graph-JSON document by
// construction.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TARGET_ONNX_TRANSLATOR_H
#define LOOM_LIB_TARGET_ONNX_TRANSLATOR_H

#include "OnnxModel.h"

#include "loom/Target/ONNX/ImportOptions.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlir::loom::onnx_import {

using Shape = std::vector<int64_t>;

/// One op of the translated graph: a `loom` mnemonic, `constant`, or the
/// pseudo-op `erf` (Loom has no erf; Fusions.cpp folds the exact-GELU
/// pattern around it, and a surviving one is an error).
struct LoomOp {
  std::string op;
  std::vector<int> operands; // value ids; -1 is an absent optional operand
  std::vector<int> results;
  nlohmann::json attributes = nlohmann::json::object();
  std::string origin; // the ONNX node it came from, for messages
  const ConstTensor *value = nullptr; // for `constant`
  /// Program position: the op's index, or for an op a rewrite adds in
  /// front of an existing one, just below that op's (Translator::insertBefore).
  double position = 0;
};

/// A Loom tensor: an argument (def = -1) or a result of ops[def].
struct LoomValue {
  std::string name;
  Shape shape;
  DType dtype = DType::F32;
  int def = -1;
  bool isParameter = false;
  std::string role; // a data input's role, once known
};

int64_t numElements(const Shape &shape);
std::string shapeText(const Shape &shape);
/// numpy broadcasting of two shapes; false when they do not broadcast.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &result);

class Translator {
public:
  Translator(const Model &model, const OnnxImportOptions &options)
      : model(model), options(options) {}

  /// Translates the whole model into `doc` (graph JSON). Every problem is
  /// appended to `errors` (all unsupported nodes at once); on any error the
  /// document is not produced.
  bool run(nlohmann::json &doc, std::vector<std::string> &errors);

  //===--- used by the op mappings --------------------------------------===//

  /// An ONNX value as a mapping sees it: constant data or a Loom value.
  struct Operand {
    const ConstTensor *constant = nullptr;
    int id = -1;
    bool present() const { return constant || id >= 0; }
  };
  Operand operand(const Node &node, size_t index) const;
  const Shape &shapeOf(const Operand &operand) const;
  DType dtypeOf(const Operand &operand) const;
  /// The Loom value of an operand, materializing a constant (converted to
  /// `like`'s float type when both are floats, so binary ops match).
  int valueOf(const Operand &operand, std::optional<DType> like = std::nullopt);
  /// A `constant` op holding `tensor`.
  int constant(ConstTensor tensor);
  int scalar(double value, DType dtype);

  /// Appends a Loom op and returns its result ids (one per result shape).
  std::vector<int> emit(const std::string &op, std::vector<int> operands,
                        std::vector<Shape> resultShapes, DType dtype,
                        nlohmann::json attributes = nlohmann::json::object());
  int emit1(const std::string &op, std::vector<int> operands, Shape shape,
            DType dtype, nlohmann::json attributes = nlohmann::json::object()) {
    return emit(op, std::move(operands), {std::move(shape)}, dtype,
                std::move(attributes))[0];
  }
  /// `emit`, placed in program order just before ops[before] (for rewrites
  /// that add ops after the list was built).
  std::vector<int>
  insertBefore(size_t before, const std::string &op, std::vector<int> operands,
               std::vector<Shape> resultShapes, DType dtype,
               nlohmann::json attributes = nlohmann::json::object());
  /// Binds ONNX output `index` of the node being translated.
  void define(const Node &node, size_t index, int id);
  void defineConstant(const std::string &name, ConstTensor tensor);

  LoomOp *producer(int id) {
    return id >= 0 && values[id].def >= 0 ? &ops[values[id].def] : nullptr;
  }

  std::vector<LoomValue> values;
  std::vector<LoomOp> ops;
  std::string currentOrigin;

private:
  /// `out = Identity(init)`: the exporter's copy of an equal-valued
  /// parameter (a parameter of its own).
  bool isParameterCopy(const Node &node) const;
  void classifyInitializers();
  /// Every name the options give is a (float, for parameters)
  /// initializer, and none is given twice.
  bool checkOverrides(std::vector<std::string> &errors) const;
  bool declareInputs(std::vector<std::string> &errors);
  bool translateNodes(std::vector<std::string> &errors);
  bool chooseLoss(int &loss, std::vector<std::string> &errors);
  bool assignRoles(std::vector<std::string> &errors);
  void markLive(int loss);
  nlohmann::json writeDocument(int loss);

  const Model &model;
  const OnnxImportOptions &options;
  std::map<std::string, const ConstTensor *> initializers;
  std::set<std::string> trainable;
  std::map<std::string, ConstTensor> constants; // ONNX name -> data
  std::map<std::string, int> symbols;           // ONNX name -> value id
  std::map<std::string, int> materialized;      // ONNX constant -> value id
  std::vector<std::unique_ptr<ConstTensor>> constantStore;
  std::vector<ConstTensor> identityCopies;
  std::map<int, const ConstTensor *> parameterData; // value id -> data
  std::vector<bool> live, liveOps;                  // what the loss uses
  int insertions = 0;
};

//===--- per-op tables
//------------------------------------------------------===//

/// Translates a node with at least one symbolic input. Returns "" on
/// success, else why the node cannot be translated.
using Mapping = std::function<std::string(Translator &, const Node &)>;
const std::map<std::string, Mapping> &getMappings();

/// Computes a node whose inputs are all constants. Returns "" on success
/// (outputs filled, one per node output), else why it cannot.
using Folder = std::function<std::string(
    const Node &, const std::vector<const ConstTensor *> &,
    std::vector<ConstTensor> &)>;
const std::map<std::string, Folder> &getFolders();

inline std::vector<int64_t> attrInts(const Node &node, const char *key) {
  const Attribute *a = node.attr(key);
  return a && a->kind == Attribute::Ints ? a->ints : std::vector<int64_t>{};
}
inline int64_t attrInt(const Node &node, const char *key, int64_t otherwise) {
  const Attribute *a = node.attr(key);
  return a && a->kind == Attribute::Int ? a->i : otherwise;
}
inline double attrFloat(const Node &node, const char *key, double otherwise) {
  const Attribute *a = node.attr(key);
  return a && a->kind == Attribute::Float ? a->f : otherwise;
}
/// Integer values of a constant (shapes, axes, indices).
inline std::vector<int64_t> intsOf(const ConstTensor &t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numElements(); ++i)
    out.push_back(t.raw || isFloat(t.dtype) ? int64_t(t.at(i)) : t.ints[i]);
  return out;
}
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Reshape's target shape from ONNX's shape operand: 0 copies the input dim
/// (unless `allowZero`), -1 is inferred. Returns "" or why not.
std::string resolveReshape(const Shape &input, std::vector<int64_t> target,
                           bool allowZero, Shape &result);
/// Slice's normalized [lo, hi) and step per dim (negative and out-of-range
/// bounds clamped as ONNX defines; positive steps only). Returns "" or why.
std::string resolveSlice(const Shape &shape, const std::vector<int64_t> &starts,
                         const std::vector<int64_t> &ends,
                         std::vector<int64_t> axes, std::vector<int64_t> steps,
                         Shape &lo, Shape &hi, Shape &step);
/// "" when a constant of `shape` may be folded, else why not (negative
/// dims, too many elements to hold).
std::string checkFoldedSize(const Shape &shape);
/// The inputs an operator needs present ("" if it is not one Loom knows).
size_t requiredInputs(const std::string &opType);
/// Cast's `to`, when it is a type Loom has.
std::optional<DType> castTarget(const Node &node);

/// Rewrites the attention and exact-GELU patterns in `translator.ops`.
void fusePatterns(Translator &translator);

} // namespace mlir::loom::onnx_import

#endif // LOOM_LIB_TARGET_ONNX_TRANSLATOR_H
