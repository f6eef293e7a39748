// The Transformer ops in loom-run on inputs small enough to check by hand
// (test/python/test_loom_run_torch.py checks them against PyTorch).
//
// Activations: relu([-1, 2, -3, 4]) = [0, 2, 0, 4]; relu_grad passes dy
// where x > 0; gelu(0) = silu(0) = 0 and gelu'(0) = silu'(0) = 1/2.
// RUN: loom-run %s --entry activations | FileCheck %s --check-prefix=ACT
// ACT: relu: shape [4] dtype F64 mean 1.5 absmax 4
// ACT-NEXT: relu_grad: shape [4] dtype F64 mean 0.5 absmax 1
// ACT-NEXT: gelu: shape [2] dtype F64 mean 0 absmax 0
// ACT-NEXT: silu: shape [2] dtype F64 mean 0 absmax 0
// ACT-NEXT: gelu_grad: shape [2] dtype F64 mean 0.5 absmax 0.5
// ACT-NEXT: silu_grad: shape [2] dtype F64 mean 0.5 absmax 0.5
//
// softmax of a constant row is uniform (1/4); log_softmax is -ln 4; the
// softmax gradient of a constant dy is 0.
// RUN: loom-run %s --entry softmaxes | FileCheck %s --check-prefix=SOFTMAX
// SOFTMAX: softmax: shape [2, 4] dtype F64 mean 0.25 absmax 0.25
// SOFTMAX-NEXT: log_softmax: shape [2, 4] dtype F64 mean -1.38629436 absmax 1.38629436
// SOFTMAX-NEXT: softmax_grad: shape [2, 4] dtype F64 mean 0 absmax 0
// SOFTMAX-NEXT: log_softmax_grad: shape [2, 4] dtype F64 mean 0 absmax 0
//
// Norms: layer_norm([1, 3]) = [-1, 1] / sqrt(1 + eps) with eps = 0.25
// (0.894427), times gamma 2 plus beta 1: [-0.788854, 2.78885]; rms_norm([3, 4])
// with eps 0.5 = [3, 4] / sqrt(12.5 + 0.5) = [0.83205, 1.1094]. With dy = 1
// the layer_norm dx is 0 (a constant dy moves no normalized value), dgamma
// the normalized row, dbeta 1; rms_norm's dx is rstd * (1 - xhat * mean(xhat)).
// RUN: loom-run %s --entry norms | FileCheck %s --check-prefix=NORM
// NORM: layer_norm: shape [1, 2] dtype F64 mean 1 absmax 2.78885438
// NORM-NEXT: rms_norm: shape [1, 2] dtype F64 mean 0.970725343 absmax 1.10940039
// NORM-NEXT: dx: shape [1, 2] dtype F64 mean 0 absmax 0
// NORM-NEXT: dgamma: shape [2] dtype F64 mean 0 absmax 0.894427191
// NORM-NEXT: dbeta: shape [2] dtype F64 mean 1 absmax 1
// NORM-NEXT: rms_dx: shape [1, 2] dtype F64 mean 0.0160009672 absmax 0.0533365573
// NORM-NEXT: rms_dgamma: shape [2] dtype F64 mean 0.970725343 absmax 1.10940039
//
// Embedding rows [2, 0] of [[1, 2], [3, 4], [5, 6]] are [[5, 6], [1, 2]];
// the gradient adds dy rows into rows 2 and 0.
// RUN: loom-run %s --entry embedding | FileCheck %s --check-prefix=EMB
// EMB: rows: shape [2, 2] dtype F64 mean 3.5 absmax 6
// EMB-NEXT: dtable: shape [3, 2] dtype F64 mean 1 absmax 2
//
// Cross-entropy of uniform logits over 4 classes is ln 4 whatever the label
// (the ignored label does not count); its gradient is (1/4 - onehot) / 2
// on the two counted rows, 0 on the ignored one.
// RUN: loom-run %s --entry loss | FileCheck %s --check-prefix=LOSS
// LOSS: loss: shape [] dtype F64 mean 1.38629436 absmax 1.38629436
// LOSS-NEXT: dlogits: shape [3, 4] dtype F64 mean 0 absmax 0.375
//
// Attention over keys that are all equal averages the values (causal or
// not, the first query sees value row 0 only when causal), so the
// query gets no gradient and each value row gets 1/2 of dout's column sums;
// rope at position 0 is the identity.
// RUN: loom-run %s --entry attention | FileCheck %s --check-prefix=ATTN
// ATTN: full: shape [1, 1, 2, 2] dtype F64 mean 2.5 absmax 3
// ATTN-NEXT: causal: shape [1, 1, 2, 2] dtype F64 mean 2 absmax 3
// ATTN-NEXT: rope: shape [1, 1, 1, 4] dtype F64 mean 2.5 absmax 4
// ATTN-NEXT: dquery: shape [1, 1, 2, 2] dtype F64 mean 0 absmax 0
// ATTN-NEXT: dkey: shape [1, 1, 2, 2] dtype F64
// ATTN-NEXT: dvalue: shape [1, 1, 2, 2] dtype F64 mean 0.5 absmax 0.5
//
// SGD: 1 - 0.1 * 0.5 = 0.95; AdamW's first step moves by lr (1 - 0.1).
// RUN: loom-run %s --entry optimizers | FileCheck %s --check-prefix=OPT
// OPT: sgd: shape [2] dtype F64 mean 0.95 absmax 0.95
// OPT-NEXT: adamw: shape [2] dtype F64 mean 0.9 absmax 0.9
// OPT-NEXT: exp_avg: shape [2] dtype F64 mean 0.05 absmax 0.05
// OPT-NEXT: exp_avg_sq: shape [2] dtype F64 mean 0.00025 absmax 0.00025
//
// Data errors name the op.
// RUN: not loom-run %s --entry bad_id 2>&1 | FileCheck %s --check-prefix=BADID
// BADID: loom-run: error: rank 0: `loom.embedding` at {{.*}}: id 3 at index 1 is outside [0, 3)
// RUN: not loom-run %s --entry bad_label 2>&1 | FileCheck %s --check-prefix=BADLABEL
// BADLABEL: loom-run: error: rank 0: `loom.cross_entropy` at {{.*}}: label 4 at index 0 is outside [0, 4) and is not the ignore index -100

