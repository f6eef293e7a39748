//===- ViewFusedProjections.cpp - Fused projections as views --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// An imported fused projection (nanoGPT's `c_attn`: `q, k, v =
// linear(x, W, b).split(H, dim=2)`) keeps its parts' rows one block after
// another in W [k * N, K]. Tensor parallelism wants every part split by
// heads alike, i.e. k strided pieces of W, which no block layout describes:
// the search then pays gathers around attention. The model builders avoid
// this by holding W as the row-major view [k, 1.., N, K] (docs/Models.md,
// "Fused QKV projection"); this pass gives imported graphs the same form,
// so every frontend (graph JSON, loom.from_torch, ONNX) benefits:
//
//   1. for each parameter W [k*N, K] of the entry without a file shape,
//      whose only use is `matmul(x, W) {transpose_rhs}` of rank r >= 2;
//   2. follow the product through an optional `add` of a parameter bias
//      b [k*N] (used nowhere else) to its only use, a `split` of the last
//      dim into k >= 2 equal sizes N;
//   3. retype W as [k, 1 x (r-2), N, K] and b as [k, 1 x (r-1), N], each
//      with `loom.file_shape` = its old shape (same elements, same order:
//      names, files and checkpoints are unchanged);
//   4. rebuild: the product is [k, batch.., M, N] (the unit dims let x's
//      batch dims broadcast against the parts), the bias adds as is, a
//      split of dim 0 gives the k parts [1, batch.., M, N];
//   5. a reshape that consumed a piece consumes its part directly; any
//      other use gets a reshape back to the piece's shape.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "loom-view-fused-projections"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_VIEWFUSEDPROJECTIONSPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {
/// One fused projection found by steps 1-2.
struct FusedProjection {
  BlockArgument weight;
  MatmulOp product;
  BlockArgument bias; // null without a bias
  AddOp biasAdd;      // null without a bias
  SplitOp split;
  int64_t parts = 0;
  int64_t partSize = 0;
};
} // namespace

/// Returns whether argument `index` of `func` is a parameter the pass may
/// retype: a `loom.param` of a static float tensor, without a file shape,
/// with exactly one use.
static bool isViewableParameter(func::FuncOp func, BlockArgument arg) {
  unsigned index = arg.getArgNumber();
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  return func.getArgAttr(index, kParamAttrName) &&
         !func.getArgAttr(index, kFileShapeAttrName) && type &&
         type.hasStaticShape() && isa<FloatType>(type.getElementType()) &&
         arg.hasOneUse();
}

/// Steps 1-2: the fused projection whose weight is `weight`, if any.
static std::optional<FusedProjection> match(func::FuncOp func,
                                            BlockArgument weight) {
  if (!isViewableParameter(func, weight))
    return std::nullopt;
  auto weightType = cast<RankedTensorType>(weight.getType());
  if (weightType.getRank() != 2)
    return std::nullopt;
  auto product = dyn_cast<MatmulOp>(*weight.getUsers().begin());
  if (!product || product.getRhs() != weight || !product.getTransposeRhs() ||
      product.getTransposeLhs() || product.getLhs() == weight)
    return std::nullopt;
  auto lhsType = cast<RankedTensorType>(product.getLhs().getType());
  if (lhsType.getRank() < 2)
    return std::nullopt;

  FusedProjection found;
  found.weight = weight;
  found.product = product;
  Value fused = product.getResult();
  if (!fused.hasOneUse())
    return std::nullopt;
  Operation *user = *fused.getUsers().begin();
  int64_t rows = weightType.getDimSize(0);
  if (auto add = dyn_cast<AddOp>(user)) {
    Value other = add.getLhs() == fused ? add.getRhs() : add.getLhs();
    auto bias = dyn_cast<BlockArgument>(other);
    if (!bias || bias.getOwner() != weight.getOwner() ||
        !isViewableParameter(func, bias) ||
        cast<RankedTensorType>(bias.getType()).getShape() !=
            ArrayRef<int64_t>{rows} ||
        add.getType() != fused.getType() || !add.getResult().hasOneUse())
      return std::nullopt;
    found.bias = bias;
    found.biasAdd = add;
    user = *add.getResult().getUsers().begin();
  }
  auto split = dyn_cast<SplitOp>(user);
  int64_t rank = cast<RankedTensorType>(fused.getType()).getRank();
  if (!split || static_cast<int64_t>(split.getAxis()) != rank - 1)
    return std::nullopt;
  ArrayRef<int64_t> sizes = split.getSizes();
  if (sizes.size() < 2 || sizes.front() <= 0 ||
      llvm::any_of(sizes, [&](int64_t s) { return s != sizes.front(); }) ||
      sizes.front() * static_cast<int64_t>(sizes.size()) != rows)
    return std::nullopt;
  found.split = split;
  found.parts = sizes.size();
  found.partSize = sizes.front();
  return found;
}

