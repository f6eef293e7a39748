//===- TestPasses.cpp - Register the test-only passes ---------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

void mlir::loom::test::registerTestPasses() {
  registerTestPartitionOpPass();
  registerTestPrintCostsPass();
  registerTestPrintMemoryPass();
  registerTestPrintPlanJSONPass();
  registerTestPrintShardingRulesPass();
  registerTestStripDistributionPass();
}
