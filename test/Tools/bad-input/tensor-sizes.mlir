// Absurd tensor sizes are refused by the interpreter before anything is
// allocated (it aborted with std::length_error or "LLVM ERROR: out of
// memory"): element counts and byte sizes must fit int64 and the bytes the
// host's memory (docs/Testing.md, "Bad input"). The message names the value,
// its type and the size. Each case exits non-zero and writes no output.

// RUN: rm -rf %t && mkdir -p %t
// RUN: not loom-run %s --entry overflow --outputs %t/a.safetensors 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// RUN: test ! -e %t/a.safetensors
// OVERFLOW: loom-run: error: argument #0 of @overflow (global shape) of type tensor<4611686018427387904xf32> (held as f64): a tensor of shape [4611686018427387904] has 4611686018427387904 elements of 8 bytes, more bytes than int64 holds
// RUN: not loom-run %s --entry memory --dtype f32 --outputs %t/b.safetensors 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: test ! -e %t/b.safetensors
// MEMORY: loom-run: error: `loom.add` at {{.*}}tensor-sizes.mlir:{{[0-9]+}}:{{[0-9]+}}: result #0 of type tensor<1048576x1048576xf32> (held as f32): a tensor of shape [1048576x1048576] needs 4398046511104 bytes (4.0 TiB), more than the host's memory ({{.*}})

func.func @overflow(%x: tensor<4611686018427387904xf32>) -> tensor<4611686018427387904xf32> {
  return %x : tensor<4611686018427387904xf32>
}

func.func @memory(%a: tensor<1048576x1xf32>, %b: tensor<1048576xf32>) -> tensor<1048576x1048576xf32> {
  %0 = loom.add %a, %b : (tensor<1048576x1xf32>, tensor<1048576xf32>) -> tensor<1048576x1048576xf32>
  return %0 : tensor<1048576x1048576xf32>
}
