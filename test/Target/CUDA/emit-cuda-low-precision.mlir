// RUN: loom-translate --emit-cuda %s --split-input-file | FileCheck %s

// Which matmuls and attentions run on the low-precision kernels
// (docs/MixedPrecision.md, "CUDA"): those whose operands hold values of one
// 16-bit type, produced by an op (rounded once) or widened from one by
// loom.cast, through reshapes. Block arguments are the caller's data, never
// trusted to be rounded, and f32 values stay on the exact kernels.

func.func @train_step(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>,
                      %rawA: tensor<4x8xbf16>, %rawB: tensor<8x2xbf16>)
    -> (tensor<4x2xbf16>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf16>,
        tensor<4x2xbf16>, tensor<4x2xf32>) {
  %a16 = loom.cast %a : tensor<4x8xf32> to tensor<4x8xbf16>
  %b16 = loom.cast %b : tensor<8x2xf32> to tensor<8x2xbf16>
  // Both operands are rounded bf16 results: tensor cores.
  %y = loom.matmul %a16, %b16 : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
  // Their widenings to f32, one through a reshape: still bf16 values.
  %aw = loom.cast %a16 : tensor<4x8xbf16> to tensor<4x8xf32>
  %b2 = loom.reshape %b16 : tensor<8x2xbf16> to tensor<16xbf16>
  %b3 = loom.reshape %b2 : tensor<16xbf16> to tensor<8x2xbf16>
  %bw = loom.cast %b3 : tensor<8x2xbf16> to tensor<8x2xf32>
  %wide = loom.matmul %aw, %bw : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  // One f32 operand: the f32 GEMM.
  %mixed = loom.matmul %aw, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  // f16 values: CUDA_R_16F inputs.
  %a_h = loom.cast %a : tensor<4x8xf32> to tensor<4x8xf16>
  %b_h = loom.cast %b : tensor<8x2xf32> to tensor<8x2xf16>
  %h = loom.matmul %a_h, %b_h : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
  // bf16 block arguments: not known to be rounded, the f32 GEMM.
  %raw = loom.matmul %rawA, %rawB : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
  // bf16 and f16 values together: not one type, the f32 GEMM.
  %hw = loom.cast %b_h : tensor<8x2xf16> to tensor<8x2xf32>
  %other = loom.matmul %aw, %hw : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y, %wide, %mixed, %h, %raw, %other : tensor<4x2xbf16>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf16>, tensor<4x2xbf16>, tensor<4x2xf32>
}

// CHECK-LABEL: Status loom_train_step(
// CHECK: loom.matmul %{{.*}} : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
// CHECK: cuda::matmulLowPrecision<T>(blas, session.getGemmScratch(), cuda::CastTarget::BF16, [[A16:v[0-9]+]], {4, 8}, [[B16:v[0-9]+]], {8, 2}, false, false, [[Y:v[0-9]+]]);
// CHECK-NEXT: cuda::cast<T, T>(stream, [[Y]], 8, cuda::CastTarget::BF16, [[Y]]);
// CHECK: loom.matmul %{{.*}} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK: cuda::matmulLowPrecision<T>(blas, session.getGemmScratch(), cuda::CastTarget::BF16,
// CHECK: loom.matmul %{{.*}} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK: cuda::matmul<T>(blas, v{{[0-9]+}}, {4, 8}, arg1, {8, 2}, false, false,
// CHECK: loom.matmul %{{.*}} : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
// CHECK: cuda::matmulLowPrecision<T>(blas, session.getGemmScratch(), cuda::CastTarget::F16,
// CHECK-NEXT: cuda::cast<T, T>(stream, {{.*}}, cuda::CastTarget::F16,
// CHECK: loom.matmul %{{.*}} : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
// CHECK: cuda::matmul<T>(blas, arg2, {4, 8}, arg3, {8, 2}, false, false,
// CHECK: loom.matmul %{{.*}} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK-NOT: matmulLowPrecision
// CHECK: cuda::matmul<T>(blas,

// -----

// Attention of bf16 values sums in float; with one operand a block
// argument it keeps the exact kernels.

func.func @train_step(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>,
                      %v: tensor<1x2x4x8xf32>, %rawV: tensor<1x2x4x8xbf16>)
    -> (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) {
  %q16 = loom.cast %q : tensor<1x2x4x8xf32> to tensor<1x2x4x8xbf16>
  %k16 = loom.cast %k : tensor<1x2x4x8xf32> to tensor<1x2x4x8xbf16>
  %v16 = loom.cast %v : tensor<1x2x4x8xf32> to tensor<1x2x4x8xbf16>
  %o = loom.attention %q16, %k16, %v16 {causal} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16>
  %raw = loom.attention %q16, %k16, %rawV {causal} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16>
  return %o, %raw, %raw : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>
}

// CHECK-LABEL: Status loom_train_step(
// CHECK: cuda::attentionLowPrecision<T>(stream,
// CHECK-NEXT: cuda::cast<T, T>(stream, {{.*}}, cuda::CastTarget::BF16,
// CHECK: cuda::attention<T>(stream,
