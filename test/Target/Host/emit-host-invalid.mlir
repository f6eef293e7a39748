// RUN: loom-translate --emit-host %s --split-input-file -verify-diagnostics
// RUN: not loom-translate --emit-host %s --split-input-file -o %t.cpp 2>&1 | FileCheck %s
// RUN: not test -e %t.cpp
// RUN: not loom-translate --emit-host %s --split-input-file -o %t.dir/ 2>&1 | FileCheck %s
// RUN: not test -e %t.dir/train_step.cpp

// CHECK: error: no host emission for 'arith.addf'

// An op without an emission pattern is an error at the op, and nothing is
// written.

func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{no host emission for 'arith.addf'}}
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// i1 tensors are not held by the host runtime.

// expected-error @below {{argument #0 has element type 'i1'; host programs hold floats and integers (not i1)}}
func.func @train_step(%x: tensor<4xi1>) -> tensor<4xi1> {
  return %x : tensor<4xi1>
}

// -----

// A function with no entry to emit names the option that picks one.

// expected-error @below {{no function @forward to emit (name it with --emit-host-entry)}}
module {
  func.func @other() {
    return
  }
}

// -----

// A pipelined program's pipeline axis must be an axis of its mesh.

// expected-error @below {{`dist.pipeline`: the pipeline axis `pp` is not an axis of the entry's mesh}}
module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  dist.mesh @m shape [2] axes ["dp"]
  func.func @train_step(%x: tensor<4xf32> {dist.layout = #dist.layout<@m, [["dp"]]>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// The stage count of `dist.pipeline` is the pipeline axis's size.

// expected-error @below {{`dist.pipeline` has 3 stages, but the pipeline axis `pp` has size 2}}
module attributes {dist.pipeline = #dist.pipeline<stages = 3>} {
  dist.mesh @m shape [2] axes ["pp"]
  func.func @train_step(%x: tensor<4xf32> {dist.layout = #dist.layout<@m, [[]]>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// An op's stage must be a coordinate of the pipeline axis.

module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  dist.mesh @m shape [2] axes ["pp"]
  func.func @train_step(%x: tensor<4xf32> {dist.layout = #dist.layout<@m, [[]]>}) -> tensor<4xf32> {
    // expected-error @below {{'loom.neg' op `dist.stage` 2 is not a stage of the pipeline axis `pp` (size 2)}}
    %y = loom.neg %x {dist.stage = 2 : i64} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// A result's stage must be a coordinate of the pipeline axis.

module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  dist.mesh @m shape [2] axes ["pp"]
  // expected-error @below {{result #0: `dist.stage` -1 is not a stage of the pipeline axis `pp` (size 2)}}
  func.func @train_step(%x: tensor<4xf32> {dist.layout = #dist.layout<@m, [[]]>}) -> (tensor<4xf32> {dist.stage = -1 : i64}) {
    return %x : tensor<4xf32>
  }
}

// -----

// Each stage's ops run in its own region of the one step function: a value
// of stage 0 does not exist on stage 1's ranks, so stage 1 (or an op on
// every stage) cannot read it without a dist.send/dist.recv.

module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  dist.mesh @m shape [2] axes ["pp"]
  func.func @train_step(%x: tensor<4xf32> {dist.layout = #dist.layout<@m, [[]]>}) -> tensor<4xf32> {
    %y = loom.neg %x {dist.stage = 0 : i64} : tensor<4xf32>
    // expected-error @below {{'loom.neg' op on stage 1 uses a value of stage 0; stages exchange values through dist.send/dist.recv}}
    %z = loom.neg %y {dist.stage = 1 : i64} : tensor<4xf32>
    return %z : tensor<4xf32>
  }
}

// -----

module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  dist.mesh @m shape [2] axes ["pp"]
  func.func @train_step(%x: tensor<4xf32> {dist.layout = #dist.layout<@m, [[]]>}) -> tensor<4xf32> {
    %y = loom.neg %x {dist.stage = 0 : i64} : tensor<4xf32>
    // expected-error @below {{'loom.neg' op has no `dist.stage` but uses a value of stage 0; it would run on every stage}}
    %z = loom.neg %y : tensor<4xf32>
    return %z : tensor<4xf32>
  }
}

// -----

// A result computed on one stage is written by that stage only, so it must
// name it.

module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  dist.mesh @m shape [2] axes ["pp"]
  func.func @train_step(%x: tensor<4xf32> {dist.layout = #dist.layout<@m, [[]]>}) -> tensor<4xf32> {
    %y = loom.neg %x {dist.stage = 1 : i64} : tensor<4xf32>
    // expected-error @below {{'func.return' op returns as result #0 a value of stage 1, but the result's `dist.stage` is missing}}
    return %y : tensor<4xf32>
  }
}
