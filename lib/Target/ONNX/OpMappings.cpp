//===- OpMappings.cpp - One translation per ONNX operator -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The ONNX operators a Transformer exported by `torch.onnx.export` (opsets
// 14-17) uses, each translated into `loom` ops when at least one input is
// symbolic (ConstantFolding.cpp computes the others). A mapping returns ""
// or says which form it does not handle; docs/Frontends.md ("ONNX") lists
// them and how to add one.
//
// Secondary outputs Loom does not compute (Dropout's mask, LayerNorm's
// saved statistics, the loss's log-probabilities) are left undefined: a
// node that uses one is reported as using an undefined input.
//
// A few mappings look at the op that produced an operand, so that the IR
// says what the model means rather than how the exporter spelled it:
// MatMul folds a transpose of its operand's last two dims into the
// `transpose_lhs`/`transpose_rhs` flags (nn.Linear exports Transpose(W) ->
// MatMul); Transpose composes with a producing transpose; the cross-entropy
// losses look through the flattening reshapes of logits and labels, so the
// loss sees `[B, T, V]` and the batch dim stays visible to the search.
//
//===----------------------------------------------------------------------===//

#include "Translator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>

using namespace mlir::loom::onnx_import;
using json = nlohmann::json;

namespace {
using Operand = Translator::Operand;

std::string describeOperands(Translator &tr, const Node &node) {
  std::string text;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    Operand x = tr.operand(node, i);
    if (!x.present())
      continue;
    text += std::string(text.empty() ? "" : ", ") + shapeText(tr.shapeOf(x));
  }
  return text;
}

/// A scalar constant operand's value, if it is one (any rank, one element).
std::optional<double> scalarOf(const Operand &x) {
  if (x.constant && x.constant->numElements() == 1)
    return x.constant->at(0);
  return std::nullopt;
}

/// The common float dtype of a node's operands (the symbolic one's).
DType symbolicDType(Translator &tr, const Node &node) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    Operand x = tr.operand(node, i);
    if (x.id >= 0)
      return tr.values[x.id].dtype;
  }
  return tr.dtypeOf(tr.operand(node, 0));
}

std::string binary(Translator &tr, const Node &node, const char *mnemonic) {
  Operand a = tr.operand(node, 0), b = tr.operand(node, 1);
  DType dtype = symbolicDType(tr, node);
  Shape shape;
  if (!broadcastShapes(tr.shapeOf(a), tr.shapeOf(b), shape))
    return "operand shapes " + describeOperands(tr, node) + " do not broadcast";
  int lhs = tr.valueOf(a, dtype), rhs = tr.valueOf(b, dtype);
  tr.define(node, 0, tr.emit1(mnemonic, {lhs, rhs}, shape, dtype));
  return "";
}

Translator::Operand symbolicOperand(Translator &tr, const Node &node,
                                    size_t index, std::string &why) {
  Operand x = tr.operand(node, index);
  if (x.id < 0)
    why = "input " + std::to_string(index) + " must be computed from the " +
          "model's inputs or parameters";
  return x;
}

Mapping unary(std::string mnemonic) {
  return [mnemonic](Translator &tr, const Node &node) -> std::string {
    std::string why;
    Operand x = symbolicOperand(tr, node, 0, why);
    if (!why.empty())
      return why;
    const LoomValue &v = tr.values[x.id];
    if (!isFloat(v.dtype))
      return std::string("expected a floating-point input, found ") +
             dtypeName(v.dtype);
    tr.define(node, 0, tr.emit1(mnemonic, {x.id}, v.shape, v.dtype));
    return "";
  };
}

int reshape(Translator &tr, int x, const Shape &shape) {
  if (tr.values[x].shape == shape)
    return x;
  // Reshape of a reshape: one reshape of the original.
  if (LoomOp *p = tr.producer(x); p && p->op == "reshape")
    x = p->operands[0];
  if (tr.values[x].shape == shape)
    return x;
  return tr.emit1("reshape", {x}, shape, tr.values[x].dtype);
}

Shape permuted(const Shape &shape, const std::vector<int64_t> &perm) {
  Shape out;
  for (int64_t p : perm)
    out.push_back(shape[p]);
  return out;
}

bool isIdentity(const std::vector<int64_t> &perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i))
      return false;
  return true;
}

int transpose(Translator &tr, int x, std::vector<int64_t> perm) {
  // A transpose of a transpose is one transpose of the original.
  if (LoomOp *p = tr.producer(x); p && p->op == "transpose") {
    std::vector<int64_t> inner =
        p->attributes["permutation"].get<std::vector<int64_t>>();
    for (int64_t &d : perm)
      d = inner[d];
    x = p->operands[0];
  }
  if (isIdentity(perm))
    return x;
  return tr.emit1("transpose", {x}, permuted(tr.values[x].shape, perm),
                  tr.values[x].dtype, {{"permutation", perm}});
}

