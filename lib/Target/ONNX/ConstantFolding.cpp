//===- ConstantFolding.cpp - ONNX nodes computed at import time -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Loom graphs have static shapes, so the shape arithmetic an exporter writes
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), the causal mask built
// from a buffer (Slice -> Equal -> Cast), and every other node whose inputs
// are all known at import time is computed here, on the concrete data, and
// never becomes a Loom op. Each folder implements the ONNX operator's
// definition (onnx.ai/onnx/operators) for the attributes it accepts and says
// why otherwise.
//
//===----------------------------------------------------------------------===//

#include "Translator.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir::loom::onnx_import;
using Inputs = std::vector<const ConstTensor *>;
using Outputs = std::vector<ConstTensor>;

/// Folded constants are held in memory as doubles: a result beyond this
/// many elements (512 MiB) is refused rather than exhausting memory.
static constexpr int64_t kMaxFoldedElements = int64_t(1) << 26;

std::string mlir::loom::onnx_import::checkFoldedSize(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return "negative dim in shape " + shapeText(shape);
    if (d > 0 && n > kMaxFoldedElements / d)
      return "the constant it computes (shape " + shapeText(shape) +
             ") is too large to fold (more than 2^26 elements)";
    n *= d;
  }
  return "";
}

static ConstTensor makeTensor(Shape shape, DType dtype) {
  ConstTensor t;
  t.shape = std::move(shape);
  t.dtype = dtype;
  if (isFloat(dtype))
    t.floats.assign(numElements(t.shape), 0.0);
  else
    t.ints.assign(numElements(t.shape), 0);
  return t;
}

static void setElement(ConstTensor &t, int64_t i, double v) {
  if (isFloat(t.dtype))
    t.floats[i] = v;
  else if (t.dtype == DType::I1)
    t.ints[i] = v != 0;
  else
    t.ints[i] = int64_t(v);
}

static std::vector<int64_t> strides(const Shape &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = int(shape.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// The flat index into `from` (broadcast to `to`) of flat index `i` of `to`.
static int64_t broadcastIndex(const Shape &from, const Shape &to, int64_t i) {
  std::vector<int64_t> toStrides = strides(to), fromStrides = strides(from);
  int64_t offset = int64_t(to.size()) - int64_t(from.size()), index = 0;
  for (size_t d = 0; d < to.size(); ++d) {
    int64_t coord = (i / toStrides[d]) % (to[d] ? to[d] : 1);
    int64_t fd = int64_t(d) - offset;
    if (fd >= 0 && from[fd] != 1)
      index += coord * fromStrides[fd];
  }
  return index;
}

static std::string
elementwise(const Inputs &in, Outputs &out, DType dtype,
            const std::function<double(const std::vector<double> &)> &fn) {
  Shape shape = in[0]->shape;
  for (size_t k = 1; k < in.size(); ++k)
    if (!broadcastShapes(shape, in[k]->shape, shape))
      return "operand shapes " + shapeText(in[0]->shape) + " and " +
             shapeText(in[k]->shape) + " do not broadcast";
  if (std::string why = checkFoldedSize(shape); !why.empty())
    return why;
  ConstTensor r = makeTensor(shape, dtype);
  std::vector<double> args(in.size());
  for (int64_t i = 0; i < r.numElements(); ++i) {
    for (size_t k = 0; k < in.size(); ++k)
      args[k] = in[k]->at(broadcastIndex(in[k]->shape, shape, i));
    setElement(r, i, fn(args));
  }
  out.push_back(std::move(r));
  return "";
}

/// Reshape's target shape: 0 copies the input dim (unless `allowZero`), -1
/// is inferred.
std::string mlir::loom::onnx_import::resolveReshape(const Shape &input,
                                                    std::vector<int64_t> target,
                                                    bool allowZero,
                                                    Shape &result) {
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == 0 && !allowZero) {
      if (d >= input.size())
        return "shape entry 0 at dim " + std::to_string(d) +
               " has no input dim to copy";
      target[d] = input[d];
    }
    if (target[d] == -1) {
      if (inferred >= 0)
        return "the target shape has two -1 entries";
      inferred = int(d);
    } else if (target[d] < 0) {
      return "invalid target dim " + std::to_string(target[d]);
    } else {
      known *= target[d];
    }
  }
  int64_t total = numElements(input);
  if (inferred >= 0) {
    if (known == 0 || total % known)
      return "cannot infer the -1 dim of a reshape of " + shapeText(input);
    target[inferred] = total / known;
  } else if (known != total) {
    return "cannot reshape " + shapeText(input) + " (" + std::to_string(total) +
           " elements) to " + shapeText(target);
  }
  result = target;
  return "";
}

