//===- Matmul.td - loom matrix-product ops -----------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/Matmul.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_MATMUL_TD
#define LOOM_DIALECT_LOOM_IR_OPS_MATMUL_TD

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

#endif // LOOM_DIALECT_LOOM_IR_OPS_MATMUL_TD
