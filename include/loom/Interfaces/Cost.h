//===- Cost.h - The work an op does -----------------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What CostOpInterface reports: the raw work of one op on given shapes. The
// cost model (Analysis/CostModel) turns it into time with rates per op class
// and dtype for a device; nothing here knows about devices.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERFACES_COST_H
#define LOOM_INTERFACES_COST_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace loom {

/// Classes of ops with similar achievable throughput on a device.
enum class OpClass {
  /// Dense matrix products (tensor cores).
  Gemm,
  /// Pointwise math, memory bound.
  Elementwise,
  /// Reductions and normalizations over a dim.
  Reduction,
  /// Fused attention.
  Attention,
  /// Gathers, scatters and copies (embedding, slicing, transposes).
  DataMovement,
  /// Optimizer updates.
  Optimizer,
};

/// Returns the name an op class prints with ("gemm", ...).
StringRef stringifyOpClass(OpClass opClass);

/// The work of one op.
struct OpCost {
  OpClass opClass = OpClass::Elementwise;
  /// Floating-point operations (a multiply-add counts 2).
  double flops = 0;
  /// Bytes the op reads from and writes to device memory.
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  /// Bytes of the op's results (what stays live for later ops).
  int64_t outputBytes = 0;
  /// For GEMMs: each matrix product is M x K by K x N and the op runs
  /// `gemmBatch` of them (one BLAS call each); 0 where unknown. A measured
  /// GEMM curve prices by these, since small products run far below peak.
  int64_t gemmBatch = 0, gemmM = 0, gemmN = 0, gemmK = 0;
};

raw_ostream &operator<<(raw_ostream &os, const OpCost &cost);

/// Shapes of an op's operands and results (local or global).
struct OpShapes {
  SmallVector<SmallVector<int64_t>> operands;
  SmallVector<SmallVector<int64_t>> results;
};

/// Returns the static shapes of `op`'s ranked-tensor operands and results.
OpShapes getGlobalShapes(Operation *op);

/// Returns the number of elements of `shape`, saturated at INT64_MAX.
int64_t getNumElements(ArrayRef<int64_t> shape);

/// Returns the bytes one element of `type` takes (i1 takes one byte).
int64_t getElementBytes(Type type);

/// Returns a cost with the given class and flops whose traffic is: every
/// operand read once, every result written once, at the element sizes of
/// `op`'s types. Most ops are this simple.
OpCost getStreamingCost(Operation *op, const OpShapes &shapes, OpClass opClass,
                        double flops);

} // namespace loom
} // namespace mlir

#endif // LOOM_INTERFACES_COST_H
