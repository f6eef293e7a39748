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

namespace {
/// Scatter-adds the rows of `dy` into `result` [rows, H] at the local row
/// `ids[n] - offset` of each position whose id falls in [offset, offset +
/// rows); the caller has checked or decided to skip the others.
template <typename T>
void scatterRows(const T *dy, int64_t hidden, const int64_t *ids,
                 int64_t count, int64_t offset, int64_t rows, T *result) {
  auto local = [&](int64_t n) { return ids[n] - offset; };
  auto inBlock = [&](int64_t n) { return local(n) >= 0 && local(n) < rows; };
  // start[v] .. start[v + 1] indexes the positions of local row v in
  // `order`.
  std::vector<int64_t> start(rows + 1, 0), order;
  for (int64_t n = 0; n < count; ++n)
    if (inBlock(n))
      ++start[local(n) + 1];
  for (int64_t v = 0; v < rows; ++v)
    start[v + 1] += start[v];
  order.resize(start[rows]);
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (int64_t n = 0; n < count; ++n)
    if (inBlock(n))
      order[next[local(n)]++] = n;
  std::vector<double> acc(hidden);
  for (int64_t v = 0; v < rows; ++v) {
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
}
} // namespace

template <typename T>
Status embeddingGrad(const T *dy, const Shape &dyShape, const int64_t *ids,
                     const Shape &idsShape, int64_t vocabSize, T *result) {
  int64_t count = numElements(idsShape);
  if (Status status = checkIds(ids, count, vocabSize); !status)
    return status;
  scatterRows(dy, dyShape.back(), ids, count, /*offset=*/0, vocabSize, result);
  return Status::success();
}

template <typename T>
Status embeddingBlock(const T *table, const Shape &tableShape,
                      const int64_t *ids, const Shape &idsShape, int64_t offset,
                      T *result) {
  int64_t rows = tableShape[0], hidden = tableShape[1];
  int64_t count = numElements(idsShape);
  for (int64_t n = 0; n < count; ++n) {
    int64_t local = ids[n] - offset;
    T *dst = result + n * hidden;
    if (local < 0 || local >= rows)
      std::fill(dst, dst + hidden, T(0));
    else
      std::copy(table + local * hidden, table + (local + 1) * hidden, dst);
  }
  return Status::success();
}

template <typename T>
Status embeddingGradBlock(const T *dy, const Shape &dyShape,
                          const int64_t *ids, const Shape &idsShape,
                          int64_t offset, int64_t rows, T *result) {
  scatterRows(dy, dyShape.back(), ids, numElements(idsShape), offset, rows,
              result);
  return Status::success();
}

#define LOOM_INSTANTIATE(T)                                                    \
  template Status embedding<T>(const T *, const Shape &, const int64_t *,      \
                               const Shape &, T *);                            \
  template Status embeddingGrad<T>(const T *, const Shape &, const int64_t *,  \
                                   const Shape &, int64_t, T *);               \
  template Status embeddingBlock<T>(const T *, const Shape &, const int64_t *, \
                                    const Shape &, int64_t, T *);              \
  template Status embeddingGradBlock<T>(const T *, const Shape &,              \
                                        const int64_t *, const Shape &,        \
                                        int64_t, int64_t, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host
