//===- InitAllPasses.h - Register every pass Loom provides ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The one place that registers Loom's passes and phase pipelines with MLIR's
// global registry, so `loom-opt` and the driver see the same set.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INITALLPASSES_H
#define LOOM_INITALLPASSES_H

namespace mlir {
namespace loom {

/// Registers every Loom pass, the upstream passes Loom's pipelines use, and
/// the `loom-<phase>-pipeline` pipelines. Safe to call more than once.
void registerAllPasses();

} // namespace loom
} // namespace mlir

#endif // LOOM_INITALLPASSES_H
