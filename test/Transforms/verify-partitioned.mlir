// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-verify-partitioned | FileCheck %s

// A partitioned Megatron MLP passes unchanged.
// CHECK-LABEL: func.func @partitioned
// CHECK: dist.all_reduce
dist.mesh @mesh shape [2] axes ["tp"]
func.func @partitioned(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>},
                       %w1: tensor<8x8xf64> {dist.layout = #dist.layout<@mesh, [[], ["tp"]]>},
                       %w2: tensor<8x8xf64> {dist.layout = #dist.layout<@mesh, [["tp"], []]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %h = loom.matmul %x, %w1 : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
  %p = loom.matmul %h, %w2 : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
  %i = dist.axis_index @mesh "tp" : index
  %y = dist.all_reduce sum %p on @mesh axes ["tp"] : tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

// A cast of dist-lower-reshards that dist-partition-spmd did not fold.
dist.mesh @mesh shape [2] axes ["tp"]
func.func @cast_left(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  // expected-error @+1 {{'builtin.unrealized_conversion_cast' op is left in a partitioned program (run -dist-partition-spmd)}}
  %l = builtin.unrealized_conversion_cast %x : tensor<4x8xf64> to tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}
  return %l : tensor<4x8xf64>
}

// -----

// A strategy attribute left on an op.
dist.mesh @mesh shape [2] axes ["tp"]
func.func @strategy_left(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  // expected-error @+1 {{'loom.tanh' op still carries a `dist.strategy` (run -dist-partition-spmd)}}
  %y = loom.tanh %x {dist.strategy = #dist.strategy<@mesh, [[], []]>} : tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

// Reshards and annotations are gone after partitioning; every violation is
// reported.
dist.mesh @mesh shape [2] axes ["tp"]
func.func @reshard_left(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  // expected-error @+1 {{'dist.annotate' op is left in a partitioned program (run -dist-insert-reshards)}}
  %a = dist.annotate %x layout <@mesh, [[], []]> : tensor<4x8xf64>
  // expected-error @+1 {{'dist.reshard' op is left in a partitioned program (run -dist-lower-reshards)}}
  %y = dist.reshard %a from <@mesh, [[], []]> to <@mesh, [[], ["tp"]]> : tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

// Entry arguments and results carry their layouts.
dist.mesh @mesh shape [2] axes ["tp"]
// expected-error @+2 {{'func.func' op argument #0 has no `dist.layout` #dist.layout attribute (the interpreter and the code generators need it)}}
// expected-error @+1 {{'func.func' op result #0 has no `dist.layout` #dist.layout attribute}}
func.func @no_layouts(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  return %x : tensor<4x8xf64>
}

// -----

// A layout must have the rank of the local type it describes.
dist.mesh @mesh shape [2] axes ["tp"]
// expected-error @+1 {{'func.func' op argument #0: layout of rank 1 does not fit local type 'tensor<4x8xf64>'}}
func.func @layout_rank(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [["tp"]]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  return %x : tensor<4x8xf64>
}

// -----

// A layout must name a mesh of the module.
// expected-error @+1 {{'func.func' op}}
func.func @no_mesh(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@nowhere, [[], []]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@nowhere, [[], []]>}) {
  return %x : tensor<4x8xf64>
}
