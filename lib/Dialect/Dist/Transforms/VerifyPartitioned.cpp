//===- VerifyPartitioned.cpp - dist-verify-partitioned --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Ends the partition phase by checking the contract the code generators and
// the interpreter rely on, reporting every violation before failing. For
// every function with a body:
//
//   1. every argument and result carries a `dist.layout` naming a
//      `dist.mesh`, with the rank of its (local, statically shaped) type;
//   2. no `dist.reshard`, `dist.annotate` or
//   `builtin.unrealized_conversion_cast`
//      is left, and no op carries a `dist.strategy`;
//   3. every value is a statically shaped tensor or a scalar (the index a
//      `dist.axis_index` yields);
//   4. every op naming a mesh checks itself against it (verifySymbolUses):
//      the mesh exists, its axes do, and each collective's local shapes
//      agree with its group size;
//   5. the gradient buckets keep their contract (verifyGradientBuckets):
//      no bucketed reduction starts before its bucket's last gradient, and
//      each bucket is waited for before its results are read.
//
// The pass changes nothing.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/Passes.h"

#include "loom/Dialect/Dist/IR/GradientBuckets.h"
#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom::dist {
#define GEN_PASS_DEF_VERIFYPARTITIONEDPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

/// Whether `type` may be held by a partitioned program.
static bool isLocalType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.hasStaticShape();
  return isa<IndexType, IntegerType, FloatType>(type);
}

/// Checks one argument's or result's layout attribute.
static LogicalResult checkBoundaryLayout(func::FuncOp func, Attribute attr,
                                         Type type, const Twine &what,
                                         SymbolTableCollection &symbols) {
  auto layout = dyn_cast_or_null<LayoutAttr>(attr);
  if (!layout)
    return func.emitOpError() << what << " has no `" << kLayoutAttrName
                              << "` #dist.layout attribute (the interpreter "
                                 "and the code generators need it)";
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return func.emitOpError() << what << " has type " << type
                              << ", expected a statically shaped tensor";
  FailureOr<Mesh> mesh = lookupMesh(func, layout.getMesh(), symbols);
  if (failed(mesh))
    return failure();
  auto converted = layout.toLayout(*mesh);
  if (!converted)
    return func.emitOpError() << what << ": " << converted.error();
  if (converted->getRank() != static_cast<size_t>(tensor.getRank()))
    return func.emitOpError()
           << what << ": layout of rank " << converted->getRank()
           << " does not fit local type " << type;
  return success();
}

static LogicalResult checkFunction(func::FuncOp func,
                                   SymbolTableCollection &symbols) {
  bool ok = true;
  // 1. The boundary.
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    ok &= succeeded(checkBoundaryLayout(
        func, func.getArgAttr(i, kLayoutAttrName), func.getArgumentTypes()[i],
        "argument #" + Twine(i), symbols));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    ok &= succeeded(checkBoundaryLayout(
        func, func.getResultAttr(i, kLayoutAttrName), func.getResultTypes()[i],
        "result #" + Twine(i), symbols));

  func.walk([&](Operation *op) {
    if (op == func.getOperation())
      return;
    // 2. What the earlier passes must have removed.
    if (isa<ReshardOp>(op)) {
      op->emitOpError("is left in a partitioned program (run "
                      "-dist-lower-reshards)");
      ok = false;
    } else if (isa<AnnotateOp>(op)) {
      op->emitOpError("is left in a partitioned program (run "
                      "-dist-insert-reshards)");
      ok = false;
    } else if (isa<UnrealizedConversionCastOp>(op)) {
      op->emitOpError("is left in a partitioned program (run "
                      "-dist-partition-spmd)");
      ok = false;
    }
    if (op->hasAttr(kStrategyAttrName)) {
      op->emitOpError() << "still carries a `" << kStrategyAttrName
                        << "` (run -dist-partition-spmd)";
      ok = false;
    }
    // 3. Local values.
    for (Type type : op->getResultTypes())
      if (!isLocalType(type)) {
        op->emitOpError() << "result of type " << type
                          << " is not a statically shaped tensor or a scalar";
        ok = false;
      }
    // 4. Meshes and collectives.
    if (auto user = dyn_cast<SymbolUserOpInterface>(op))
      if (op->getName().getDialectNamespace() == "dist" &&
          failed(user.verifySymbolUses(symbols)))
        ok = false;
  });
  // 5. Gradient buckets.
  ok &= succeeded(verifyGradientBuckets(func));
  return success(ok);
}

namespace {
struct VerifyPartitionedPass
    : mlir::loom::dist::impl::VerifyPartitionedPassBase<VerifyPartitionedPass> {
  using VerifyPartitionedPassBase::VerifyPartitionedPassBase;

  void runOnOperation() override {
    SymbolTableCollection symbols;
    bool ok = true;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        ok &= succeeded(checkFunction(func, symbols));
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
