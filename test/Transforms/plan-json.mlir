// RUN: loom-opt %s -split-input-file -test-print-plan-json -o /dev/null | FileCheck %s
// RUN: loom-opt %S/Inputs/mlp.mlir -dist-insert-reshards="strategy=%S/Inputs/mlp-megatron.json plan-json=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=ASSIGN --input-file %t.json
// RUN: loom-opt %S/Inputs/partial-add.mlir -dist-insert-reshards="plan-json=%t.partial.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=PARTIAL --input-file %t.partial.json
// The layout, byte for byte: two-space indents, one member or item per line.
// RUN: %python %S/Inputs/check-json-layout.py %t.json
// RUN: %python %S/Inputs/check-json-layout.py %t.partial.json

// A linear op that keeps pending sums lists their axes as its `partial`;
// the one reshard is its result's reduction.
// PARTIAL: "op": "loom.add",
// PARTIAL: "strategy": [
// PARTIAL: "partial": [
// PARTIAL-NEXT: "tp"
// PARTIAL: "totals": {
// PARTIAL-NEXT: "reshards": 1,

// The plan after layout assignment: the mesh, argument layouts, each op's
// strategy and the one reshard (the row linear's partial sum) with its bytes:
// an all-reduce over tp (4) of a 2x6 f32 block, 2 * 48 * 3/4 = 72 bytes.
// ASSIGN: "mesh": {
// ASSIGN-NEXT: "name": "mesh",
// ASSIGN: "devices": 8
// ASSIGN: "entry": "train_step",
// ASSIGN: "name": "fc1.weight",
// ASSIGN: "layout": {
// ASSIGN-NEXT: "dims": [
// ASSIGN-NEXT: [
// ASSIGN-NEXT: "tp"
// ASSIGN: "ops": [
// ASSIGN: "op": "loom.matmul",
// ASSIGN-NEXT: "params": [
// ASSIGN-NEXT: "fc1.weight"
// ASSIGN: "reshards": [
// ASSIGN: "index": 4,
// ASSIGN-NEXT: "value": "op 3#0",
// ASSIGN: "partial": [
// ASSIGN-NEXT: "tp"
// ASSIGN: "bytes": 72.0
// ASSIGN: "totals": {
// ASSIGN-NEXT: "reshards": 1,
// ASSIGN-NEXT: "reshard_bytes": 72.0,
// ASSIGN-NEXT: "collectives": 0,

// After lowering, each collective with its attributes and the local bytes of
// its input on each rank.
// CHECK: "collectives": [
// CHECK-NEXT: {
// CHECK-NEXT: "index": 0,
// CHECK-NEXT: "op": "dist.all_reduce",
// CHECK: "axes": [
// CHECK-NEXT: "tp"
// CHECK: "shape": [
// CHECK-NEXT: 2,
// CHECK-NEXT: 6
// CHECK: "bytes": 48
// CHECK: "op": "dist.all_gather",
// CHECK: "dim": 1,
// CHECK: "bytes": 24
// CHECK: "totals": {
// CHECK: "collectives": 2,
// CHECK-NEXT: "collective_bytes": 72
dist.mesh @mesh shape [2, 4] axes ["dp", "tp"]
func.func @train_step(%x: tensor<2x6xf32>, %y: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = dist.all_reduce sum %x on @mesh axes ["tp"] : tensor<2x6xf32>
  %1 = dist.all_gather %y on @mesh axes ["tp"] dim 1 : tensor<2x3xf32> -> tensor<2x12xf32>
  return %0 : tensor<2x6xf32>
}
