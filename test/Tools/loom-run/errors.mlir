// Bad input to loom-run is reported with the file, argument or op at fault,
// and exit status 1; no output file is left behind.
//
// RUN: loom-run %s --entry inputs --outputs %t.in.safetensors
//
// An unknown entry.
// RUN: not loom-run %s --entry nope 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: loom-run: error: `{{.*}}errors.mlir` has no function @nope
//
// An argument with no data and no initializer.
// RUN: not loom-run %s --entry linear 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: loom-run: error: argument `arg0` (#0) has no data in the inputs and no initializer
//
// A tensor in the inputs that matches no argument.
// RUN: not loom-run %s --entry only_w --inputs %t.in.safetensors 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: loom-run: error: `{{.*}}.in.safetensors`: tensor `x` matches no argument of @only_w (arguments: w)
//
// A shape that differs from the signature's.
// RUN: not loom-run %s --entry wrong_shape --inputs %t.in.safetensors 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: loom-run: error: `{{.*}}.in.safetensors`: tensor `x` has shape [2, 3], but argument #0 expects the global shape [3, 2]
//
// A dtype that differs from the signature's.
// RUN: not loom-run %s --entry wrong_dtype --inputs %t.in.safetensors 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: loom-run: error: `{{.*}}.in.safetensors`: tensor `x`: expected I64 or I32 data, found F64
//
// Unreadable, truncated and corrupt files.
// RUN: not loom-run %s --entry linear --inputs %t.nonexistent 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: loom-run: error: cannot read `{{.*}}.nonexistent`
// RUN: head -c 60 %t.in.safetensors > %t.truncated.safetensors
// RUN: not loom-run %s --entry linear --inputs %t.truncated.safetensors 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: loom-run: error: `{{.*}}.truncated.safetensors`: header length {{[0-9]+}} exceeds the file (60 bytes): not a safetensors file, or truncated
// RUN: printf 'garbage' > %t.garbage.npy
// RUN: not loom-run %s --entry linear --inputs %t.garbage.npy 2>&1 | FileCheck %s --check-prefix=NPY
// NPY: loom-run: error: `{{.*}}.garbage.npy`: not a .npy file (missing the \x93NUMPY magic)
//
// A data error of a kernel names the op, and an op of another dialect.
// RUN: not loom-run %s --entry bad_id --inputs %t.in.safetensors 2>&1 | FileCheck %s --check-prefix=KERNEL
// KERNEL: loom-run: error: rank 0: `loom.embedding` at {{.*}}errors.mlir:{{[0-9]+}}:{{[0-9]+}}: id 5 at index 0 is outside [0, 2)
// RUN: not loom-run %s --entry foreign --inputs %t.in.safetensors 2>&1 | FileCheck %s --check-prefix=FOREIGN
// FOREIGN: loom-run: error: rank 0: `tensor.empty` at {{.*}}: unsupported op; the interpreter runs loom, dist, arith.constant, arith.addi, arith.muli and func.return ops
//
// A tensor given by two input files.
// RUN: not loom-run %s --entry softmax --inputs %t.in.safetensors --inputs %t.in.safetensors 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: loom-run: error: `{{.*}}.in.safetensors`: tensor `w` is given twice
//
// An unreadable IR file.
// RUN: not loom-run %t.missing.mlir --entry f 2>&1 | FileCheck %s --check-prefix=NOIR
// NOIR: loom-run: error: cannot read `{{.*}}.missing.mlir`: No such file or directory
//
// Flags: --ranks against the mesh (or its absence), --dtype.
// RUN: not loom-run %s --entry linear --ranks 2 2>&1 | FileCheck %s --check-prefix=NOMESH
// NOMESH: loom-run: error: --ranks 2: function @linear names no `dist.mesh`, so it runs on 1 rank
// RUN: not loom-run %s --entry deadlock --ranks 3 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: loom-run: error: --ranks 3 does not match mesh @pp {pp:2}, which has 2 devices
// RUN: not loom-run %s --entry linear --dtype f16 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: loom-run: error: --dtype expects f64 or f32, got `f16`
//
// A receive no rank sends to is a deadlock, reported instead of hanging.
// RUN: not loom-run %s --entry deadlock 2>&1 | FileCheck %s --check-prefix=DEADLOCK
// DEADLOCK: loom-run: error: the ranks cannot make progress (a deadlock or mismatched collectives):
// DEADLOCK-NEXT: rank 0: finished
// DEADLOCK-NEXT: rank 1: waits in `dist.recv` at {{.*}} for rank 0
//
// A rank waiting in a collective for a rank that waits for it.
// RUN: not loom-run %s --entry mismatch 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: loom-run: error: the ranks cannot make progress (a deadlock or mismatched collectives):
// MISMATCH-NEXT: rank 0: waits in `dist.all_reduce` at {{.*}} for group {0, 1}
// MISMATCH-NEXT: rank 1: waits in `dist.recv` at {{.*}} for rank 0
//
// A send nobody receives.
// RUN: not loom-run %s --entry lost_send 2>&1 | FileCheck %s --check-prefix=LOST
// LOST: loom-run: error: `dist.send` at {{.*}} from rank 0 to rank 1 is never received (no matching `dist.recv`)
//
// Replicas of a result that disagree.
// RUN: not loom-run %s --entry disagree 2>&1 | FileCheck %s --check-prefix=REPLICA
// REPLICA: loom-run: error: result #0 is replicated over the unused mesh axes, but rank 1 holds other values than rank 0
//
// No output file is written by a failed run.
// RUN: rm -f %t.out.safetensors
// RUN: not loom-run %s --entry deadlock --outputs %t.out.safetensors
// RUN: not ls %t.out.safetensors

