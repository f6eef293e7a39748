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

#endif // LOOM_DIALECT_LOOM_IR_OPS_REDUCTION_TD
