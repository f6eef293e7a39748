//===- ShardingRuleOpInterface.h - How an op may be split -------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERFACES_SHARDINGRULEOPINTERFACE_H
#define LOOM_INTERFACES_SHARDINGRULEOPINTERFACE_H

#include "loom/Interfaces/ShardingRule.h"
#include "mlir/IR/OpDefinition.h"

#include "loom/Interfaces/ShardingRuleOpInterface.h.inc"

#endif // LOOM_INTERFACES_SHARDINGRULEOPINTERFACE_H
