// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-verify-partitioned

// The bucket contract (GradientBuckets.h) as dist-verify-partitioned checks
// it before any target emits the step: one case per rule.

// B2: a reduction of bucket 0 stands before the bucket's last gradient
// (g0) is produced, so a target would start it too early.
dist.mesh @mesh shape [2] axes ["dp"]
func.func @starts_too_early(%w0: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                            %w1: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                            %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
        tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %g1 = loom.matmul %x, %w1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-error @+1 {{'dist.all_reduce' op of gradient bucket 0 starts before the bucket's last gradient is produced}}
  %r1 = dist.all_reduce sum %g1 on @mesh axes ["dp"] {dist.bucket = 0 : i64} : tensor<8x8xf32>
  // expected-note @+1 {{the last gradient of the bucket is produced here}}
  %g0 = loom.matmul %x, %w0 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r0 = dist.all_reduce sum %g0 on @mesh axes ["dp"] {dist.bucket = 0 : i64} : tensor<8x8xf32>
  %n1 = loom.sgd_update %w1, %r1 {lr = 0.1, momentum = 0.0, weight_decay = 0.0, dist.wait_buckets = array<i64: 0>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %n0 = loom.sgd_update %w0, %r0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %n0, %n1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// B3: an update reads a result of bucket 0 before the op that waits for it.
dist.mesh @mesh shape [2] axes ["dp"]
func.func @read_before_wait(%w0: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                            %w1: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                            %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
        tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %g1 = loom.matmul %x, %w1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %g0 = loom.matmul %x, %w0 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r1 = dist.all_reduce sum %g1 on @mesh axes ["dp"] {dist.bucket = 0 : i64} : tensor<8x8xf32>
  %r0 = dist.all_reduce sum %g0 on @mesh axes ["dp"] {dist.bucket = 0 : i64} : tensor<8x8xf32>
  // expected-error @+1 {{'loom.sgd_update' op reads a result of gradient bucket 0 before the op that waits for the bucket}}
  %n1 = loom.sgd_update %w1, %r1 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-note @+1 {{the bucket is waited here}}
  %n0 = loom.sgd_update %w0, %r0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0, dist.wait_buckets = array<i64: 0>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %n0, %n1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// B3: a bucket nobody waits for would be left in flight.
dist.mesh @mesh shape [2] axes ["dp"]
func.func @never_waited(%w0: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                        %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %g0 = loom.matmul %x, %w0 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-error @+1 {{'dist.all_reduce' op of gradient bucket 3 has 0 ops waiting for it (`dist.wait_buckets`), expected 1}}
  %r0 = dist.all_reduce sum %g0 on @mesh axes ["dp"] {dist.bucket = 3 : i64} : tensor<8x8xf32>
  %n0 = loom.sgd_update %w0, %r0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %n0 : tensor<8x8xf32>
}

// -----

// B1: the reductions of one bucket must share their group.
dist.mesh @mesh shape [2, 2] axes ["dp", "tp"]
func.func @two_groups(%w0: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                      %w1: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                      %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
        tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %g1 = loom.matmul %x, %w1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %g0 = loom.matmul %x, %w0 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r1 = dist.all_reduce sum %g1 on @mesh axes ["dp"] {dist.bucket = 0 : i64} : tensor<8x8xf32>
  // expected-error @+1 {{'dist.all_reduce' op of gradient bucket 0 reduces over another mesh, axis list or stage than the bucket's first reduction}}
  %r0 = dist.all_reduce sum %g0 on @mesh axes ["dp", "tp"] {dist.bucket = 0 : i64} : tensor<8x8xf32>
  %n1 = loom.sgd_update %w1, %r1 {lr = 0.1, momentum = 0.0, weight_decay = 0.0, dist.wait_buckets = array<i64: 0>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %n0 = loom.sgd_update %w0, %r0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %n0, %n1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// B3: an op waits for a bucket that has no reductions.
dist.mesh @mesh shape [2] axes ["dp"]
func.func @unknown_bucket(%w0: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                          %g0: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  // expected-error @+1 {{'loom.sgd_update' op waits for gradient bucket 7, which has no reductions}}
  %n0 = loom.sgd_update %w0, %g0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0, dist.wait_buckets = array<i64: 7>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %n0 : tensor<8x8xf32>
}

// -----

// B2 for ZeRO-2's reduce-scatters: the bucket's reduce-scatter of g1
// stands before its last gradient (g0) is produced.
dist.mesh @mesh shape [2] axes ["dp"]
func.func @reduce_scatter_starts_too_early(%w0: tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
                                           %w1: tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
                                           %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
        tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>}) {
  %g1 = loom.matmul %x, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-error @+1 {{'dist.reduce_scatter' op of gradient bucket 0 starts before the bucket's last gradient is produced}}
  %s1 = dist.reduce_scatter %g1 on @mesh axes ["dp"] dim 0 {dist.bucket = 0 : i64} : tensor<8x8xf32> -> tensor<4x8xf32>
  // expected-note @+1 {{the last gradient of the bucket is produced here}}
  %g0 = loom.matmul %x, %g1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s0 = dist.reduce_scatter %g0 on @mesh axes ["dp"] dim 0 {dist.bucket = 0 : i64} : tensor<8x8xf32> -> tensor<4x8xf32>
  %n1 = loom.sgd_update %w1, %s1 {lr = 0.1, momentum = 0.0, weight_decay = 0.0, dist.wait_buckets = array<i64: 0>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n0 = loom.sgd_update %w0, %s0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n0, %n1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// B3 for ZeRO-2: the add that accumulates a reduce-scattered shard reads
// it before the op that waits for its bucket (the wait is missing there).
dist.mesh @mesh shape [2] axes ["dp"]
func.func @reduce_scatter_read_before_wait(%w0: tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
                                           %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<4x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>}) {
  %g0 = loom.matmul %x, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s0 = dist.reduce_scatter %g0 on @mesh axes ["dp"] dim 0 {dist.bucket = 0 : i64} : tensor<8x8xf32> -> tensor<4x8xf32>
  // expected-error @+1 {{'loom.add' op reads a result of gradient bucket 0 before the op that waits for the bucket}}
  %c0 = loom.add %s0, %s0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{the bucket is waited here}}
  %n0 = loom.sgd_update %w0, %c0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0, dist.wait_buckets = array<i64: 0>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n0 : tensor<4x8xf32>
}
