//===- Translator.cpp - ONNX graph to graph JSON --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Translates a read ONNX model (OnnxModel.h) into a graph-JSON document:
//
//   1. initializers: those that reach a computation on the data inputs
//      through floating-point values, not through a Slice (a buffer
//      table's lookup), are the trainable parameters (their names kept);
//      the others (a causal-mask buffer, sinusoidal or RoPE tables, shape
//      constants) are constants. The user's options name exceptions. An
//      `Identity` of an initializer under another name (the exporter's
//      de-duplication of equal-valued parameters) is a parameter of its own
//      with the same initial value, as it was in the model;
//   2. graph inputs that are not initializers are the data inputs; their
//      shapes must be static;
//   3. every node's op type is checked first, so all unsupported nodes are
//      reported at once; then each node is folded (all inputs constant,
//      ConstantFolding.cpp) or mapped (OpMappings.cpp);
//   4. patterns are fused (Fusions.cpp: attention, GELU, LayerNorm, RMSNorm);
//   5. the loss is the rank-0 floating-point graph output; ops it does not
//      use are dropped; data inputs get their roles from their use (token
//      ids of an embedding, labels of the loss).
//
//===----------------------------------------------------------------------===//

#include "Translator.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace mlir::loom::onnx_import;
using json = nlohmann::json;

int64_t mlir::loom::onnx_import::numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string mlir::loom::onnx_import::shapeText(const Shape &shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

bool mlir::loom::onnx_import::broadcastShapes(const Shape &a, const Shape &b,
                                              Shape &result) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return false;
    out[i] = x == 1 ? y : x;
  }
  result = out;
  return true;
}

//===----------------------------------------------------------------------===//
// Values and ops
//===----------------------------------------------------------------------===//

Translator::Operand Translator::operand(const Node &node, size_t index) const {
  Operand x;
  if (index >= node.inputs.size() || node.inputs[index].empty())
    return x;
  const std::string &name = node.inputs[index];
  if (auto it = constants.find(name); it != constants.end())
    x.constant = &it->second;
  else if (auto it = symbols.find(name); it != symbols.end())
    x.id = it->second;
  return x;
}

const Shape &Translator::shapeOf(const Operand &x) const {
  return x.constant ? x.constant->shape : values[x.id].shape;
}

DType Translator::dtypeOf(const Operand &x) const {
  return x.constant ? x.constant->dtype : values[x.id].dtype;
}

int Translator::constant(ConstTensor tensor) {
  constantStore.push_back(std::make_unique<ConstTensor>(std::move(tensor)));
  const ConstTensor *stored = constantStore.back().get();
  int id = emit1("constant", {}, stored->shape, stored->dtype);
  ops.back().value = stored;
  return id;
}

int Translator::scalar(double value, DType dtype) {
  ConstTensor t;
  t.dtype = dtype;
  if (isFloat(dtype))
    t.floats = {value};
  else
    t.ints = {int64_t(value)};
  return constant(std::move(t));
}

int Translator::valueOf(const Operand &x, std::optional<DType> like) {
  if (x.id >= 0)
    return x.id;
  ConstTensor t = *x.constant;
  if (like && isFloat(*like) && t.dtype != *like) {
    // ONNX's binary ops take one element type; a constant of another float
    // type (or an integer literal) is converted to the tensor's.
    if (!isFloat(t.dtype)) {
      t.floats.assign(t.ints.begin(), t.ints.end());
      t.ints.clear();
    }
    t.dtype = *like;
  }
  return constant(std::move(t));
}

std::vector<int> Translator::emit(const std::string &op,
                                  std::vector<int> operands,
                                  std::vector<Shape> resultShapes, DType dtype,
                                  json attributes) {
  LoomOp loomOp;
  loomOp.op = op;
  loomOp.operands = std::move(operands);
  loomOp.attributes = std::move(attributes);
  loomOp.origin = currentOrigin;
  int def = ops.size();
  for (Shape &shape : resultShapes) {
    LoomValue v;
    v.shape = std::move(shape);
    v.dtype = dtype;
    v.def = def;
    v.name = "%" + std::to_string(values.size());
    loomOp.results.push_back(values.size());
    values.push_back(std::move(v));
  }
  loomOp.position = def;
  ops.push_back(std::move(loomOp));
  return ops.back().results;
}

