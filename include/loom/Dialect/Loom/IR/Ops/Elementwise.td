//===- Elementwise.td - loom elementwise ops ---------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/Elementwise.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_ELEMENTWISE_TD
#define LOOM_DIALECT_LOOM_IR_OPS_ELEMENTWISE_TD

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

#endif // LOOM_DIALECT_LOOM_IR_OPS_ELEMENTWISE_TD
