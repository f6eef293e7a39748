//===- CandidateMeshes.cpp - The meshes the search's outer loop tries -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. The ring-attention sequences: every mask-free self-attention's
//    sequence length (dim 2 of its query, equal to its key's).
// 2. The context-parallel degrees: powers of two dividing the devices whose
//    zigzag chunks are whole and whose per-rank block is long enough.
// 3. The meshes: dp x tp, then cp x tp and dp x cp over those degrees.
//
// Why kMinContextBlockTokens is 2048: a ring step attends a rank's S/C
// queries to a k/v block of S/C tokens (half of it under the causal mask,
// balanced by the zigzag split), 2 (S/C)^2 d FLOPs for model width d,
// while it passes on the k and v blocks, 2 (S/C) d_kv values of 2 bytes
// (bf16): (S/C) (d / d_kv) / 2 FLOPs per byte. An H100 does about 2,200
// dense bf16 FLOPs per byte of NVLink (989 TFLOP/s over 450 GB/s) and
// 20,000 per byte of a 400 Gb/s inter-node link, so with 4 query heads per
// key/value head (Llama 3) a block hides its transfer inside a node from
// about 1,100 tokens and across nodes from about 10,000, and without
// grouped-query heads from 4,400 and 40,000. Below 2048 tokens per rank
// the ring's transfers are exposed on every link but NVLink with grouped
// heads, so those meshes are not enumerated. It is a prune for search
// time, not a rule of correctness: the cost model prices any cp mesh given
// with --mesh or a parallel config, and GPT-3's 2048-token sequences keep
// the dp x tp candidates they had.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/CandidateMeshes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

std::vector<int64_t>
mlir::loom::dist::getRingSequenceLengths(func::FuncOp func) {
  std::vector<int64_t> lengths;
  func.walk([&](loom::AttentionOp attention) {
    auto query = dyn_cast<RankedTensorType>(attention.getQuery().getType());
    auto key = dyn_cast<RankedTensorType>(attention.getKey().getType());
    // A mask is refused under a sequence split, and so is cross-attention
    // (PartitionableOpInterface::isSplitSupported of loom.attention).
    if (!query || !key || query.getRank() != 4 || key.getRank() != 4 ||
        attention.getMask())
      return;
    int64_t length = query.getDimSize(2);
    if (ShapedType::isDynamic(length) || length != key.getDimSize(2))
      return;
    lengths.push_back(length);
  });
  return lengths;
}

std::vector<int64_t>
mlir::loom::dist::getContextParallelDegrees(const std::vector<int64_t> &lengths,
                                            int64_t devices) {
  std::vector<int64_t> degrees = {1};
  if (lengths.empty())
    return degrees;
  int64_t shortest = *llvm::min_element(lengths);
  for (int64_t degree = 2; degree <= devices; degree *= 2) {
    if (devices % degree || shortest / degree < kMinContextBlockTokens)
      break;
    if (llvm::any_of(lengths,
                     [&](int64_t length) { return length % (2 * degree); }))
      break;
    degrees.push_back(degree);
  }
  return degrees;
}

std::vector<Mesh>
mlir::loom::dist::enumerateMeshes(int64_t devices,
                                  const std::vector<int64_t> &contextDegrees) {
  std::vector<Mesh> meshes;
  for (int64_t cp : contextDegrees) {
    if (cp < 1 || devices % cp)
      continue;
    int64_t rest = devices / cp;
    for (int64_t tp = 1; tp <= rest; ++tp) {
      if (rest % tp)
        continue;
      int64_t dp = rest / tp;
      // Three axes multiply every op's candidates (each axis to any of its
      // factors): one dp x cp x tp mesh of Llama-3 8B took over 50 s of
      // search CPU against 0.4 s for cp x tp (docs/Performance.md), so the
      // outer loop pairs cp with one other axis; --mesh prices the rest.
      if (cp > 1 && dp > 1 && tp > 1)
        continue;
      std::vector<Mesh::Axis> axes;
      // Without cp the data-parallel axis is kept even at size 1, as the
      // plans and messages name it ({dp:1, tp:8}).
      if (dp > 1 || cp == 1)
        axes.push_back({"dp", dp});
      if (cp > 1)
        axes.push_back({"cp", cp});
      if (tp > 1)
        axes.push_back({"tp", tp});
      if (ValueOrError<Mesh> mesh = Mesh::get(axes))
        meshes.push_back(*mesh);
    }
  }
  return meshes;
}
