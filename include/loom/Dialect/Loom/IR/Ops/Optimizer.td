//===- Optimizer.td - loom optimizer-update ops ------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/Optimizer.cpp.
//
// One training step's update of one parameter and its optimizer state, with
// PyTorch's semantics. The updates are pointwise over the parameter's shape,
// so a parameter sharded any way is updated shard by shard (ZeRO shards the
// states alike); hyperparameters are compile-time attributes, except that the
// learning rate may be scaled per step by a rank-0 `lr_scale` operand, which
// autodiff feeds from the `lr_scale` argument of @train_step (the trainer's
// schedule; docs/Runtime.md, "Learning-rate schedules").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_OPTIMIZER_TD
#define LOOM_DIALECT_LOOM_IR_OPS_OPTIMIZER_TD

// The step counter of Adam-style optimizers: the number of steps taken.
def Loom_StepTensor : 0DTensorOf<[I64]>;

// The learning-rate factor of one step: the update uses `lr * lr_scale`.
def Loom_LrScaleTensor : 0DTensorOf<[F64, F32, BF16, F16]>;

def Loom_SgdUpdateOp : Loom_Op<"sgd_update",
    [Pure, InferTypeOpAdaptor, Loom_OptimizerUpdate,
     AttrSizedOperandSegments]> {
  let summary = "one torch.optim.SGD step for one parameter";
  let description = [{
    Updates `param` (p) given its gradient `grad` (g), with the momentum
    buffer `momentum_buf` (b) present exactly when `momentum` (mu) is not 0,
    as `torch.optim.SGD(lr, momentum, dampening, weight_decay, nesterov)`
    (lr, mu, d, wd below):

    ```
    g' = g + wd * p
    if mu != 0:
      b' = mu * b + (1 - d) * g'                  -> new_momentum_buf
      g' = nesterov ? g' + mu * b' : b'
    p' = p - lr * g'                              -> new_param
    ```

    The momentum buffer starts as zeros. PyTorch instead sets `b' = g'` on
    its first step; the two agree whenever `dampening = 0` (the default, and
    required with `nesterov`), and otherwise differ on the first step only.

    With the optional rank-0 `lr_scale` operand (s), the step uses the
    learning rate `lr * s` (computed in f64), as `LambdaLR` scales its base
    learning rate: the attribute is the base (peak) rate and a schedule
    changes `s` from step to step without recompiling. `s = 1` gives the
    same bits as no operand.

    ```mlir
    %p2, %b2 = loom.sgd_update %p, %g, %b lr_scale(%s) {lr = 1.000000e-01 :
        f64, momentum = 9.000000e-01 : f64, weight_decay = 0.000000e+00 : f64}
        : (tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<f32>)
        -> (tensor<768xf32>, tensor<768xf32>)
    ```

    Constraints:
    - C1: `grad` and `momentum_buf` (when present) have `param`'s type.
    - C2: `momentum_buf` is present exactly when `momentum` is not 0.
    - C3: `lr`, `momentum` and `weight_decay` are >= 0 (as PyTorch checks).
    - C4: `nesterov` requires `momentum > 0` and `dampening = 0` (as
      PyTorch checks).
    - C5: `lr_scale` (when present) is a rank-0 float tensor.
    The results have `param`'s type; `new_momentum_buf` is present exactly
    when `momentum_buf` is.
  }];

  let arguments = (ins Loom_FloatTensor:$param, Loom_FloatTensor:$grad,
                       Optional<Loom_FloatTensor>:$momentum_buf,
                       Optional<Loom_LrScaleTensor>:$lr_scale,
                       F64Attr:$lr, F64Attr:$momentum, F64Attr:$weight_decay,
                       DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                       UnitAttr:$nesterov);
  let results = (outs Loom_FloatTensor:$new_param,
                      Optional<Loom_FloatTensor>:$new_momentum_buf);
  let assemblyFormat = [{
    $param `,` $grad (`,` $momentum_buf^)? (`lr_scale` `(` $lr_scale^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Loom_AdamwUpdateOp : Loom_Op<"adamw_update",
    [Pure, InferTypeOpAdaptor, Loom_OptimizerUpdate]> {
  let summary = "one torch.optim.AdamW step for one parameter";
  let description = [{
    Updates `param` (p) given its gradient `grad` (g), first moment
    `exp_avg` (m) and second moment `exp_avg_sq` (v), as
    `torch.optim.AdamW(lr, betas = (beta1, beta2), eps, weight_decay)`
    without `amsgrad` or `maximize`. `step` holds the number of steps
    already taken (0 before the first), so this update is step
    `t = step + 1`; incrementing the counter is left to the caller, as one
    counter serves every parameter:

    ```
    p' = p * (1 - lr * weight_decay)              (decoupled weight decay)
    m' = beta1 * m + (1 - beta1) * g              -> new_exp_avg
    v' = beta2 * v + (1 - beta2) * g * g          -> new_exp_avg_sq
    c1 = 1 - beta1^t,  c2 = 1 - beta2^t           (bias corrections)
    p' = p' - (lr / c1) * m' / (sqrt(v') / sqrt(c2) + eps)   -> new_param
    ```

    With the optional rank-0 `lr_scale` operand (s), `lr` above is
    `lr * s` (computed in f64), as `LambdaLR` scales its base learning rate;
    `s = 1` gives the same bits as no operand.

    ```mlir
    %p2, %m2, %v2 = loom.adamw_update %p, %g, %m, %v, %step {
        lr = 6.000000e-04 : f64, beta1 = 9.000000e-01 : f64,
        beta2 = 9.500000e-01 : f64, eps = 1.000000e-08 : f64,
        weight_decay = 1.000000e-01 : f64}
        : (tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>,
           tensor<i64>) -> (tensor<768xf32>, tensor<768xf32>, tensor<768xf32>)
    ```

    Constraints:
    - C1: `grad`, `exp_avg` and `exp_avg_sq` have `param`'s type.
    - C2: `lr`, `eps` and `weight_decay` are >= 0 (as PyTorch checks).
    - C3: `beta1` and `beta2` are in `[0, 1)` (as PyTorch checks).
    - C4: `lr_scale` (when present) is a rank-0 float tensor.
    The three results have `param`'s type.
  }];

  let arguments = (ins Loom_FloatTensor:$param, Loom_FloatTensor:$grad,
                       Loom_FloatTensor:$exp_avg, Loom_FloatTensor:$exp_avg_sq,
                       Loom_StepTensor:$step,
                       Optional<Loom_LrScaleTensor>:$lr_scale,
                       F64Attr:$lr, F64Attr:$beta1, F64Attr:$beta2,
                       F64Attr:$eps, F64Attr:$weight_decay);
  let results = (outs Loom_FloatTensor:$new_param,
                      Loom_FloatTensor:$new_exp_avg,
                      Loom_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step
    (`lr_scale` `(` $lr_scale^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_OPTIMIZER_TD