std::vector<int> Translator::insertBefore(size_t before, const std::string &op,
                                          std::vector<int> operands,
                                          std::vector<Shape> resultShapes,
                                          DType dtype,
                                          nlohmann::json attributes) {
  double position = ops[before].position;
  std::vector<int> results =
      emit(op, std::move(operands), std::move(resultShapes), dtype,
           std::move(attributes));
  // Between the previous op and `before`, after any op inserted there
  // earlier (positions of emitted ops are whole numbers).
  ops.back().position = position - 0.5 + 1e-6 * (++insertions);
  return results;
}

void Translator::define(const Node &node, size_t index, int id) {
  if (index < node.outputs.size() && !node.outputs[index].empty())
    symbols[node.outputs[index]] = id;
}

void Translator::defineConstant(const std::string &name, ConstTensor tensor) {
  constants[name] = std::move(tensor);
}

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

/// Nodes whose outputs are folded whatever their inputs are: a shape is
/// known statically.
static bool isShapeQuery(const Node &node) {
  return node.opType == "Shape" || node.opType == "Size";
}

bool Translator::isParameterCopy(const Node &node) const {
  return node.opType == "Identity" && node.outputs.size() == 1 &&
         node.inputs.size() == 1 && initializers.count(node.outputs[0]) &&
         initializers.count(node.inputs[0]);
}

void Translator::classifyInitializers() {
  for (const auto &[name, tensor] : model.initializers)
    initializers[name] = &tensor;
  // The exporter's de-duplication: `ln_f.weight = Identity(h.0.ln_1.weight)`.
  identityCopies.reserve(model.nodes.size());
  for (const Node &node : model.nodes)
    if (node.opType == "Identity" && node.inputs.size() == 1 &&
        node.outputs.size() == 1 && initializers.count(node.inputs[0]) &&
        !initializers.count(node.outputs[0])) {
      identityCopies.push_back(*initializers[node.inputs[0]]);
      initializers[node.outputs[0]] = &identityCopies.back();
    }

  // Which values depend on the data inputs, and which float initializers
  // feed a non-data value through floats (the mask buffer stops at its
  // comparison; a weight reaches the data at its matmul). A Slice of an
  // initializer is a table lookup (`pe[:T]`, `cos_cached[:, :, :T]`): what
  // it yields is a window of a buffer, so the chain ends there too
  // (docs/Frontends.md, "Parameters and buffers").
  std::set<std::string> dynamic;
  for (const ValueInfo &input : model.inputs)
    if (!initializers.count(input.name))
      dynamic.insert(input.name);
  std::map<std::string, std::set<std::string>> sources;
  for (const auto &[name, tensor] : initializers)
    if (isFloat(tensor->dtype))
      sources[name] = {name};
  for (const Node &node : model.nodes) {
    if (isShapeQuery(node) || isParameterCopy(node))
      continue;
    bool isDynamic = false;
    std::set<std::string> feeding;
    for (const std::string &input : node.inputs) {
      isDynamic |= dynamic.count(input) > 0;
      if (auto it = sources.find(input); it != sources.end())
        feeding.insert(it->second.begin(), it->second.end());
    }
    if (isDynamic) {
      trainable.insert(feeding.begin(), feeding.end());
      for (const std::string &output : node.outputs)
        dynamic.insert(output);
      continue;
    }
    if (feeding.empty())
      continue;
    // Which outputs are floats is only known after folding; Equal, Less,
    // Greater, Not, And, Or, Shape and casts to integers end the chain.
    static const std::set<std::string> nonFloat = {
        "Equal", "Less",        "Greater",        "Not",    "And",
        "Or",    "LessOrEqual", "GreaterOrEqual", "ArgMax", "ArgMin"};
    if (nonFloat.count(node.opType) || node.opType == "Slice")
      continue;
    if (node.opType == "Cast") {
      std::optional<DType> to = castTarget(node);
      if (!to || !isFloat(*to))
        continue;
    }
    for (const std::string &output : node.outputs)
      sources[output] = feeding;
  }
  // The user's word over the rule (loomc / loom-translate
  // --onnx-constants, --onnx-parameters; checked in checkOverrides).
  for (const std::string &name : options.constants)
    trainable.erase(name);
  for (const std::string &name : options.parameters)
    if (auto it = initializers.find(name);
        it != initializers.end() && isFloat(it->second->dtype))
      trainable.insert(name);
}

