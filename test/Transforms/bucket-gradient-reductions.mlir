// RUN: loom-opt %s -split-input-file -dist-bucket-gradient-reductions=bucket-cap-mb=0.0005 -dist-verify-partitioned | FileCheck %s
// RUN: loom-opt %s -split-input-file -dist-bucket-gradient-reductions | FileCheck %s --check-prefix=DEFAULT
// RUN: loom-opt %s -split-input-file -dist-bucket-gradient-reductions=bucket-cap-mb=0 | FileCheck %s --check-prefix=OFF
// RUN: not loom-opt %s -split-input-file -dist-bucket-gradient-reductions=bucket-cap-mb=-1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: bucket-cap-mb must be a non-negative number of MiB, got -1

// Three 256-byte gradients in backward order g2, g1, g0 under a 524-byte
// cap: g2 and g1 make bucket 0, whose reductions move to stand right after
// g1 (its last gradient), and g0 makes bucket 1. The first update that
// reads a bucket's result waits for it. The loss's all-reduce, which no
// optimizer reads, is no gradient reduction and stays where it is.
// CHECK-LABEL: func.func @three_gradients
// CHECK: %[[LOSS:.+]] = dist.all_reduce sum %{{.+}} on @mesh axes ["dp"] : tensor<f32>
// CHECK-NEXT: %[[G2:.+]] = loom.matmul %{{.+}}, %{{.+}} {loom.backward}
// CHECK-NEXT: %[[G1:.+]] = loom.matmul %{{.+}}, %{{.+}} {loom.backward}
// CHECK-NEXT: %[[R2:.+]] = dist.all_reduce sum %[[G2]] on @mesh axes ["dp"] {dist.bucket = 0 : i64}
// CHECK-NEXT: %[[R1:.+]] = dist.all_reduce sum %[[G1]] on @mesh axes ["dp"] {dist.bucket = 0 : i64}
// CHECK-NEXT: %[[G0:.+]] = loom.matmul %{{.+}}, %{{.+}} {loom.backward}
// CHECK-NEXT: %[[R0:.+]] = dist.all_reduce sum %[[G0]] on @mesh axes ["dp"] {dist.bucket = 1 : i64}
// CHECK-NEXT: loom.sgd_update %{{.+}}, %[[R2]] {dist.wait_buckets = array<i64: 0>
// CHECK-NEXT: loom.sgd_update %{{.+}}, %[[R1]] {lr
// CHECK-NEXT: loom.sgd_update %{{.+}}, %[[R0]] {dist.wait_buckets = array<i64: 1>
//
// With DDP's 25 MiB every gradient fits one bucket, started after the last
// gradient (g0).
// DEFAULT-LABEL: func.func @three_gradients
// DEFAULT: %[[G0:.+]] = loom.matmul %{{.+}}, %arg0 {loom.backward}
// DEFAULT-NEXT: dist.all_reduce sum %{{.+}} {dist.bucket = 0 : i64}
// DEFAULT-NEXT: dist.all_reduce sum %{{.+}} {dist.bucket = 0 : i64}
// DEFAULT-NEXT: dist.all_reduce sum %[[G0]] on @mesh axes ["dp"] {dist.bucket = 0 : i64}
// DEFAULT-NEXT: loom.sgd_update %{{.+}} {dist.wait_buckets = array<i64: 0>
//
// A cap of 0 changes nothing.
// OFF-LABEL: func.func @three_gradients
// OFF-NOT: dist.bucket
// OFF-NOT: dist.wait_buckets
dist.mesh @mesh shape [2] axes ["dp"]
func.func @three_gradients(%w0: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                           %w1: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                           %w2: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                           %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
                           %l: tensor<f32> {dist.layout = #dist.layout<@mesh, []>})
    -> (tensor<f32> {dist.layout = #dist.layout<@mesh, []>},
        tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
        tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
        tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %loss = dist.all_reduce sum %l on @mesh axes ["dp"] : tensor<f32>
  %g2 = loom.matmul %x, %w2 {loom.backward} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r2 = dist.all_reduce sum %g2 on @mesh axes ["dp"] : tensor<8x8xf32>
  %g1 = loom.matmul %x, %w1 {loom.backward} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r1 = dist.all_reduce sum %g1 on @mesh axes ["dp"] : tensor<8x8xf32>
  %g0 = loom.matmul %x, %w0 {loom.backward} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r0 = dist.all_reduce sum %g0 on @mesh axes ["dp"] : tensor<8x8xf32>
  %n2 = loom.sgd_update %w2, %r2 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %n1 = loom.sgd_update %w1, %r1 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %n0 = loom.sgd_update %w0, %r0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %loss, %n0, %n1, %n2 : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// An update that reads a reduced gradient before the next gradient is
// produced cannot wait for that gradient: the bucket closes under the cap,
// and the next gradient opens another.
// CHECK-LABEL: func.func @early_reader
// CHECK: %[[R1:.+]] = dist.all_reduce sum %{{.+}} {dist.bucket = 0 : i64}
// CHECK-NEXT: loom.sgd_update %{{.+}}, %[[R1]] {dist.wait_buckets = array<i64: 0>
// CHECK: dist.all_reduce sum %{{.+}} {dist.bucket = 1 : i64}
dist.mesh @mesh shape [2] axes ["dp"]
func.func @early_reader(%w0: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                        %w1: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                        %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
        tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %g1 = loom.matmul %x, %w1 {loom.backward} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r1 = dist.all_reduce sum %g1 on @mesh axes ["dp"] : tensor<8x8xf32>
  %n1 = loom.sgd_update %w1, %r1 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %g0 = loom.matmul %x, %n1 {loom.backward} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r0 = dist.all_reduce sum %g0 on @mesh axes ["dp"] : tensor<8x8xf32>
  %n0 = loom.sgd_update %w0, %r0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %n0, %n1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// ZeRO-2 with two micro-batches: each micro-batch's 256-byte gradients
// (g, h) are reduce-scattered into the rank's 4x8 shard and the shards
// accumulated by adds that the updates read. The reduce-scatters are
// bucketed as all-reduces are, by the bytes they send: micro-batch 0's
// two make bucket 0 (started after its last gradient, g0), waited by the
// first accumulating add, so they overlap micro-batch 1's backward. A
// bucket never spans micro-batches, even under the default cap; micro-batch
// 1's h1 is read (by its add) before h0 is produced, so each is a bucket
// alone.
// CHECK-LABEL: func.func @zero2_micro_batches
// CHECK: %[[G1:.+]] = loom.matmul %{{.+}} {loom.backward, loom.micro_batch = 0 : i64}
// CHECK-NEXT: %[[G0:.+]] = loom.matmul %{{.+}} {loom.backward, loom.micro_batch = 0 : i64}
// CHECK-NEXT: %[[S1:.+]] = dist.reduce_scatter %[[G1]] on @mesh axes ["dp"] dim 0 {dist.bucket = 0 : i64}
// CHECK-NEXT: %[[S0:.+]] = dist.reduce_scatter %[[G0]] on @mesh axes ["dp"] dim 0 {dist.bucket = 0 : i64}
// CHECK-NEXT: %[[H1:.+]] = loom.matmul %{{.+}} {loom.backward, loom.micro_batch = 1 : i64}
// CHECK-NEXT: %[[T1:.+]] = dist.reduce_scatter %[[H1]] on @mesh axes ["dp"] dim 0 {dist.bucket = 1 : i64}
// CHECK-NEXT: loom.add %[[S1]], %[[T1]] {dist.wait_buckets = array<i64: 0, 1>
// CHECK-NEXT: %[[H0:.+]] = loom.matmul %{{.+}} {loom.backward, loom.micro_batch = 1 : i64}
// CHECK-NEXT: %[[T0:.+]] = dist.reduce_scatter %[[H0]] on @mesh axes ["dp"] dim 0 {dist.bucket = 2 : i64}
// CHECK-NEXT: loom.add %[[S0]], %[[T0]] {dist.wait_buckets = array<i64: 2>
// DEFAULT-LABEL: func.func @zero2_micro_batches
// DEFAULT: dist.reduce_scatter %{{.+}} {dist.bucket = 0 : i64}
// DEFAULT-NEXT: dist.reduce_scatter %{{.+}} {dist.bucket = 0 : i64}
// DEFAULT: dist.reduce_scatter %{{.+}} {dist.bucket = 1 : i64}
// DEFAULT: dist.reduce_scatter %{{.+}} {dist.bucket = 2 : i64}
// OFF-LABEL: func.func @zero2_micro_batches
// OFF-NOT: dist.bucket
dist.mesh @mesh shape [2] axes ["dp"]
func.func @zero2_micro_batches(%w0: tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
                               %w1: tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
                               %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
                               %y: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
        tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>}) {
  %g1 = loom.matmul %x, %x {loom.backward, loom.micro_batch = 0 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s1 = dist.reduce_scatter %g1 on @mesh axes ["dp"] dim 0 : tensor<8x8xf32> -> tensor<4x8xf32>
  %g0 = loom.matmul %x, %y {loom.backward, loom.micro_batch = 0 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s0 = dist.reduce_scatter %g0 on @mesh axes ["dp"] dim 0 : tensor<8x8xf32> -> tensor<4x8xf32>
  %h1 = loom.matmul %y, %x {loom.backward, loom.micro_batch = 1 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %t1 = dist.reduce_scatter %h1 on @mesh axes ["dp"] dim 0 : tensor<8x8xf32> -> tensor<4x8xf32>
  %c1 = loom.add %s1, %t1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = loom.matmul %y, %y {loom.backward, loom.micro_batch = 1 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %t0 = dist.reduce_scatter %h0 on @mesh axes ["dp"] dim 0 : tensor<8x8xf32> -> tensor<4x8xf32>
  %c0 = loom.add %s0, %t0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n1 = loom.sgd_update %w1, %c1 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n0 = loom.sgd_update %w0, %c0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n0, %n1 : tensor<4x8xf32>, tensor<4x8xf32>
}
