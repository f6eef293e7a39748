//===- Elementwise.td - loom elementwise ops ---------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/Elementwise.cpp.
//
// Pointwise ops: binary arithmetic with numpy broadcasting, unary math and
// activations, scaling, casts, dropout, and the backward helpers that the
// VJPs of the activations need. Each description ends with the op's
// gradient, written with loom ops (`1` stands for an `arith.constant` splat
// of rank 0, which broadcasts), so autodiff never needs an op outside the
// dialect.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_ELEMENTWISE_TD
#define LOOM_DIALECT_LOOM_IR_OPS_ELEMENTWISE_TD


//===----------------------------------------------------------------------===//
// Binary arithmetic with numpy broadcasting
//===----------------------------------------------------------------------===//

// Shapes align at their last dim; a missing dim or a dim of size 1 stretches
// to the other operand's size. Constraints shared by every binary op:
//   C1: both operands have the same element type.
//   C2: the operand shapes are broadcast-compatible.
// Inference, sharding rule (pointwise) and cost (one FLOP per element) are
// the same for every binary op, so they are defined once here, with the
// helpers of lib/Dialect/Loom/IR/Ops/Pointwise.h. `linear` marks the rule of
// an op linear in both operands jointly (it may keep partial sums).
class Loom_BinaryOp<string mnemonic, list<Trait> traits = [], bit linear = 0>
    : Loom_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])> {
  let arguments = (ins Loom_Tensor:$lhs, Loom_Tensor:$rhs);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return ::mlir::loom::detail::inferBroadcastBinary(
          location, adaptor.getLhs(), adaptor.getRhs(), inferred);
    }
    ::mlir::loom::OpShardingRule $cppClass::getShardingRule() {
      return ::mlir::loom::detail::getPointwiseRule(getOperation(),
          /*globalIndexed=*/false, /*linear=*/}] # !if(linear, "true", "false") # [{);
    }
    ::mlir::loom::OpCost $cppClass::getCost(
        const ::mlir::loom::OpShapes &shapes) {
      return ::mlir::loom::detail::getPointwiseCost(getOperation(), shapes, 1);
    }
  }];
}

def Loom_AddOp : Loom_BinaryOp<"add", [Commutative], /*linear=*/1> {
  let summary = "elementwise sum with numpy broadcasting";
  let description = [{
    Adds `lhs` and `rhs` element by element after broadcasting them to a
    common shape: shapes are aligned at their last dim, and a missing dim or
    a dim of size 1 stretches to the other operand's size.

    ```mlir
    %y = loom.add %x, %bias : (tensor<8x128x768xf32>, tensor<768xf32>)
                              -> tensor<8x128x768xf32>
    ```

    Constraints:
    - C1: both operands have the same element type.
    - C2: the operand shapes are broadcast-compatible.
    The result has the broadcast shape and the operands' element type.
  }];
}