bool Translator::checkOverrides(std::vector<std::string> &errors) const {
  std::set<std::string> constants(options.constants.begin(),
                                  options.constants.end());
  auto check = [&](const std::vector<std::string> &names, const char *flag,
                   bool parameter) {
    for (const std::string &name : names) {
      auto it = initializers.find(name);
      if (it == initializers.end())
        errors.push_back(std::string(flag) + " names '" + name +
                         "', which is not an initializer of the model");
      else if (parameter && !isFloat(it->second->dtype))
        errors.push_back(std::string(flag) + " names '" + name +
                         "', an initializer of element type " +
                         dtypeName(it->second->dtype) +
                         "; parameters are floating-point");
      else if (parameter && constants.count(name))
        errors.push_back("'" + name +
                         "' is named by both --onnx-constants and "
                         "--onnx-parameters");
    }
  };
  check(options.constants, "--onnx-constants", false);
  check(options.parameters, "--onnx-parameters", true);
  return errors.empty();
}

bool Translator::declareInputs(std::vector<std::string> &errors) {
  // Parameters in the file's initializer order, then the de-duplicated
  // copies (function arguments follow the order of declaration).
  std::vector<std::string> order;
  for (const auto &[name, tensor] : model.initializers)
    order.push_back(name);
  for (const Node &node : model.nodes)
    if (node.opType == "Identity" && node.outputs.size() == 1 &&
        initializers.count(node.outputs[0]) &&
        std::find(order.begin(), order.end(), node.outputs[0]) == order.end())
      order.push_back(node.outputs[0]);
  for (const std::string &name : order) {
    const ConstTensor *tensor = initializers[name];
    if (!trainable.count(name)) {
      // A constant is folded: decode it (parameters stay raw).
      ConstTensor &constant = constants[name] = *tensor;
      constant.materialize();
      continue;
    }
    LoomValue v;
    v.name = name;
    v.shape = tensor->shape;
    v.dtype = tensor->dtype;
    v.isParameter = true;
    symbols[name] = values.size();
    values.push_back(std::move(v));
    parameterData[values.size() - 1] = tensor;
  }
  for (const ValueInfo &input : model.inputs) {
    if (initializers.count(input.name))
      continue;
    if (!input.dtype) {
      errors.push_back("graph input '" + input.name + "' has element type " +
                       input.dtypeText + ", which Loom lacks");
      continue;
    }
    bool isStatic = input.hasShape;
    for (int64_t d : input.shape)
      isStatic &= d >= 0;
    if (!isStatic) {
      std::string dims;
      for (size_t d = 0; d < input.shape.size(); ++d)
        dims += (d ? ", " : "") + (input.shape[d] < 0
                                       ? std::string("?")
                                       : std::to_string(input.shape[d]));
      errors.push_back("graph input '" + input.name +
                       "' has a dynamic shape [" + dims +
                       "]: Loom graphs have static shapes (export "
                       "without dynamic_axes)");
      continue;
    }
    LoomValue v;
    v.name = input.name;
    v.shape = input.shape;
    v.dtype = *input.dtype;
    symbols[input.name] = values.size();
    values.push_back(std::move(v));
  }
  return errors.empty();
}

