//===- Fusions.cpp - Attention and GELU recognised in translated ONNX -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// ONNX spells attention and GELU as primitive nodes. These rewrites find
// them in the translator's op list and replace the op that produces the
// pattern's result; the ops left unused are dropped with everything else
// the loss does not use. What does not match stays primitive (and correct).
//
// 1. Exact GELU: `0.5 * x * (1 + erf(x / sqrt(2)))` (the factors in either
//    order, `x * (1/sqrt(2))` for the division) becomes `loom.gelu`. Loom
//    has no erf op, so an erf outside this pattern is reported.
// 2. LayerNorm as opsets < 17 spell it: `(x - mean(x)) / sqrt(mean((x -
//    mean(x))^2) + eps)` over the last dim (then `* gamma + beta`) becomes
//    `loom.layer_norm` (with gamma and beta when both follow).
// 3. RMSNorm: `x * rsqrt(mean(x * x) + eps)` over the last dim (rsqrt as
//    `1 / sqrt`; then `* weight`, either order) becomes `loom.rms_norm`.
// 4. Attention, as the PyTorch frontend matches it (docs/Frontends.md, "How
//    attention is matched"): a product `p @ v` of rank-4 tensors with
//        p  = softmax(s, axis = 3)
//        s  = s' + M   (M a constant)  |  s'
//        s' = t * c  |  c * t  |  t / c  |  t      (c a scalar constant)
//        t  = q @ k^T                  (MatMul folded k's transpose)
//    becomes one `loom.attention q, k, v`. M is `causal` when it is the
//    causal triangle (0 on and below the diagonal, -inf or <= -1e30 above,
//    for every broadcast copy), else the additive `mask` operand. The scale
//    may also sit on the queries (`(q / c) @ k^T`) and is left to the op's
//    default when it is 1/sqrt(D). Rank-3 operands `[B * H, S, D]`
//    (nn.MultiheadAttention's `x.view(S, B * H, D).transpose(0, 1)` of an
//    `[S, B, H * D]` tensor) are unfolded into `[B, H, S, D]` for the
//    attention and its result folded back (causal or mask-free only). Keys
//    and values repeated to the query heads by Hugging Face's repeat_kv
//    (Unsqueeze, Expand, Reshape) or by `repeat_interleave(r, dim=1)` (a
//    Split into heads, each Unsqueezed, Expanded and Reshaped, then a
//    Concat) are given unrepeated: grouped-query attention, as the PyTorch
//    frontend gives it.
// 5. RoPE: `x * cos + cat(-x2, x1) * sin` (Hugging Face's rotate_half, x1
//    and x2 the halves of x's last dim) becomes `loom.rope` when the cos/sin
//    constants are the tables `loom.rope` computes (positions 0..S-1, theta
//    read from them): to 8 ulps of the model's dtype, or, for tables of
//    float32 values (Hugging Face's), to the error of computing them in
//    float32 (ropeTableTolerance), as in the PyTorch frontend; other tables
//    (scaled positions, other frequencies) stay primitive.
// 6. SiLU: `x * sigmoid(x)` (either order) becomes `loom.silu` (SwiGLU's
//    gate, as the exporter spells `F.silu`).
//
//===----------------------------------------------------------------------===//

#include "Translator.h"

#include <cmath>

using namespace mlir::loom::onnx_import;

namespace {

class Fuser {
public:
  explicit Fuser(Translator &tr) : tr(tr) {
    for (size_t i = 0; i < tr.ops.size(); ++i)
      for (int x : tr.ops[i].operands)
        if (x >= 0)
          users[x].push_back(i);
  }

