//===- DifferentiableOpInterface.h - VJPs for autodiff ----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERFACES_DIFFERENTIABLEOPINTERFACE_H
#define LOOM_INTERFACES_DIFFERENTIABLEOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "loom/Interfaces/DifferentiableOpInterface.h.inc"

#endif // LOOM_INTERFACES_DIFFERENTIABLEOPINTERFACE_H
