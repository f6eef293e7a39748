// Hand-written SPMD programs agree with their single-device programs: each
// partitioned function runs on simulated ranks, its results are gathered into
// global tensors and compared with the single-device results.
//
// RUN: loom-run %s --entry inputs --outputs %t.in.safetensors | FileCheck %s --check-prefix=INPUTS
// INPUTS: x: shape [4, 8] dtype F64
// INPUTS: fc1.weight: shape [8, 16] dtype F64
// INPUTS: fc2.weight: shape [16, 8] dtype F64
//
// Column-parallel then row-parallel MLP, joined by an all_reduce.
// RUN: loom-run %s --entry mlp --inputs %t.in.safetensors --outputs %t.mlp.safetensors
// RUN: loom-run %s --entry mlp_tp --ranks 2 --inputs %t.in.safetensors --outputs %t.mlp_tp.safetensors | FileCheck %s --check-prefix=TP
// TP: y: shape [4, 8] dtype F64
// RUN: loom-run --compare %t.mlp.safetensors %t.mlp_tp.safetensors --rtol 1e-12 --atol 1e-12 | FileCheck %s --check-prefix=SAME
// SAME: y: shape {{.*}} max_abs_err {{.*}} ok
// SAME: all 1 tensors match
//
// The same MLP ending in a reduce_scatter, a tanh on the scattered rows and an
// all_gather; the rank count comes from the mesh.
// RUN: loom-run %s --entry mlp_tanh --inputs %t.in.safetensors --outputs %t.tanh.safetensors
// RUN: loom-run %s --entry mlp_tp_rs --inputs %t.in.safetensors --outputs %t.tanh_rs.safetensors
// RUN: loom-run --compare %t.tanh.safetensors %t.tanh_rs.safetensors --rtol 1e-12 --atol 1e-12 | FileCheck %s --check-prefix=SAME
//
// The same in f32 (on f32 inputs): the runs agree to f32 rounding.
// RUN: loom-run %s --entry inputs --dtype f32 --outputs %t.in32.safetensors
// RUN: loom-run %s --entry mlp --dtype f32 --inputs %t.in32.safetensors --outputs %t.mlp32.safetensors | FileCheck %s --check-prefix=F32
// F32: y: shape [4, 8] dtype F32
// RUN: loom-run %s --entry mlp_tp --dtype f32 --inputs %t.in32.safetensors --outputs %t.mlp_tp32.safetensors
// RUN: loom-run --compare %t.mlp32.safetensors %t.mlp_tp32.safetensors --rtol 1e-5 --atol 1e-5 | FileCheck %s --check-prefix=SAME
//
// The functions below take x alone.
// RUN: loom-run %s --entry only_x --inputs %t.in.safetensors --outputs %t.x.safetensors
//
// An all_to_all moves the row split to the columns; the global value is x.
// RUN: loom-run %s --entry identity --inputs %t.x.safetensors --outputs %t.id.safetensors
// RUN: loom-run %s --entry a2a --inputs %t.x.safetensors --outputs %t.a2a.safetensors
// RUN: loom-run --compare %t.id.safetensors %t.a2a.safetensors --rtol 0 --atol 0 | FileCheck %s --check-prefix=SAME
//
// A collective_permute over 4 ranks holding one row each rolls the rows.
// RUN: loom-run %s --entry roll --inputs %t.x.safetensors --outputs %t.roll.safetensors
// RUN: loom-run %s --entry permute --ranks 4 --inputs %t.x.safetensors --outputs %t.permute.safetensors
// RUN: loom-run --compare %t.roll.safetensors %t.permute.safetensors --rtol 0 --atol 0 | FileCheck %s --check-prefix=SAME
//
// A broadcast from group member 2 gives every rank row 2.
// RUN: loom-run %s --entry row2 --inputs %t.x.safetensors --outputs %t.row2.safetensors
// RUN: loom-run %s --entry bcast --inputs %t.x.safetensors --outputs %t.bcast.safetensors
// RUN: loom-run --compare %t.row2.safetensors %t.bcast.safetensors --rtol 0 --atol 0 | FileCheck %s --check-prefix=SAME
//
// A partial argument: the first rank of the group holds x, the others
// zeros, so summing over the group gives x back.
// RUN: loom-run %s --entry sum_partial --inputs %t.x.safetensors --outputs %t.partial.safetensors
// RUN: loom-run --compare %t.id.safetensors %t.partial.safetensors --rtol 0 --atol 0 | FileCheck %s --check-prefix=SAME
//
// dist.axis_index: a scalar result partial over `sp` sums the four
// coordinates, 0 + 1 + 2 + 3.
// RUN: loom-run %s --entry coordinates | FileCheck %s --check-prefix=COORD
// COORD: result0: shape [] dtype I64 mean 6 absmax 6
//
// Two pipeline stages: stage 0 computes the first layer and sends it, stage 1
// receives it and computes the second; the result is partial over `pp`
// (stage 0 holds zeros), so gathering it sums the stages.
// RUN: loom-run %s --entry two_layers --inputs %t.in.safetensors --outputs %t.two.safetensors
// RUN: loom-run %s --entry pipeline --inputs %t.in.safetensors --outputs %t.pipe.safetensors
// RUN: loom-run --compare %t.two.safetensors %t.pipe.safetensors --rtol 1e-12 --atol 1e-12 | FileCheck %s --check-prefix=SAME

