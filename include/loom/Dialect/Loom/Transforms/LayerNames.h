//===- LayerNames.h - Transformer layers from parameter names ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A transformer layer is recognized by its parameters' names: the name up to
// its first all-digit component is the layer's key, the number its index
// (`transformer.h.3.attn.c_attn.weight` → key `transformer.h.3`, index 3).
// Recompute picks layers by it and the pipeline assigns them to stages.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_LAYERNAMES_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_LAYERNAMES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::loom {

/// The layer a parameter belongs to.
struct LayerName {
  std::string key;
  int64_t index = -1;
};

/// The layer of parameter `name`; nullopt when no component is a number.
std::optional<LayerName> parseLayerName(llvm::StringRef name);

} // namespace mlir::loom

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_LAYERNAMES_H
