//===- InitAllDialects.h - Register every dialect Loom uses -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The one place that lists the dialects Loom's tools accept: Loom's own and the
// upstream ones that appear in its IR. Every tool, the C API and the Python
// package call registerAllDialects, so they all parse the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INITALLDIALECTS_H
#define LOOM_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
namespace loom {

/// Adds Loom's dialects and the upstream dialects Loom IR uses (func, arith,
/// tensor) to `registry`.
void registerAllDialects(DialectRegistry &registry);

} // namespace loom
} // namespace mlir

#endif // LOOM_INITALLDIALECTS_H
