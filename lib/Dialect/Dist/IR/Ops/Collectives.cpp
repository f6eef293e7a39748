//===- Collectives.cpp - dist collectives on local tensors ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers of the collectives. Each op checks in `verify` what its types
// alone decide (dims in range, element types, ranks) and in
// `verifySymbolUses` what needs the mesh: the axes, and the local shapes the
// group size implies (the shape side of the op's effect on a layout, see
// Layout::allGather and friends).
//
//===----------------------------------------------------------------------===//

#include "MeshChecks.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::loom::dist;

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

/// Checks that `dim` (the attribute `name`) is a dim of `type`.
static LogicalResult verifyDimInRange(Operation *op, RankedTensorType type,
                                      int64_t dim, StringRef name) {
  if (dim >= 0 && dim < type.getRank())
    return success();
  return op->emitOpError() << "`" << name << "` " << dim
                           << " is out of range for an operand of rank "
                           << type.getRank();
}

/// Checks that `input` and `result` have one element type and one rank.
static LogicalResult verifySameElementTypeAndRank(Operation *op,
                                                  RankedTensorType input,
                                                  RankedTensorType result) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError()
           << "expects operand and result of one element type, got "
           << input.getElementType() << " and " << result.getElementType();
  if (input.getRank() != result.getRank())
    return op->emitOpError() << "expects operand and result of one rank, got "
                             << input.getRank() << " and " << result.getRank();
  return success();
}

/// The operand and result types of a collective that changes shapes, or
/// nullopt when `verify` has rejected them (symbol checks run regardless).
static std::optional<std::pair<RankedTensorType, RankedTensorType>>
getCheckedTypes(Value input, Value result) {
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  auto resultType = dyn_cast<RankedTensorType>(result.getType());
  if (!inputType || !resultType || inputType.getRank() != resultType.getRank())
    return std::nullopt;
  return std::make_pair(inputType, resultType);
}

/// Checks that the group size `n` divides operand dim `dim`.
static LogicalResult verifyDivides(Operation *op, RankedTensorType input,
                                   int64_t dim, int64_t n) {
  if (input.getDimSize(dim) % n == 0)
    return success();
  return op->emitOpError() << "group size " << n << " does not divide operand "
                           << "dim " << dim << " (size "
                           << input.getDimSize(dim) << ")";
}

/// How a collective changes one dim of the local shape.
struct DimChange {
  int64_t dim;
  int64_t size;
  std::string why;
};

/// Checks that the result has the operand's shape except for `changes`.
static LogicalResult verifyResultShape(Operation *op, RankedTensorType input,
                                       RankedTensorType result,
                                       ArrayRef<DimChange> changes) {
  for (int64_t dim = 0; dim < input.getRank(); ++dim) {
    int64_t expected = input.getDimSize(dim);
    std::string why = "the operand's";
    for (const DimChange &change : changes)
      if (change.dim == dim) {
        expected = change.size;
        why = change.why;
      }
    if (result.getDimSize(dim) != expected)
      return op->emitOpError()
             << "expects result dim " << dim << " of size " << expected << " ("
             << why << "), got " << result.getDimSize(dim);
  }
  return success();
}

/// `dim` multiplied by the group size (gathers).
static DimChange grown(RankedTensorType input, int64_t dim, int64_t n) {
  int64_t size = input.getDimSize(dim);
  std::string why = "group size " + std::to_string(n) + " times operand size " +
                    std::to_string(size);
  int64_t product;
  // No static dim has a negative size, so an overflowing product never
  // matches and the verifier reports it.
  if (llvm::MulOverflow(size, n, product))
    return {dim, -1, why + ", which overflows"};
  return {dim, product, why};
}

/// `dim` divided by the group size (slices, scatters).
static DimChange shrunk(RankedTensorType input, int64_t dim, int64_t n) {
  int64_t size = input.getDimSize(dim);
  return {dim, size / n,
          "operand size " + std::to_string(size) + " divided by group size " +
              std::to_string(n)};
}

/// Verifies the ops that split or gather one dim: all_slice and
/// reduce_scatter (`grow` false), all_gather (`grow` true). Checks C1, C2 and
/// the shape constraints that follow.
static LogicalResult
verifyOneDimCollective(Operation *op, Value input, Value result,
                       FlatSymbolRefAttr mesh, ArrayAttr axes, int64_t dim,
                       bool grow, SymbolTableCollection &tables) {
  // C1 and C2.
  FailureOr<int64_t> n = verifyMeshGroup(op, mesh, axes, tables);
  if (failed(n))
    return failure();
  auto types = getCheckedTypes(input, result);
  if (!types || dim < 0 || dim >= types->first.getRank())
    return success();
  auto [inputType, resultType] = *types;
  if (grow)
    return verifyResultShape(op, inputType, resultType,
                             {grown(inputType, dim, *n)});
  if (failed(verifyDivides(op, inputType, dim, *n)))
    return failure();
  return verifyResultShape(op, inputType, resultType,
                           {shrunk(inputType, dim, *n)});
}

