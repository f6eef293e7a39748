// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-partition-spmd

// An operand whose layout differs from what the op's strategy needs means a
// reshard is missing.
dist.mesh @mesh shape [2] axes ["dp"]
func.func @missing_reshard(%x: tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [[], []]>},
                           %w: tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, [[], []]>})
    -> (tensor<8x6xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>}) {
  // expected-error @+1 {{'loom.matmul' op operand #0 has layout <[[], []]> but needs <[["dp"], []]> (a reshard is missing)}}
  %y = loom.matmul %x, %w {dist.strategy = #dist.strategy<@mesh, [["dp"], [], []]>} : (tensor<8x4xf64>, tensor<4x6xf64>) -> tensor<8x6xf64>
  return %y : tensor<8x6xf64>
}

// -----

// A partial result returned as a whole value: the all_reduce is missing.
dist.mesh @mesh shape [2] axes ["tp"]
func.func @missing_all_reduce(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], ["tp"]]>},
                              %w: tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [["tp"], []]>})
    -> (tensor<4x4xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %y = loom.matmul %x, %w {dist.strategy = #dist.strategy<@mesh, [[], [], ["tp"]]>} : (tensor<4x8xf64>, tensor<8x4xf64>) -> tensor<4x4xf64>
  // expected-error @+1 {{'func.return' op operand #0 has layout <[[], []], partial = ["tp"]> but needs <[[], []]> (a reshard is missing)}}
  return %y : tensor<4x4xf64>
}

// -----

// Splitting the key sequence of cross-attention is not implemented (ring
// attention covers self-attention's shared sequence).
dist.mesh @mesh shape [2] axes ["sp"]
func.func @cross_attention_keys(%q: tensor<1x2x4x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], [], []]>},
    %kv: tensor<1x2x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["sp"], []]>})
    -> (tensor<1x2x4x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], [], []]>}) {
  // expected-error @+1 {{'loom.attention' op sequence split of attention (context parallelism) is supported as ring attention of self-attention without a mask only: factor e (size 8) over ["sp"] of cross-attention}}
  %o = loom.attention %q, %kv, %kv {dist.strategy = #dist.strategy<@mesh, [[], [], [], [], ["sp"], [], []]>} : (tensor<1x2x4x4xf64>, tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64>) -> tensor<1x2x4x4xf64>
  return %o : tensor<1x2x4x4xf64>
}

// -----

// A ring has no mask operand: a mask under a sequence split is refused.
dist.mesh @mesh shape [2] axes ["sp"]
func.func @ring_with_mask(%q: tensor<1x2x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["sp"], []]>},
    %mask: tensor<8x8xf64> {dist.layout = #dist.layout<@mesh, [["sp"], []]>})
    -> (tensor<1x2x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["sp"], []]>}) {
  // expected-error @+1 {{'loom.attention' op sequence split of attention (context parallelism) is supported as ring attention of self-attention without a mask only: factor d (size 8) over ["sp"] with a mask operand}}
  %o = loom.attention %q, %q, %q, %mask {dist.strategy = #dist.strategy<@mesh, [[], [], [], ["sp"], [], [], []]>} : (tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64>, tensor<8x8xf64>) -> tensor<1x2x8x4xf64>
  return %o : tensor<1x2x8x4xf64>
}

// -----

// The strategy must fit the op's sharding rule.
dist.mesh @mesh shape [2] axes ["dp"]
func.func @strategy_size(%x: tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>}) {
  // expected-error @+1 {{'loom.tanh' op `dist.strategy`: strategy has 1 factors, the op's sharding rule has 2}}
  %y = loom.tanh %x {dist.strategy = #dist.strategy<@mesh, [["dp"]]>} : tensor<8x4xf64>
  return %y : tensor<8x4xf64>
}

// -----

// A split that does not divide the dim.
dist.mesh @mesh shape [4] axes ["dp"]
func.func @not_divisible(%x: tensor<6x4xf64> {dist.layout = #dist.layout<@mesh, [[], []]>})
    -> (tensor<6x4xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  // expected-error @+1 {{'loom.tanh' op `dist.strategy`:}}
  %y = loom.tanh %x {dist.strategy = #dist.strategy<@mesh, [["dp"], []]>} : tensor<6x4xf64>
  return %y : tensor<6x4xf64>
}

// -----

// Reshards are lowered before partitioning.
dist.mesh @mesh shape [2] axes ["dp"]
func.func @reshard_left(%x: tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [[], []]>})
    -> (tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>}) {
  // expected-error @+1 {{'dist.reshard' op must be lowered to collectives before partitioning (run -dist-lower-reshards)}}
  %y = dist.reshard %x from <@mesh, [[], []]> to <@mesh, [["dp"], []]> : tensor<8x4xf64>
  return %y : tensor<8x4xf64>
}

// -----

// Every loom op of a partitioned function needs a strategy.
dist.mesh @mesh shape [2] axes ["dp"]
func.func @no_strategy(%x: tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [[], []]>})
    -> (tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  // expected-error @+1 {{'loom.tanh' op has no `dist.strategy` (run -dist-insert-reshards first)}}
  %y = loom.tanh %x : tensor<8x4xf64>
  return %y : tensor<8x4xf64>
}

// -----

// Every argument needs a layout.
dist.mesh @mesh shape [2] axes ["dp"]
// expected-error @+1 {{'func.func' op argument #1 has no `dist.layout` #dist.layout attribute}}
func.func @no_arg_layout(%x: tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}, %y: tensor<8x4xf64>)
    -> (tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  return %x : tensor<8x4xf64>
}

// -----

// The end of a reshard chain must hold the blocks of the cast's layout.
dist.mesh @mesh shape [2] axes ["tp"]
func.func @chain_type(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], ["tp"]]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %l = builtin.unrealized_conversion_cast %x : tensor<4x8xf64> to tensor<4x4xf64> {dist.layout = #dist.layout<@mesh, [[], ["tp"]]>}
  %a = dist.all_slice %l on @mesh axes ["tp"] dim 0 : tensor<4x4xf64> -> tensor<2x4xf64>
  // expected-error @+1 {{'builtin.unrealized_conversion_cast' op input has type 'tensor<2x4xf64>' but the local type of 'tensor<4x8xf64>' under <[[], []]> is 'tensor<4x8xf64>'}}
  %g = builtin.unrealized_conversion_cast %a : tensor<2x4xf64> to tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}
  return %g : tensor<4x8xf64>
}

// -----

// Pending sums pass only through ops linear in all their operands jointly.
dist.mesh @mesh shape [2] axes ["tp"]
func.func @partial_exp(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  // expected-error @+1 {{'loom.exp' op `dist.strategy`: partial sums over ["tp"] need an op linear in all its operands jointly, and this op's sharding rule is not}}
  %e = loom.exp %x {dist.strategy = #dist.strategy<@mesh, [[], []], partial = ["tp"]>} : tensor<4x8xf64>
  return %e : tensor<4x8xf64>
}