dist.mesh @pp shape [2] axes ["pp"]

func.func @inputs() -> (tensor<2x3xf64> {loom.name = "x"}, tensor<3xf64> {loom.name = "w"}) {
  %x = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf64>
  %w = arith.constant dense<[0.5, -1.0, 2.0]> : tensor<3xf64>
  return %x, %w : tensor<2x3xf64>, tensor<3xf64>
}

func.func @linear(%x: tensor<2x3xf64>, %w: tensor<3xf64> {loom.name = "w"}) -> tensor<2x3xf64> {
  %y = loom.mul %x, %w : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}

func.func @only_w(%w: tensor<3xf64> {loom.name = "w"}) -> tensor<3xf64> {
  return %w : tensor<3xf64>
}

func.func @wrong_shape(%x: tensor<3x2xf64> {loom.name = "x"}, %w: tensor<3xf64> {loom.name = "w"}) -> tensor<3x2xf64> {
  return %x : tensor<3x2xf64>
}

func.func @wrong_dtype(%x: tensor<2x3xi64> {loom.name = "x"}, %w: tensor<3xf64> {loom.name = "w"}) -> tensor<2x3xi64> {
  return %x : tensor<2x3xi64>
}

func.func @bad_id(%x: tensor<2x3xf64> {loom.name = "x"}, %w: tensor<3xf64> {loom.name = "w"}) -> tensor<2x3xf64> {
  %ids = arith.constant dense<5> : tensor<2xi64>
  %y = loom.embedding %x, %ids : (tensor<2x3xf64>, tensor<2xi64>) -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}

func.func @softmax(%x: tensor<2x3xf64> {loom.name = "x"}, %w: tensor<3xf64> {loom.name = "w"}) -> tensor<2x3xf64> {
  %y = loom.softmax %x {axis = 1 : i64} : (tensor<2x3xf64>) -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}

func.func @foreign(%x: tensor<2x3xf64> {loom.name = "x"}, %w: tensor<3xf64> {loom.name = "w"}) -> tensor<2x3xf64> {
  %e = tensor.empty() : tensor<2x3xf64>
  return %e : tensor<2x3xf64>
}

func.func @deadlock() -> tensor<2xf64> {
  %r = dist.recv on @pp axis "pp" from 0 : tensor<2xf64>
  return %r : tensor<2xf64>
}

func.func @lost_send() {
  %c = arith.constant dense<1.0> : tensor<2xf64>
  dist.send %c on @pp axis "pp" to 1 : tensor<2xf64>
  return
}

func.func @disagree() -> tensor<1xi64> {
  %c = arith.constant dense<1> : tensor<1xi64>
  %i = dist.axis_index @pp "pp" : i64
  %r = dist.recv on @pp axis "pp" from 0 : tensor<1xi64>
  dist.send %c on @pp axis "pp" to 1 : tensor<1xi64>
  return %r : tensor<1xi64>
}


func.func @mismatch() -> tensor<2xf64> {
  %c = arith.constant dense<1.0> : tensor<2xf64>
  %r = dist.recv on @pp axis "pp" from 0 : tensor<2xf64>
  %s = dist.all_reduce sum %r on @pp axes ["pp"] : tensor<2xf64>
  dist.send %c on @pp axis "pp" to 1 : tensor<2xf64>
  return %s : tensor<2xf64>
}
