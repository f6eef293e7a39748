//===- Embedding.cpp - Host embedding lookup kernels ----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The gradient groups positions by id with a counting sort instead of adding
// into the table directly: each row of the result is then summed in a double
// accumulator of H elements and rounded once, without a [V, H] double scratch
// table (large for real vocabularies).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Embedding.h"

#include <algorithm>
#include <string>
#include <vector>

namespace loom::runtime::host {

namespace {

/// Checks that every id is in [0, vocab).
Status checkIds(const int64_t *ids, int64_t count, int64_t vocab) {
  for (int64_t n = 0; n < count; ++n)
    if (ids[n] < 0 || ids[n] >= vocab)
      return Status::failure("id " + std::to_string(ids[n]) + " at index " +
                             std::to_string(n) + " is outside [0, " +
                             std::to_string(vocab) + ")");
  return Status::success();
}

} // namespace

template <typename T>
Status embedding(const T *table, const Shape &tableShape, const int64_t *ids,
                 const Shape &idsShape, T *result) {
  int64_t vocab = tableShape[0], hidden = tableShape[1];
  int64_t count = numElements(idsShape);
  if (Status status = checkIds(ids, count, vocab); !status)
    return status;
  for (int64_t n = 0; n < count; ++n)
    std::copy(table + ids[n] * hidden, table + (ids[n] + 1) * hidden,
              result + n * hidden);
  return Status::success();
}

template <typename T>
Status embeddingGrad(const T *dy, const Shape &dyShape, const int64_t *ids,
                     const Shape &idsShape, int64_t vocabSize, T *result) {
  int64_t hidden = dyShape.back();
  int64_t count = numElements(idsShape);
  if (Status status = checkIds(ids, count, vocabSize); !status)
    return status;
  // start[v] .. start[v + 1] indexes the positions of id v in `order`.
  std::vector<int64_t> start(vocabSize + 1, 0), order(count);
  for (int64_t n = 0; n < count; ++n)
    ++start[ids[n] + 1];
  for (int64_t v = 0; v < vocabSize; ++v)
    start[v + 1] += start[v];
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (int64_t n = 0; n < count; ++n)
    order[next[ids[n]]++] = n;
  std::vector<double> acc(hidden);
  for (int64_t v = 0; v < vocabSize; ++v) {
    T *row = result + v * hidden;
    if (start[v] == start[v + 1]) {
      std::fill(row, row + hidden, T(0));
      continue;
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = start[v]; k < start[v + 1]; ++k) {
      const T *src = dy + order[k] * hidden;
      for (int64_t h = 0; h < hidden; ++h)
        acc[h] += src[h];
    }
    for (int64_t h = 0; h < hidden; ++h)
      row[h] = static_cast<T>(acc[h]);
  }
  return Status::success();
}

#define LOOM_INSTANTIATE(T)                                                    \
  template Status embedding<T>(const T *, const Shape &, const int64_t *,      \
                               const Shape &, T *);                            \
  template Status embeddingGrad<T>(const T *, const Shape &, const int64_t *,  \
                                   const Shape &, int64_t, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host