/// The normalized [start, end) per axis of a Slice node with step 1, or why
/// not; shared with the symbolic mapping.
std::string mlir::loom::onnx_import::resolveSlice(
    const Shape &shape, const std::vector<int64_t> &starts,
    const std::vector<int64_t> &ends, std::vector<int64_t> axes,
    std::vector<int64_t> steps, Shape &lo, Shape &hi, Shape &step) {
  int64_t rank = shape.size();
  lo.assign(rank, 0);
  hi = shape;
  step.assign(rank, 1);
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k)
      axes.push_back(k);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return "starts, ends, axes and steps differ in length";
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t axis = normalizeAxis(axes[k], rank);
    if (axis < 0 || axis >= rank)
      return "axis " + std::to_string(axes[k]) + " is out of range";
    if (steps[k] <= 0)
      return "step " + std::to_string(steps[k]) + " (only positive steps)";
    int64_t n = shape[axis];
    auto clamp = [&](int64_t v) {
      if (v < 0)
        v += n;
      return std::max<int64_t>(0, std::min(v, n));
    };
    lo[axis] = clamp(starts[k]);
    hi[axis] = std::max(lo[axis], clamp(ends[k]));
    step[axis] = steps[k];
  }
  return "";
}

static std::optional<DType> onnxTypeToDType(int64_t type) {
  switch (type) {
  case 11:
    return DType::F64;
  case 1:
    return DType::F32;
  case 10:
    return DType::F16;
  case 16:
    return DType::BF16;
  case 7:
    return DType::I64;
  case 6:
    return DType::I32;
  case 9:
    return DType::I1;
  default:
    return std::nullopt;
  }
}
std::optional<DType> mlir::loom::onnx_import::castTarget(const Node &node) {
  return onnxTypeToDType(attrInt(node, "to", -1));
}

/// Gathers along `axis` (Gather's definition, negative indices allowed).
static std::string gather(const ConstTensor &data, const ConstTensor &indices,
                          int64_t axis, Outputs &out) {
  int64_t rank = data.shape.size();
  axis = normalizeAxis(axis, rank);
  if (axis < 0 || axis >= rank)
    return "axis out of range";
  Shape shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  if (std::string why = checkFoldedSize(shape); !why.empty())
    return why;
  ConstTensor r = makeTensor(shape, data.dtype);
  int64_t outer = 1, inner = 1, n = data.shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= data.shape[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= data.shape[d];
  std::vector<int64_t> idx = intsOf(indices);
  int64_t pos = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k : idx) {
      if (k < 0)
        k += n;
      if (k < 0 || k >= n)
        return "index " + std::to_string(k) + " is out of range for size " +
               std::to_string(n);
      for (int64_t i = 0; i < inner; ++i)
        setElement(r, pos++, data.at((o * n + k) * inner + i));
    }
  out.push_back(std::move(r));
  return "";
}

static std::string transposeData(const ConstTensor &x,
                                 const std::vector<int64_t> &perm,
                                 Outputs &out) {
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < sorted.size(); ++d)
    if (sorted.size() != x.shape.size() || sorted[d] != int64_t(d))
      return std::string("perm is not a permutation of the input's dims");
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(x.shape[p]);
  ConstTensor r = makeTensor(shape, x.dtype);
  std::vector<int64_t> inStrides = strides(x.shape),
                       outStrides = strides(shape);
  for (int64_t i = 0; i < r.numElements(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      src += ((i / outStrides[d]) % shape[d]) * inStrides[perm[d]];
    setElement(r, i, x.at(src));
  }
  out.push_back(std::move(r));
  return "";
}

static ConstTensor withShape(const ConstTensor &x, Shape shape) {
  ConstTensor r = x;
  r.shape = std::move(shape);
  return r;
}

