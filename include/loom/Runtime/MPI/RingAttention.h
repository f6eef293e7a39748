//===- RingAttention.h - Ring attention over MPI ----------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// dist.ring_attention and dist.ring_attention_grad on one rank of an MPI
// program: the zigzag exchange of the contiguous blocks, the ring steps of
// the host step kernels (loom/Runtime/Host/RingAttention.h) with key/value
// blocks passed on by collective permutes, and the exchange back. The steps
// run in the interpreter's order, so the results are bit-identical to it.
// Calling convention as the communicator's: every group member calls with
// the same shapes and axes; failures come back as a Status.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_MPI_RINGATTENTION_H
#define LOOM_RUNTIME_MPI_RINGATTENTION_H

#include "loom/Runtime/MPI/Communicator.h"

#include <optional>

namespace loom::runtime::mpi {

/// dist.ring_attention: this rank's contiguous blocks `query` ([B, Hq, S,
/// D]), `key`, `value` ([B, Hkv, S, D|Dv]) of a sequence split over `axes`;
/// writes its block of the result `out` ([B, Hq, S, Dv]) and the rows'
/// log-sum-exp `lse` ([B, Hq, S]).
template <typename T>
Status ringAttention(Communicator &comm, const AxisList &axes, const T *query,
                     const Shape &queryShape, const T *key,
                     const Shape &keyShape, const T *value,
                     const Shape &valueShape, bool causal,
                     std::optional<double> scale, T *out, T *lse);

/// dist.ring_attention_grad: the gradients of this rank's blocks, from the
/// forward's operands, its `out` and `lse`, and `dout`.
template <typename T>
Status ringAttentionGrad(Communicator &comm, const AxisList &axes,
                         const T *query, const Shape &queryShape, const T *key,
                         const Shape &keyShape, const T *value,
                         const Shape &valueShape, const T *out, const T *dout,
                         const T *lse, bool causal, std::optional<double> scale,
                         T *dquery, T *dkey, T *dvalue);

} // namespace loom::runtime::mpi

#endif // LOOM_RUNTIME_MPI_RINGATTENTION_H