  void run() {
    for (size_t i = 0; i < tr.ops.size(); ++i)
      if (tr.ops[i].op == "erf")
        fuseGelu(i);
    for (size_t i = 0; i < tr.ops.size(); ++i)
      if (tr.ops[i].op == "div")
        fuseLayerNorm(i);
    for (size_t i = 0; i < tr.ops.size(); ++i)
      if (tr.ops[i].op == "mul")
        fuseRmsNorm(i);
    for (size_t i = 0; i < tr.ops.size(); ++i)
      if (tr.ops[i].op == "mul")
        fuseSilu(i);
    for (size_t i = 0; i < tr.ops.size(); ++i)
      if (tr.ops[i].op == "add")
        fuseRope(i);
    for (size_t i = 0; i < tr.ops.size(); ++i)
      if (tr.ops[i].op == "matmul")
        fuseAttention(i);
  }

private:
  /// The value of a constant all of whose elements are equal.
  std::optional<double> splat(int x) {
    LoomOp *p = tr.producer(x);
    if (!p || p->op != "constant" || p->value->numElements() == 0)
      return std::nullopt;
    double first = p->value->at(0);
    for (int64_t k = 1; k < p->value->numElements(); ++k)
      if (p->value->at(k) != first)
        return std::nullopt;
    return first;
  }

  static bool near(double a, double b) {
    return std::fabs(a - b) <= 1e-6 * std::fabs(b);
  }

  /// For a binary op `x op c` (either order for commutative ops): x and c.
  bool splitScalar(const LoomOp &op, int &x, double &c, bool commutative) {
    if (op.operands.size() != 2)
      return false;
    if (std::optional<double> v = splat(op.operands[1])) {
      x = op.operands[0];
      c = *v;
      return true;
    }
    if (commutative)
      if (std::optional<double> v = splat(op.operands[0])) {
        x = op.operands[1];
        c = *v;
        return true;
      }
    return false;
  }

  /// The only user of `x` with mnemonic `op`, if `x` has exactly one user.
  LoomOp *soleUser(int x, const char *op) {
    auto it = users.find(x);
    if (it == users.end() || it->second.size() != 1)
      return nullptr;
    LoomOp &user = tr.ops[it->second[0]];
    return user.op == op ? &user : nullptr;
  }

  void fuseGelu(size_t erfIndex) {
    LoomOp &erf = tr.ops[erfIndex];
    LoomOp *scaled = tr.producer(erf.operands[0]);
    int x;
    double c;
    if (!scaled ||
        !((scaled->op == "div" && splitScalar(*scaled, x, c, false) &&
           near(c, std::sqrt(2.0))) ||
          (scaled->op == "mul" && splitScalar(*scaled, x, c, true) &&
           near(c, 1 / std::sqrt(2.0)))))
      return;
    LoomOp *onePlus = soleUser(erf.results[0], "add");
    int other;
    if (!onePlus || !splitScalar(*onePlus, other, c, true) || c != 1.0)
      return;
    LoomOp *product = soleUser(onePlus->results[0], "mul");
    if (!product)
      return;
    int factor = product->operands[0] == onePlus->results[0]
                     ? product->operands[1]
                     : product->operands[0];
    LoomOp *result = nullptr;
    if (factor == x) {
      // x * (1 + erf) then * 0.5.
      result = soleUser(product->results[0], "mul");
      if (!result || !splitScalar(*result, other, c, true) || c != 0.5)
        return;
    } else {
      // (x * 0.5) * (1 + erf).
      LoomOp *half = tr.producer(factor);
      if (!half || half->op != "mul" || !splitScalar(*half, other, c, true) ||
          c != 0.5 || other != x)
        return;
      result = product;
    }
    result->op = "gelu";
    result->operands = {x};
    result->attributes = nlohmann::json::object();
  }

  /// `reduce_mean(x)` over the last dim, keeping it: x, else -1.
  int lastDimMean(int value) {
    LoomOp *op = tr.producer(value);
    if (!op || op->op != "reduce_mean" ||
        !op->attributes.value("keepdims", false))
      return -1;
    int x = op->operands[0];
    std::vector<int64_t> axes =
        op->attributes["axes"].get<std::vector<int64_t>>();
    if (axes != std::vector<int64_t>{int64_t(tr.values[x].shape.size()) - 1})
      return -1;
    return x;
  }

