//===- TestPasses.h - Test-only passes --------------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Passes that expose analyses and interfaces to lit tests. Most print and
// never change the IR; -test-strip-distribution rebuilds the single-device
// reference of a distributed program for numeric tests, and
// -test-partition-op runs per-op partitioners on their own.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TEST_LIB_TESTPASSES_H
#define LOOM_TEST_LIB_TESTPASSES_H

namespace mlir {
namespace loom {
namespace test {

/// Registers every test pass with the global pass registry.
void registerTestPasses();

void registerTestPrintShardingRulesPass();
void registerTestPrintCostsPass();
void registerTestPrintMemoryPass();
void registerTestPrintPlanJSONPass();
void registerTestStripDistributionPass();
void registerTestPartitionOpPass();

} // namespace test
} // namespace loom
} // namespace mlir

#endif // LOOM_TEST_LIB_TESTPASSES_H