def Loom_SubOp : Loom_BinaryOp<"sub", [], /*linear=*/1> {
  let summary = "elementwise difference with numpy broadcasting";
  let description = [{
    Computes `lhs - rhs` element by element after broadcasting as in
    `loom.add`. Integers wrap around (two's complement).

    ```mlir
    %d = loom.sub %x, %mean : (tensor<8x768xf32>, tensor<8x1xf32>)
                              -> tensor<8x768xf32>
    ```

    Constraints:
    - C1: both operands have the same element type.
    - C2: the operand shapes are broadcast-compatible.
    The result has the broadcast shape and the operands' element type.

    Gradient: `dlhs = dy`, `drhs = neg(dy)`, each summed (`reduce_sum`) over
    the dims its operand was broadcast along.
  }];
}

def Loom_MulOp : Loom_BinaryOp<"mul", [Commutative]> {
  let summary = "elementwise product with numpy broadcasting";
  let description = [{
    Computes `lhs * rhs` element by element after broadcasting as in
    `loom.add`. Integers wrap around (two's complement); on i1 it is a
    logical and.

    ```mlir
    %y = loom.mul %xhat, %gamma : (tensor<8x768xf32>, tensor<768xf32>)
                                  -> tensor<8x768xf32>
    ```

    Constraints:
    - C1: both operands have the same element type.
    - C2: the operand shapes are broadcast-compatible.
    The result has the broadcast shape and the operands' element type.

    Gradient: `dlhs = mul(dy, rhs)`, `drhs = mul(dy, lhs)`, each summed over
    the dims its operand was broadcast along.
  }];
}

def Loom_DivOp : Loom_BinaryOp<"div"> {
  let summary = "elementwise floating-point quotient with numpy broadcasting";
  let description = [{
    Computes `lhs / rhs` (IEEE division) element by element after
    broadcasting as in `loom.add`. Only floating-point tensors divide:
    integer division would need a rounding mode and a rule for division by
    zero, and no Transformer graph needs one.

    ```mlir
    %p = loom.div %e, %sum : (tensor<8x128xf32>, tensor<8x1xf32>)
                             -> tensor<8x128xf32>
    ```

    Constraints:
    - C1: both operands have the same element type.
    - C2: the operand shapes are broadcast-compatible.
    The result has the broadcast shape and the operands' element type.

    Gradient (y the result): `dlhs = div(dy, rhs)`,
    `drhs = neg(div(mul(dy, y), rhs))`, each summed over the dims its
    operand was broadcast along.
  }];
  let arguments = (ins Loom_FloatTensor:$lhs, Loom_FloatTensor:$rhs);
  let results = (outs Loom_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Unary math and activations
//===----------------------------------------------------------------------===//

// A floating-point op applied to each element; the result has the operand's
// type, so the type prints once. Without attributes these ops have no
// constraints beyond their types.
class Loom_UnaryFloatOp<string mnemonic, list<Trait> traits = []>
    : Loom_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType,
                                             InferTypeOpInterface])> {
  let arguments = (ins Loom_FloatTensor:$input);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

// A unary op with no attributes: the pointwise sharding rule and a cost of
// `flops` FLOPs per element, defined once here (helpers in
// lib/Dialect/Loom/IR/Ops/Pointwise.h); `linear` as for Loom_BinaryOp.
class Loom_PlainUnaryOp<string mnemonic, int flops, bit linear = 0>
    : Loom_UnaryFloatOp<mnemonic> {
  let extraClassDefinition = [{
    ::mlir::loom::OpShardingRule $cppClass::getShardingRule() {
      return ::mlir::loom::detail::getPointwiseRule(getOperation(),
          /*globalIndexed=*/false, /*linear=*/}] # !if(linear, "true", "false") # [{);
    }
    ::mlir::loom::OpCost $cppClass::getCost(
        const ::mlir::loom::OpShapes &shapes) {
      return ::mlir::loom::detail::getPointwiseCost(getOperation(), shapes,
                                                    }] # flops # [{);
    }
  }];
}

def Loom_NegOp : Loom_PlainUnaryOp<"neg", 1, /*linear=*/1> {
  let summary = "elementwise negation";
  let description = [{
    Computes `-x` (flipping the sign bit, so `neg(0) = -0`).

    ```mlir
    %y = loom.neg %x : tensor<8x768xf32>
    ```

    Gradient: `dx = neg(dy)`.
  }];
}

def Loom_ExpOp : Loom_PlainUnaryOp<"exp", 1> {
  let summary = "elementwise natural exponential";
  let description = [{
    Computes `e^x`.

    ```mlir
    %y = loom.exp %x : tensor<8x128xf32>
    ```

    Gradient (y the result): `dx = mul(dy, y)`.
  }];
}

def Loom_LogOp : Loom_PlainUnaryOp<"log", 1> {
  let summary = "elementwise natural logarithm";
  let description = [{
    Computes `ln(x)` (`-inf` at 0, NaN below 0, as IEEE `log`).

    ```mlir
    %y = loom.log %x : tensor<8x128xf32>
    ```

    Gradient: `dx = div(dy, x)`.
  }];
}

def Loom_SqrtOp : Loom_PlainUnaryOp<"sqrt", 1> {
  let summary = "elementwise square root";
  let description = [{
    Computes `sqrt(x)` (NaN below 0).

    ```mlir
    %y = loom.sqrt %x : tensor<8x1xf32>
    ```

    Gradient (y the result): `dx = scale(div(dy, y)) {factor = 0.5}`.
  }];
}

def Loom_RsqrtOp : Loom_PlainUnaryOp<"rsqrt", 1> {
  let summary = "elementwise reciprocal square root";
  let description = [{
    Computes `1 / sqrt(x)` (as normalizations use it: `rsqrt(var + eps)`).

    ```mlir
    %y = loom.rsqrt %x : tensor<8x1xf32>
    ```

    Gradient (y the result; `d/dx x^(-1/2) = -y^3 / 2`):
    `dx = scale(mul(dy, mul(y, mul(y, y)))) {factor = -0.5}`.
  }];
}

def Loom_TanhOp : Loom_PlainUnaryOp<"tanh", 1> {
  let summary = "elementwise hyperbolic tangent";
  let description = [{
    Computes `tanh(x)`.

    ```mlir
    %y = loom.tanh %x : tensor<8x768xf32>
    ```

    Gradient (y the result): `dx = mul(dy, sub(1, mul(y, y)))`.
  }];
}

def Loom_SigmoidOp : Loom_PlainUnaryOp<"sigmoid", 4> {
  let summary = "elementwise logistic sigmoid";
  let description = [{
    Computes `1 / (1 + e^-x)`.

    ```mlir
    %y = loom.sigmoid %x : tensor<8x768xf32>
    ```

    Gradient (y the result): `dx = mul(dy, mul(y, sub(1, y)))`.
  }];
}

def Loom_ReluOp : Loom_PlainUnaryOp<"relu", 1> {
  let summary = "elementwise rectified linear unit";
  let description = [{
    Computes `max(x, 0)` (NaN stays NaN, as in PyTorch).

    ```mlir
    %y = loom.relu %x : tensor<8x3072xf32>
    ```

    Gradient: `dx = relu_grad(dy, x)`.
  }];
}

def Loom_SiluOp : Loom_PlainUnaryOp<"silu", 5> {
  let summary = "elementwise sigmoid-weighted linear unit (swish)";
  let description = [{
    Computes `x * sigmoid(x)`, the activation of LLaMA-style gated MLPs.

    ```mlir
    %y = loom.silu %x : tensor<8x3072xf32>
    ```

    Gradient: `dx = silu_grad(dy, x)`.
  }];
}

def Loom_GeluOp : Loom_UnaryFloatOp<"gelu"> {
  let summary = "elementwise Gaussian error linear unit";
  let description = [{
    Computes `x * Phi(x)`, Phi the standard normal CDF, as PyTorch's
    `torch.nn.functional.gelu`:
    - `approximate = none` (the default, printed by omission):
      `0.5 * x * (1 + erf(x / sqrt(2)))`;
    - `approximate = tanh` (GPT-2's `gelu_new`):
      `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.

    ```mlir
    %y = loom.gelu %x approximate = tanh : tensor<8x3072xf32>
    ```

    Gradient: `dx = gelu_grad(dy, x)` with the same `approximate`.
  }];
  let arguments = (ins Loom_FloatTensor:$input,
      DefaultValuedAttr<Loom_GeluApproximationAttr,
                        "::mlir::loom::GeluApproximation::None">:$approximate);
  let assemblyFormat = [{
    $input (`approximate` `=` custom<GeluApproximation>($approximate)^)?
    attr-dict `:` type($result)
  }];
}

def Loom_ScaleOp : Loom_UnaryFloatOp<"scale"> {
  let summary = "multiplication by a compile-time constant";
  let description = [{
    Computes `x * factor` with `factor` rounded to the element type, e.g.
    the `1 / sqrt(d_head)` of attention scores or a loss scale.

    ```mlir
    %s = loom.scale %scores {factor = 1.250000e-01 : f64} : tensor<8x12x128x128xf32>
    ```

    Constraints:
    - C1: `factor` is finite.

    Gradient: `dx = scale(dy)` with the same factor.
  }];
  let arguments = (ins Loom_FloatTensor:$input, F64Attr:$factor);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

def Loom_CastOp : Loom_Op<"cast", [Pure]> {
  let summary = "element type conversion";
  let description = [{
    Converts each element to the result's element type, one of f64, f32,
    bf16, f16, i64, i32, i1, as PyTorch's `Tensor.to(dtype)`:
    - float to float: rounds to nearest, ties to even;
    - integer to float: rounds to nearest, ties to even;
    - float to integer: truncates toward zero (values out of the target's
      range, and NaN, give an unspecified value);
    - integer to integer: sign-extends or keeps the low bits (wraps);
    - to i1: `x != 0`; from i1: false is 0, true is 1 (never -1).
    A cast to the operand's own type is the identity. The result type is
    written, not inferred: it is what the cast is for.

    ```mlir
    %h = loom.cast %x : tensor<8x768xf32> to tensor<8x768xbf16>
    ```

    Constraints:
    - C1: the operand and result have the same shape.

    Gradient: `dx = cast(dy)` back to the operand's type when that is
    floating point; integer operands get no gradient.
  }];
  let arguments = (ins Loom_Tensor:$input);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `to` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

def Loom_DropoutOp : Loom_UnaryFloatOp<"dropout"> {
  let summary = "inverted dropout with a counter-based random mask";
  let description = [{
    Computes `y = keep ? x * (1 / (1 - rate)) : 0` per element, the scale
    computed in f64 and rounded to the element type. `keep` comes from
    Philox 4x32-10, a counter-based generator, so that it depends only on
    `seed`, the run's seed and step, and the element's *global* row-major
    index `i` in `input` (loom/Runtime/Support/Philox.h):

    - key `k = seed XOR (runSeed * 0x9E3779B97F4A7C15)` as
      `(lo32(k), hi32(k))`, counter
      `(lo32(i / 4), hi32(i / 4), lo32(step), hi32(step) & 0x7fffffff)`,
      where `runSeed` is the run's seed and `step` the 0-based training
      step, both supplied by the runtime (`loom-run --seed --rng-step`, the
      trainer's `--seed` and step); of the four 32-bit outputs `r[0..3]`,
      element `i` uses `r = r[i % 4]`;
    - `keep = r >= floor(rate * 2^32)`, an integer comparison, so the mask
      does not depend on the element type.

    Every shard of a split `input` therefore equals the slice of the
    unsplit result (a partitioned kernel offsets `i` by its shard's global
    origin), which is what makes dropout pointwise-parallel. `rate = 0` keeps
    every element and is the identity. Two dropouts with the same seed and
    shape draw the same mask: front ends give each dropout site its own
    seed. The mask changes with the training step and the run seed (the
    backward's dropout, in the same step, redraws the forward's); with run
    seed 0 at step 0 it depends on `seed` alone.

    ```mlir
    %y = loom.dropout %x {rate = 1.000000e-01 : f64, seed = 17 : i64} : tensor<8x128x768xf32>
    ```

    Constraints:
    - C1: `rate` is in `[0, 1)`.

    Gradient: `dx = dropout(dy)` with the same `rate` and `seed`, which
    redraws the forward mask (`dy` has `x`'s shape, so every element gets
    its forward index).
  }];
  let arguments = (ins Loom_FloatTensor:$input, F64Attr:$rate, I64Attr:$seed);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Backward helpers
//===----------------------------------------------------------------------===//

// The gradient of an activation: `dx` from the result's gradient `dy` and
// the activation's input `x`. The three share one type (dy has x's shape
// because the activation is pointwise), which prints once.
class Loom_ActivationGradOp<string mnemonic, list<Trait> traits = []>
    : Loom_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType,
                                             InferTypeOpInterface])> {
  let arguments = (ins Loom_FloatTensor:$dy, Loom_FloatTensor:$x);
  let results = (outs Loom_FloatTensor:$dx);
  let assemblyFormat = "$dy `,` $x attr-dict `:` type($dx)";
}

def Loom_ReluGradOp : Loom_ActivationGradOp<"relu_grad"> {
  let summary = "gradient of loom.relu";
  let description = [{
    Computes `dx = x > 0 ? dy : 0` (the derivative at 0 is taken as 0, as
    in PyTorch).

    ```mlir
    %dx = loom.relu_grad %dy, %x : tensor<8x3072xf32>
    ```
  }];
}

def Loom_SiluGradOp : Loom_ActivationGradOp<"silu_grad"> {
  let summary = "gradient of loom.silu";
  let description = [{
    Computes `dx = dy * s * (1 + x * (1 - s))` with `s = sigmoid(x)`.

    ```mlir
    %dx = loom.silu_grad %dy, %x : tensor<8x3072xf32>
    ```
  }];
}

def Loom_GeluGradOp : Loom_ActivationGradOp<"gelu_grad"> {
  let summary = "gradient of loom.gelu";
  let description = [{
    Computes `dx = dy * gelu'(x)` for the form `approximate` selects (the
    same attribute as the forward `loom.gelu`):
    - `none`: `gelu'(x) = Phi(x) + x * phi(x)` with
      `Phi(x) = 0.5 * (1 + erf(x / sqrt(2)))` and
      `phi(x) = exp(-x^2 / 2) / sqrt(2 * pi)`;
    - `tanh`: with `k = sqrt(2 / pi)`, `u = k * (x + 0.044715 * x^3)` and
      `t = tanh(u)`,
      `gelu'(x) = 0.5 * (1 + t) + 0.5 * x * (1 - t^2) * k * (1 + 3 * 0.044715 * x^2)`.

    ```mlir
    %dx = loom.gelu_grad %dy, %x approximate = tanh : tensor<8x3072xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$dy, Loom_FloatTensor:$x,
      DefaultValuedAttr<Loom_GeluApproximationAttr,
                        "::mlir::loom::GeluApproximation::None">:$approximate);
  let assemblyFormat = [{
    $dy `,` $x (`approximate` `=` custom<GeluApproximation>($approximate)^)?
    attr-dict `:` type($dx)
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_ELEMENTWISE_TD