  void fuseLayerNorm(size_t index) {
    const LoomOp &div = tr.ops[index];
    int d = div.operands[0];
    LoomOp *sqrt = tr.producer(div.operands[1]);
    LoomOp *sub = tr.producer(d);
    if (!sqrt || sqrt->op != "sqrt" || !sub || sub->op != "sub")
      return;
    int x = sub->operands[0];
    if (lastDimMean(sub->operands[1]) != x)
      return;
    LoomOp *plusEps = tr.producer(sqrt->operands[0]);
    int var;
    double eps;
    if (!plusEps || plusEps->op != "add" ||
        !splitScalar(*plusEps, var, eps, true) || eps <= 0)
      return;
    int squared = lastDimMean(var);
    LoomOp *square = squared < 0 ? nullptr : tr.producer(squared);
    if (!square || square->op != "mul" || square->operands[0] != d ||
        square->operands[1] != d)
      return;
    const LoomValue &xv = tr.values[x];
    Shape param = {xv.shape.back()};
    auto isParam = [&](int v) { return tr.values[v].shape == param; };
    // x_hat * gamma + beta: one layer_norm with both (Loom's layer_norm takes
    // them together).
    LoomOp *scaled = soleUser(div.results[0], "mul");
    if (scaled) {
      int gamma = scaled->operands[0] == div.results[0] ? scaled->operands[1]
                                                        : scaled->operands[0];
      LoomOp *shifted = soleUser(scaled->results[0], "add");
      if (shifted && isParam(gamma)) {
        int beta = shifted->operands[0] == scaled->results[0]
                       ? shifted->operands[1]
                       : shifted->operands[0];
        if (isParam(beta)) {
          shifted->op = "layer_norm";
          shifted->operands = {x, gamma, beta};
          shifted->attributes = {{"eps", eps}};
          return;
        }
      }
    }
    LoomOp &norm = tr.ops[index];
    norm.op = "layer_norm";
    norm.operands = {x, -1, -1};
    norm.attributes = {{"eps", eps}};
  }

  /// `rsqrt(mean(x * x) + eps)` over the last dim (rsqrt spelled as
  /// `rsqrt` or `1 / sqrt`): x and eps, else -1.
  int rmsFactor(int value, double &eps) {
    LoomOp *op = tr.producer(value);
    if (op && op->op == "div") {
      std::optional<double> one = splat(op->operands[0]);
      LoomOp *sqrt = tr.producer(op->operands[1]);
      if (!one || *one != 1.0 || !sqrt || sqrt->op != "sqrt")
        return -1;
      op = sqrt;
    } else if (!op || op->op != "rsqrt") {
      return -1;
    }
    LoomOp *plusEps = tr.producer(op->operands[0]);
    int meanSquare;
    if (!plusEps || plusEps->op != "add" ||
        !splitScalar(*plusEps, meanSquare, eps, true) || eps <= 0)
      return -1;
    int squared = lastDimMean(meanSquare);
    LoomOp *square = squared < 0 ? nullptr : tr.producer(squared);
    if (!square || square->op != "mul" ||
        square->operands[0] != square->operands[1])
      return -1;
    return square->operands[0];
  }

  /// SiLU as the exporter spells `F.silu` (opsets < 22): `x * sigmoid(x)`,
  /// either order, becomes `loom.silu x`.
  void fuseSilu(size_t index) {
    LoomOp &mul = tr.ops[index];
    for (int k = 0; k < 2; ++k) {
      int x = mul.operands[k];
      LoomOp *sigmoid = tr.producer(mul.operands[1 - k]);
      if (sigmoid && sigmoid->op == "sigmoid" &&
          sigmoid->operands[0] == x &&
          tr.values[x].shape == tr.values[mul.results[0]].shape) {
        mul.op = "silu";
        mul.operands = {x};
        mul.attributes = nlohmann::json::object();
        return;
      }
    }
  }

