//===- CostOpInterface.td - What an op costs to run --------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERFACES_COSTOPINTERFACE_TD
#define LOOM_INTERFACES_COSTOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::loom";
  let description = [{
    Reports the work an op does on given shapes: floating-point operations,
    bytes read and written, and the bytes of its results, plus an op class
    that selects the achievable rates in the cost model. The shapes are
    passed in rather than read from the op because the strategy search asks
    for the cost of each candidate's *local* (per-device) shapes; attributes
    (transpose flags, axes) and element types come from the op.
    See include/loom/Interfaces/Cost.h.
  }];

  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Returns the cost of running this op on operands and results of the
        given shapes (same ranks as the op's types; local or global).
      }],
      /*retTy=*/"::mlir::loom::OpCost",
      /*methodName=*/"getCost",
      /*args=*/(ins "const ::mlir::loom::OpShapes &":$shapes)>,
  ];
}

#endif // LOOM_INTERFACES_COSTOPINTERFACE_TD
