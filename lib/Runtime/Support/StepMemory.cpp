//===- StepMemory.cpp - The device memory a step used ---------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/StepMemory.h"

namespace loom::runtime {

StepMemory &stepMemory() {
  static StepMemory record;
  return record;
}

} // namespace loom::runtime