/// `x` as a matrix operand: when it is a transpose whose last two dims are
/// swapped, the value before that swap and `true` (the transpose flag).
std::pair<int, bool> matmulOperand(Translator &tr, int x) {
  LoomOp *p = tr.producer(x);
  if (!p || p->op != "transpose")
    return {x, false};
  std::vector<int64_t> perm =
      p->attributes["permutation"].get<std::vector<int64_t>>();
  size_t r = perm.size();
  // Worth it only when the input's last dim lands second to last (a weight
  // `W^T`, keys `k.transpose(-2, -1)` after the head transpose): then the
  // rest keeps the contiguous dim last.
  if (r < 2 || perm[r - 2] != int64_t(r - 1))
    return {x, false};
  std::swap(perm[r - 1], perm[r - 2]);
  // perm' = perm with its last two entries swapped; x = swap(transpose(in,
  // perm')): keep transpose(in, perm') (nothing when it is the identity).
  int in = p->operands[0];
  if (isIdentity(perm))
    return {in, true};
  int inner = tr.emit1("transpose", {in}, permuted(tr.values[in].shape, perm),
                       tr.values[in].dtype, {{"permutation", perm}});
  return {inner, true};
}

Shape matmulShape(const Shape &a, const Shape &b, bool ta, bool tb,
                  std::string &why) {
  size_t ra = a.size(), rb = b.size();
  if (ra < 2 || rb < 2) {
    why = "rank-1 operands are not supported (Loom's matmul takes matrices)";
    return {};
  }
  int64_t m = ta ? a[ra - 1] : a[ra - 2], k = ta ? a[ra - 2] : a[ra - 1];
  int64_t k2 = tb ? b[rb - 1] : b[rb - 2], n = tb ? b[rb - 2] : b[rb - 1];
  if (k != k2) {
    why = "contracted dims differ (" + std::to_string(k) + " vs " +
          std::to_string(k2) + ")";
    return {};
  }
  Shape batch;
  if (!broadcastShapes(Shape(a.begin(), a.end() - 2),
                       Shape(b.begin(), b.end() - 2), batch)) {
    why = "batch dims do not broadcast";
    return {};
  }
  batch.push_back(m);
  batch.push_back(n);
  return batch;
}

int matmul(Translator &tr, int a, int b, bool ta, bool tb, std::string &why) {
  auto [lhs, flipA] = matmulOperand(tr, a);
  auto [rhs, flipB] = matmulOperand(tr, b);
  ta ^= flipA;
  tb ^= flipB;
  Shape shape =
      matmulShape(tr.values[lhs].shape, tr.values[rhs].shape, ta, tb, why);
  if (!why.empty())
    return -1;
  json attrs = json::object();
  if (ta)
    attrs["transpose_lhs"] = true;
  if (tb)
    attrs["transpose_rhs"] = true;
  return tr.emit1("matmul", {lhs, rhs}, shape, tr.values[lhs].dtype, attrs);
}

std::string mapMatMul(Translator &tr, const Node &node) {
  DType dtype = symbolicDType(tr, node);
  if (!isFloat(dtype))
    return "integer MatMul is not supported";
  int a = tr.valueOf(tr.operand(node, 0), dtype);
  int b = tr.valueOf(tr.operand(node, 1), dtype);
  std::string why;
  int r = matmul(tr, a, b, false, false, why);
  if (r < 0)
    return why;
  tr.define(node, 0, r);
  return "";
}

std::string mapGemm(Translator &tr, const Node &node) {
  DType dtype = symbolicDType(tr, node);
  int a = tr.valueOf(tr.operand(node, 0), dtype);
  int b = tr.valueOf(tr.operand(node, 1), dtype);
  std::string why;
  int r = matmul(tr, a, b, attrInt(node, "transA", 0),
                 attrInt(node, "transB", 0), why);
  if (r < 0)
    return why;
  double alpha = attrFloat(node, "alpha", 1.0),
         beta = attrFloat(node, "beta", 1.0);
  if (alpha != 1.0)
    r = tr.emit1("scale", {r}, tr.values[r].shape, dtype, {{"factor", alpha}});
  Operand c = tr.operand(node, 2);
  if (c.present() && beta != 0.0) {
    int cv = tr.valueOf(c, dtype);
    if (beta != 1.0)
      cv = tr.emit1("scale", {cv}, tr.values[cv].shape, dtype,
                    {{"factor", beta}});
    Shape shape;
    if (!broadcastShapes(tr.values[r].shape, tr.values[cv].shape, shape))
      return "C does not broadcast to the product";
    r = tr.emit1("add", {r, cv}, shape, dtype);
  }
  tr.define(node, 0, r);
  return "";
}

