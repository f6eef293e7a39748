// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-insert-reshards

// Strategy files and parallel configs: each error names the op and the dim.
// RUN: not loom-opt %S/Inputs/mlp.mlir -dist-insert-reshards=strategy=%S/Inputs/bad-axis.json 2>&1 | FileCheck %s --check-prefix=AXIS
// AXIS: error: 'loom.matmul' op strategy ops[0] (`fc1.weight`): unknown mesh axis `mp` in dim 0 of operand 1 (mesh {dp:2, tp:4})
// RUN: not loom-opt %S/Inputs/mlp.mlir -dist-insert-reshards=strategy=%S/Inputs/bad-divide.json 2>&1 | FileCheck %s --check-prefix=DIVIDE
// DIVIDE: error: 'loom.matmul' op strategy ops[0] (`fc2.weight`): mesh axes ["tp"] (4 devices) do not divide dim 0 of operand 1 (size 6)
// RUN: not loom-opt %S/Inputs/mlp.mlir -dist-insert-reshards=strategy=%S/Inputs/contradictory.json 2>&1 | FileCheck %s --check-prefix=CONTRA
// CONTRA: error: 'loom.matmul' op contradictory strategy: strategy ops[0] (`fc1.weight`) splits dim 1 of operand 1 (factor c) over [], but it is already split over ["tp"]
// RUN: not loom-opt %S/Inputs/mlp.mlir -dist-insert-reshards=parallel-config=%S/Inputs/dp2-tp2.json 2>&1 | FileCheck %s --check-prefix=DEVICES
// DEVICES: error: 'dist.mesh' op has 8 devices ({dp:2, tp:4}) but the parallel config asks for 4 (data_parallel x model_parallel)
// RUN: not loom-opt %S/Inputs/mlp.mlir -dist-insert-reshards=parallel-config=%S/Inputs/bad-pipeline.json 2>&1 | FileCheck %s --check-prefix=PIPE
// PIPE: error: parallel config `{{.*}}bad-pipeline.json`: pipeline_stage: expected an integer >= 1, got 0
// RUN: not loom-opt %S/Inputs/mlp.mlir -dist-insert-reshards=strategy=%S/Inputs/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: strategy file: cannot read `{{.*}}missing.json`: No such file or directory

// A strategy attribute naming an axis the mesh lacks.
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @train_step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{invalid strategy: factor 1: `mp` is not an axis of mesh {dp:2, tp:2}}}
  %r = loom.relu %x {dist.strategy = #dist.strategy<@m, [[], ["mp"]]>} : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A strategy attribute whose split does not divide the factor.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @train_step(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @below {{invalid strategy: factor 1 (size 6) cannot be split into 4 blocks}}
  %r = loom.relu %x {dist.strategy = #dist.strategy<@m, [[], ["tp"]]>} : tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

// A strategy that splits a need-replication factor (softmax's normalized dim).
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @train_step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{invalid strategy: factor 1 may not be split}}
  %r = loom.softmax %x {axis = 1 : i64, dist.strategy = #dist.strategy<@m, [[], ["tp"]]>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Data inputs split their batch over dp, which must divide it.
dist.mesh @m shape [4] axes ["dp"]
// expected-error @+1 {{argument 0 (`input_ids`): mesh axis `dp` (size 4) does not divide dim 0 (size 6)}}
func.func @train_step(%ids: tensor<6x8xi64> {loom.input = #loom.input<input_ids>}) -> tensor<6x8xi64> {
  return %ids : tensor<6x8xi64>
}

// -----

// No mesh anywhere.
// expected-error @below {{no mesh: give `mesh`}}
module {
  func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Partial sums only pass through an op linear in all its operands jointly:
// a product of two partial sums is not the sum of the products.
dist.mesh @m shape [2] axes ["tp"]
func.func @train_step(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{invalid strategy: partial sums over ["tp"] need an op linear in all its operands jointly, and this op's sharding rule is not}}
  %r = loom.mul %a, %b {dist.strategy = #dist.strategy<@m, [[], []], partial = ["tp"]>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
