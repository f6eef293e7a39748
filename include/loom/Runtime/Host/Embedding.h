//===- Embedding.h - Host embedding lookup kernels --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Kernels of loom.embedding and loom.embedding_grad. Ids are checked against
// the vocabulary before anything is written; an id out of range is an error
// in the data and comes back as a Status. Calling convention: README.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_EMBEDDING_H
#define LOOM_RUNTIME_HOST_EMBEDDING_H

#include "loom/Runtime/Host/Status.h"
#include "loom/Runtime/Support/Broadcast.h"

namespace loom::runtime::host {

/// loom.embedding: `result[i..., h] = table[ids[i...], h]` with `table`
/// [V, H] and `result` [ids dims..., H]. Fails if an id is outside [0, V).
template <typename T>
Status embedding(const T *table, const Shape &tableShape, const int64_t *ids,
                 const Shape &idsShape, T *result);

/// loom.embedding_grad: scatter-adds the rows of `dy` ([ids dims..., H], as
/// `dyShape` says) into `result` [vocabSize, H], which the kernel zeroes
/// first. Each table row sums its contributions in double, in increasing
/// position order, so the result is deterministic. Fails if an id is outside
/// [0, vocabSize).
template <typename T>
Status embeddingGrad(const T *dy, const Shape &dyShape, const int64_t *ids,
                     const Shape &idsShape, int64_t vocabSize, T *result);

/// The local form of loom.embedding (a vocab-parallel shard): `table`
/// [V, H] holds the global rows [offset, offset + V). An id in that range
/// reads row `id - offset`; any other id gives a zero row and is not
/// checked (another device holds it).
template <typename T>
Status embeddingBlock(const T *table, const Shape &tableShape,
                      const int64_t *ids, const Shape &idsShape, int64_t offset,
                      T *result);

/// The local form of loom.embedding_grad: `result` [rows, H] is the block of
/// global rows [offset, offset + rows) of the table gradient; ids outside
/// that range are skipped. Same accumulation order as embeddingGrad.
template <typename T>
Status embeddingGradBlock(const T *dy, const Shape &dyShape,
                          const int64_t *ids, const Shape &idsShape,
                          int64_t offset, int64_t rows, T *result);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_EMBEDDING_H
