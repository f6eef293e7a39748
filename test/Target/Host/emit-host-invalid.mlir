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
