// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-derive-eval-step | FileCheck %s

// A receive no send pairs with (the tags differ): no @eval_step, and a
// remark says which messages do not pair.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: @eval_step
module {
  dist.mesh @mesh shape [2] axes ["pp"]
  // expected-remark @below {{no @eval_step: a receive has no send to pair with (the training step has 1 receive(s) but 0 send(s) on axis `pp` from 0 to 1 with tag 7)}}
  func.func @train_step(%x: tensor<f64> {dist.layout = #dist.layout<@mesh, []>, loom.name = "x"}) -> (tensor<f64> {dist.layout = #dist.layout<@mesh, []>, dist.stage = 1 : i64, loom.name = "loss"}) {
    dist.send %x on @mesh axis "pp" to 1 {dist.stage = 0 : i64, tag = 6 : i64} : tensor<f64>
    %r = dist.recv on @mesh axis "pp" from 0 {dist.stage = 1 : i64, tag = 7 : i64} : tensor<f64>
    return %r : tensor<f64>
  }
}

// -----

// A step without a `loss` result is left alone.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: @eval_step
func.func @train_step(%x: tensor<f64> {loom.name = "x"}) -> (tensor<f64> {loom.name = "y"}) {
  return %x : tensor<f64>
}

// -----

// A module that already has @eval_step is an error, not overwritten.
// expected-error @below {{the module already has a symbol @eval_step; dist-derive-eval-step would add it}}
module {
  func.func @train_step(%x: tensor<f64> {loom.name = "x"}) -> (tensor<f64> {loom.name = "loss"}) {
    return %x : tensor<f64>
  }
  func.func @eval_step(%x: tensor<f64>) -> tensor<f64> {
    return %x : tensor<f64>
  }
}