const std::map<std::string, Folder> &mlir::loom::onnx_import::getFolders() {
  static const std::map<std::string, Folder> folders = [] {
    std::map<std::string, Folder> f;
    auto binary = [](std::function<double(double, double)> fn,
                     bool compare = false) {
      return [fn, compare](const Node &, const Inputs &in, Outputs &out) {
        return elementwise(
            {in[0], in[1]}, out, compare ? DType::I1 : in[0]->dtype,
            [&](const std::vector<double> &a) { return fn(a[0], a[1]); });
      };
    };
    f["Add"] = binary([](double a, double b) { return a + b; });
    f["Sub"] = binary([](double a, double b) { return a - b; });
    f["Mul"] = binary([](double a, double b) { return a * b; });
    f["Div"] = [](const Node &, const Inputs &in, Outputs &out) {
      bool integer = !isFloat(in[0]->dtype);
      return elementwise(
          {in[0], in[1]}, out, in[0]->dtype, [&](const std::vector<double> &a) {
            return integer ? std::trunc(a[0] / a[1]) : a[0] / a[1];
          });
    };
    f["Pow"] = binary([](double a, double b) { return std::pow(a, b); });
    f["Equal"] =
        binary([](double a, double b) { return double(a == b); }, true);
    f["Less"] = binary([](double a, double b) { return double(a < b); }, true);
    f["Greater"] =
        binary([](double a, double b) { return double(a > b); }, true);
    f["And"] = binary([](double a, double b) { return double(a && b); }, true);
    f["Or"] = binary([](double a, double b) { return double(a || b); }, true);
    auto unary = [](std::function<double(double)> fn) {
      return [fn](const Node &, const Inputs &in, Outputs &out) {
        return elementwise(
            {in[0]}, out, in[0]->dtype,
            [&](const std::vector<double> &a) { return fn(a[0]); });
      };
    };
    f["Neg"] = unary([](double a) { return -a; });
    f["Sqrt"] = unary([](double a) { return std::sqrt(a); });
    f["Not"] = unary([](double a) { return double(!a); });
    f["Identity"] = [](const Node &, const Inputs &in, Outputs &out) {
      out.push_back(*in[0]);
      return std::string();
    };
    f["Dropout"] = f["Identity"];
    f["Where"] = [](const Node &, const Inputs &in, Outputs &out) {
      return elementwise(
          {in[0], in[1], in[2]}, out, in[1]->dtype,
          [](const std::vector<double> &a) { return a[0] ? a[1] : a[2]; });
    };
    f["Cast"] = [](const Node &node, const Inputs &in, Outputs &out) {
      std::optional<DType> to = castTarget(node);
      if (!to)
        return std::string("cast to an element type Loom lacks");
      return elementwise({in[0]}, out, *to, [&](const std::vector<double> &a) {
        return isFloat(*to)
                   ? a[0]
                   : (*to == DType::I1 ? double(a[0] != 0) : std::trunc(a[0]));
      });
    };
    f["Constant"] = [](const Node &node, const Inputs &, Outputs &out) {
      if (const Attribute *a = node.attr("value");
          a && a->kind == Attribute::Tensor) {
        out.push_back(a->t);
        return std::string();
      }
      ConstTensor t;
      if (const Attribute *a = node.attr("value_float")) {
        t.dtype = DType::F32;
        t.floats = {a->f};
      } else if (const Attribute *a = node.attr("value_int")) {
        t.dtype = DType::I64;
        t.ints = {a->i};
      } else if (const Attribute *a = node.attr("value_ints")) {
        t.dtype = DType::I64;
        t.ints = a->ints;
        t.shape = {int64_t(a->ints.size())};
      } else if (const Attribute *a = node.attr("value_floats")) {
        t.dtype = DType::F32;
        t.floats = a->floats;
        t.shape = {int64_t(a->floats.size())};
      } else {
        return std::string("a Constant without a numeric value attribute");
      }
      out.push_back(std::move(t));
      return std::string();
    };
    f["ConstantOfShape"] = [](const Node &node, const Inputs &in,
                              Outputs &out) {
      ConstTensor fill;
      fill.dtype = DType::F32;
      fill.floats = {0.0};
      if (const Attribute *a = node.attr("value");
          a && a->kind == Attribute::Tensor)
        fill = a->t;
      Shape shape = intsOf(*in[0]);
      if (std::string why = checkFoldedSize(shape); !why.empty())
        return why;
      if (fill.numElements() != 1)
        return std::string("the value attribute must hold one element");
      ConstTensor r = makeTensor(shape, fill.dtype);
      for (int64_t i = 0; i < r.numElements(); ++i)
        setElement(r, i, fill.at(0));
      out.push_back(std::move(r));
      return std::string();
    };
    f["Range"] = [](const Node &, const Inputs &in, Outputs &out) {
      double start = in[0]->at(0), limit = in[1]->at(0), delta = in[2]->at(0);
      if (delta == 0)
        return std::string("delta 0");
      double count = std::ceil((limit - start) / delta);
      if (!(count <= double(kMaxFoldedElements)))
        return std::string("the range is too long to fold");
      int64_t n = std::max<int64_t>(0, int64_t(count));
      ConstTensor r = makeTensor({n}, in[0]->dtype);
      for (int64_t i = 0; i < n; ++i)
        setElement(r, i, start + i * delta);
      out.push_back(std::move(r));
      return std::string();
    };
    f["Gather"] = [](const Node &node, const Inputs &in, Outputs &out) {
      return gather(*in[0], *in[1], attrInt(node, "axis", 0), out);
    };
    f["Unsqueeze"] = [](const Node &node, const Inputs &in, Outputs &out) {
      std::vector<int64_t> axes =
          in.size() > 1 && in[1] ? intsOf(*in[1]) : attrInts(node, "axes");
      int64_t rank = in[0]->shape.size() + axes.size();
      Shape shape(rank, -1);
      for (int64_t a : axes) {
        a = normalizeAxis(a, rank);
        if (a < 0 || a >= rank || shape[a] == 1)
          return std::string("invalid axes");
        shape[a] = 1;
      }
      size_t k = 0;
      for (int64_t &d : shape)
        if (d == -1)
          d = in[0]->shape[k++];
      out.push_back(withShape(*in[0], shape));
      return std::string();
    };
    f["Squeeze"] = [](const Node &node, const Inputs &in, Outputs &out) {
      std::vector<int64_t> axes =
          in.size() > 1 && in[1] ? intsOf(*in[1]) : attrInts(node, "axes");
      int64_t rank = in[0]->shape.size();
      std::vector<bool> drop(rank, axes.empty());
      for (int64_t a : axes) {
        a = normalizeAxis(a, rank);
        if (a < 0 || a >= rank)
          return std::string("axis out of range");
        drop[a] = true;
      }
      Shape shape;
      for (int64_t d = 0; d < rank; ++d)
        if (!(drop[d] && in[0]->shape[d] == 1))
          shape.push_back(in[0]->shape[d]);
      out.push_back(withShape(*in[0], shape));
      return std::string();
    };
    f["Reshape"] = [](const Node &node, const Inputs &in, Outputs &out) {
      Shape shape;
      std::string why = resolveReshape(in[0]->shape, intsOf(*in[1]),
                                       attrInt(node, "allowzero", 0), shape);
      if (why.empty())
        out.push_back(withShape(*in[0], shape));
      return why;
    };
    f["Flatten"] = [](const Node &node, const Inputs &in, Outputs &out) {
      int64_t axis =
          normalizeAxis(attrInt(node, "axis", 1), in[0]->shape.size());
      int64_t a = 1, b = 1;
      for (int64_t d = 0; d < int64_t(in[0]->shape.size()); ++d)
        (d < axis ? a : b) *= in[0]->shape[d];
      out.push_back(withShape(*in[0], {a, b}));
      return std::string();
    };
    f["Concat"] = [](const Node &node, const Inputs &in, Outputs &out) {
      int64_t rank = in[0]->shape.size();
      int64_t axis = normalizeAxis(attrInt(node, "axis", 0), rank);
      if (axis < 0 || axis >= rank)
        return std::string("axis out of range");
      Shape shape = in[0]->shape;
      shape[axis] = 0;
      for (const ConstTensor *t : in) {
        Shape other = t->shape, first = in[0]->shape;
        if (other.size() != first.size())
          return std::string("inputs differ in rank");
        other[axis] = first[axis] = 0;
        if (other != first)
          return std::string("inputs differ in a dim other than the axis");
        shape[axis] += t->shape[axis];
      }
      ConstTensor r = makeTensor(shape, in[0]->dtype);
      int64_t outer = 1;
      for (int64_t d = 0; d < axis; ++d)
        outer *= shape[d];
      int64_t pos = 0;
      for (int64_t o = 0; o < outer; ++o)
        for (const ConstTensor *t : in) {
          int64_t block = t->numElements() / std::max<int64_t>(outer, 1);
          for (int64_t i = 0; i < block; ++i)
            setElement(r, pos++, t->at(o * block + i));
        }
      out.push_back(std::move(r));
      return std::string();
    };
    f["Size"] = [](const Node &, const Inputs &in, Outputs &out) {
      ConstTensor r = makeTensor({}, DType::I64);
      r.ints[0] = in[0]->numElements();
      out.push_back(std::move(r));
      return std::string();
    };
    f["Shape"] = [](const Node &node, const Inputs &in, Outputs &out) {
      int64_t rank = in[0]->shape.size();
      int64_t start = normalizeAxis(attrInt(node, "start", 0), rank);
      int64_t end = normalizeAxis(attrInt(node, "end", rank), rank);
      start = std::clamp<int64_t>(start, 0, rank);
      end = std::clamp<int64_t>(end, start, rank);
      ConstTensor r = makeTensor({end - start}, DType::I64);
      for (int64_t d = start; d < end; ++d)
        r.ints[d - start] = in[0]->shape[d];
      out.push_back(std::move(r));
      return std::string();
    };
    f["Transpose"] = [](const Node &node, const Inputs &in, Outputs &out) {
      std::vector<int64_t> perm = attrInts(node, "perm");
      if (perm.empty())
        for (int64_t d = int64_t(in[0]->shape.size()) - 1; d >= 0; --d)
          perm.push_back(d);
      return transposeData(*in[0], perm, out);
    };
    f["Slice"] = [](const Node &, const Inputs &in, Outputs &out) {
      Shape lo, hi, step;
      std::string why = resolveSlice(
          in[0]->shape, intsOf(*in[1]), intsOf(*in[2]),
          in.size() > 3 && in[3] ? intsOf(*in[3]) : std::vector<int64_t>{},
          in.size() > 4 && in[4] ? intsOf(*in[4]) : std::vector<int64_t>{}, lo,
          hi, step);
      if (!why.empty())
        return why;
      Shape shape;
      for (size_t d = 0; d < lo.size(); ++d)
        shape.push_back((hi[d] - lo[d] + step[d] - 1) / step[d]);
      ConstTensor r = makeTensor(shape, in[0]->dtype);
      std::vector<int64_t> inStrides = strides(in[0]->shape),
                           outStrides = strides(shape);
      for (int64_t i = 0; i < r.numElements(); ++i) {
        int64_t src = 0;
        for (size_t d = 0; d < shape.size(); ++d)
          src += (lo[d] + ((i / outStrides[d]) % shape[d]) * step[d]) *
                 inStrides[d];
        setElement(r, i, in[0]->at(src));
      }
      out.push_back(std::move(r));
      return std::string();
    };
    f["Split"] = [](const Node &node, const Inputs &in, Outputs &out) {
      const ConstTensor &x = *in[0];
      int64_t rank = x.shape.size();
      int64_t axis = normalizeAxis(attrInt(node, "axis", 0), rank);
      if (axis < 0 || axis >= rank)
        return std::string("axis out of range");
      std::vector<int64_t> sizes =
          in.size() > 1 && in[1] ? intsOf(*in[1]) : attrInts(node, "split");
      int64_t pieces = node.outputs.size(), n = x.shape[axis];
      if (sizes.empty())
        for (int64_t i = 0, each = (n + pieces - 1) / pieces; i < pieces; ++i)
          sizes.push_back(std::min(each, n - i * each));
      int64_t total = 0;
      for (int64_t size : sizes) {
        if (size < 0)
          return std::string("negative split size");
        total += size;
      }
      if (int64_t(sizes.size()) != pieces || total != n)
        return std::string("the split sizes do not add up to the dim");
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < axis; ++d)
        outer *= x.shape[d];
      for (int64_t d = axis + 1; d < rank; ++d)
        inner *= x.shape[d];
      int64_t start = 0;
      for (int64_t size : sizes) {
        Shape shape = x.shape;
        shape[axis] = size;
        ConstTensor r = makeTensor(shape, x.dtype);
        int64_t pos = 0;
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t k = start; k < start + size; ++k)
            for (int64_t i = 0; i < inner; ++i)
              setElement(r, pos++, x.at((o * n + k) * inner + i));
        out.push_back(std::move(r));
        start += size;
      }
      return std::string();
    };
    f["Expand"] = [](const Node &, const Inputs &in, Outputs &out) {
      Shape shape;
      if (!broadcastShapes(in[0]->shape, intsOf(*in[1]), shape))
        return std::string("shapes do not broadcast");
      if (std::string why = checkFoldedSize(shape); !why.empty())
        return why;
      ConstTensor zero = makeTensor(shape, in[0]->dtype);
      return elementwise({in[0], &zero}, out, in[0]->dtype,
                         [](const std::vector<double> &a) { return a[0]; });
    };
    f["Trilu"] = [](const Node &node, const Inputs &in, Outputs &out) {
      int64_t k = in.size() > 1 && in[1] ? intsOf(*in[1])[0] : 0;
      bool upper = attrInt(node, "upper", 1);
      if (in[0]->shape.size() < 2)
        return std::string("the input must have rank >= 2");
      ConstTensor r = *in[0];
      int64_t rows = r.shape[r.shape.size() - 2], cols = r.shape.back();
      for (int64_t i = 0; i < r.numElements(); ++i) {
        int64_t col = i % cols, row = (i / cols) % rows;
        bool keep = upper ? col - row >= k : col - row <= k;
        if (!keep)
          setElement(r, i, 0);
      }
      out.push_back(std::move(r));
      return std::string();
    };
    return f;
  }();
  return folders;
}
