// RUN: not loom-opt %s -loom-import-pipeline 2>&1 | FileCheck %s

// A graph that breaks the import contract stops the pipeline with the
// contract's diagnostic and a failing exit code.
// CHECK: error: expected `@forward` to return one rank-0 floating-point tensor (the loss), found ('tensor<2x3xf32>')
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}
