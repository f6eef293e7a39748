//===- CostOpInterface.cpp - Generated interface definitions -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interfaces/CostOpInterface.h"

#include "loom/Interfaces/CostOpInterface.cpp.inc"
