//===- Random.cpp - Interpreter kernel of dropout -------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom.dropout draws its mask from the *global* index of each element (see
// host::dropout), so a rank must know where its block of the input lies in
// the global tensor. The interpreter knows the layouts of the entry's
// arguments and results only, not of intermediate values; so:
//
//   - in a single-device run (one rank) the block is the whole tensor;
//   - in an SPMD run the dropout op must carry its result's layout as a
//     `dist.layout` attribute (`#dist.layout<@mesh, ...>`, as on function
//     arguments; the input has the same layout). The rank's block offset and
//     the global shape follow from it, and every rank's result equals the
//     slice of the single-device result. Without it the run stops with
//     "dropout in an SPMD program needs the layout of its input".
//
// The mask also depends on the run's `--seed` and `--rng-step` (the training
// step the run stands for), as an emitted trainer's step does
// (loom/Runtime/Support/Philox.h).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Random.h"
#include "loom/Analysis/Layout/Layout.h"
#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

static KernelStatus runDropout(DropoutOp op, KernelContext &ctx) {
  const HostTensor &x = ctx.get(op.getInput());
  HostTensor &y = ctx.allocate(op.getResult());
  Shape blockShape = x.getShape();
  Shape globalShape = blockShape;
  Shape blockOffset(blockShape.size(), 0);
  if (ctx.getNumRanks() > 1) {
    auto layoutAttr = op->getAttrOfType<dist::LayoutAttr>(kLayoutAttrName);
    if (!layoutAttr || !ctx.getMesh())
      return std::string("dropout in an SPMD program needs the layout of its "
                         "input (a `dist.layout` attribute on the op)");
    const dist::Mesh &mesh = *ctx.getMesh();
    auto layout = layoutAttr.toLayout(mesh);
    if (!layout)
      return "`dist.layout`: " + layout.error();
    if (layout->getRank() != blockShape.size())
      return "`dist.layout` of rank " + std::to_string(layout->getRank()) +
             " does not fit the input of rank " +
             std::to_string(blockShape.size());
    globalShape = layout->getGlobalShape(mesh, blockShape);
    auto offset = layout->getBlockOffset(mesh, globalShape, ctx.getRank());
    if (!offset)
      return "`dist.layout`: " + offset.error();
    blockOffset = *offset;
  }
  double rate = op.getRateAttr().getValueAsDouble();
  int64_t seed = op.getSeedAttr().getInt();
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::dropout<T>(x.data<T>(), globalShape, blockOffset, blockShape, rate,
                     seed, ctx.getSeed(), ctx.getRngStep(), y.mutableData<T>());
  });
  return std::nullopt;
}

void registerRandomKernels(KernelRegistry &registry) {
  registry.add<DropoutOp>(runDropout);
}

} // namespace mlir::loom::interp
