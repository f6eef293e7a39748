//===- DifferentiableOpInterface.td - VJPs for autodiff ----*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERFACES_DIFFERENTIABLEOPINTERFACE_TD
#define LOOM_INTERFACES_DIFFERENTIABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::loom";
  let description = [{
    Builds an op's vector-Jacobian product out of `loom` ops, for the
    `loom-autodiff` pass: given the gradients of the loss with respect to
    the op's results, produce the gradients with respect to its operands.
  }];

  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Builds, at the builder's insertion point, the gradient of each
        operand given the gradient of each result (a null Value when a
        result does not reach the loss). Fills `operandGrads` with one value
        per operand, null where the operand is not differentiable (integer
        indices, labels). Fails with a diagnostic if it cannot.
      }],
      /*retTy=*/"::llvm::LogicalResult",
      /*methodName=*/"buildVjp",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::mlir::ValueRange":$resultGrads,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // LOOM_INTERFACES_DIFFERENTIABLEOPINTERFACE_TD
