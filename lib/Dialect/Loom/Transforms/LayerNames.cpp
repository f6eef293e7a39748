//===- LayerNames.cpp - Transformer layers from parameter names -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/LayerNames.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

std::optional<mlir::loom::LayerName>
mlir::loom::parseLayerName(llvm::StringRef name) {
  llvm::SmallVector<llvm::StringRef> parts;
  name.split(parts, '.');
  for (size_t k = 0; k < parts.size(); ++k) {
    int64_t index;
    if (parts[k].empty() || !llvm::all_of(parts[k], llvm::isDigit) ||
        parts[k].getAsInteger(10, index))
      continue;
    return LayerName{
        llvm::join(llvm::ArrayRef(parts).take_front(k + 1), "."), index};
  }
  return std::nullopt;
}
