//===- LoomTraits.h - Traits of loom dialect ops ----------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Op traits that passes query instead of comparing op names. A trait is a
// property with no behaviour of its own: an op has it or not.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMTRAITS_H
#define LOOM_DIALECT_LOOM_IR_LOOMTRAITS_H

#include "mlir/IR/OpDefinition.h"

// In mlir::loom itself: a nested `OpTrait` namespace would make
// `OpTrait::...` ambiguous in files using both mlir and mlir::loom.
namespace mlir::loom {

/// An optimizer step for one parameter (`loom.sgd_update`,
/// `loom.adamw_update`): it reads the parameter, its gradient and its
/// optimizer state and writes their next values. The strategy search and
/// layout assignment shard such ops with the optimizer states (ZeRO) rather
/// than like the parameter's other users.
template <typename ConcreteType>
class OptimizerUpdate
    : public ::mlir::OpTrait::TraitBase<ConcreteType, OptimizerUpdate> {};

/// Whether `op` is an optimizer step (has the OptimizerUpdate trait).
inline bool isOptimizerUpdate(Operation *op) {
  return op->hasTrait<OptimizerUpdate>();
}

} // namespace mlir::loom

#endif // LOOM_DIALECT_LOOM_IR_LOOMTRAITS_H
