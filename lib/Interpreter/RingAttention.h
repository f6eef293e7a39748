//===- RingAttention.h - Simulated rings of ring attention ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Internal to the interpreter: runs dist.ring_attention(_grad) for a whole
// group at once, holding every member's blocks, with the host step kernels in
// the order a real ring runs them (RingAttention.h of the host runtime).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_INTERPRETER_RINGATTENTION_H
#define LOOM_LIB_INTERPRETER_RINGATTENTION_H

#include "loom/Interpreter/HostTensor.h"

#include "mlir/IR/Operation.h"

#include <vector>

namespace mlir::loom::interp {

/// `operands[m]` are group member m's operand values (in op order); returns
/// each member's results, or nullopt for an op that is not a ring op.
std::optional<std::vector<std::vector<HostTensor>>>
runRingAttention(Operation *op,
                 const std::vector<std::vector<HostTensor>> &operands);

} // namespace mlir::loom::interp

#endif // LOOM_LIB_INTERPRETER_RINGATTENTION_H
