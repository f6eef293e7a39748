// A hand-written pipelined training step on mesh pp=2 (docs/Pipeline.md,
// "the contract"): stage 0 embeds the tokens (wte, vocab 256, width 8) and
// sends the activations to stage 1 (tag 1); stage 1 projects them to the
// vocabulary (head), takes the mean cross-entropy, sends the activations'
// gradient back (tag 2) and updates head; stage 0 updates wte. Plain SGD,
// learning rate 0.5. The same step on one device is pipeline-train-1.mlir.
module attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 1, schedule = "1f1b">} {
dist.mesh @m shape [2] axes ["pp"]
func.func @train_step(
    %ids: tensor<4x8xi64> {loom.input = #loom.input<input_ids>, dist.layout = #dist.layout<@m, [[], []]>},
    %labels: tensor<4x8xi64> {loom.input = #loom.input<labels>, dist.layout = #dist.layout<@m, [[], []]>},
    %wte: tensor<256x8xf32> {loom.param = #loom.param<"wte", init = normal(0.5), decay = false>},
    %head: tensor<8x256xf32> {loom.param = #loom.param<"head", init = normal(0.5), decay = false>})
    -> (tensor<f32> {loom.name = "loss", dist.stage = 1 : i64},
        tensor<256x8xf32> {loom.name = "wte", dist.stage = 0 : i64},
        tensor<8x256xf32> {loom.name = "head", dist.stage = 1 : i64}) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %h = loom.embedding %wte, %ids {dist.stage = 0 : i64, loom.micro_batch = 0 : i64} : (tensor<256x8xf32>, tensor<4x8xi64>) -> tensor<4x8x8xf32>
  dist.send %h on @m axis "pp" to 1 {tag = 1 : i64, dist.stage = 0 : i64, loom.micro_batch = 0 : i64} : tensor<4x8x8xf32>
  %dh = dist.recv on @m axis "pp" from 1 {tag = 2 : i64, dist.stage = 0 : i64, loom.micro_batch = 0 : i64, loom.backward} : tensor<4x8x8xf32>
  %dwte = loom.embedding_grad %dh, %ids {vocab_size = 256 : i64, dist.stage = 0 : i64, loom.micro_batch = 0 : i64, loom.backward} : (tensor<4x8x8xf32>, tensor<4x8xi64>) -> tensor<256x8xf32>
  %swte = loom.scale %dwte {factor = 0.5 : f64, dist.stage = 0 : i64} : tensor<256x8xf32>
  %wte2 = loom.sub %wte, %swte {dist.stage = 0 : i64} : (tensor<256x8xf32>, tensor<256x8xf32>) -> tensor<256x8xf32>
  %r = dist.recv on @m axis "pp" from 0 {tag = 1 : i64, dist.stage = 1 : i64, loom.micro_batch = 0 : i64} : tensor<4x8x8xf32>
  %logits = loom.matmul %r, %head {dist.stage = 1 : i64, loom.micro_batch = 0 : i64} : (tensor<4x8x8xf32>, tensor<8x256xf32>) -> tensor<4x8x256xf32>
  %loss = loom.cross_entropy %logits, %labels {dist.stage = 1 : i64, loom.micro_batch = 0 : i64} : (tensor<4x8x256xf32>, tensor<4x8xi64>) -> tensor<f32>
  %dlogits = loom.cross_entropy_grad %logits, %labels, %one {dist.stage = 1 : i64, loom.micro_batch = 0 : i64, loom.backward} : (tensor<4x8x256xf32>, tensor<4x8xi64>, tensor<f32>) -> tensor<4x8x256xf32>
  %dr = loom.matmul %dlogits, %head {transpose_rhs, dist.stage = 1 : i64, loom.micro_batch = 0 : i64, loom.backward} : (tensor<4x8x256xf32>, tensor<8x256xf32>) -> tensor<4x8x8xf32>
  dist.send %dr on @m axis "pp" to 0 {tag = 2 : i64, dist.stage = 1 : i64, loom.micro_batch = 0 : i64, loom.backward} : tensor<4x8x8xf32>
  %dheadb = loom.matmul %r, %dlogits {transpose_lhs, dist.stage = 1 : i64, loom.micro_batch = 0 : i64, loom.backward} : (tensor<4x8x8xf32>, tensor<4x8x256xf32>) -> tensor<4x8x256xf32>
  %dhead = loom.reduce_sum %dheadb {axes = array<i64: 0>, dist.stage = 1 : i64} : (tensor<4x8x256xf32>) -> tensor<8x256xf32>
  %shead = loom.scale %dhead {factor = 0.5 : f64, dist.stage = 1 : i64} : tensor<8x256xf32>
  %head2 = loom.sub %head, %shead {dist.stage = 1 : i64} : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
  return %loss, %wte2, %head2 : tensor<f32>, tensor<256x8xf32>, tensor<8x256xf32>
}
}
