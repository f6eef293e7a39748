//===- LoomDialect.td - The loom dialect -------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The `loom` dialect holds the model graph with global, single-device
// semantics: every value is a whole tensor as one device would see it. Layouts
// and communication live in the `dist` dialect; `loom` never mentions devices.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD
#define LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD

include "mlir/IR/OpBase.td"

def Loom_Dialect : Dialect {
  let name = "loom";
  let cppNamespace = "::mlir::loom";
  let summary = "Transformer model graphs with single-device semantics";
  let description = [{
    The `loom` dialect describes a training graph as a user wrote it for one
    device: matrix products, elementwise math, normalizations, attention,
    losses, their backward counterparts and optimizer updates. Values are
    builtin ranked tensors with static shapes and element types f64, f32,
    bf16, f16 (floating point) or i64, i32, i1 (indices, labels and masks).

    Every op infers its result type from its operands and attributes, and its
    verifier checks numbered constraints (C1, C2, ...) listed in the op's
    description; `test/Dialect/Loom/invalid.mlir` has one case per constraint.
    Later phases query ops through interfaces (sharding rule, cost, VJP)
    implemented next to each op.
  }];

  // Attributes live in LoomAttrs.td; LoomAttrs.cpp registers them and checks
  // the `loom.param` / `loom.input` / `loom.name` / `loom.file_shape`
  // function-argument and result attributes.
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD
