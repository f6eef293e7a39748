//===- LossScaling.td - loom ops of dynamic loss scaling ---*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/LossScaling.cpp.
//
// The three ops an fp16-mixed step needs for torch.cuda.amp.GradScaler's
// dynamic loss scaling (docs/MixedPrecision.md, "fp16 loss scaling"):
// counting the non-finite elements of the unscaled gradients (a sum, so a
// sharded gradient gives a partial count the partitioner all-reduces),
// keeping the old optimizer state when that count is not zero, and the
// scale's own update. loom-autodiff builds them after the backward; they
// have no VJP.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_LOSSSCALING_TD
#define LOOM_DIALECT_LOOM_IR_OPS_LOSSSCALING_TD

def Loom_NonfiniteCountOp : Loom_Op<"nonfinite_count", [Pure]> {
  let summary = "number of elements that are inf or NaN";
  let description = [{
    Counts the elements of `input` that are +inf, -inf or NaN, as a rank-0
    float (0 when every element is finite): the test GradScaler makes of
    the unscaled gradients before it lets the optimizer step. A count, not
    a flag, so that it is a sum over the elements.

    ```mlir
    %n = loom.nonfinite_count %g : (tensor<64x256xf32>) -> tensor<f32>
    ```

    Sharding: every dim of `input` is a reduction factor: a block of the
    gradient gives a partial count, which the partitioner all-reduces over
    the axes that split it (and a gradient still partial over data-parallel
    replicas is reduced first: the count is not linear).

    Cost: one FLOP (classify and accumulate) per element; the input is read
    and the scalar written once.

    Constraints:
    - C1: the result has rank 0.
  }];

  let arguments = (ins Loom_FloatTensor:$input);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Loom_SelectOp : Loom_Op<"select", [Pure, InferTypeOpAdaptor]> {
  let summary = "one of two whole tensors, chosen by a rank-0 condition";
  let description = [{
    Returns `on_true` when the rank-0 float `condition` is not zero (NaN
    counts as not zero), else `on_false`: the whole tensor, not element
    by element. A skipped GradScaler step keeps every parameter, optimizer
    state and the step counter with it:
    `select(nonfinite, old, updated)`.

    ```mlir
    %p = loom.select %n, %p_old, %p_new
        : (tensor<f32>, tensor<768xf32>, tensor<768xf32>) -> tensor<768xf32>
    ```

    Sharding: every dim of `on_true`, `on_false` and the result is one
    parallel factor; the condition has no dims (replicated).

    Cost: a copy: each element of the chosen operand is read and written.

    Constraints:
    - C1: `condition` is a rank-0 float tensor.
    - C2: `on_true` and `on_false` have the same type, the result's.
  }];

  let arguments = (ins Loom_FloatTensor:$condition, Loom_Tensor:$on_true,
                       Loom_Tensor:$on_false);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:`
    functional-type(operands, results)
  }];
}

def Loom_UpdateLossScaleOp : Loom_Op<"update_loss_scale",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "GradScaler's update of the loss scale after one step";
  let description = [{
    The loss scale `scale` (s) and its growth tracker `growth_tracker` (t,
    the clean steps since the last change) after a step whose gradients had
    `nonfinite` (n) non-finite elements, as `torch.cuda.amp.GradScaler.update`
    (the `_amp_update_scale_` kernel):

    ```
    if n != 0:                    s' = s * backoff_factor,  t' = 0
    elif t + 1 == growth_interval: s' = s * growth_factor,   t' = 0
    else:                          s' = s,                   t' = t + 1
    ```

    The products are computed in the scale's type; with the default
    factors 2 and 0.5 the scale stays a power of two times its initial
    value. A static scale (`loomc --loss-scale N`) is this op with both
    factors 1: it never changes, and the steps with non-finite gradients
    are still skipped.

    ```mlir
    %s2, %t2 = loom.update_loss_scale %s, %t, %n {growth_factor = 2.0 : f64,
        backoff_factor = 0.5 : f64, growth_interval = 2000 : i64}
        : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
    ```

    Sharding: every operand and result is rank-0: no factors (replicated).

    Cost: a few scalar FLOPs.

    Constraints:
    - C1: `scale` and `nonfinite` are rank-0 floats; `growth_tracker` is a
      rank-0 i64.
    - C2: `growth_factor` >= 1, `backoff_factor` in (0, 1] (GradScaler's
      checks, with 1 allowed for a static scale); `growth_interval` >= 1.
  }];

  let arguments = (ins 0DTensorOf<[F32, F64]>:$scale,
                       0DTensorOf<[I64]>:$growth_tracker,
                       0DTensorOf<[F32, F64]>:$nonfinite,
                       F64Attr:$growth_factor, F64Attr:$backoff_factor,
                       I64Attr:$growth_interval);
  let results = (outs 0DTensorOf<[F32, F64]>:$new_scale,
                      0DTensorOf<[I64]>:$new_growth_tracker);
  let assemblyFormat = [{
    $scale `,` $growth_tracker `,` $nonfinite attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_LOSSSCALING_TD