std::string mapPow(Translator &tr, const Node &node) {
  std::string why;
  Operand x = symbolicOperand(tr, node, 0, why);
  std::optional<double> e = scalarOf(tr.operand(node, 1));
  if (!why.empty() || !e)
    return "only a symbolic base with a constant scalar exponent is supported";
  const LoomValue v = tr.values[x.id];
  int r;
  if (*e == 1.0)
    r = x.id;
  else if (*e == 2.0)
    r = tr.emit1("mul", {x.id, x.id}, v.shape, v.dtype);
  else if (*e == 3.0)
    r = tr.emit1("mul", {tr.emit1("mul", {x.id, x.id}, v.shape, v.dtype), x.id},
                 v.shape, v.dtype);
  else if (*e == 0.5)
    r = tr.emit1("sqrt", {x.id}, v.shape, v.dtype);
  else if (*e == -0.5)
    r = tr.emit1("rsqrt", {x.id}, v.shape, v.dtype);
  else if (*e == -1.0)
    r = tr.emit1("div", {tr.scalar(1.0, v.dtype), x.id}, v.shape, v.dtype);
  else
    return "exponent " + std::to_string(*e) +
           " (supported: 1, 2, 3, 0.5, -0.5, -1)";
  tr.define(node, 0, r);
  return "";
}

std::string mapReciprocal(Translator &tr, const Node &node) {
  std::string why;
  Operand x = symbolicOperand(tr, node, 0, why);
  if (!why.empty())
    return why;
  const LoomValue v = tr.values[x.id];
  tr.define(node, 0,
            tr.emit1("div", {tr.scalar(1.0, v.dtype), x.id}, v.shape, v.dtype));
  return "";
}

std::string mapIdentity(Translator &tr, const Node &node) {
  tr.define(node, 0, tr.valueOf(tr.operand(node, 0)));
  return "";
}

std::string mapDropout(Translator &tr, const Node &node) {
  std::string why;
  Operand x = symbolicOperand(tr, node, 0, why);
  if (!why.empty())
    return why;
  double ratio = attrFloat(node, "ratio", 0.5); // opset < 12
  if (std::optional<double> r = scalarOf(tr.operand(node, 1)))
    ratio = *r;
  else if (tr.operand(node, 1).id >= 0)
    return "the ratio must be a constant";
  bool training = false;
  if (std::optional<double> t = scalarOf(tr.operand(node, 2)))
    training = *t != 0;
  else if (tr.operand(node, 2).id >= 0)
    return "training_mode must be a constant";
  if (!training || ratio == 0.0) {
    tr.define(node, 0, x.id);
    return "";
  }
  const LoomValue v = tr.values[x.id];
  tr.define(node, 0,
            tr.emit1("dropout", {x.id}, v.shape, v.dtype,
                     {{"rate", ratio}, {"seed", 0}}));
  return "";
}

std::string mapCast(Translator &tr, const Node &node) {
  std::optional<DType> to = castTarget(node);
  if (!to)
    return "cast to an element type Loom lacks";
  int x = tr.valueOf(tr.operand(node, 0));
  const LoomValue v = tr.values[x];
  tr.define(node, 0, v.dtype == *to ? x : tr.emit1("cast", {x}, v.shape, *to));
  return "";
}

/// The ids of an embedding lookup are symbolic; a constant index set of a
/// parameter table is a slice when it is 0..n-1 (nanoGPT's `wpe(arange(T))`)
/// and an embedding of constant ids otherwise.
std::string mapGather(Translator &tr, const Node &node) {
  Operand data = tr.operand(node, 0), indices = tr.operand(node, 1);
  if (data.id < 0)
    return "gathering from a constant table with computed indices is not "
           "supported";
  const LoomValue table = tr.values[data.id];
  int64_t rank = table.shape.size();
  int64_t axis = normalizeAxis(attrInt(node, "axis", 0), rank);
  if (axis < 0 || axis >= rank)
    return "axis out of range";
  if (indices.constant) {
    std::vector<int64_t> idx = intsOf(*indices.constant);
    int64_t n = table.shape[axis];
    for (int64_t &k : idx)
      if (k < 0)
        k += n;
    bool iota = !idx.empty();
    for (size_t i = 0; i < idx.size(); ++i)
      iota &= idx[i] == int64_t(i);
    if (iota || idx.size() == 1) {
      Shape starts(rank, 0), limits = table.shape, strides(rank, 1);
      starts[axis] = idx[0];
      limits[axis] = idx[0] + int64_t(idx.size());
      if (limits[axis] > n)
        return "index out of range";
      Shape sliced = limits;
      sliced[axis] = idx.size();
      int r = data.id;
      if (sliced != table.shape)
        r = tr.emit1(
            "slice", {data.id}, sliced, table.dtype,
            {{"starts", starts}, {"limits", limits}, {"strides", strides}});
      Shape result(table.shape.begin(), table.shape.begin() + axis);
      result.insert(result.end(), indices.constant->shape.begin(),
                    indices.constant->shape.end());
      result.insert(result.end(), table.shape.begin() + axis + 1,
                    table.shape.end());
      tr.define(node, 0, reshape(tr, r, result));
      return "";
    }
  }
  if (axis != 0 || rank != 2)
    return "only row lookups in a rank-2 table (an embedding) are supported, "
           "found axis " +
           std::to_string(axis) + " of " + shapeText(table.shape);
  int ids = tr.valueOf(indices);
  if (tr.values[ids].dtype != DType::I64 && tr.values[ids].dtype != DType::I32)
    return "indices must be int64 or int32";
  Shape result = tr.values[ids].shape;
  result.push_back(table.shape[1]);
  tr.define(node, 0,
            tr.emit1("embedding", {data.id, ids}, result, table.dtype));
  return "";
}

