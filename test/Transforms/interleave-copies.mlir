// RUN: loom-opt %s -split-input-file -loom-interleave-copies='copies=2' | FileCheck %s
// RUN: loom-opt %s -split-input-file -loom-interleave-copies='copies=1' | FileCheck %s --check-prefix=ONE

// Two layers (`h.0`, `h.1`) between an embedding and a head: the batch of 6
// entering them is split into 2 copies of strided rows (reshape to [3, 2,
// ...], split dim 1), every layer op runs once per copy, copy 0 then copy 1,
// before the next op; the copies stay split from one layer to the next and
// are joined (concat dim 1, reshape to [6, ...]) before the final norm. The
// transpose of a layer's weight reads no copy and is built once.
// CHECK-LABEL: func.func @forward
// CHECK:      %[[X:.+]] = loom.embedding
// CHECK-NEXT: %[[G:.+]] = loom.reshape %[[X]] : tensor<6x3x4xf64> to tensor<3x2x3x4xf64>
// CHECK-NEXT: %[[S:.+]]:2 = loom.split %[[G]] {axis = 1 : i64, sizes = array<i64: 1, 1>}
// CHECK-NEXT: %[[C0:.+]] = loom.reshape %[[S]]#0 {loom.copy = 0 : i64} : tensor<3x1x3x4xf64> to tensor<3x3x4xf64>
// CHECK-NEXT: %[[C1:.+]] = loom.reshape %[[S]]#1 {loom.copy = 1 : i64} : tensor<3x1x3x4xf64> to tensor<3x3x4xf64>
// CHECK-NEXT: %[[WT:.+]] = loom.transpose %arg1
// CHECK-NOT:  loom.copy
// CHECK-SAME: -> tensor<4x4xf64>
// CHECK-NEXT: %[[M0:.+]] = loom.matmul %[[C0]], %[[WT]] {loom.copy = 0 : i64} : (tensor<3x3x4xf64>, tensor<4x4xf64>) -> tensor<3x3x4xf64>
// CHECK-NEXT: %[[M1:.+]] = loom.matmul %[[C1]], %[[WT]] {loom.copy = 1 : i64}
// CHECK-NEXT: %[[A0:.+]] = loom.add %[[C0]], %[[M0]] {loom.copy = 0 : i64}
// CHECK-NEXT: %[[A1:.+]] = loom.add %[[C1]], %[[M1]] {loom.copy = 1 : i64}
// CHECK-NEXT: %[[N0:.+]] = loom.matmul %[[A0]], %arg2 {loom.copy = 0 : i64, transpose_rhs}
// CHECK-NEXT: %[[N1:.+]] = loom.matmul %[[A1]], %arg2 {loom.copy = 1 : i64, transpose_rhs}
// CHECK-NEXT: %[[B0:.+]] = loom.add %[[A0]], %[[N0]] {loom.copy = 0 : i64}
// CHECK-NEXT: %[[B1:.+]] = loom.add %[[A1]], %[[N1]] {loom.copy = 1 : i64}
// CHECK-NEXT: %[[J0:.+]] = loom.reshape %[[B0]] : tensor<3x3x4xf64> to tensor<3x1x3x4xf64>
// CHECK-NEXT: %[[J1:.+]] = loom.reshape %[[B1]] : tensor<3x3x4xf64> to tensor<3x1x3x4xf64>
// CHECK-NEXT: %[[J:.+]] = loom.concat %[[J0]], %[[J1]] {axis = 1 : i64}
// CHECK-NEXT: %[[Y:.+]] = loom.reshape %[[J]] : tensor<3x2x3x4xf64> to tensor<6x3x4xf64>
// CHECK-NEXT: loom.rms_norm %[[Y]], %arg3
// ONE-LABEL: func.func @forward
// ONE-NOT:   loom.copy
// ONE-NOT:   loom.split
func.func @forward(%arg0: tensor<8x4xf64> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
                   %arg1: tensor<4x4xf64> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
                   %arg2: tensor<4x4xf64> {loom.param = #loom.param<"h.1.w", init = zeros, decay = true>},
                   %arg3: tensor<4xf64> {loom.param = #loom.param<"ln_f.weight", init = ones, decay = false>},
                   %arg4: tensor<6x3xi64> {loom.input = #loom.input<input_ids>},
                   %arg5: tensor<6x3xi64> {loom.input = #loom.input<labels>}) -> tensor<f64> {
  %0 = loom.embedding %arg0, %arg4 : (tensor<8x4xf64>, tensor<6x3xi64>) -> tensor<6x3x4xf64>
  %1 = loom.transpose %arg1 {permutation = array<i64: 1, 0>} : (tensor<4x4xf64>) -> tensor<4x4xf64>
  %2 = loom.matmul %0, %1 : (tensor<6x3x4xf64>, tensor<4x4xf64>) -> tensor<6x3x4xf64>
  %3 = loom.add %0, %2 : (tensor<6x3x4xf64>, tensor<6x3x4xf64>) -> tensor<6x3x4xf64>
  %4 = loom.matmul %3, %arg2 {transpose_rhs} : (tensor<6x3x4xf64>, tensor<4x4xf64>) -> tensor<6x3x4xf64>
  %5 = loom.add %3, %4 : (tensor<6x3x4xf64>, tensor<6x3x4xf64>) -> tensor<6x3x4xf64>
  %6 = loom.rms_norm %5, %arg3 : (tensor<6x3x4xf64>, tensor<4xf64>) -> tensor<6x3x4xf64>
  %7 = loom.matmul %6, %arg0 {transpose_rhs} : (tensor<6x3x4xf64>, tensor<8x4xf64>) -> tensor<6x3x8xf64>
  %8 = loom.cross_entropy %7, %arg5 : (tensor<6x3x8xf64>, tensor<6x3xi64>) -> tensor<f64>
  return %8 : tensor<f64>
}

// -----

// An encoder-decoder has two stacks of layers, each split and joined on its
// own; the decoder's layers also read the encoder's output, a batch-
// dependent value from before them, which is split like the residual.
// CHECK-LABEL: func.func @forward
// CHECK:      loom.split {{.*}}axis = 1
// CHECK:      loom.matmul {{.*}}%arg1 {loom.copy = 0
// CHECK-NEXT: loom.matmul {{.*}}%arg1 {loom.copy = 1
// CHECK:      %[[ENC:.+]] = loom.reshape {{.*}} to tensor<6x3x4xf64>
// CHECK:      %[[DEC:.+]] = loom.embedding %arg3
// CHECK-NEXT: loom.reshape %[[DEC]] : tensor<6x3x4xf64> to tensor<3x2x3x4xf64>
// CHECK:      loom.reshape %[[ENC]] : tensor<6x3x4xf64> to tensor<3x2x3x4xf64>
// CHECK:      loom.matmul {{.*}}%arg2 {loom.copy = 0
// CHECK-NEXT: loom.matmul {{.*}}%arg2 {loom.copy = 1
// CHECK-NEXT: loom.add {{.*}}loom.copy = 0
// CHECK-NEXT: loom.add {{.*}}loom.copy = 1
// CHECK:      loom.concat
// CHECK:      loom.cross_entropy
func.func @forward(%arg0: tensor<8x4xf64> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
                   %arg1: tensor<4x4xf64> {loom.param = #loom.param<"encoder.0.w", init = zeros, decay = true>},
                   %arg2: tensor<4x4xf64> {loom.param = #loom.param<"decoder.0.w", init = zeros, decay = true>},
                   %arg3: tensor<8x4xf64> {loom.param = #loom.param<"dec_embed", init = zeros, decay = true>},
                   %arg4: tensor<6x3xi64> {loom.input = #loom.input<input_ids>},
                   %arg5: tensor<6x3xi64> {loom.input = #loom.input<labels>}) -> tensor<f64> {
  %0 = loom.embedding %arg0, %arg4 : (tensor<8x4xf64>, tensor<6x3xi64>) -> tensor<6x3x4xf64>
  %1 = loom.matmul %0, %arg1 {transpose_rhs} : (tensor<6x3x4xf64>, tensor<4x4xf64>) -> tensor<6x3x4xf64>
  %2 = loom.embedding %arg3, %arg4 : (tensor<8x4xf64>, tensor<6x3xi64>) -> tensor<6x3x4xf64>
  %3 = loom.matmul %2, %arg2 {transpose_rhs} : (tensor<6x3x4xf64>, tensor<4x4xf64>) -> tensor<6x3x4xf64>
  %4 = loom.add %3, %1 : (tensor<6x3x4xf64>, tensor<6x3x4xf64>) -> tensor<6x3x4xf64>
  %5 = loom.matmul %4, %arg0 {transpose_rhs} : (tensor<6x3x4xf64>, tensor<8x4xf64>) -> tensor<6x3x8xf64>
  %6 = loom.cross_entropy %5, %arg5 : (tensor<6x3x8xf64>, tensor<6x3xi64>) -> tensor<f64>
  return %6 : tensor<f64>
}