bool Translator::translateNodes(std::vector<std::string> &errors) {
  const auto &mappings = getMappings();
  const auto &folders = getFolders();
  // Unsupported op types first, all of them.
  for (const Node &node : model.nodes) {
    bool known = (node.domain.empty() || node.domain == "ai.onnx") &&
                 (mappings.count(node.opType) || folders.count(node.opType) ||
                  isShapeQuery(node));
    if (!known)
      errors.push_back(
          node.describe() + ": unsupported operator" +
          (node.domain.empty() ? "" : " (domain '" + node.domain + "')"));
  }
  if (!errors.empty())
    return false;

  std::set<std::string> failed; // outputs of nodes that could not be mapped
  for (const Node &node : model.nodes) {
    if (isParameterCopy(node))
      continue; // a de-duplicated parameter, declared above
    currentOrigin = node.describe();
    // Arity first: a node without the inputs its operator needs (or, for
    // Concat, with an absent one) is reported, never read past its end.
    size_t required = node.opType == "Concat"
                          ? std::max<size_t>(node.inputs.size(), 1)
                          : requiredInputs(node.opType);
    bool complete = node.inputs.size() >= required && !node.outputs.empty() &&
                    !node.outputs[0].empty();
    for (size_t i = 0; complete && i < required; ++i)
      complete = !node.inputs[i].empty();
    if (!complete) {
      errors.push_back(node.describe() + ": expected at least " +
                       std::to_string(required) +
                       " input(s) and an output, "
                       "found " +
                       std::to_string(node.inputs.size()) + " input(s) and " +
                       std::to_string(node.outputs.size()) + " output(s)");
      failed.insert(node.outputs.begin(), node.outputs.end());
      continue;
    }
    bool skip = false, allConstant = true;
    std::vector<const ConstTensor *> inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string &name = node.inputs[i];
      if (name.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      if (failed.count(name)) {
        skip = true;
        break;
      }
      Operand x = operand(node, i);
      if (!x.present()) {
        errors.push_back(node.describe() + ": input '" + name +
                         "' is not defined (or is an output Loom does not "
                         "produce, such as a dropout mask or a "
                         "normalization's saved statistics)");
        skip = true;
        break;
      }
      allConstant &= x.constant != nullptr;
      inputs.push_back(x.constant);
    }
    if (skip) {
      failed.insert(node.outputs.begin(), node.outputs.end());
      continue;
    }
    std::string why;
    if (isShapeQuery(node) && operand(node, 0).id >= 0) {
      // The shape of a symbolic value is static: fold it on a stand-in.
      Operand x = operand(node, 0);
      ConstTensor standIn;
      standIn.shape = values[x.id].shape;
      standIn.dtype = DType::I1;
      if (node.opType == "Size") {
        standIn.shape = {};
        standIn.dtype = DType::I64;
        standIn.ints = {numElements(values[x.id].shape)};
        constants[node.outputs[0]] = standIn;
        continue;
      }
      std::vector<ConstTensor> out;
      why = folders.at("Shape")(node, {&standIn}, out);
      if (why.empty())
        constants[node.outputs[0]] = std::move(out[0]);
    } else if (allConstant || isShapeQuery(node)) {
      auto folder = folders.find(node.opType);
      std::vector<ConstTensor> out;
      if (folder == folders.end())
        why = "cannot be computed at import time (all its inputs are "
              "constants and Loom folds only shape and mask arithmetic)";
      else
        why = folder->second(node, inputs, out);
      for (size_t i = 0;
           why.empty() && i < out.size() && i < node.outputs.size(); ++i)
        if (!node.outputs[i].empty())
          constants[node.outputs[i]] = std::move(out[i]);
    } else {
      auto mapping = mappings.find(node.opType);
      if (mapping == mappings.end())
        why = "only supported on constant inputs (it is folded at import "
              "time), but an input is computed from the model's inputs or "
              "parameters";
      else
        why = mapping->second(*this, node);
    }
    if (!why.empty()) {
      errors.push_back(node.describe() + ": " + why);
      failed.insert(node.outputs.begin(), node.outputs.end());
    }
  }
  return errors.empty();
}