std::string constantInts(Translator &tr, const Node &node, size_t index,
                         std::vector<int64_t> &out) {
  Operand x = tr.operand(node, index);
  if (!x.constant)
    return "input " + std::to_string(index) +
           " must be constant (Loom shapes are static; it is computed from "
           "data)";
  out = intsOf(*x.constant);
  return "";
}

std::string mapReshape(Translator &tr, const Node &node) {
  std::vector<int64_t> target;
  if (std::string why = constantInts(tr, node, 1, target); !why.empty())
    return why;
  int x = tr.valueOf(tr.operand(node, 0));
  Shape shape;
  if (std::string why = resolveReshape(tr.values[x].shape, target,
                                       attrInt(node, "allowzero", 0), shape);
      !why.empty())
    return why;
  tr.define(node, 0, reshape(tr, x, shape));
  return "";
}

std::string mapFlatten(Translator &tr, const Node &node) {
  int x = tr.valueOf(tr.operand(node, 0));
  const Shape &s = tr.values[x].shape;
  int64_t axis = normalizeAxis(attrInt(node, "axis", 1), s.size()), a = 1,
          b = 1;
  for (int64_t d = 0; d < int64_t(s.size()); ++d)
    (d < axis ? a : b) *= s[d];
  tr.define(node, 0, reshape(tr, x, {a, b}));
  return "";
}

std::string mapUnsqueezeSqueeze(Translator &tr, const Node &node) {
  // Computed on a stand-in constant by the folder, which knows both ops'
  // axis rules.
  int x = tr.valueOf(tr.operand(node, 0));
  ConstTensor shapeOnly;
  shapeOnly.shape = tr.values[x].shape;
  shapeOnly.dtype = DType::I1;
  shapeOnly.ints.assign(numElements(shapeOnly.shape), 0);
  std::vector<const ConstTensor *> in = {&shapeOnly};
  if (node.inputs.size() > 1) {
    Operand axes = tr.operand(node, 1);
    if (axes.id >= 0)
      return "axes must be constant";
    in.push_back(axes.constant);
  }
  std::vector<ConstTensor> out;
  if (std::string why = getFolders().at(node.opType)(node, in, out);
      !why.empty())
    return why;
  tr.define(node, 0, reshape(tr, x, out[0].shape));
  return "";
}

std::string mapTranspose(Translator &tr, const Node &node) {
  int x = tr.valueOf(tr.operand(node, 0));
  std::vector<int64_t> perm = attrInts(node, "perm");
  int64_t rank = tr.values[x].shape.size();
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  if (int64_t(perm.size()) != rank || !isIdentity(sorted))
    return "perm is not a permutation of the input's dims";
  tr.define(node, 0, transpose(tr, x, perm));
  return "";
}

std::string mapSplit(Translator &tr, const Node &node) {
  int x = tr.valueOf(tr.operand(node, 0));
  const Shape shape = tr.values[x].shape;
  int64_t axis = normalizeAxis(attrInt(node, "axis", 0), shape.size());
  if (axis < 0 || axis >= int64_t(shape.size()))
    return "axis out of range";
  std::vector<int64_t> sizes = attrInts(node, "split");
  if (node.inputs.size() > 1 && !node.inputs[1].empty())
    if (std::string why = constantInts(tr, node, 1, sizes); !why.empty())
      return why;
  int64_t pieces = node.outputs.size();
  if (sizes.empty()) {
    int64_t n = shape[axis], each = (n + pieces - 1) / pieces;
    for (int64_t i = 0; i < pieces; ++i)
      sizes.push_back(std::min(each, n - i * each));
  }
  if (int64_t(sizes.size()) != pieces ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != shape[axis])
    return "the split sizes do not add up to dim " + std::to_string(axis) +
           " (size " + std::to_string(shape[axis]) + ")";
  std::vector<Shape> shapes;
  for (int64_t s : sizes) {
    Shape piece = shape;
    piece[axis] = s;
    shapes.push_back(piece);
  }
  std::vector<int> results = tr.emit("split", {x}, shapes, tr.values[x].dtype,
                                     {{"axis", axis}, {"sizes", sizes}});
  for (size_t i = 0; i < results.size(); ++i)
    tr.define(node, i, results[i]);
  return "";
}

