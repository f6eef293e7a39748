//===- DifferentiableOpInterface.cpp - Generated interface definitions -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interfaces/DifferentiableOpInterface.h"

#include "loom/Interfaces/DifferentiableOpInterface.cpp.inc"
