// RUN: loom-translate --emit-cuda %s --split-input-file -verify-diagnostics
// RUN: not loom-translate --emit-cuda %s --split-input-file -o %t.cu 2>&1 | FileCheck %s
// RUN: not test -e %t.cu
// RUN: not loom-translate --emit-cuda %s --split-input-file -o %t.dir/ 2>&1 | FileCheck %s
// RUN: not test -e %t.dir/train_step.cu

// CHECK: error: no CUDA emission for 'arith.addf'

// An op without a CUDA pattern is an error naming it, and nothing is
// written.

func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{no CUDA emission for 'arith.addf'}}
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A dropout in an SPMD program draws by global index: without its layout
// the rank's place in the global tensor is unknown.

dist.mesh @m shape [2] axes ["tp"]

func.func @train_step(%x: tensor<2x6xf32> {dist.layout = #dist.layout<@m, [["tp"], []]>}) -> (tensor<2x6xf32> {dist.layout = #dist.layout<@m, [["tp"], []]>}) {
  // expected-error @below {{dropout in an SPMD program needs the layout of its input (a `dist.layout` attribute on the op)}}
  %y = loom.dropout %x {rate = 0.1 : f64, seed = 1 : i64} : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// The attention kernel keeps a row in registers: head dims above 256 are
// refused at emission rather than failing at run time.

func.func @train_step(%q: tensor<1x1x2x512xf32>) -> tensor<1x1x2x512xf32> {
  // expected-error @below {{'loom.attention' op head dim 512 exceeds the CUDA attention kernel's limit of 256}}
  %o = loom.attention %q, %q, %q : (tensor<1x1x2x512xf32>, tensor<1x1x2x512xf32>, tensor<1x1x2x512xf32>) -> tensor<1x1x2x512xf32>
  return %o : tensor<1x1x2x512xf32>
}

// -----

// i1 tensors are not held by the runtime.

// expected-error @below {{argument #0 has element type 'i1'; CUDA programs hold floats and integers (not i1)}}
func.func @train_step(%x: tensor<4xi1>) -> tensor<4xi1> {
  return %x : tensor<4xi1>
}

// -----

// A module without an entry names the option that picks one.

// expected-error @below {{no function @forward to emit (name it with --emit-cuda-entry)}}
module {
  func.func @other() {
    return
  }
}

// -----

// NCCL matches by order, so every receive needs a send of its tag from its
// peer: rank 0 sends tag 1, rank 1 waits for tag 2.

dist.mesh @m shape [2] axes ["pp"]

func.func @train_step(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  dist.send %x on @m axis "pp" to 1 {tag = 1 : i64} : tensor<2x6xf32>
  // expected-error @below {{'dist.recv' op on rank 1 receives tag 2 from rank 0, but rank 0 sends no (further) message with that tag to rank 1: the CUDA program would wait forever}}
  %y = dist.recv on @m axis "pp" from 0 {tag = 2 : i64} : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// A receive from a rank that sends this one nothing.

dist.mesh @m shape [2] axes ["pp"]

func.func @train_step(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error @below {{'dist.recv' op on rank 1 receives tag 3 from rank 0, but rank 0 sends no message to rank 1: the CUDA program would wait forever}}
  %y = dist.recv on @m axis "pp" from 0 {tag = 3 : i64} : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// NCCL's sends complete only when received: a send nobody receives would
// block its rank.

dist.mesh @m shape [2] axes ["pp"]

func.func @train_step(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error @below {{'dist.send' op on rank 0 sends tag 1 to rank 1, which no dist.recv on rank 1 takes: NCCL would block the sender forever}}
  dist.send %x on @m axis "pp" to 1 {tag = 1 : i64} : tensor<2x6xf32>
  return %x : tensor<2x6xf32>
}

// -----

// A receive must expect what its send carries.

dist.mesh @m shape [2] axes ["pp"]

func.func @train_step(%x: tensor<2x6xf32>) -> tensor<4xf32> {
  // expected-note @below {{the send}}
  dist.send %x on @m axis "pp" to 1 {tag = 1 : i64} : tensor<2x6xf32>
  // expected-error @below {{'dist.recv' op on rank 1 receives tag 1 from rank 0 as 4 float elements, but rank 0 sends 12 float elements}}
  %y = dist.recv on @m axis "pp" from 0 {tag = 1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Ring attention has no CUDA kernel yet: the CUDA emitter names the op (the
// host emitter runs it through the MPI runtime).

dist.mesh @m shape [2] axes ["cp"]

func.func @train_step(%q: tensor<1x2x8x4xf32> {dist.layout = #dist.layout<@m, [[], [], ["cp"], []]>}) -> (tensor<1x2x8x4xf32> {dist.layout = #dist.layout<@m, [[], [], ["cp"], []]>}) {
  // expected-error @below {{no CUDA emission for 'dist.ring_attention'}}
  %o, %lse = dist.ring_attention %q, %q, %q on @m axes ["cp"] {causal} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x4xf32>
}