/// A contiguous slice along one dim is the middle piece of a `split` (as the
/// PyTorch frontend does: sizes along one axis survive micro-batching);
/// anything else is a `loom.slice`.
std::string mapSlice(Translator &tr, const Node &node) {
  int x = tr.valueOf(tr.operand(node, 0));
  const Shape shape = tr.values[x].shape;
  std::vector<int64_t> starts, ends, axes, steps;
  std::pair<size_t, std::vector<int64_t> *> parts[] = {
      {1, &starts}, {2, &ends}, {3, &axes}, {4, &steps}};
  for (auto [index, out] : parts) {
    if (index >= node.inputs.size() || node.inputs[index].empty())
      continue;
    if (std::string why = constantInts(tr, node, index, *out); !why.empty())
      return why;
  }
  Shape lo, hi, step;
  if (std::string why =
          resolveSlice(shape, starts, ends, axes, steps, lo, hi, step);
      !why.empty())
    return why;
  std::vector<int64_t> cut;
  bool strided = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (lo[d] != 0 || hi[d] != shape[d] || step[d] != 1)
      cut.push_back(d);
    strided |= step[d] != 1;
  }
  if (cut.empty()) {
    tr.define(node, 0, x);
    return "";
  }
  if (cut.size() == 1 && !strided) {
    int64_t d = cut[0];
    std::vector<int64_t> sizes;
    int64_t index = 0;
    if (lo[d] > 0) {
      sizes.push_back(lo[d]);
      index = 1;
    }
    sizes.push_back(hi[d] - lo[d]);
    if (hi[d] < shape[d])
      sizes.push_back(shape[d] - hi[d]);
    std::vector<Shape> shapes;
    for (int64_t s : sizes) {
      Shape piece = shape;
      piece[d] = s;
      shapes.push_back(piece);
    }
    std::vector<int> results = tr.emit("split", {x}, shapes, tr.values[x].dtype,
                                       {{"axis", d}, {"sizes", sizes}});
    tr.define(node, 0, results[index]);
    return "";
  }
  Shape result;
  for (size_t d = 0; d < shape.size(); ++d)
    result.push_back((hi[d] - lo[d] + step[d] - 1) / step[d]);
  tr.define(node, 0,
            tr.emit1("slice", {x}, result, tr.values[x].dtype,
                     {{"starts", lo}, {"limits", hi}, {"strides", step}}));
  return "";
}

std::string mapConcat(Translator &tr, const Node &node) {
  DType dtype = symbolicDType(tr, node);
  std::vector<int> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    inputs.push_back(tr.valueOf(tr.operand(node, i), dtype));
  Shape shape = tr.values[inputs[0]].shape;
  int64_t axis = normalizeAxis(attrInt(node, "axis", 0), shape.size());
  if (axis < 0 || axis >= int64_t(shape.size()))
    return "axis out of range";
  shape[axis] = 0;
  for (int v : inputs) {
    Shape s = tr.values[v].shape, first = tr.values[inputs[0]].shape;
    if (s.size() != shape.size())
      return "inputs differ in rank";
    shape[axis] += s[axis];
    s[axis] = first[axis] = 0;
    if (s != first)
      return "inputs differ in a dim other than the axis";
  }
  tr.define(node, 0,
            tr.emit1("concat", inputs, shape, dtype, {{"axis", axis}}));
  return "";
}

