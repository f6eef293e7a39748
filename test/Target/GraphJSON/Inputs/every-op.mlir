// A small decoder-only model that uses every `loom` op and `arith.constant`
// (splat, array, infinity, i1, i64), every argument role and initializer,
// and each optional operand both present and absent. The numbers mean
// nothing; the graph exists to round-trip through graph JSON.
func.func @forward(
    %ids: tensor<2x4xi64> {loom.input = #loom.input<input_ids>},
    %labels: tensor<2x4xi64> {loom.input = #loom.input<labels>},
    %pos: tensor<2x4xi64> {loom.input = #loom.input<positions>},
    %mask: tensor<2x1x4x4xf32> {loom.input = #loom.input<mask>},
    %dec: tensor<2x4xi32> {loom.input = #loom.input<decoder_input_ids>},
    %wte: tensor<16x8xf32> {loom.param = #loom.param<"transformer.wte.weight", init = normal(0.02), decay = true>},
    %ln_g: tensor<8xf32> {loom.param = #loom.param<"transformer.ln_f.weight", init = ones, decay = false>},
    %ln_b: tensor<8xf32> {loom.param = #loom.param<"transformer.ln_f.bias", init = zeros, decay = false>},
    %w_qkv: tensor<8x24xf32> {loom.param = #loom.param<"h.0.attn.c_attn.weight", init = uniform(-0.1, 0.1), decay = true>},
    %w_proj: tensor<8x8xf32> {loom.param = #loom.param<"h.0.attn.c_proj.weight", init = scaled_normal(0.02, 4), decay = true>})
    -> tensor<f32> {
  %x = loom.embedding %wte, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %h = loom.layer_norm %x, %ln_g, %ln_b : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %h2 = loom.layer_norm %x {eps = 1.0e-6 : f64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %qkv = loom.matmul %h, %w_qkv : (tensor<2x4x8xf32>, tensor<8x24xf32>) -> tensor<2x4x24xf32>
  %q, %k, %v = loom.split %qkv {axis = 2 : i64, sizes = array<i64: 8, 8, 8>} : (tensor<2x4x24xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %q4 = loom.reshape %q : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
  %k4 = loom.reshape %k : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
  %v4 = loom.reshape %v : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
  %qt = loom.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x4x2x4xf32>) -> tensor<2x2x4x4xf32>
  %kt = loom.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x4x2x4xf32>) -> tensor<2x2x4x4xf32>
  %vt = loom.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x4x2x4xf32>) -> tensor<2x2x4x4xf32>
  %qr = loom.rope %qt, %pos {theta = 500000.0 : f64} : (tensor<2x2x4x4xf32>, tensor<2x4xi64>) -> tensor<2x2x4x4xf32>
  %kr = loom.rope %kt {inverse} : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %att = loom.attention %qr, %kr, %vt, %mask {causal, scale = 0.5 : f64} : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %att2 = loom.attention %qr, %kr, %vt : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %dq, %dk, %dv = loom.attention_grad %qr, %kr, %vt, %att, %att2 {causal} : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>)
  %at = loom.transpose %att {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x2x4x4xf32>) -> tensor<2x4x2x4xf32>
  %a2 = loom.reshape %at : tensor<2x4x2x4xf32> to tensor<2x4x8xf32>
  %o = loom.matmul %a2, %w_proj : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %r = loom.add %x, %o : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %g = loom.gelu %r approximate = tanh : tensor<2x4x8xf32>
  %g0 = loom.gelu %r : tensor<2x4x8xf32>
  %gg = loom.gelu_grad %g, %r approximate = tanh : tensor<2x4x8xf32>
  %su = loom.sub %g, %g0 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %mu = loom.mul %su, %ln_g : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %dv2 = loom.div %mu, %ln_b : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %u0 = loom.neg %dv2 : tensor<2x4x8xf32>
  %u1 = loom.exp %u0 : tensor<2x4x8xf32>
  %u2 = loom.log %u1 : tensor<2x4x8xf32>
  %u3 = loom.sqrt %u2 : tensor<2x4x8xf32>
  %u4 = loom.rsqrt %u3 : tensor<2x4x8xf32>
  %u5 = loom.tanh %u4 : tensor<2x4x8xf32>
  %u6 = loom.sigmoid %u5 : tensor<2x4x8xf32>
  %u7 = loom.relu %u6 : tensor<2x4x8xf32>
  %u8 = loom.silu %u7 : tensor<2x4x8xf32>
  %sc = loom.scale %u8 {factor = 0.5} : tensor<2x4x8xf32>
  %dr = loom.dropout %sc {rate = 0.1, seed = 7} : tensor<2x4x8xf32>
  %rg = loom.relu_grad %dr, %r : tensor<2x4x8xf32>
  %sg = loom.silu_grad %rg, %r : tensor<2x4x8xf32>
  %rn = loom.rms_norm %sg, %ln_g {eps = 1.0e-6 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %rn0 = loom.rms_norm %sg : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %rdx, %rdg = loom.rms_norm_grad %rn, %sg, %ln_g : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>)
  %rdx0 = loom.rms_norm_grad %rn, %sg : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ldx, %ldg, %ldb = loom.layer_norm_grad %rn, %sg, %ln_g : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  %ldx0 = loom.layer_norm_grad %rn, %sg {eps = 1.0e-3 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %sm = loom.softmax %rn {axis = 2 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %smg = loom.softmax_grad %sm, %rn {axis = 2 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ls = loom.log_softmax %rn {axis = 0 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %lsg = loom.log_softmax_grad %ls, %rn {axis = 0 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %logits = loom.matmul %rn, %wte {transpose_rhs} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %loss = loom.cross_entropy %logits, %labels {ignore_index = 0 : i64} : (tensor<2x4x16xf32>, tensor<2x4xi64>) -> tensor<f32>
  %dlogits = loom.cross_entropy_grad %logits, %labels, %loss : (tensor<2x4x16xf32>, tensor<2x4xi64>, tensor<f32>) -> tensor<2x4x16xf32>
  %nlab = loom.label_count %labels {ignore_index = 0 : i64} : (tensor<2x4xi64>) -> tensor<f32>
  %eg = loom.embedding_grad %r, %ids {vocab_size = 16 : i64} : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> tensor<16x8xf32>
  %e2 = loom.embedding %wte, %dec : (tensor<16x8xf32>, tensor<2x4xi32>) -> tensor<2x4x8xf32>
  %rs = loom.reduce_sum %r {axes = array<i64: 0, 1>} : (tensor<2x4x8xf32>) -> tensor<8xf32>
  %rm = loom.reduce_mean %r {axes = array<i64: 2>, keepdims} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %rx = loom.reduce_max %r {axes = array<i64: 1>} : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
  %sl = loom.slice %r {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 4, 8>, strides = array<i64: 1, 2, 1>} : (tensor<2x4x8xf32>) -> tensor<2x2x8xf32>
  %pd = loom.pad %sl {low = array<i64: 0, 1, 0>, high = array<i64: 0, 0, 0>, interior = array<i64: 0, 1, 0>} : (tensor<2x2x8xf32>) -> tensor<2x4x8xf32>
  %cc = loom.concat %r, %pd {axis = 2 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x16xf32>
  %cb = loom.cast %r : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
  %step = arith.constant dense<3> : tensor<i64>
  %table = arith.constant dense<[0.0, 1.5, -2.0, 0x7F800000]> : tensor<4xf32>
  %keep = arith.constant dense<[true, false]> : tensor<2xi1>
  %iota = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %zeros = arith.constant dense<0.0> : tensor<8x8xf32>
  %np, %nm, %nv = loom.adamw_update %w_proj, %w_proj, %zeros, %zeros, %step {lr = 6.0e-4, beta1 = 0.9, beta2 = 0.95, eps = 1.0e-8, weight_decay = 0.1} : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<i64>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
  %sp, %sb = loom.sgd_update %w_proj, %np, %zeros {lr = 0.1, momentum = 0.9, weight_decay = 0.0, nesterov} : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %sp0 = loom.sgd_update %w_proj, %np {lr = 0.1, momentum = 0.0, weight_decay = 0.01} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %nf = loom.nonfinite_count %np : (tensor<8x8xf32>) -> tensor<f32>
  %kept = loom.select %nf, %w_proj, %np : (tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %scale = arith.constant dense<65536.0> : tensor<f32>
  %ns, %nt = loom.update_loss_scale %scale, %step, %nf {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return %loss : tensor<f32>
}
