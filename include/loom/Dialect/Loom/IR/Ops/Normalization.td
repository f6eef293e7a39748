//===- Normalization.td - loom softmax and norm ops --------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour:
// lib/Dialect/Loom/IR/Ops/Normalization.cpp.
//
// Softmax and the Transformer normalizations, each with its backward op. The
// backward ops take what autodiff has at hand (the forward output for the
// softmaxes, the forward input for the norms, which recompute their
// statistics instead of saving them), so every VJP of a forward op here is
// one backward op.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_NORMALIZATION_TD
#define LOOM_DIALECT_LOOM_IR_OPS_NORMALIZATION_TD

include "mlir/IR/OpAsmInterface.td"

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

def Loom_SoftmaxOp : Loom_Op<"softmax", [Pure, InferTypeOpAdaptor]> {
  let summary = "softmax along one dim";
  let description = [{
    Computes `y = exp(x - max(x)) / sum(exp(x - max(x)))` along dim `axis`,
    the max and sum taken over that dim (subtracting the max keeps `exp`
    from overflowing and does not change the result).

    ```mlir
    %p = loom.softmax %scores {axis = 3 : i64}
        : (tensor<8x12x128x128xf32>) -> tensor<8x12x128x128xf32>
    ```

    Constraints:
    - C1: `axis` is in `[0, rank)`.
    The result has the input's type.
  }];

  let arguments = (ins Loom_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_LogSoftmaxOp : Loom_Op<"log_softmax", [Pure, InferTypeOpAdaptor]> {
  let summary = "logarithm of the softmax along one dim";
  let description = [{
    Computes `y = x - max(x) - log(sum(exp(x - max(x))))` along dim `axis`,
    the max and sum taken over that dim: `log(softmax(x))` without its
    underflow.

    ```mlir
    %lp = loom.log_softmax %logits {axis = 2 : i64}
        : (tensor<8x128x50257xf32>) -> tensor<8x128x50257xf32>
    ```

    Constraints:
    - C1: `axis` is in `[0, rank)`.
    The result has the input's type.
  }];

  let arguments = (ins Loom_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_SoftmaxGradOp : Loom_Op<"softmax_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of softmax with respect to its input";
  let description = [{
    Given the forward output `output = softmax(x)` along `axis` and the
    gradient `grad` of the loss with respect to it, computes the gradient
    with respect to `x`:
    `dx = output * (grad - sum(grad * output))`, the sum taken over `axis`.
    This is the VJP of `loom.softmax`.

    ```mlir
    %dx = loom.softmax_grad %p, %dp {axis = 3 : i64}
        : (tensor<8x12x128x128xf32>, tensor<8x12x128x128xf32>)
          -> tensor<8x12x128x128xf32>
    ```

    Constraints:
    - C1: `output` and `grad` have the same type.
    - C2: `axis` is in `[0, rank)`.
    The result has the operands' type.
  }];

  let arguments = (ins Loom_FloatTensor:$output, Loom_FloatTensor:$grad,
                       I64Attr:$axis);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $output `,` $grad attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_LogSoftmaxGradOp
    : Loom_Op<"log_softmax_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of log_softmax with respect to its input";
  let description = [{
    Given the forward output `output = log_softmax(x)` along `axis` and the
    gradient `grad` of the loss with respect to it, computes the gradient
    with respect to `x`: `dx = grad - exp(output) * sum(grad)`, the sum taken
    over `axis` (`exp(output)` is the softmax). This is the VJP of
    `loom.log_softmax`.

    ```mlir
    %dx = loom.log_softmax_grad %lp, %dlp {axis = 1 : i64}
        : (tensor<1024x50257xf32>, tensor<1024x50257xf32>)
          -> tensor<1024x50257xf32>
    ```

    Constraints:
    - C1: `output` and `grad` have the same type.
    - C2: `axis` is in `[0, rank)`.
    The result has the operands' type.
  }];

  let arguments = (ins Loom_FloatTensor:$output, Loom_FloatTensor:$grad,
                       I64Attr:$axis);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $output `,` $grad attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Normalization over the last dim
//===----------------------------------------------------------------------===//

// The norms normalize over the last dim only, as every Transformer does (the
// hidden dim); a norm over other dims is a transpose away. `eps` is added to
// the variance (or mean square) before the reciprocal square root.
def Loom_NormEpsAttr : DefaultValuedAttr<F64Attr, "1.0e-5">;

def Loom_LayerNormOp : Loom_Op<"layer_norm",
    [Pure, InferTypeOpAdaptor, AttrSizedOperandSegments]> {
  let summary = "layer normalization over the last dim";
  let description = [{
    Normalizes `input` over its last dim (size `D`) with PyTorch's
    semantics (`torch.nn.LayerNorm(D)`, biased variance):

    ```
    mean = sum(x) / D            var = sum((x - mean)^2) / D
    y = (x - mean) * rsqrt(var + eps) * gamma + beta
    ```

    `gamma` and `beta` (each of shape `[D]`) are the elementwise affine
    parameters, given together or not at all
    (`elementwise_affine=False`); `eps` defaults to 1e-5 and prints only
    when it differs.

    ```mlir
    %y = loom.layer_norm %x, %gamma, %beta
        : (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>)
          -> tensor<8x128x768xf32>
    %z = loom.layer_norm %x {eps = 1.0e-06 : f64}
        : (tensor<8x128x768xf32>) -> tensor<8x128x768xf32>
    ```

    Constraints:
    - C1: `input` has rank >= 1.
    - C2: `gamma` and `beta` are both present or both absent.
    - C3: `gamma` and `beta` have type `tensor<D x T>`, with `D` the last
      dim of `input` and `T` its element type.
    - C4: `eps` is positive and finite (with `eps = 0` a constant row would
      divide zero by zero).
    The result has the input's type.
  }];

  let arguments = (ins Loom_FloatTensor:$input,
                       Optional<Loom_FloatTensor>:$gamma,
                       Optional<Loom_FloatTensor>:$beta,
                       Loom_NormEpsAttr:$eps);
  let results = (outs Loom_FloatTensor:$result);
  // The generic form records which of gamma and beta are present in
  // `operandSegmentSizes`; the custom form prints them in order, so a lone
  // trailing operand reads as gamma (and fails C2).
  let assemblyFormat = [{
    $input (`,` $gamma^)? (`,` $beta^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Loom_RmsNormOp : Loom_Op<"rms_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "root-mean-square normalization over the last dim";
  let description = [{
    Normalizes `input` over its last dim (size `D`) by its root mean square,
    as Llama does (no mean is subtracted, no bias is added):

    ```
    y = x * rsqrt(sum(x^2) / D + eps) * gamma
    ```

    `gamma` (shape `[D]`) is optional; `eps` defaults to 1e-5 and prints
    only when it differs.

    ```mlir
    %y = loom.rms_norm %x, %gamma {eps = 1.0e-06 : f64}
        : (tensor<8x128x4096xbf16>, tensor<4096xbf16>)
          -> tensor<8x128x4096xbf16>
    ```

    Constraints:
    - C1: `input` has rank >= 1.
    - C2: `gamma` has type `tensor<D x T>`, with `D` the last dim of `input`
      and `T` its element type.
    - C3: `eps` is positive and finite (with `eps = 0` a zero row would
      divide zero by zero).
    The result has the input's type.
  }];

  let arguments = (ins Loom_FloatTensor:$input,
                       Optional<Loom_FloatTensor>:$gamma,
                       Loom_NormEpsAttr:$eps);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $gamma^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_LayerNormGradOp : Loom_Op<"layer_norm_grad",
    [Pure, InferTypeOpAdaptor,
     DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "gradients of layer_norm with respect to its operands";
  let description = [{
    Given the gradient `grad` of the loss with respect to the output of
    `loom.layer_norm` over `input` (with `gamma`, if given, and the same
    `eps`), computes the gradients with respect to `input` and, when `gamma`
    is given, to `gamma` and `beta`. The statistics are recomputed from
    `input` rather than saved. Over the last dim (size `D`), with
    `xhat = (x - mean) * rstd`, `rstd = rsqrt(var + eps)` and
    `g = grad * gamma` (`grad` without `gamma`):

    ```
    dx     = rstd * (g - sum(g) / D - xhat * sum(g * xhat) / D)
    dgamma = sum over the leading dims of grad * xhat
    dbeta  = sum over the leading dims of grad
    ```

    `param_grads` is `[dgamma, dbeta]` when `gamma` is given and empty
    otherwise (`getDgamma()` / `getDbeta()` return null then). It is one
    variadic result rather than two optional ones so that result types can
    be inferred without a result-segment attribute; the results print as
    `%dx, %dgamma, %dbeta` all the same. `beta` is not an operand:
    no gradient depends on it. This is the VJP of `loom.layer_norm`.

    ```mlir
    %dx, %dgamma, %dbeta = loom.layer_norm_grad %dy, %x, %gamma
        : (tensor<8x128x768xf32>, tensor<8x128x768xf32>, tensor<768xf32>)
          -> (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>)
    ```

    Constraints:
    - C1: `grad` and `input` have the same type.
    - C2: `input` has rank >= 1.
    - C3: `gamma` has type `tensor<D x T>`, with `D` the last dim of `input`
      and `T` its element type.
    - C4: `eps` is positive and finite.
    `dx` has the input's type; `dgamma` and `dbeta` have gamma's.
  }];

  let arguments = (ins Loom_FloatTensor:$grad, Loom_FloatTensor:$input,
                       Optional<Loom_FloatTensor>:$gamma,
                       Loom_NormEpsAttr:$eps);
  let results = (outs Loom_FloatTensor:$dx,
                      Variadic<Loom_FloatTensor>:$param_grads);
  let assemblyFormat = [{
    $grad `,` $input (`,` $gamma^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The gradient with respect to gamma, or null without gamma.
    ::mlir::Value getDgamma() {
      return getParamGrads().empty() ? ::mlir::Value() : getParamGrads()[0];
    }
    /// The gradient with respect to beta, or null without gamma.
    ::mlir::Value getDbeta() {
      return getParamGrads().empty() ? ::mlir::Value() : getParamGrads()[1];
    }
  }];
}

def Loom_RmsNormGradOp : Loom_Op<"rms_norm_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "gradients of rms_norm with respect to its operands";
  let description = [{
    Given the gradient `grad` of the loss with respect to the output of
    `loom.rms_norm` over `input` (with `gamma`, if given, and the same
    `eps`), computes the gradients with respect to `input` and, when `gamma`
    is given, to `gamma`. The statistic is recomputed from `input` rather
    than saved. Over the last dim (size `D`), with
    `r = rsqrt(sum(x^2) / D + eps)`, `xhat = x * r` and `g = grad * gamma`
    (`grad` without `gamma`):

    ```
    dx     = r * (g - xhat * sum(g * xhat) / D)
    dgamma = sum over the leading dims of grad * xhat
    ```

    `dgamma` is present exactly when `gamma` is. This is the VJP of
    `loom.rms_norm`.

    ```mlir
    %dx, %dgamma = loom.rms_norm_grad %dy, %x, %gamma
        : (tensor<8x128x4096xf32>, tensor<8x128x4096xf32>, tensor<4096xf32>)
          -> (tensor<8x128x4096xf32>, tensor<4096xf32>)
    ```

    Constraints:
    - C1: `grad` and `input` have the same type.
    - C2: `input` has rank >= 1.
    - C3: `gamma` has type `tensor<D x T>`, with `D` the last dim of `input`
      and `T` its element type.
    - C4: `eps` is positive and finite.
    `dx` has the input's type; `dgamma` has gamma's.
  }];

  let arguments = (ins Loom_FloatTensor:$grad, Loom_FloatTensor:$input,
                       Optional<Loom_FloatTensor>:$gamma,
                       Loom_NormEpsAttr:$eps);
  let results = (outs Loom_FloatTensor:$dx,
                      Optional<Loom_FloatTensor>:$dgamma);
  let assemblyFormat = [{
    $grad `,` $input (`,` $gamma^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_NORMALIZATION_TD