/// Where(c, a, b) with a constant condition: Loom has no select, so the
/// fill is added (a `-inf` fill, the causal mask's form) or blended (`x *
/// keep + fill` for a finite one), as the PyTorch frontend does.
std::string mapWhere(Translator &tr, const Node &node) {
  Operand cond = tr.operand(node, 0), a = tr.operand(node, 1),
          b = tr.operand(node, 2);
  if (!cond.constant)
    return "the condition is computed from data (Loom has no select op); "
           "only constant masks are supported";
  bool fillIsA = a.constant && b.id >= 0;
  if (!fillIsA && !(b.constant && a.id >= 0))
    return "one branch must be constant (a fill value or tensor)";
  int x = fillIsA ? b.id : a.id;
  const ConstTensor &fill = fillIsA ? *a.constant : *b.constant;
  const LoomValue v = tr.values[x];
  Shape maskShape;
  if (!broadcastShapes(cond.constant->shape, fill.shape, maskShape))
    return "condition and fill do not broadcast";
  Shape shape;
  if (!broadcastShapes(maskShape, v.shape, shape))
    return "operand shapes " + describeOperands(tr, node) + " do not broadcast";
  // Per mask element: take the fill (where the condition picks it) or x.
  ConstTensor add, keep;
  add.shape = keep.shape = maskShape;
  add.dtype = keep.dtype = v.dtype;
  bool finite = false;
  Shape probe;
  for (int64_t i = 0; i < numElements(maskShape); ++i) {
    // Broadcast indices computed the simple way: maskShape is the broadcast
    // of both, so index each by its own trailing coordinates.
    auto at = [&](const ConstTensor &t) {
      int64_t idx = 0, stride = 1, rest = i;
      std::vector<int64_t> coords(maskShape.size());
      for (int64_t d = int64_t(maskShape.size()) - 1; d >= 0; --d) {
        coords[d] = rest % maskShape[d];
        rest /= maskShape[d];
      }
      int64_t off = maskShape.size() - t.shape.size();
      for (int64_t d = int64_t(t.shape.size()) - 1; d >= 0; --d) {
        if (t.shape[d] != 1)
          idx += coords[d + off] * stride;
        stride *= t.shape[d];
      }
      return t.at(idx);
    };
    bool takeFill = (at(*cond.constant) != 0) == fillIsA;
    double f = at(fill);
    add.floats.push_back(takeFill ? f : 0.0);
    keep.floats.push_back(takeFill ? 0.0 : 1.0);
    finite |= takeFill && !(std::isinf(f) && f < 0);
  }
  int r = x;
  if (finite)
    r = tr.emit1("mul", {r, tr.constant(keep)}, shape, v.dtype);
  r = tr.emit1("add", {r, tr.constant(add)}, shape, v.dtype);
  tr.define(node, 0, r);
  return "";
}

Mapping softmaxLike(const char *mnemonic) {
  return [mnemonic](Translator &tr, const Node &node) -> std::string {
    int x = tr.valueOf(tr.operand(node, 0));
    const LoomValue v = tr.values[x];
    int64_t axis = normalizeAxis(attrInt(node, "axis", -1), v.shape.size());
    if (axis < 0 || axis >= int64_t(v.shape.size()))
      return "axis out of range";
    tr.define(node, 0,
              tr.emit1(mnemonic, {x}, v.shape, v.dtype, {{"axis", axis}}));
    return "";
  };
}

std::string mapLayerNorm(Translator &tr, const Node &node) {
  int x = tr.valueOf(tr.operand(node, 0));
  const LoomValue v = tr.values[x];
  int64_t rank = v.shape.size();
  if (rank == 0 || normalizeAxis(attrInt(node, "axis", -1), rank) != rank - 1)
    return "only normalization over the last dim is supported";
  double eps = attrFloat(node, "epsilon", 1e-5);
  // ONNX stores epsilon as a float: torch's 1e-5 arrives as 1e-5 rounded to
  // f32. Take the nearest short decimal so f64 models match PyTorch.
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", eps);
  eps = std::strtod(text, nullptr);
  int gamma = tr.valueOf(tr.operand(node, 1), v.dtype);
  Operand b = tr.operand(node, 2);
  Shape param = {v.shape.back()};
  if (tr.values[gamma].shape != param)
    return "scale has shape " + shapeText(tr.values[gamma].shape) +
           ", expected " + shapeText(param);
  int r;
  if (b.present()) {
    int beta = tr.valueOf(b, v.dtype);
    if (tr.values[beta].shape != param)
      return "bias has shape " + shapeText(tr.values[beta].shape) +
             ", expected " + shapeText(param);
    r = tr.emit1("layer_norm", {x, gamma, beta}, v.shape, v.dtype,
                 {{"eps", eps}});
  } else {
    // Loom's layer_norm takes gamma and beta together: normalize, then scale.
    r = tr.emit1("layer_norm", {x, -1, -1}, v.shape, v.dtype, {{"eps", eps}});
    r = tr.emit1("mul", {r, gamma}, v.shape, v.dtype);
  }
  tr.define(node, 0, r);
  return "";
}

