//===- LoomOps.td - loom dialect operations ----------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Operations of the `loom` dialect. Each op lists its constraints as C1, C2,
// ... in its description; the verifier and test/Dialect/Loom/invalid.mlir cite
// the same numbers. Per-op C++ lives in lib/Dialect/Loom/IR/Ops/<Family>.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMOPS_TD

include "loom/Dialect/Loom/IR/LoomDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Loom_Float : AnyTypeOf<[F64, F32, BF16, F16], "f64, f32, bf16 or f16">;
def Loom_Integer : AnyTypeOf<[I64, I32, I1], "i64, i32 or i1">;

// Loom's cost model and layouts need every size at compile time, so tensors
// are ranked with static shapes.
def Loom_FloatTensor : StaticShapeTensorOf<[Loom_Float]>;
def Loom_Tensor : StaticShapeTensorOf<[Loom_Float, Loom_Integer]>;

//===----------------------------------------------------------------------===//
// Base class
//===----------------------------------------------------------------------===//

class Loom_Op<string mnemonic, list<Trait> traits = []>
    : Op<Loom_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def Loom_MatmulOp : Loom_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "batched matrix product with transpose flags";
  let description = [{
    Multiplies the matrices in the last two dims of `lhs` and `rhs`. With
    `transpose_lhs` the last two dims of `lhs` are swapped first (likewise
    `transpose_rhs`), so the product is always `[.., M, K] x [.., K, N]`.
    The leading (batch) dims broadcast numpy-style: a missing dim or a dim of
    size 1 stretches to the other operand's size.

    ```mlir
    // Linear layer with a PyTorch-style weight [out, in]:
    %y = loom.matmul %x, %w {transpose_rhs}
        : (tensor<8x128x768xf32>, tensor<3072x768xf32>) -> tensor<8x128x3072xf32>
    ```

    Constraints:
    - C1: both operands have rank >= 2.
    - C2: both operands have the same element type.
    - C3: the contracted dims have the same size (K of lhs equals K of rhs).
    - C4: the batch dims are broadcast-compatible.
    The result is `[broadcast(batch dims)..., M, N]` with the operands'
    element type.
  }];

  let arguments = (ins Loom_FloatTensor:$lhs, Loom_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

def Loom_AddOp : Loom_Op<"add", [Pure, Commutative, InferTypeOpAdaptor]> {
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

  let arguments = (ins Loom_Tensor:$lhs, Loom_Tensor:$rhs);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

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

#endif // LOOM_DIALECT_LOOM_IR_LOOMOPS_TD