func.func @activations() -> (tensor<4xf64> {loom.name = "relu"}, tensor<4xf64> {loom.name = "relu_grad"},
                             tensor<2xf64> {loom.name = "gelu"}, tensor<2xf64> {loom.name = "silu"},
                             tensor<2xf64> {loom.name = "gelu_grad"}, tensor<2xf64> {loom.name = "silu_grad"}) {
  %x = arith.constant dense<[-1.0, 2.0, -3.0, 4.0]> : tensor<4xf64>
  %dy = arith.constant dense<1.0> : tensor<4xf64>
  %z = arith.constant dense<0.0> : tensor<2xf64>
  %o = arith.constant dense<1.0> : tensor<2xf64>
  %r = loom.relu %x : tensor<4xf64>
  %rg = loom.relu_grad %dy, %x : tensor<4xf64>
  %g = loom.gelu %z approximate = tanh : tensor<2xf64>
  %s = loom.silu %z : tensor<2xf64>
  %gg = loom.gelu_grad %o, %z : tensor<2xf64>
  %sg = loom.silu_grad %o, %z : tensor<2xf64>
  return %r, %rg, %g, %s, %gg, %sg : tensor<4xf64>, tensor<4xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
}

func.func @softmaxes() -> (tensor<2x4xf64> {loom.name = "softmax"}, tensor<2x4xf64> {loom.name = "log_softmax"},
                           tensor<2x4xf64> {loom.name = "softmax_grad"}, tensor<2x4xf64> {loom.name = "log_softmax_grad"}) {
  %x = arith.constant dense<3.0> : tensor<2x4xf64>
  %dy = arith.constant dense<1.0> : tensor<2x4xf64>
  %s = loom.softmax %x {axis = 1 : i64} : (tensor<2x4xf64>) -> tensor<2x4xf64>
  %l = loom.log_softmax %x {axis = 1 : i64} : (tensor<2x4xf64>) -> tensor<2x4xf64>
  %sg = loom.softmax_grad %s, %dy {axis = 1 : i64} : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %z = arith.constant dense<0.0> : tensor<2x4xf64>
  %lg = loom.log_softmax_grad %l, %z {axis = 1 : i64} : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  return %s, %l, %sg, %lg : tensor<2x4xf64>, tensor<2x4xf64>, tensor<2x4xf64>, tensor<2x4xf64>
}