std::string mapReduce(Translator &tr, const Node &node, const char *mnemonic) {
  int x = tr.valueOf(tr.operand(node, 0));
  const LoomValue v = tr.values[x];
  std::vector<int64_t> axes = attrInts(node, "axes");
  if (node.inputs.size() > 1 && !node.inputs[1].empty())
    if (std::string why = constantInts(tr, node, 1, axes); !why.empty())
      return why;
  int64_t rank = v.shape.size();
  if (axes.empty()) {
    if (attrInt(node, "noop_with_empty_axes", 0)) {
      tr.define(node, 0, x);
      return "";
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  for (int64_t &a : axes) {
    a = normalizeAxis(a, rank);
    if (a < 0 || a >= rank)
      return "axis out of range";
  }
  std::sort(axes.begin(), axes.end());
  bool keep = attrInt(node, "keepdims", 1);
  Shape shape;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced)
      shape.push_back(v.shape[d]);
    else if (keep)
      shape.push_back(1);
  }
  json attrs = {{"axes", axes}};
  if (keep)
    attrs["keepdims"] = true;
  tr.define(node, 0, tr.emit1(mnemonic, {x}, shape, v.dtype, attrs));
  return "";
}

/// Looks through a reshape that only merges leading dims (the `view(-1,
/// V)` before a loss): returns the unflattened value.
int unflattened(Translator &tr, int x, bool keepLast) {
  LoomOp *p = tr.producer(x);
  if (!p || p->op != "reshape")
    return x;
  int in = p->operands[0];
  const Shape &from = tr.values[in].shape, &to = tr.values[x].shape;
  if (keepLast && (from.empty() || to.size() != 2 || from.back() != to.back()))
    return x;
  if (!keepLast && to.size() != 1)
    return x;
  return in;
}

std::string crossEntropy(Translator &tr, const Node &node, int logits) {
  int labels = tr.valueOf(tr.operand(node, 1));
  if (tr.operand(node, 2).present())
    return "class weights are not supported";
  std::string reduction = "mean";
  if (const Attribute *a = node.attr("reduction"))
    reduction = a->s;
  if (reduction != "mean" && reduction != "sum")
    return "reduction '" + reduction + "' (supported: mean, sum)";
  Shape ls = tr.values[logits].shape;
  if (ls.size() > 2) {
    // ONNX puts the classes in dim 1; Loom's loss wants them last.
    std::vector<int64_t> perm = {0};
    for (size_t d = 2; d < ls.size(); ++d)
      perm.push_back(d);
    perm.push_back(1);
    logits = transpose(tr, logits, perm);
  } else if (ls.size() == 2) {
    int full = unflattened(tr, logits, true),
        fullLabels = unflattened(tr, labels, false);
    if (full != logits && fullLabels != labels &&
        Shape(tr.values[full].shape.begin(), tr.values[full].shape.end() - 1) ==
            tr.values[fullLabels].shape) {
      logits = full;
      labels = fullLabels;
    }
  } else {
    return "scores must have rank >= 2";
  }
  Shape expected(tr.values[logits].shape.begin(),
                 tr.values[logits].shape.end() - 1);
  if (tr.values[labels].shape != expected)
    return "labels of shape " + shapeText(tr.values[labels].shape) +
           " do not match scores " + shapeText(tr.values[logits].shape);
  if (isFloat(tr.values[labels].dtype))
    return "labels must be integers";
  json attrs = json::object();
  if (const Attribute *a = node.attr("ignore_index"))
    attrs["ignore_index"] = a->i;
  if (reduction == "sum")
    attrs["sum"] = true;
  tr.define(node, 0,
            tr.emit1("cross_entropy", {logits, labels}, {},
                     tr.values[logits].dtype, attrs));
  return "";
}

std::string mapSoftmaxCrossEntropy(Translator &tr, const Node &node) {
  return crossEntropy(tr, node, tr.valueOf(tr.operand(node, 0)));
}

std::string mapNllLoss(Translator &tr, const Node &node) {
  int input = tr.valueOf(tr.operand(node, 0));
  LoomOp *p = tr.producer(input);
  // ONNX's class dim is 1 whatever the rank.
  if (!p || p->op != "log_softmax" || p->attributes["axis"].get<int64_t>() != 1)
    return "the input must be a LogSoftmax over the class dim (Loom's loss "
           "is cross-entropy on logits)";
  return crossEntropy(tr, node, p->operands[0]);
}

