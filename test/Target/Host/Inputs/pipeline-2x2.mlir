// A hand-written pipelined step (docs/Pipeline.md, "the contract") on mesh
// pp=2 x dp=2: stage 0 multiplies two micro-batches by w0 and sends them to
// stage 1 (tags 1, 2); stage 1 multiplies by w1, sends a "gradient" back
// (tags 3, 4) and returns the sum; stage 0 receives the gradients in the
// crossed order (tag 4 before tag 3), all-reduces x^T d over dp and updates
// w0. Stage 0 runs F0 F1 B1 B0 (two micro-batches in flight), stage 1 runs
// F0 B0 F1 B1 (one).
module attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 2, schedule = "gpipe">} {
dist.mesh @m shape [2, 2] axes ["pp", "dp"]
func.func @train_step(
    %x0: tensor<2x8xf32> {loom.name = "x0", dist.layout = #dist.layout<@m, [["dp"], []]>},
    %x1: tensor<2x8xf32> {loom.name = "x1", dist.layout = #dist.layout<@m, [["dp"], []]>},
    %w0: tensor<8x8xf32> {loom.name = "w0"},
    %w1: tensor<8x8xf32> {loom.name = "w1"})
    -> (tensor<2x8xf32> {loom.name = "out", dist.stage = 1 : i64, dist.layout = #dist.layout<@m, [["dp"], []]>},
        tensor<8x8xf32> {loom.name = "w0", dist.stage = 0 : i64}) {
  %a0 = loom.matmul %x0, %w0 {dist.stage = 0 : i64, loom.micro_batch = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  dist.send %a0 on @m axis "pp" to 1 {tag = 1 : i64, dist.stage = 0 : i64, loom.micro_batch = 0 : i64} : tensor<2x8xf32>
  %a1 = loom.matmul %x1, %w0 {dist.stage = 0 : i64, loom.micro_batch = 1 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  dist.send %a1 on @m axis "pp" to 1 {tag = 2 : i64, dist.stage = 0 : i64, loom.micro_batch = 1 : i64} : tensor<2x8xf32>
  %d1 = dist.recv on @m axis "pp" from 1 {tag = 4 : i64, dist.stage = 0 : i64, loom.micro_batch = 1 : i64, loom.backward} : tensor<2x8xf32>
  %g1 = loom.matmul %x1, %d1 {transpose_lhs, dist.stage = 0 : i64, loom.micro_batch = 1 : i64, loom.backward} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
  %d0 = dist.recv on @m axis "pp" from 1 {tag = 3 : i64, dist.stage = 0 : i64, loom.micro_batch = 0 : i64, loom.backward} : tensor<2x8xf32>
  %g0 = loom.matmul %x0, %d0 {transpose_lhs, dist.stage = 0 : i64, loom.micro_batch = 0 : i64, loom.backward} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
  %gs = loom.add %g0, %g1 {dist.stage = 0 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %gr = dist.all_reduce sum %gs on @m axes ["dp"] {dist.stage = 0 : i64} : tensor<8x8xf32>
  %w0n = loom.sub %w0, %gr {dist.stage = 0 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r0 = dist.recv on @m axis "pp" from 0 {tag = 1 : i64, dist.stage = 1 : i64, loom.micro_batch = 0 : i64} : tensor<2x8xf32>
  %h0 = loom.matmul %r0, %w1 {dist.stage = 1 : i64, loom.micro_batch = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %e0 = loom.matmul %h0, %w1 {transpose_rhs, dist.stage = 1 : i64, loom.micro_batch = 0 : i64, loom.backward} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  dist.send %e0 on @m axis "pp" to 0 {tag = 3 : i64, dist.stage = 1 : i64, loom.micro_batch = 0 : i64, loom.backward} : tensor<2x8xf32>
  %r1 = dist.recv on @m axis "pp" from 0 {tag = 2 : i64, dist.stage = 1 : i64, loom.micro_batch = 1 : i64} : tensor<2x8xf32>
  %h1 = loom.matmul %r1, %w1 {dist.stage = 1 : i64, loom.micro_batch = 1 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %e1 = loom.matmul %h1, %w1 {transpose_rhs, dist.stage = 1 : i64, loom.micro_batch = 1 : i64, loom.backward} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  dist.send %e1 on @m axis "pp" to 0 {tag = 4 : i64, dist.stage = 1 : i64, loom.micro_batch = 1 : i64, loom.backward} : tensor<2x8xf32>
  %out = loom.add %h0, %h1 {dist.stage = 1 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %out, %w0n : tensor<2x8xf32>, tensor<8x8xf32>
}
}