  void fuseRmsNorm(size_t index) {
    const LoomOp &scaled = tr.ops[index];
    double eps = 0;
    int x = -1;
    for (int k = 0; k < 2 && x < 0; ++k)
      if (rmsFactor(scaled.operands[1 - k], eps) == scaled.operands[k])
        x = scaled.operands[k];
    if (x < 0)
      return;
    Shape param = {tr.values[x].shape.back()};
    // `weight * normalized` (either order): one rms_norm with gamma.
    if (LoomOp *weighted = soleUser(scaled.results[0], "mul")) {
      int gamma = weighted->operands[0] == scaled.results[0]
                      ? weighted->operands[1]
                      : weighted->operands[0];
      if (tr.values[gamma].shape == param) {
        weighted->op = "rms_norm";
        weighted->operands = {x, gamma};
        weighted->attributes = {{"eps", eps}};
        return;
      }
    }
    LoomOp &norm = tr.ops[index];
    norm.op = "rms_norm";
    norm.operands = {x};
    norm.attributes = {{"eps", eps}};
  }

  /// For a rank-3 operand [B * H, S, D] as nn.MultiheadAttention makes it
  /// (`x.view(S, B * H, D).transpose(0, 1)` of x [S, B, H * D]): B, else 0.
  int64_t foldedBatch(int x) {
    LoomOp *t = tr.producer(x);
    if (!t || t->op != "transpose" ||
        t->attributes["permutation"].get<std::vector<int64_t>>() !=
            std::vector<int64_t>{1, 0, 2})
      return 0;
    LoomOp *r = tr.producer(t->operands[0]);
    if (!r || r->op != "reshape")
      return 0;
    const Shape &in = tr.values[r->operands[0]].shape,
                &out = tr.values[r->results[0]].shape;
    if (in.size() != 3 || out.size() != 3 || in[0] != out[0] || in[1] == 0 ||
        out[1] % in[1] || in[2] != out[1] / in[1] * out[2])
      return 0;
    return in[1];
  }

  /// For `v = x * c` (either order, c a constant): x and c's data.
  bool splitConstant(int v, int &x, const ConstTensor *&c) {
    LoomOp *mul = tr.producer(v);
    if (!mul || mul->op != "mul")
      return false;
    for (int k = 0; k < 2; ++k)
      if (LoomOp *p = tr.producer(mul->operands[1 - k]);
          p && p->op == "constant") {
        x = mul->operands[k];
        c = p->value;
        return true;
      }
    return false;
  }

  /// Whether `v` is the half `which` (0: first, 1: second) of `x`'s last
  /// dim, cut by a split.
  bool isHalfOf(int v, int x, int which) {
    LoomOp *split = tr.producer(v);
    const Shape &shape = tr.values[x].shape;
    if (!split || split->op != "split" || split->operands[0] != x ||
        split->attributes["axis"].get<int64_t>() != int64_t(shape.size() - 1))
      return false;
    std::vector<int64_t> sizes =
        split->attributes["sizes"].get<std::vector<int64_t>>();
    int64_t half = shape.back() / 2, offset = 0;
    for (size_t i = 0; i < split->results.size(); ++i) {
      if (split->results[i] == v)
        return sizes[i] == half && offset == which * half;
      offset += sizes[i];
    }
    return false;
  }