func.func @norms() -> (tensor<1x2xf64> {loom.name = "layer_norm"}, tensor<1x2xf64> {loom.name = "rms_norm"},
                       tensor<1x2xf64> {loom.name = "dx"}, tensor<2xf64> {loom.name = "dgamma"},
                       tensor<2xf64> {loom.name = "dbeta"}, tensor<1x2xf64> {loom.name = "rms_dx"},
                       tensor<2xf64> {loom.name = "rms_dgamma"}) {
  %x = arith.constant dense<[[1.0, 3.0]]> : tensor<1x2xf64>
  %gamma = arith.constant dense<2.0> : tensor<2xf64>
  %beta = arith.constant dense<1.0> : tensor<2xf64>
  %y = loom.layer_norm %x, %gamma, %beta {eps = 2.5e-01 : f64} : (tensor<1x2xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<1x2xf64>
  %x2 = arith.constant dense<[[3.0, 4.0]]> : tensor<1x2xf64>
  %ones = arith.constant dense<1.0> : tensor<2xf64>
  %r = loom.rms_norm %x2, %ones {eps = 5.0e-01 : f64} : (tensor<1x2xf64>, tensor<2xf64>) -> tensor<1x2xf64>
  %dy = arith.constant dense<1.0> : tensor<1x2xf64>
  %dx, %dgamma, %dbeta = loom.layer_norm_grad %dy, %x, %gamma {eps = 2.5e-01 : f64}
      : (tensor<1x2xf64>, tensor<1x2xf64>, tensor<2xf64>) -> (tensor<1x2xf64>, tensor<2xf64>, tensor<2xf64>)
  %rdx, %rdgamma = loom.rms_norm_grad %dy, %x2, %ones {eps = 5.0e-01 : f64}
      : (tensor<1x2xf64>, tensor<1x2xf64>, tensor<2xf64>) -> (tensor<1x2xf64>, tensor<2xf64>)
  return %y, %r, %dx, %dgamma, %dbeta, %rdx, %rdgamma : tensor<1x2xf64>, tensor<1x2xf64>, tensor<1x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<1x2xf64>, tensor<2xf64>
}

func.func @embedding() -> (tensor<2x2xf64> {loom.name = "rows"}, tensor<3x2xf64> {loom.name = "dtable"}) {
  %table = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf64>
  %ids = arith.constant dense<[2, 0]> : tensor<2xi64>
  %rows = loom.embedding %table, %ids : (tensor<3x2xf64>, tensor<2xi64>) -> tensor<2x2xf64>
  %dy = arith.constant dense<[[1.0, 2.0], [1.0, 2.0]]> : tensor<2x2xf64>
  %dt = loom.embedding_grad %dy, %ids {vocab_size = 3 : i64} : (tensor<2x2xf64>, tensor<2xi64>) -> tensor<3x2xf64>
  return %rows, %dt : tensor<2x2xf64>, tensor<3x2xf64>
}

func.func @loss() -> (tensor<f64> {loom.name = "loss"}, tensor<3x4xf64> {loom.name = "dlogits"}) {
  %logits = arith.constant dense<0.5> : tensor<3x4xf64>
  %labels = arith.constant dense<[1, -100, 3]> : tensor<3xi64>
  %l = loom.cross_entropy %logits, %labels : (tensor<3x4xf64>, tensor<3xi64>) -> tensor<f64>
  %one = arith.constant dense<1.0> : tensor<f64>
  %d = loom.cross_entropy_grad %logits, %labels, %one : (tensor<3x4xf64>, tensor<3xi64>, tensor<f64>) -> tensor<3x4xf64>
  return %l, %d : tensor<f64>, tensor<3x4xf64>
}

func.func @attention() -> (tensor<1x1x2x2xf64> {loom.name = "full"}, tensor<1x1x2x2xf64> {loom.name = "causal"},
                           tensor<1x1x1x4xf64> {loom.name = "rope"}, tensor<1x1x2x2xf64> {loom.name = "dquery"},
                           tensor<1x1x2x2xf64> {loom.name = "dkey"}, tensor<1x1x2x2xf64> {loom.name = "dvalue"}) {
  %q = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf64>
  %k = arith.constant dense<1.0> : tensor<1x1x2x2xf64>
  %v = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf64>
  %a = loom.attention %q, %k, %v : (tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>) -> tensor<1x1x2x2xf64>
  %c = loom.attention %q, %k, %v {causal} : (tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>) -> tensor<1x1x2x2xf64>
  %x = arith.constant dense<[[[[1.0, 2.0, 3.0, 4.0]]]]> : tensor<1x1x1x4xf64>
  %r = loom.rope %x : (tensor<1x1x1x4xf64>) -> tensor<1x1x1x4xf64>
  %dout = arith.constant dense<0.5> : tensor<1x1x2x2xf64>
  %dq, %dk, %dv = loom.attention_grad %q, %k, %v, %a, %dout
      : (tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>)
      -> (tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>)
  return %a, %c, %r, %dq, %dk, %dv : tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x1x4xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>
}

func.func @optimizers() -> (tensor<2xf64> {loom.name = "sgd"}, tensor<2xf64> {loom.name = "adamw"},
                            tensor<2xf64> {loom.name = "exp_avg"}, tensor<2xf64> {loom.name = "exp_avg_sq"}) {
  %p = arith.constant dense<1.0> : tensor<2xf64>
  %g = arith.constant dense<0.5> : tensor<2xf64>
  %z = arith.constant dense<0.0> : tensor<2xf64>
  %step = arith.constant dense<0> : tensor<i64>
  %p1 = loom.sgd_update %p, %g {lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64}
      : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %p2, %m, %v = loom.adamw_update %p, %g, %z, %z, %step {lr = 1.000000e-01 : f64, beta1 = 9.000000e-01 : f64,
      beta2 = 9.990000e-01 : f64, eps = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64}
      : (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<i64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>)
  return %p1, %p2, %m, %v : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
}

func.func @bad_id() -> tensor<2x2xf64> {
  %table = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf64>
  %ids = arith.constant dense<[0, 3]> : tensor<2xi64>
  %rows = loom.embedding %table, %ids : (tensor<3x2xf64>, tensor<2xi64>) -> tensor<2x2xf64>
  return %rows : tensor<2x2xf64>
}

func.func @bad_label() -> tensor<f64> {
  %logits = arith.constant dense<0.5> : tensor<2x4xf64>
  %labels = arith.constant dense<[4, 0]> : tensor<2xi64>
  %l = loom.cross_entropy %logits, %labels : (tensor<2x4xf64>, tensor<2xi64>) -> tensor<f64>
  return %l : tensor<f64>
}
