//===- Broadcast.cpp - Numpy broadcasting for runtime kernels -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/Broadcast.h"

#include <algorithm>

namespace loom::runtime {

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Walk both shapes from their last dim; a missing dim acts as size 1.
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcastStrides(const Shape &outShape,
                                      const Shape &inShape) {
  std::vector<int64_t> strides(outShape.size(), 0);
  size_t offset = outShape.size() - inShape.size();
  int64_t stride = 1;
  for (size_t i = inShape.size(); i-- > 0;) {
    if (inShape[i] != 1 || outShape[offset + i] == 1)
      strides[offset + i] = stride;
    stride *= inShape[i];
  }
  return strides;
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

} // namespace loom::runtime