bool Translator::chooseLoss(int &loss, std::vector<std::string> &errors) {
  std::vector<std::string> candidates;
  for (const ValueInfo &output : model.outputs) {
    auto it = symbols.find(output.name);
    if (it == symbols.end())
      continue;
    const LoomValue &v = values[it->second];
    if (v.shape.empty() && isFloat(v.dtype)) {
      candidates.push_back(output.name);
      loss = it->second;
    }
  }
  if (candidates.size() == 1)
    return true;
  std::string outputs;
  for (const ValueInfo &output : model.outputs)
    outputs += (outputs.empty() ? "'" : ", '") + output.name + "'";
  errors.push_back(
      candidates.empty()
          ? "no graph output is a rank-0 floating-point loss computed from "
            "the inputs (outputs: " +
                outputs +
                "); export the model with "
                "its loss as an output"
          : "several graph outputs are rank-0 floating-point tensors (" +
                outputs +
                "); export the model with the loss as its only "
                "scalar output");
  return false;
}

bool Translator::assignRoles(std::vector<std::string> &errors) {
  // Data inputs reach their ops directly or through reshapes and
  // transposes (the encoder LM embeds `src.t()`).
  std::map<int, std::vector<std::pair<const LoomOp *, size_t>>> users;
  for (const LoomOp &op : ops)
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (op.operands[i] >= 0)
        users[op.operands[i]].push_back({&op, i});
  for (size_t id = 0; id < values.size(); ++id) {
    LoomValue &v = values[id];
    if (v.def >= 0 || v.isParameter || !live[id])
      continue;
    std::set<std::string> roles;
    std::vector<int> work = {int(id)};
    while (!work.empty()) {
      int x = work.back();
      work.pop_back();
      for (auto [op, index] : users[x]) {
        if (!liveOps[op - ops.data()])
          continue;
        if (op->op == "reshape" || op->op == "transpose")
          work.push_back(op->results[0]);
        else if (op->op == "embedding" && index == 1)
          roles.insert(v.name.find("pos") != std::string::npos ? "positions"
                                                               : "input_ids");
        else if (op->op == "cross_entropy" && index == 1)
          roles.insert("labels");
        else
          roles.insert("?" + op->op);
      }
    }
    if (roles.size() != 1 || roles.begin()->front() == '?') {
      std::string uses;
      for (const std::string &r : roles)
        uses += (uses.empty() ? "" : ", ") +
                (r.front() == '?' ? "an operand of " + r.substr(1) : r);
      errors.push_back("graph input '" + v.name + "' is used as " + uses +
                       "; Loom's data inputs are token ids (of an embedding) "
                       "and labels (of the loss)");
      continue;
    }
    v.role = *roles.begin();
  }
  std::set<std::string> taken;
  for (const LoomValue &v : values)
    if (!v.role.empty() && !taken.insert(v.role).second)
      errors.push_back("two graph inputs have the role " + v.role +
                       "; Loom's data inputs are one of each");
  return errors.empty();
}

/// Drops what the loss does not use.
void Translator::markLive(int loss) {
  live.assign(values.size(), false);
  liveOps.assign(ops.size(), false);
  std::vector<int> work = {loss};
  live[loss] = true;
  while (!work.empty()) {
    int x = work.back();
    work.pop_back();
    int def = values[x].def;
    if (def < 0 || liveOps[def])
      continue;
    liveOps[def] = true;
    for (int operand : ops[def].operands)
      if (operand >= 0 && !live[operand]) {
        live[operand] = true;
        work.push_back(operand);
      }
  }
}

static json elementJson(double value, DType dtype) {
  if (!isFloat(dtype))
    return dtype == DType::I1 ? json(value != 0) : json(int64_t(value));
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return value;
}

/// The graph-JSON initializer of a parameter: `ones` / `zeros` when its data
/// holds only that, else N(0, 0.02) (the PyTorch frontend's rule; the file's
/// values are the model's weights, given at run time or in a checkpoint).
static json initializerJson(const ConstTensor &data) {
  bool ones = true, zeros = true;
  int64_t n = data.numElements();
  for (int64_t i = 0; i < n && (ones || zeros); ++i) {
    double v = data.at(i);
    ones &= v == 1.0;
    zeros &= v == 0.0;
  }
  if (n > 0 && ones)
    return {{"kind", "ones"}};
  if (n > 0 && zeros)
    return {{"kind", "zeros"}};
  return {{"kind", "normal"}, {"std", 0.02}};
}

