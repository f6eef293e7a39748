//===- Embedding.h - CUDA kernels for embedding lookups ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/Embedding.h (calling convention:
// CUDA/Elementwise.h). The lookup records an id out of range in `errors`.
// The gradients sum, for each table row, the rows of `dy` whose id selects
// it, in position order as the host does: they copy the ids to the host
// (one synchronization of `stream`), bucket the positions by id there, and
// let one thread per (row, column) add its bucket in order. So they are
// deterministic, equal the host's in f64 bit for bit, and, having the ids on
// the host, check them and return the host's Status directly.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_EMBEDDING_H
#define LOOM_RUNTIME_CUDA_EMBEDDING_H

#include "loom/Runtime/CUDA/DeviceError.h"
#include "loom/Runtime/Host/Status.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace loom::runtime::cuda {

using host::Status;

template <typename T>
void embedding(cudaStream_t stream, const T *table, const Shape &tableShape,
               const int64_t *ids, const Shape &idsShape, T *result,
               ErrorSink errors = {});

/// Rows `offset .. offset + rows` of the table (vocab-parallel): ids outside
/// the block give zero rows.
template <typename T>
void embeddingBlock(cudaStream_t stream, const T *table,
                    const Shape &tableShape, const int64_t *ids,
                    const Shape &idsShape, int64_t offset, T *result);

template <typename T>
Status embeddingGrad(cudaStream_t stream, const T *dy, const Shape &dyShape,
                     const int64_t *ids, const Shape &idsShape,
                     int64_t vocabSize, T *result);

template <typename T>
Status embeddingGradBlock(cudaStream_t stream, const T *dy,
                          const Shape &dyShape, const int64_t *ids,
                          const Shape &idsShape, int64_t offset, int64_t rows,
                          T *result);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_EMBEDDING_H
