//===- Transfers.cpp - Bytes copied between host and device ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/Transfers.h"

namespace loom::runtime {

TransferCounts &deviceTransfers() {
  static TransferCounts counts;
  return counts;
}

} // namespace loom::runtime
