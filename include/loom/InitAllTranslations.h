//===- InitAllTranslations.h - Register loom-translate's modes --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The one place that registers Loom's translations (importers, exporters and
// emitters) with MLIR's translation registry, for loom-translate.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INITALLTRANSLATIONS_H
#define LOOM_INITALLTRANSLATIONS_H

namespace mlir {
namespace loom {

/// Registers every Loom translation. Safe to call more than once.
void registerAllTranslations();

} // namespace loom
} // namespace mlir

#endif // LOOM_INITALLTRANSLATIONS_H
