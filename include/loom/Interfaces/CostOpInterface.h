//===- CostOpInterface.h - What an op costs to run --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERFACES_COSTOPINTERFACE_H
#define LOOM_INTERFACES_COSTOPINTERFACE_H

#include "loom/Interfaces/Cost.h"
#include "mlir/IR/OpDefinition.h"

#include "loom/Interfaces/CostOpInterface.h.inc"

#endif // LOOM_INTERFACES_COSTOPINTERFACE_H