  /// The theta whose rotary tables (`loom.rope`'s definition, positions
  /// 0..S-1) `cos` and `sin`, broadcast to `shape` [B, H, S, D], are;
  /// nullopt otherwise (the tables differ, or differ across B or H). The
  /// tolerance is ropeTableTolerance's: 8 ulps of the model's dtype, or,
  /// for tables whose every value is a float32 (Hugging Face computes them
  /// in float32), the error such a computation makes.
  static std::optional<double> ropeTheta(const ConstTensor &cos,
                                         const ConstTensor &sin,
                                         const Shape &shape, DType dtype) {
    int64_t s = shape[2], d = shape[3];
    if (s < 2 || d < 4 || d % 2)
      return std::nullopt;
    if (dtype != DType::F64 && dtype != DType::F32)
      return std::nullopt;
    // Element [b, h, p, i] of a constant broadcast to `shape`: 0 for
    // dims the constant does not hold (its size 1 there), as B and H are.
    auto at = [&](const ConstTensor &c, int64_t p, int64_t i) {
      const Shape &cs = c.shape;
      size_t r = cs.size();
      int64_t rows = r >= 2 ? cs[r - 2] : 1, cols = r >= 1 ? cs[r - 1] : 1;
      return c.at((rows == 1 ? 0 : p) * cols + (cols == 1 ? 0 : i));
    };
    bool float32Tables = true;
    for (const ConstTensor *c : {&cos, &sin}) {
      const Shape &cs = c->shape;
      size_t r = cs.size();
      if (r < 2 || r > 4 || cs[r - 2] != s || cs[r - 1] != d)
        return std::nullopt;
      for (size_t k = 0; k + 2 < r; ++k)
        if (cs[k] != 1)
          return std::nullopt;
      for (int64_t p = 0; p < s && float32Tables; ++p)
        for (int64_t i = 0; i < d && float32Tables; ++i)
          float32Tables = double(float(at(*c, p, i))) == at(*c, p, i);
    }
    // Theta from the lowest frequency at position 1, theta^(-(d-2)/d):
    // its error grows least when raised to -d/(d-2).
    int64_t last = d / 2 - 1;
    double angle = std::atan2(at(sin, 1, last), at(cos, 1, last));
    if (!(angle > 0))
      return std::nullopt;
    double theta = std::pow(angle, -double(d) / double(d - 2));
    if (std::fabs(theta - std::round(theta)) <= 1e-5 * theta)
      theta = std::round(theta);
    if (!(theta > 1) || !std::isfinite(theta))
      return std::nullopt;
    for (int64_t p = 0; p < s; ++p)
      for (int64_t i = 0; i < d; ++i) {
        double a =
            double(p) * std::pow(theta, -double(2 * (i % (d / 2))) / double(d));
        double tol = ropeTableTolerance(a, theta, dtype, float32Tables);
        if (!(std::fabs(at(cos, p, i) - std::cos(a)) <= tol) ||
            !(std::fabs(at(sin, p, i) - std::sin(a)) <= tol))
          return std::nullopt;
      }
    return theta;
  }

  /// How far a table entry at angle `a` may be from the exact cos / sin.
  /// Tables in the model's precision: 8 ulps of it. Tables of float32
  /// values (Hugging Face's `inv_freq = 1 / theta^(2i/d)`, `t * inv_freq`
  /// and cos/sin all in float32, then cast): float32 rounds the exponent
  /// 2i/d (an error of up to ln(theta) ulps in inv_freq), the product and
  /// the cos/sin, so an entry is off by up to about
  /// eps32 * (1 + a * (1 + ln theta)) (measured: at most 0.47 of that for
  /// theta 1e4 to 1e6, d 4 to 128, 8192 positions); twice that is allowed.
  /// (docs/Frontends.md, "RoPE tables".)
  static double ropeTableTolerance(double a, double theta, DType dtype,
                                   bool float32Tables) {
    double ownUlps = 8 * (dtype == DType::F64 ? 0x1p-52 : 0x1p-23);
    if (!float32Tables)
      return ownUlps;
    return std::max(ownUlps,
                    2 * 0x1p-23 * (1 + std::fabs(a) * (1 + std::log(theta))));
  }

