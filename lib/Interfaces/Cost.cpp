//===- Cost.cpp - The work an op does -------------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interfaces/Cost.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;
using namespace mlir::loom;

StringRef mlir::loom::stringifyOpClass(OpClass opClass) {
  switch (opClass) {
  case OpClass::Gemm:
    return "gemm";
  case OpClass::Elementwise:
    return "elementwise";
  case OpClass::Reduction:
    return "reduction";
  case OpClass::Attention:
    return "attention";
  case OpClass::DataMovement:
    return "data_movement";
  case OpClass::Optimizer:
    return "optimizer";
  }
  llvm_unreachable("unknown op class");
}

raw_ostream &mlir::loom::operator<<(raw_ostream &os, const OpCost &cost) {
  // FLOP counts are integral for every op; print them without exponents.
  return os << stringifyOpClass(cost.opClass)
            << " flops=" << static_cast<int64_t>(cost.flops)
            << " read=" << cost.bytesRead << " written=" << cost.bytesWritten
            << " output=" << cost.outputBytes;
}

/// Returns a * b, saturated at INT64_MAX: costs of absurdly large (but legal)
/// static shapes stay ordered instead of overflowing.
static int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t product;
  return llvm::MulOverflow(a, b, product) ? std::numeric_limits<int64_t>::max()
                                          : product;
}

static int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  return llvm::AddOverflow(a, b, sum) ? std::numeric_limits<int64_t>::max()
                                      : sum;
}

int64_t mlir::loom::getNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n = saturatingMul(n, d);
  return n;
}

int64_t mlir::loom::getElementBytes(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
  return 8; // index
}

static SmallVector<int64_t> getStaticShape(Type type) {
  if (auto ranked = dyn_cast<RankedTensorType>(type))
    return SmallVector<int64_t>(ranked.getShape());
  return {};
}

OpShapes mlir::loom::getGlobalShapes(Operation *op) {
  OpShapes shapes;
  for (Type type : op->getOperandTypes())
    shapes.operands.push_back(getStaticShape(type));
  for (Type type : op->getResultTypes())
    shapes.results.push_back(getStaticShape(type));
  return shapes;
}

OpCost mlir::loom::getStreamingCost(Operation *op, const OpShapes &shapes,
                                    OpClass opClass, double flops) {
  OpCost cost;
  cost.opClass = opClass;
  cost.flops = flops;
  for (auto [type, shape] :
       llvm::zip_equal(op->getOperandTypes(), shapes.operands))
    cost.bytesRead =
        saturatingAdd(cost.bytesRead, saturatingMul(getNumElements(shape),
                                                    getElementBytes(type)));
  for (auto [type, shape] :
       llvm::zip_equal(op->getResultTypes(), shapes.results))
    cost.outputBytes =
        saturatingAdd(cost.outputBytes, saturatingMul(getNumElements(shape),
                                                      getElementBytes(type)));
  cost.bytesWritten = cost.outputBytes;
  return cost;
}