dist.mesh @m shape [2] axes ["tp"]
dist.mesh @ring shape [4] axes ["sp"]
dist.mesh @pp shape [2] axes ["pp"]

func.func @inputs() -> (tensor<4x8xf64> {loom.name = "x"},
                        tensor<8x16xf64> {loom.name = "fc1.weight"},
                        tensor<16x8xf64> {loom.name = "fc2.weight"}) {
  %x = arith.constant dense<[[-0.75, -0.125, 0.5, -0.5, 0.125, 0.75, -0.25, 0.375], [-0.625, 0.0, 0.625, -0.375, 0.25, -0.75, -0.125, 0.5], [-0.5, 0.125, 0.75, -0.25, 0.375, -0.625, 0.0, 0.625], [-0.375, 0.25, -0.75, -0.125, 0.5, -0.5, 0.125, 0.75]]> : tensor<4x8xf64>
  %w1 = arith.constant dense<[[-0.75, 0.125, -0.625, 0.25, -0.5, 0.375, -0.375, 0.5, -0.25, 0.625, -0.125, 0.75, 0.0, -0.75, 0.125, -0.625], [0.25, -0.5, 0.375, -0.375, 0.5, -0.25, 0.625, -0.125, 0.75, 0.0, -0.75, 0.125, -0.625, 0.25, -0.5, 0.375], [-0.375, 0.5, -0.25, 0.625, -0.125, 0.75, 0.0, -0.75, 0.125, -0.625, 0.25, -0.5, 0.375, -0.375, 0.5, -0.25], [0.625, -0.125, 0.75, 0.0, -0.75, 0.125, -0.625, 0.25, -0.5, 0.375, -0.375, 0.5, -0.25, 0.625, -0.125, 0.75], [0.0, -0.75, 0.125, -0.625, 0.25, -0.5, 0.375, -0.375, 0.5, -0.25, 0.625, -0.125, 0.75, 0.0, -0.75, 0.125], [-0.625, 0.25, -0.5, 0.375, -0.375, 0.5, -0.25, 0.625, -0.125, 0.75, 0.0, -0.75, 0.125, -0.625, 0.25, -0.5], [0.375, -0.375, 0.5, -0.25, 0.625, -0.125, 0.75, 0.0, -0.75, 0.125, -0.625, 0.25, -0.5, 0.375, -0.375, 0.5], [-0.25, 0.625, -0.125, 0.75, 0.0, -0.75, 0.125, -0.625, 0.25, -0.5, 0.375, -0.375, 0.5, -0.25, 0.625, -0.125]]> : tensor<8x16xf64>
  %w2 = arith.constant dense<[[-0.75, -0.375, 0.0, 0.375, 0.75, -0.5, -0.125, 0.25], [0.625, -0.625, -0.25, 0.125, 0.5, -0.75, -0.375, 0.0], [0.375, 0.75, -0.5, -0.125, 0.25, 0.625, -0.625, -0.25], [0.125, 0.5, -0.75, -0.375, 0.0, 0.375, 0.75, -0.5], [-0.125, 0.25, 0.625, -0.625, -0.25, 0.125, 0.5, -0.75], [-0.375, 0.0, 0.375, 0.75, -0.5, -0.125, 0.25, 0.625], [-0.625, -0.25, 0.125, 0.5, -0.75, -0.375, 0.0, 0.375], [0.75, -0.5, -0.125, 0.25, 0.625, -0.625, -0.25, 0.125], [0.5, -0.75, -0.375, 0.0, 0.375, 0.75, -0.5, -0.125], [0.25, 0.625, -0.625, -0.25, 0.125, 0.5, -0.75, -0.375], [0.0, 0.375, 0.75, -0.5, -0.125, 0.25, 0.625, -0.625], [-0.25, 0.125, 0.5, -0.75, -0.375, 0.0, 0.375, 0.75], [-0.5, -0.125, 0.25, 0.625, -0.625, -0.25, 0.125, 0.5], [-0.75, -0.375, 0.0, 0.375, 0.75, -0.5, -0.125, 0.25], [0.625, -0.625, -0.25, 0.125, 0.5, -0.75, -0.375, 0.0], [0.375, 0.75, -0.5, -0.125, 0.25, 0.625, -0.625, -0.25]]> : tensor<16x8xf64>
  return %x, %w1, %w2 : tensor<4x8xf64>, tensor<8x16xf64>, tensor<16x8xf64>
}