json Translator::writeDocument(int loss) {
  json tensors = json::array(), parameters = json::array(),
       inputs = json::array(), opsJson = json::array();
  auto declare = [&](const LoomValue &v) {
    tensors.push_back(
        {{"name", v.name}, {"shape", v.shape}, {"dtype", dtypeName(v.dtype)}});
  };
  for (size_t id = 0; id < values.size(); ++id) {
    const LoomValue &v = values[id];
    if (v.def >= 0 || !live[id])
      continue;
    declare(v);
    if (v.isParameter)
      parameters.push_back({{"tensor", v.name},
                            {"name", v.name},
                            {"init", initializerJson(*parameterData[id])},
                            // nanoGPT's grouping: decay on matrices.
                            {"decay", v.shape.size() >= 2}});
    else
      inputs.push_back({{"tensor", v.name}, {"role", v.role}});
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < ops.size(); ++i)
    if (liveOps[i])
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ops[a].position < ops[b].position;
  });
  for (size_t i : order) {
    const LoomOp &op = ops[i];
    json entry = {{"op", op.op}};
    json operands = json::array();
    for (int x : op.operands)
      operands.push_back(x < 0 ? json(nullptr) : json(values[x].name));
    if (!operands.empty())
      entry["operands"] = operands;
    json results = json::array();
    for (int r : op.results) {
      declare(values[r]);
      results.push_back(values[r].name);
    }
    entry["results"] = results;
    json attrs = op.attributes;
    if (op.op == "constant") {
      const ConstTensor &t = *op.value;
      bool splat = true;
      for (int64_t k = 1; k < t.numElements() && splat; ++k)
        splat =
            t.at(k) == t.at(0) || (std::isnan(t.at(k)) && std::isnan(t.at(0)));
      if (splat && t.numElements() > 0) {
        attrs["value"] = elementJson(t.at(0), t.dtype);
      } else {
        json list = json::array();
        for (int64_t k = 0; k < t.numElements(); ++k)
          list.push_back(elementJson(t.at(k), t.dtype));
        attrs["value"] = list;
      }
    }
    if (!attrs.empty())
      entry["attributes"] = attrs;
    opsJson.push_back(entry);
  }
  return {{"format", "loom-graph"},
          {"version", 1},
          {"tensors", tensors},
          {"parameters", parameters},
          {"inputs", inputs},
          {"ops", opsJson},
          {"outputs", json::array({values[loss].name})}};
}

bool Translator::run(json &doc, std::vector<std::string> &errors) {
  classifyInitializers();
  if (!checkOverrides(errors) || !declareInputs(errors) ||
      !translateNodes(errors))
    return false;
  fusePatterns(*this);
  int loss = -1;
  if (!chooseLoss(loss, errors))
    return false;
  markLive(loss);
  for (size_t i = 0; i < ops.size(); ++i)
    if (liveOps[i] && ops[i].op == "erf")
      errors.push_back(ops[i].origin +
                       ": Erf outside the exact-GELU pattern `0.5 * x * (1 + "
                       "erf(x / sqrt(2)))` (Loom has no erf op)");
  if (!errors.empty() || !assignRoles(errors))
    return false;
  // Tensor names: ONNX's names where a value has one, else generated ones
  // that cannot clash (ONNX names are kept verbatim).
  for (const auto &[name, id] : symbols)
    if (values[id].def >= 0 && values[id].name.front() == '%')
      values[id].name = name;
  std::set<std::string> used;
  for (LoomValue &v : values) {
    std::string base = v.name;
    for (int k = 1; !used.insert(v.name).second; ++k)
      v.name = base + "#" + std::to_string(k);
  }
  doc = writeDocument(loss);
  return true;
}
