//===- PartitionModels.h - Partitioning Loom's ops --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Registers the PartitionableOpInterface models of the `loom` ops whose
// partitioning needs more than their local result types. They live on the
// dist side so that the `loom` dialect library does not depend on dist;
// registerAllDialects calls this, so every tool and the C API get them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_EXTERNALMODELS_PARTITIONMODELS_H
#define LOOM_DIALECT_DIST_EXTERNALMODELS_PARTITIONMODELS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::loom::dist {

/// Attaches the models to the `loom` ops when the `loom` dialect loads.
void registerPartitionModels(DialectRegistry &registry);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_EXTERNALMODELS_PARTITIONMODELS_H
