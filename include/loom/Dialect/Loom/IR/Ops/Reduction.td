//===- Reduction.td - loom reduction ops -------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/Reduction.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_REDUCTION_TD
#define LOOM_DIALECT_LOOM_IR_OPS_REDUCTION_TD

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Loom_ReduceSumOp : Loom_Op<"reduce_sum", [Pure, InferTypeOpAdaptor]> {
  let summary = "sum over a set of dims";
  let description = [{
    Sums `input` over the dims listed in `axes`. With `keepdims` the reduced
    dims stay as size 1; otherwise they are removed (reducing every dim
    without `keepdims` gives a rank-0 tensor, the form a loss takes).

    ```mlir
    %s = loom.reduce_sum %x {axes = array<i64: 0, 1>}
        : (tensor<8x128xf32>) -> tensor<f32>
    ```

    Constraints:
    - C1: `axes` is not empty.
    - C2: every axis is in `[0, rank)`.
    - C3: `axes` is strictly increasing, so each reduction has one spelling.
  }];

  let arguments = (ins Loom_Tensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_ReduceMeanOp : Loom_Op<"reduce_mean", [Pure, InferTypeOpAdaptor]> {
  let summary = "arithmetic mean over a set of dims";
  let description = [{
    Averages `input` over the dims listed in `axes`: the sum over them
    divided by the product of their sizes. `keepdims` and the result shape
    are as for `loom.reduce_sum`. Floating point only (an integer mean would
    have to pick a rounding).

    ```mlir
    %m = loom.reduce_mean %x {axes = array<i64: 2>, keepdims}
        : (tensor<8x128x768xf32>) -> tensor<8x128x1xf32>
    ```

    Constraints:
    - C1: `axes` is not empty.
    - C2: every axis is in `[0, rank)`.
    - C3: `axes` is strictly increasing, so each reduction has one spelling.

    Sharding: the mean is linear, so a split reduced dim leaves partial sums
    like `reduce_sum`, provided each device divides its local sum by the
    *global* count (the product of the global sizes of `axes`), not by its
    local one; the partial results then add up to the global mean.
  }];

  let arguments = (ins Loom_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_ReduceMaxOp : Loom_Op<"reduce_max", [Pure, InferTypeOpAdaptor]> {
  let summary = "maximum over a set of dims";
  let description = [{
    Takes the maximum of `input` over the dims listed in `axes`. `keepdims`
    and the result shape are as for `loom.reduce_sum`. The maximum of floats
    propagates NaN.

    ```mlir
    %m = loom.reduce_max %x {axes = array<i64: 1>}
        : (tensor<8x128xf32>) -> tensor<8xf32>
    ```

    Constraints:
    - C1: `axes` is not empty.
    - C2: every axis is in `[0, rank)`.
    - C3: `axes` is strictly increasing, so each reduction has one spelling.

    Sharding: reduced dims may not be split. A split would leave a pending
    *maximum* on each device, and a layout can only hold pending sums; the
    strategy search gathers the reduced dims first instead.
  }];

  let arguments = (ins Loom_Tensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_REDUCTION_TD