/// C3 and C4 of all_gather, all_slice and reduce_scatter.
static LogicalResult verifyOneDimTypes(Operation *op, Value input, Value result,
                                       int64_t dim) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto resultType = cast<RankedTensorType>(result.getType());
  if (failed(verifyDimInRange(op, inputType, dim, "dim")))
    return failure();
  return verifySameElementTypeAndRank(op, inputType, resultType);
}

//===----------------------------------------------------------------------===//
// AllGatherOp
//===----------------------------------------------------------------------===//

LogicalResult AllGatherOp::verify() {
  // C3 and C4.
  return verifyOneDimTypes(*this, getInput(), getResult(),
                           getDimAttr().getInt());
}

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &tables) {
  // C1, C2 and C5.
  return verifyOneDimCollective(*this, getInput(), getResult(), getMeshAttr(),
                                getAxes(), getDimAttr().getInt(), /*grow=*/true,
                                tables);
}

//===----------------------------------------------------------------------===//
// AllSliceOp
//===----------------------------------------------------------------------===//

LogicalResult AllSliceOp::verify() {
  // C3 and C4.
  return verifyOneDimTypes(*this, getInput(), getResult(),
                           getDimAttr().getInt());
}

LogicalResult AllSliceOp::verifySymbolUses(SymbolTableCollection &tables) {
  // C1, C2, C5 and C6.
  return verifyOneDimCollective(*this, getInput(), getResult(), getMeshAttr(),
                                getAxes(), getDimAttr().getInt(),
                                /*grow=*/false, tables);
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &tables) {
  // C1 and C2.
  return verifyMeshGroup(*this, getMeshAttr(), getAxes(), tables);
}

//===----------------------------------------------------------------------===//
// ReduceScatterOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceScatterOp::verify() {
  // C3 and C4.
  return verifyOneDimTypes(*this, getInput(), getResult(),
                           getDimAttr().getInt());
}

LogicalResult ReduceScatterOp::verifySymbolUses(SymbolTableCollection &tables) {
  // C1, C2, C5 and C6.
  return verifyOneDimCollective(*this, getInput(), getResult(), getMeshAttr(),
                                getAxes(), getDimAttr().getInt(),
                                /*grow=*/false, tables);
}

//===----------------------------------------------------------------------===//
// AllToAllOp
//===----------------------------------------------------------------------===//

LogicalResult AllToAllOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  // C3.
  if (failed(verifyDimInRange(*this, inputType, getSplitDimAttr().getInt(),
                              "split_dim")) ||
      failed(verifyDimInRange(*this, inputType, getConcatDimAttr().getInt(),
                              "concat_dim")))
    return failure();
  // C4: within one dim the received pieces would interleave, not form a
  // block.
  if (getSplitDimAttr().getInt() == getConcatDimAttr().getInt())
    return emitOpError() << "expects distinct `split_dim` and `concat_dim`, "
                         << "got " << getSplitDimAttr().getInt() << " for both";
  // C5.
  return verifySameElementTypeAndRank(*this, inputType, resultType);
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &tables) {
  // C1 and C2.
  FailureOr<int64_t> n =
      verifyMeshGroup(*this, getMeshAttr(), getAxes(), tables);
  if (failed(n))
    return failure();
  auto types = getCheckedTypes(getInput(), getResult());
  int64_t split = getSplitDimAttr().getInt(),
          concat = getConcatDimAttr().getInt();
  if (!types || split == concat || split < 0 || concat < 0 ||
      split >= types->first.getRank() || concat >= types->first.getRank())
    return success();
  auto [inputType, resultType] = *types;
  // C6.
  if (failed(verifyDivides(*this, inputType, split, *n)))
    return failure();
  // C7.
  return verifyResultShape(
      *this, inputType, resultType,
      {shrunk(inputType, split, *n), grown(inputType, concat, *n)});
}

//===----------------------------------------------------------------------===//
// CollectivePermuteOp
//===----------------------------------------------------------------------===//

LogicalResult
CollectivePermuteOp::verifySymbolUses(SymbolTableCollection &tables) {
  // C1 and C2.
  FailureOr<int64_t> n =
      verifyMeshGroup(*this, getMeshAttr(), getAxes(), tables);
  if (failed(n))
    return failure();
  // C3: one spelling per rotation.
  if (getShiftAttr().getInt() < 1 || getShiftAttr().getInt() >= *n)
    return emitOpError() << "expects `shift` in [1, " << *n << "), got "
                         << getShiftAttr().getInt();
  return success();
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verifySymbolUses(SymbolTableCollection &tables) {
  // C1 and C2.
  FailureOr<int64_t> n =
      verifyMeshGroup(*this, getMeshAttr(), getAxes(), tables);
  if (failed(n))
    return failure();
  // C3.
  if (getRootAttr().getInt() < 0 || getRootAttr().getInt() >= *n)
    return emitOpError() << "expects `root` in [0, " << *n << "), got "
                         << getRootAttr().getInt();
  return success();
}
