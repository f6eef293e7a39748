//===- LoomOps.td - loom dialect operations ----------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Operations of the `loom` dialect: the shared type constraints and base
// class here, the ops in one file per family under Ops/. Each op lists its
// constraints as C1, C2, ... in its description; the verifier and
// test/Dialect/Loom/invalid.mlir cite the same numbers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMOPS_TD

include "loom/Dialect/Loom/IR/LoomAttrs.td"
include "loom/Dialect/Loom/IR/LoomDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "loom/Interfaces/CostOpInterface.td"
include "loom/Interfaces/ShardingRuleOpInterface.td"
include "loom/Interfaces/DifferentiableOpInterface.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Loom_Float : AnyTypeOf<[F64, F32, BF16, F16], "f64, f32, bf16 or f16">;
def Loom_Integer : AnyTypeOf<[I64, I32, I1], "i64, i32 or i1">;

// Loom's cost model and layouts need every size at compile time, so tensors
// are ranked with static shapes.
def Loom_FloatTensor : StaticShapeTensorOf<[Loom_Float]>;
def Loom_Tensor : StaticShapeTensorOf<[Loom_Float, Loom_Integer]>;
// Token ids, labels and positions.
def Loom_IndexTensor : StaticShapeTensorOf<[I64, I32]>;
// A scalar global offset of a device's block (the first vocabulary row it
// holds), computed by partitioned code from `dist.axis_index`.
def Loom_Offset : AnyTypeOf<[Index, I64], "index or i64">;

//===----------------------------------------------------------------------===//
// Traits (C++ in LoomTraits.h)
//===----------------------------------------------------------------------===//

// An optimizer step for one parameter: passes find optimizer ops by this
// trait, never by name.
def Loom_OptimizerUpdate : NativeOpTrait<"OptimizerUpdate"> {
  let cppNamespace = "::mlir::loom";
}

//===----------------------------------------------------------------------===//
// Base class
//===----------------------------------------------------------------------===//

// Every loom op tells the strategy search how it may be split (its sharding
// rule) and what it costs, and tells autodiff its vector-Jacobian product;
// each family file implements all three for its ops (backward and optimizer
// ops implement the VJP as a diagnostic: Loom has no second order).
class Loom_Op<string mnemonic, list<Trait> traits = []>
    : Op<Loom_Dialect, mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<ShardingRuleOpInterface>,
        DeclareOpInterfaceMethods<CostOpInterface>,
        DeclareOpInterfaceMethods<DifferentiableOpInterface>])>;

//===----------------------------------------------------------------------===//
// Op families, one file each (C++ in lib/Dialect/Loom/IR/Ops/<Family>.cpp)
//===----------------------------------------------------------------------===//

include "loom/Dialect/Loom/IR/Ops/Matmul.td"
include "loom/Dialect/Loom/IR/Ops/Elementwise.td"
include "loom/Dialect/Loom/IR/Ops/Reduction.td"
include "loom/Dialect/Loom/IR/Ops/Shape.td"
include "loom/Dialect/Loom/IR/Ops/Embedding.td"
include "loom/Dialect/Loom/IR/Ops/Attention.td"
include "loom/Dialect/Loom/IR/Ops/Loss.td"
include "loom/Dialect/Loom/IR/Ops/Normalization.td"
include "loom/Dialect/Loom/IR/Ops/Optimizer.td"
include "loom/Dialect/Loom/IR/Ops/LossScaling.td"

#endif // LOOM_DIALECT_LOOM_IR_LOOMOPS_TD