  /// Hugging Face's `x * cos + rotate_half(x) * sin` (rotate_half(x) =
  /// cat(-x2, x1) of x's halves) as `loom.rope` when the cos/sin constants
  /// are the tables `loom.rope` computes (ropeTheta's tolerance); other
  /// tables stay the model's own (primitive).
  void fuseRope(size_t index) {
    LoomOp &add = tr.ops[index];
    for (int k = 0; k < 2; ++k) {
      int x, r;
      const ConstTensor *cos, *sin;
      if (!splitConstant(add.operands[k], x, cos) ||
          !splitConstant(add.operands[1 - k], r, sin))
        continue;
      const Shape &shape = tr.values[x].shape;
      LoomOp *cat = tr.producer(r);
      if (shape.size() != 4 || !cat || cat->op != "concat" ||
          cat->attributes["axis"].get<int64_t>() != 3 ||
          cat->operands.size() != 2)
        continue;
      LoomOp *neg = tr.producer(cat->operands[0]);
      if (!neg || neg->op != "neg" || !isHalfOf(neg->operands[0], x, 1) ||
          !isHalfOf(cat->operands[1], x, 0))
        continue;
      std::optional<double> theta =
          ropeTheta(*cos, *sin, shape, tr.values[x].dtype);
      if (!theta)
        continue;
      add.op = "rope";
      add.operands = {x};
      add.attributes = {{"theta", *theta}};
      return;
    }
  }

  /// For keys or values [B, Hkv * r, S, D] repeated as Hugging Face's
  /// repeat_kv does (`x[:, :, None].expand(B, Hkv, r, S, D).reshape(B,
  /// Hkv * r, S, D)`, exported as Unsqueeze, Expand (an add of zeros) and
  /// Reshape): the [B, Hkv, 1, S, D] value the expand repeated, else -1.
  /// Head j * r + i of the repeat is head j of x, the pairing
  /// `loom.attention` makes for grouped-query attention.
  int unrepeated(int x) {
    LoomOp *view = tr.producer(x);
    if (!view || view->op != "reshape")
      return -1;
    int repeated = view->operands[0];
    const Shape &out = tr.values[x].shape, &in = tr.values[repeated].shape;
    if (out.size() != 4 || in.size() != 5 || in[0] != out[0] ||
        in[1] * in[2] != out[1] || in[3] != out[2] || in[4] != out[3] ||
        in[2] < 2)
      return -1;
    LoomOp *expand = tr.producer(repeated);
    if (!expand || expand->op != "add")
      return -1;
    for (int k = 0; k < 2; ++k) {
      int y = expand->operands[k];
      std::optional<double> zero = splat(expand->operands[1 - k]);
      const Shape &ys = tr.values[y].shape;
      if (zero && *zero == 0.0 && ys == Shape{in[0], in[1], 1, in[3], in[4]})
        return y;
    }
    return -1;
  }

  /// For keys or values [B, Hkv * r, S, D] repeated as
  /// `x.repeat_interleave(r, dim=1)` is exported (a Split of x into its Hkv
  /// heads; each head Unsqueezed, Expanded r times (an add of zeros) and
  /// Reshaped to [B, r, S, D]; the Hkv pieces Concatenated in order): x
  /// [B, Hkv, S, D], else -1. Head j * r + i of the result is head j of x,
  /// as with repeat_kv, so the same grouped-query pairing holds.
  int uninterleaved(int x) {
    LoomOp *cat = tr.producer(x);
    const Shape &out = tr.values[x].shape;
    if (!cat || cat->op != "concat" || out.size() != 4 ||
        cat->attributes.value("axis", int64_t(-1)) != 1 ||
        cat->operands.size() < 2)
      return -1;
    LoomOp *split = nullptr;
    int64_t heads = cat->operands.size(), r = out[1] / heads;
    if (r < 2 || r * heads != out[1])
      return -1;
    for (int64_t j = 0; j < heads; ++j) {
      // piece j = reshape(add(unsqueeze(head j), zeros [B, 1, r, S, D]))
      LoomOp *view = tr.producer(cat->operands[j]);
      if (!view || view->op != "reshape")
        return -1;
      int expanded = view->operands[0];
      if (tr.values[expanded].shape != Shape{out[0], 1, r, out[2], out[3]})
        return -1;
      LoomOp *expand = tr.producer(expanded);
      if (!expand || expand->op != "add")
        return -1;
      int head = -1;
      for (int k = 0; k < 2 && head < 0; ++k) {
        std::optional<double> zero = splat(expand->operands[1 - k]);
        int y = expand->operands[k];
        if (!zero || *zero != 0.0 ||
            tr.values[y].shape != Shape{out[0], 1, 1, out[2], out[3]})
          continue;
        LoomOp *unsqueeze = tr.producer(y);
        if (unsqueeze && unsqueeze->op == "reshape")
          head = unsqueeze->operands[0];
      }
      LoomOp *cut = head >= 0 ? tr.producer(head) : nullptr;
      if (!cut || cut->op != "split" || (split && cut != split) ||
          cut->attributes.value("axis", int64_t(-1)) != 1 ||
          int64_t(cut->results.size()) != heads || cut->results[j] != head)
        return -1;
      split = cut;
    }
    int source = split->operands[0];
    if (tr.values[source].shape != Shape{out[0], heads, out[2], out[3]})
      return -1;
    return source;
  }

  void fuseAttention(size_t index) {
    const LoomOp &pv = tr.ops[index];
    if (!pv.attributes.empty())
      return;
    int p = pv.operands[0], v = pv.operands[1];
    size_t rank = tr.values[p].shape.size();
    if ((rank != 4 && rank != 3) || tr.values[v].shape.size() != rank)
      return;
    LoomOp *softmax = tr.producer(p);
    if (!softmax || softmax->op != "softmax" ||
        softmax->attributes["axis"].get<int64_t>() != int64_t(rank - 1))
      return;
    int s = softmax->operands[0];
    const ConstTensor *mask = nullptr;
    int maskValue = -1; // the constant, defined before the scores
    if (LoomOp *add = tr.producer(s); add && add->op == "add")
      for (int k = 0; k < 2; ++k)
        if (LoomOp *m = tr.producer(add->operands[k]);
            m && m->op == "constant" && m->value->shape.size() <= rank) {
          mask = m->value;
          maskValue = add->operands[k];
          s = add->operands[1 - k];
          break;
        }
    // The scale: on the scores (`(q @ k^T) * c`), on the queries
    // (`(q / c) @ k^T`, nn.MultiheadAttention), or both.
    double scale = 1.0;
    auto takeScale = [&](int &value) {
      LoomOp *op = tr.producer(value);
      int t;
      double c;
      if (op && (op->op == "mul" || op->op == "div") &&
          splitScalar(*op, t, c, op->op == "mul")) {
        scale *= op->op == "mul" ? c : 1.0 / c;
        value = t;
      }
    };
    takeScale(s);
    LoomOp *qk = tr.producer(s);
    if (!qk || qk->op != "matmul" ||
        !qk->attributes.value("transpose_rhs", false) ||
        qk->attributes.value("transpose_lhs", false))
      return;
    int q = qk->operands[0], k = qk->operands[1];
    takeScale(q);
    // Rank 3: heads folded into the batch; unfold them to [B, H, S, D].
    int64_t batch = 0;
    if (rank == 3) {
      batch = foldedBatch(q);
      if (!batch || foldedBatch(k) != batch || foldedBatch(v) != batch ||
          (mask && mask->shape.size() == 3 && mask->shape[0] != 1))
        return;
    }
    auto unfolded = [&](const Shape &shape) {
      return rank == 3 ? Shape{batch, shape[0] / batch, shape[1], shape[2]}
                       : shape;
    };
    Shape qs = unfolded(tr.values[q].shape), ks = unfolded(tr.values[k].shape),
          vs = unfolded(tr.values[v].shape);
    if (qs[0] != ks[0] || ks[0] != vs[0] || ks[1] != vs[1] || ks[1] == 0 ||
        qs[1] % ks[1] || ks[2] != vs[2] || qs[3] != ks[3])
      return;
    // Grouped-query attention: keys and values repeated to the query heads
    // (repeat_kv) are given unrepeated, so the search sees the grouped
    // heads (docs/Frontends.md, "How attention is matched").
    // Both repeats are recognised: repeat_kv's (unrepeated, [B, Hkv, 1, S,
    // D]) and repeat_interleave's (uninterleaved, [B, Hkv, S, D]).
    int groupedK = rank == 4 ? unrepeated(k) : -1;
    int groupedV = rank == 4 ? unrepeated(v) : -1;
    bool interleaved = false;
    if (rank == 4 && (groupedK < 0 || groupedV < 0)) {
      groupedK = uninterleaved(k);
      groupedV = uninterleaved(v);
      interleaved = true;
    }
    bool grouped = groupedK >= 0 && groupedV >= 0 &&
                   tr.values[groupedK].shape[1] == tr.values[groupedV].shape[1];
    int64_t sq = qs[2], skv = ks[2];
    nlohmann::json attrs = nlohmann::json::object();
    bool causal = mask && isCausal(*mask, sq, skv);
    // A rank-3 mask other than the triangle would need reshaping: not
    // matched (it stays primitive).
    if (mask && !causal && rank == 3)
      return;
    if (causal)
      attrs["causal"] = true;
    double standard = 1.0 / std::sqrt(double(qs[3]));
    if (std::fabs(scale - standard) > 1e-15 * standard)
      attrs["scale"] = scale;
    DType dtype = tr.values[q].dtype;
    if (rank == 3) {
      q = tr.insertBefore(index, "reshape", {q}, {qs}, dtype)[0];
      k = tr.insertBefore(index, "reshape", {k}, {ks}, dtype)[0];
      v = tr.insertBefore(index, "reshape", {v}, {vs}, dtype)[0];
      Shape out = {qs[0], qs[1], qs[2], vs[3]};
      int o = tr.insertBefore(index, "attention", {q, k, v}, {out}, dtype,
                              attrs)[0];
      // The product's result keeps its folded shape.
      LoomOp &folded = tr.ops[index];
      folded.op = "reshape";
      folded.operands = {o};
      folded.attributes = nlohmann::json::object();
      return;
    }
    if (grouped) {
      // [B, Hkv, 1, S, D] -> [B, Hkv, S, D]: the value before the unsqueeze
      // when there is one, else a reshape.
      auto squeezed = [&](int y) {
        Shape shape = tr.values[y].shape;
        shape.erase(shape.begin() + 2);
        if (LoomOp *view = tr.producer(y);
            view && view->op == "reshape" &&
            tr.values[view->operands[0]].shape == shape)
          return view->operands[0];
        return tr.insertBefore(index, "reshape", {y}, {shape}, dtype)[0];
      };
      k = interleaved ? groupedK : squeezed(groupedK);
      v = interleaved ? groupedV : squeezed(groupedV);
    }
    std::vector<int> operands = {q, k, v};
    if (mask && !causal)
      operands.push_back(maskValue);
    LoomOp &attention = tr.ops[index];
    attention.op = "attention";
    attention.operands = operands;
    attention.attributes = attrs;
  }

  /// Whether `m`, broadcast to [..., sq, skv], is the causal triangle.
  static bool isCausal(const ConstTensor &m, int64_t sq, int64_t skv) {
    size_t r = m.shape.size();
    if (sq != skv || r < 2 || m.shape[r - 2] != sq || m.shape[r - 1] != skv)
      return false;
    for (int64_t e = 0; e < m.numElements(); ++e) {
      int64_t j = e % skv, i = (e / skv) % sq;
      double value = m.at(e);
      bool masked = value <= -1e30;
      if (j <= i ? value != 0.0 : !masked)
        return false;
    }
    return true;
  }

  Translator &tr;
  std::map<int, std::vector<size_t>> users;
};

} // namespace

void mlir::loom::onnx_import::fusePatterns(Translator &translator) {
  Fuser(translator).run();
}