func.func @mlp(%x: tensor<4x8xf64> {loom.name = "x"},
               %w1: tensor<8x16xf64> {loom.param = #loom.param<"fc1.weight", init = zeros, decay = true>},
               %w2: tensor<16x8xf64> {loom.param = #loom.param<"fc2.weight", init = zeros, decay = true>})
    -> (tensor<4x8xf64> {loom.name = "y"}) {
  %h = loom.matmul %x, %w1 : (tensor<4x8xf64>, tensor<8x16xf64>) -> tensor<4x16xf64>
  %t = loom.tanh %h : tensor<4x16xf64>
  %y = loom.matmul %t, %w2 : (tensor<4x16xf64>, tensor<16x8xf64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

func.func @mlp_tp(%x: tensor<4x8xf64> {loom.name = "x"},
                  %w1: tensor<8x8xf64> {loom.param = #loom.param<"fc1.weight", init = zeros, decay = true>,
                                        dist.layout = #dist.layout<@m, [[], ["tp"]]>},
                  %w2: tensor<8x8xf64> {loom.param = #loom.param<"fc2.weight", init = zeros, decay = true>,
                                        dist.layout = #dist.layout<@m, [["tp"], []]>})
    -> (tensor<4x8xf64> {loom.name = "y"}) {
  %h = loom.matmul %x, %w1 : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
  %t = loom.tanh %h : tensor<4x8xf64>
  %p = loom.matmul %t, %w2 : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
  %y = dist.all_reduce sum %p on @m axes ["tp"] : tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

func.func @mlp_tanh(%x: tensor<4x8xf64> {loom.name = "x"},
                    %w1: tensor<8x16xf64> {loom.param = #loom.param<"fc1.weight", init = zeros, decay = true>},
                    %w2: tensor<16x8xf64> {loom.param = #loom.param<"fc2.weight", init = zeros, decay = true>})
    -> (tensor<4x8xf64> {loom.name = "y"}) {
  %h = loom.matmul %x, %w1 : (tensor<4x8xf64>, tensor<8x16xf64>) -> tensor<4x16xf64>
  %t = loom.tanh %h : tensor<4x16xf64>
  %p = loom.matmul %t, %w2 : (tensor<4x16xf64>, tensor<16x8xf64>) -> tensor<4x8xf64>
  %y = loom.tanh %p : tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

func.func @mlp_tp_rs(%x: tensor<4x8xf64> {loom.name = "x"},
                     %w1: tensor<8x8xf64> {loom.param = #loom.param<"fc1.weight", init = zeros, decay = true>,
                                           dist.layout = #dist.layout<@m, [[], ["tp"]]>},
                     %w2: tensor<8x8xf64> {loom.param = #loom.param<"fc2.weight", init = zeros, decay = true>,
                                           dist.layout = #dist.layout<@m, [["tp"], []]>})
    -> (tensor<4x8xf64> {loom.name = "y"}) {
  %h = loom.matmul %x, %w1 : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
  %t = loom.tanh %h : tensor<4x8xf64>
  %p = loom.matmul %t, %w2 : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
  %s = dist.reduce_scatter %p on @m axes ["tp"] dim 0 : tensor<4x8xf64> -> tensor<2x8xf64>
  %u = loom.tanh %s : tensor<2x8xf64>
  %y = dist.all_gather %u on @m axes ["tp"] dim 0 : tensor<2x8xf64> -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

func.func @only_x(%x: tensor<4x8xf64> {loom.name = "x"},
                  %w1: tensor<8x16xf64> {loom.param = #loom.param<"fc1.weight", init = zeros, decay = true>},
                  %w2: tensor<16x8xf64> {loom.param = #loom.param<"fc2.weight", init = zeros, decay = true>})
    -> (tensor<4x8xf64> {loom.name = "x"}) {
  return %x : tensor<4x8xf64>
}

func.func @identity(%x: tensor<4x8xf64> {loom.name = "x"}) -> (tensor<4x8xf64> {loom.name = "y"}) {
  return %x : tensor<4x8xf64>
}

func.func @a2a(%x: tensor<2x8xf64> {loom.name = "x", dist.layout = #dist.layout<@m, [["tp"], []]>})
    -> (tensor<4x4xf64> {loom.name = "y", dist.layout = #dist.layout<@m, [[], ["tp"]]>}) {
  %y = dist.all_to_all %x on @m axes ["tp"] split_dim 1 concat_dim 0 : tensor<2x8xf64> -> tensor<4x4xf64>
  return %y : tensor<4x4xf64>
}

func.func @roll(%x: tensor<4x8xf64> {loom.name = "x"}) -> (tensor<4x8xf64> {loom.name = "y"}) {
  %last = loom.slice %x {starts = array<i64: 3, 0>, limits = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf64>) -> tensor<1x8xf64>
  %first = loom.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 3, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf64>) -> tensor<3x8xf64>
  %y = loom.concat %last, %first {axis = 0 : i64} : (tensor<1x8xf64>, tensor<3x8xf64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

func.func @permute(%x: tensor<1x8xf64> {loom.name = "x", dist.layout = #dist.layout<@ring, [["sp"], []]>})
    -> (tensor<1x8xf64> {loom.name = "y", dist.layout = #dist.layout<@ring, [["sp"], []]>}) {
  %y = dist.collective_permute %x on @ring axes ["sp"] shift 1 : tensor<1x8xf64>
  return %y : tensor<1x8xf64>
}

func.func @two_layers(%x: tensor<4x8xf64> {loom.name = "x"},
                      %w1: tensor<8x16xf64> {loom.param = #loom.param<"fc1.weight", init = zeros, decay = true>},
                      %w2: tensor<16x8xf64> {loom.param = #loom.param<"fc2.weight", init = zeros, decay = true>})
    -> (tensor<4x8xf64> {loom.name = "y"}) {
  %h = loom.matmul %x, %w1 : (tensor<4x8xf64>, tensor<8x16xf64>) -> tensor<4x16xf64>
  %y = loom.matmul %h, %w2 : (tensor<4x16xf64>, tensor<16x8xf64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

func.func @pipeline(%x: tensor<4x8xf64> {loom.name = "x"},
                    %w1: tensor<8x16xf64> {loom.param = #loom.param<"fc1.weight", init = zeros, decay = true>},
                    %w2: tensor<16x8xf64> {loom.param = #loom.param<"fc2.weight", init = zeros, decay = true>})
    -> (tensor<4x8xf64> {loom.name = "y", dist.layout = #dist.layout<@pp, [[], []], partial = ["pp"]>}) {
  %h = loom.matmul %x, %w1 : (tensor<4x8xf64>, tensor<8x16xf64>) -> tensor<4x16xf64>
  dist.send %h on @pp axis "pp" to 1 : tensor<4x16xf64>
  %r = dist.recv on @pp axis "pp" from 0 : tensor<4x16xf64>
  %y = loom.matmul %r, %w2 : (tensor<4x16xf64>, tensor<16x8xf64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

func.func @row2(%x: tensor<4x8xf64> {loom.name = "x"}) -> (tensor<1x8xf64> {loom.name = "y"}) {
  %y = loom.slice %x {starts = array<i64: 2, 0>, limits = array<i64: 3, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf64>) -> tensor<1x8xf64>
  return %y : tensor<1x8xf64>
}

func.func @bcast(%x: tensor<1x8xf64> {loom.name = "x", dist.layout = #dist.layout<@ring, [["sp"], []]>})
    -> (tensor<1x8xf64> {loom.name = "y"}) {
  %y = dist.broadcast %x on @ring axes ["sp"] root 2 : tensor<1x8xf64>
  return %y : tensor<1x8xf64>
}

func.func @coordinates() -> (i64 {dist.layout = #dist.layout<@ring, [], partial = ["sp"]>}) {
  %i = dist.axis_index @ring "sp" : i64
  return %i : i64
}

func.func @sum_partial(%x: tensor<4x8xf64> {loom.name = "x", dist.layout = #dist.layout<@m, [[], []], partial = ["tp"]>})
    -> (tensor<4x8xf64> {loom.name = "y"}) {
  %y = dist.all_reduce sum %x on @m axes ["tp"] : tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}