/// Expand of a symbolic tensor: add zeros (exact). The zeros have size 1
/// wherever the input already has the target's size, so a constant never
/// holds the batch dim of an activation (loom-slice-micro-batches slices
/// that dim of the input, and a constant holding it would no longer
/// broadcast against one micro-batch).
std::string mapExpand(Translator &tr, const Node &node) {
  std::vector<int64_t> target;
  if (std::string why = constantInts(tr, node, 1, target); !why.empty())
    return why;
  int x = tr.valueOf(tr.operand(node, 0));
  const LoomValue v = tr.values[x];
  Shape shape;
  if (!broadcastShapes(v.shape, target, shape))
    return "cannot expand " + shapeText(v.shape) + " to " + shapeText(target);
  if (shape == v.shape) {
    tr.define(node, 0, x);
    return "";
  }
  if (std::string why = checkFoldedSize(shape); !why.empty())
    return why;
  ConstTensor zeros;
  zeros.shape = shape;
  size_t lead = shape.size() - v.shape.size();
  for (size_t i = 0; i < v.shape.size(); ++i)
    if (v.shape[i] == shape[lead + i])
      zeros.shape[lead + i] = 1;
  zeros.dtype = v.dtype;
  zeros.floats.assign(numElements(zeros.shape), 0.0);
  tr.define(node, 0, tr.emit1("add", {x, tr.constant(zeros)}, shape, v.dtype));
  return "";
}

std::string mapErf(Translator &tr, const Node &node) {
  std::string why;
  Operand x = symbolicOperand(tr, node, 0, why);
  if (!why.empty())
    return why;
  const LoomValue v = tr.values[x.id];
  tr.define(node, 0, tr.emit1("erf", {x.id}, v.shape, v.dtype));
  return "";
}
} // namespace

const std::map<std::string, Mapping> &mlir::loom::onnx_import::getMappings() {
  static const std::map<std::string, Mapping> mappings = [] {
    std::map<std::string, Mapping> m;
    m["Add"] = [](Translator &tr, const Node &n) {
      return binary(tr, n, "add");
    };
    m["Sub"] = [](Translator &tr, const Node &n) {
      return binary(tr, n, "sub");
    };
    m["Mul"] = [](Translator &tr, const Node &n) {
      return binary(tr, n, "mul");
    };
    m["Div"] = [](Translator &tr, const Node &n) {
      return binary(tr, n, "div");
    };
    m["Pow"] = mapPow;
    m["Reciprocal"] = mapReciprocal;
    for (const char *op :
         {"Sqrt", "Tanh", "Relu", "Sigmoid", "Exp", "Log", "Neg"}) {
      std::string mnemonic = op;
      mnemonic[0] = char(std::tolower(mnemonic[0]));
      m[op] = unary(mnemonic);
    }
    m["Erf"] = mapErf;
    m["MatMul"] = mapMatMul;
    m["Gemm"] = mapGemm;
    m["Identity"] = mapIdentity;
    m["Dropout"] = mapDropout;
    m["Cast"] = mapCast;
    m["Gather"] = mapGather;
    m["Reshape"] = mapReshape;
    m["Flatten"] = mapFlatten;
    m["Unsqueeze"] = mapUnsqueezeSqueeze;
    m["Squeeze"] = mapUnsqueezeSqueeze;
    m["Transpose"] = mapTranspose;
    m["Split"] = mapSplit;
    m["Slice"] = mapSlice;
    m["Concat"] = mapConcat;
    m["Where"] = mapWhere;
    m["Softmax"] = softmaxLike("softmax");
    m["LogSoftmax"] = softmaxLike("log_softmax");
    m["LayerNormalization"] = mapLayerNorm;
    m["ReduceMean"] = [](Translator &tr, const Node &n) {
      return mapReduce(tr, n, "reduce_mean");
    };
    m["ReduceSum"] = [](Translator &tr, const Node &n) {
      return mapReduce(tr, n, "reduce_sum");
    };
    m["ReduceMax"] = [](Translator &tr, const Node &n) {
      return mapReduce(tr, n, "reduce_max");
    };
    m["SoftmaxCrossEntropyLoss"] = mapSoftmaxCrossEntropy;
    m["NegativeLogLikelihoodLoss"] = mapNllLoss;
    m["Expand"] = mapExpand;
    return m;
  }();
  return mappings;
}

size_t mlir::loom::onnx_import::requiredInputs(const std::string &opType) {
  static const std::map<std::string, size_t> counts = {
      {"Add", 2},
      {"Sub", 2},
      {"Mul", 2},
      {"Div", 2},
      {"Pow", 2},
      {"Equal", 2},
      {"Less", 2},
      {"Greater", 2},
      {"And", 2},
      {"Or", 2},
      {"MatMul", 2},
      {"Gemm", 2},
      {"Gather", 2},
      {"Reshape", 2},
      {"Expand", 2},
      {"Slice", 3},
      {"Where", 3},
      {"Range", 3},
      {"LayerNormalization", 2},
      {"SoftmaxCrossEntropyLoss", 2},
      {"NegativeLogLikelihoodLoss", 2},
      {"Constant", 0}};
  auto it = counts.find(opType);
  return it == counts.end() ? 1 : it->second;
}
