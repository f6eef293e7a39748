//===- ShardingRuleOpInterface.cpp - Generated interface definitions -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interfaces/ShardingRuleOpInterface.h"

#include "loom/Interfaces/ShardingRuleOpInterface.cpp.inc"