/// Steps 3-5 on one match.
static void rewrite(func::FuncOp func, FusedProjection p) {
  auto weightType = cast<RankedTensorType>(p.weight.getType());
  auto lhsType = cast<RankedTensorType>(p.product.getLhs().getType());
  int64_t lhsRank = lhsType.getRank();
  Type element = weightType.getElementType();
  MLIRContext *context = func.getContext();

  // 3. The views, with their file shapes.
  auto viewParameter = [&](BlockArgument arg, SmallVector<int64_t> shape) {
    ArrayRef<int64_t> fileShape =
        cast<RankedTensorType>(arg.getType()).getShape();
    func.setArgAttr(arg.getArgNumber(), kFileShapeAttrName,
                    DenseI64ArrayAttr::get(context, fileShape));
    arg.setType(RankedTensorType::get(shape, element));
  };
  SmallVector<int64_t> weightShape{p.parts};
  weightShape.append(lhsRank - 2, 1);
  weightShape.append({p.partSize, weightType.getDimSize(1)});
  viewParameter(p.weight, weightShape);
  if (p.bias) {
    SmallVector<int64_t> biasShape{p.parts};
    biasShape.append(lhsRank - 1, 1);
    biasShape.push_back(p.partSize);
    viewParameter(p.bias, biasShape);
  }

  // 4. The product on the view, the bias, the split of dim 0.
  OpBuilder b(p.split);
  Location loc = p.product.getLoc();
  Value parts = MatmulOp::create(b, loc, p.product.getLhs(), p.weight,
                                 /*transpose_lhs=*/false,
                                 /*transpose_rhs=*/true);
  if (p.bias)
    parts = AddOp::create(b, p.biasAdd.getLoc(), parts, p.bias);
  auto split = SplitOp::create(b, p.split.getLoc(), parts, /*axis=*/0,
                               SmallVector<int64_t>(p.parts, 1));

  // 5. The old pieces' uses.
  for (auto [piece, part] :
       llvm::zip_equal(p.split.getResults(), split.getResults())) {
    Value view;
    for (OpOperand &use : llvm::make_early_inc_range(piece.getUses())) {
      if (auto reshape = dyn_cast<ReshapeOp>(use.getOwner())) {
        use.set(part);
        continue;
      }
      if (!view)
        view = ReshapeOp::create(b, p.split.getLoc(), piece.getType(), part);
      use.set(view);
    }
  }
  p.split.erase();
  if (p.biasAdd)
    p.biasAdd.erase();
  p.product.erase();
  LLVM_DEBUG(llvm::dbgs() << "viewed " << p.parts << " x " << p.partSize
                          << " fused projection on argument "
                          << p.weight.getArgNumber() << "\n");
}

namespace {
struct ViewFusedProjectionsPass
    : public loom::impl::ViewFusedProjectionsPassBase<
          ViewFusedProjectionsPass> {
  using Base::Base;

  void runOnOperation() override {
    // A module without the entry is loom-verify-import's to report.
    auto func = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!func || func.isExternal())
      return;
    SmallVector<FusedProjection> found;
    for (BlockArgument arg : func.getArguments())
      if (std::optional<FusedProjection> p = match(func, arg))
        found.push_back(*p);
    for (FusedProjection &p : found)
      rewrite(func, p);
    if (!found.empty())
      func.setFunctionType(FunctionType::get(&getContext(),
                                             func.getBody().getArgumentTypes(),
                                             func.getResultTypes()));
  }
};
} // namespace
