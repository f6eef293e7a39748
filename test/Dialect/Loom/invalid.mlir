// RUN: loom-opt %s -split-input-file -verify-diagnostics

// Type inference reports the violated constraint, then the verifier adds the
// generic "failed to infer returned types"; both are expected below.

// matmul C1: a vector is not a matrix.
func.func @matmul_rank_one(%a: tensor<8xf32>, %b: tensor<8x4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of rank >= 2, got 'tensor<8xf32>' and 'tensor<8x4xf32>'}}
  %0 = loom.matmul %a, %b : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// matmul C2: mixed precision must be explicit (a loom.cast).
func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x4xbf16>) -> tensor<4x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'bf16'}}
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xbf16>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// matmul C3: with transpose_rhs, rhs [16, 8] contracts its dim 1 (8) with
// lhs dim 1 (4).
func.func @matmul_contraction(%a: tensor<2x4xf32>, %b: tensor<16x8xf32>) -> tensor<2x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects contracted dims of equal size, got lhs dim 1 (size 4) and rhs dim 1 (size 8)}}
  %0 = loom.matmul %a, %b {transpose_rhs} : (tensor<2x4xf32>, tensor<16x8xf32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// matmul C4: batch dims 2 and 3 do not broadcast.
func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<3x4x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible batch dims, got 'tensor<2x4x8xf32>' and 'tensor<3x8x4xf32>'}}
  %0 = loom.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

// matmul: a declared result type that disagrees with inference is rejected.
func.func @matmul_result_type(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<16x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<16x4xf32>'}}
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}

// -----

// matmul: integer matrices are not supported (no GEMM kernels for them).
func.func @matmul_integer(%a: tensor<4x8xi32>, %b: tensor<8x4xi32>) -> tensor<4x4xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.matmul %a, %b : (tensor<4x8xi32>, tensor<8x4xi32>) -> tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}

// -----

// Every loom op needs static shapes: the cost model prices exact sizes.
func.func @add_dynamic(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.add %a, %a : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// add C1.
func.func @add_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'f16'}}
  %0 = loom.add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// add C2: trailing dims 3 and 4 differ and neither is 1.
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible shapes, got 'tensor<2x3xf32>' and 'tensor<4xf32>'}}
  %0 = loom.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// reduce_sum C1.
func.func @reduce_no_axes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one axis}}
  %0 = loom.reduce_sum %x {axes = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reduce_sum C2: negative axes are not accepted (one spelling per reduction).
func.func @reduce_axis_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis -1 is out of range for an input of rank 2}}
  %0 = loom.reduce_sum %x {axes = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// reduce_sum C3.
func.func @reduce_axis_order(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects strictly increasing axes, got 1 before 0}}
  %0 = loom.reduce_sum %x {axes = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// ===== Shape ops =====

// -----

// reshape C1: a reshape never converts.
func.func @reshape_element_type(%x: tensor<4x6xf32>) -> tensor<24xf16> {
  // expected-error @+1 {{'loom.reshape' op expects input and result of one element type, got 'f32' and 'f16'}}
  %0 = loom.reshape %x : tensor<4x6xf32> to tensor<24xf16>
  return %0 : tensor<24xf16>
}

// -----

// reshape C2: 24 elements cannot become 25.
func.func @reshape_element_count(%x: tensor<4x6xf32>) -> tensor<5x5xf32> {
  // expected-error @+1 {{'loom.reshape' op expects input and result of one element count, got 24 ('tensor<4x6xf32>') and 25 ('tensor<5x5xf32>')}}
  %0 = loom.reshape %x : tensor<4x6xf32> to tensor<5x5xf32>
  return %0 : tensor<5x5xf32>
}

// -----

// transpose C1: a rank-3 input needs three permutation entries.
func.func @transpose_length(%x: tensor<2x3x4xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects one permutation entry per input dim (3), got 2}}
  %0 = loom.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// transpose C2: entry 3 names no dim of a rank-3 input.
func.func @transpose_range(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects permutation entry 3 to be in [0, 3)}}
  %0 = loom.transpose %x {permutation = array<i64: 1, 0, 3>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

// transpose C3: a repeated entry leaves a dim out.
func.func @transpose_repeat(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects distinct permutation entries, got 1 twice}}
  %0 = loom.transpose %x {permutation = array<i64: 1, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<3x3x4xf32>
  return %0 : tensor<3x3x4xf32>
}

// -----

// slice C1: `limits` lacks an entry for dim 1.
func.func @slice_entries(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects one entry per input dim (2) in starts, limits and strides, got 2, 1 and 2}}
  %0 = loom.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 2>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// slice C2: a zero stride would take one element forever.
func.func @slice_stride(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects strides >= 1, got 0 in dim 1}}
  %0 = loom.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, strides = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// slice C3: the limit 9 runs past dim 1 (size 8).
func.func @slice_bounds(%x: tensor<4x8xf32>) -> tensor<4x7xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects 0 <= start <= limit <= size in dim 1, got start 2, limit 9, size 8}}
  %0 = loom.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 9>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

// pad C1: `interior` has one entry too many.
func.func @pad_entries(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects one entry per input dim (2) in low, high and interior, got 2, 2 and 3}}
  %0 = loom.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, 0>, interior = array<i64: 0, 0, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// pad C2: negative padding (cropping) is a slice's job.
func.func @pad_negative(%x: tensor<4x8xf32>) -> tensor<4x7xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects padding >= 0, got high -1 in dim 1}}
  %0 = loom.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, -1>, interior = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

// pad C3: 2^62 elements plus 2^62 zeros do not fit in 64 bits.
func.func @pad_overflow(%x: tensor<4611686018427387904xi1>) -> tensor<4611686018427387904xi1> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects the padded size of dim 0 to fit in 64 bits}}
  %0 = loom.pad %x {low = array<i64: 0>, high = array<i64: 4611686018427387904>, interior = array<i64: 0>} : (tensor<4611686018427387904xi1>) -> tensor<4611686018427387904xi1>
  return %0 : tensor<4611686018427387904xi1>
}

// -----

// concat C1: there is nothing to concatenate.
func.func @concat_empty() -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one operand}}
  %0 = loom.concat {axis = 0 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// concat C2: mixed precision must be explicit (a loom.cast).
func.func @concat_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'f16'}}
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<4xf32>, tensor<4xf16>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// concat C3: a matrix and a vector do not line up.
func.func @concat_ranks(%a: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one rank, got 'tensor<2x4xf32>' and 'tensor<4xf32>'}}
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// concat C4: negative axes are not accepted (one spelling per concat).
func.func @concat_axis(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis -1 to be in [0, 2)}}
  %0 = loom.concat %a, %b {axis = -1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// concat C5: along axis 0, dim 1 must agree (4 vs 5).
func.func @concat_dims(%a: tensor<2x4xf32>, %b: tensor<3x5xf32>) -> tensor<5x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operand #1 to have size 4 in dim 1 like operand #0, got 5}}
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x5xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

// concat C6: two dims of 2^62 add up to more than 64 bits hold.
func.func @concat_overflow(%a: tensor<4611686018427387904xi1>) -> tensor<4611686018427387904xi1> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects the size of dim 0 of the result to fit in 64 bits}}
  %0 = loom.concat %a, %a {axis = 0 : i64} : (tensor<4611686018427387904xi1>, tensor<4611686018427387904xi1>) -> tensor<4611686018427387904xi1>
  return %0 : tensor<4611686018427387904xi1>
}

// -----

// split C1: a rank-2 input has no dim 2.
func.func @split_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis 2 to be in [0, 2)}}
  %0 = loom.split %x {axis = 2 : i64, sizes = array<i64: 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// split C2: a split into nothing has no results.
func.func @split_no_sizes(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one size}}
  loom.split %x {axis = 1 : i64, sizes = array<i64>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// split C3: a negative piece, even one that keeps the sum right.
func.func @split_negative(%x: tensor<4x8xf32>) -> (tensor<4x9xf32>, tensor<4x1xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects sizes >= 0, got -1 at index 1}}
  %0:2 = loom.split %x {axis = 1 : i64, sizes = array<i64: 9, -1>} : (tensor<4x8xf32>) -> (tensor<4x9xf32>, tensor<4x1xf32>)
  return %0#0, %0#1 : tensor<4x9xf32>, tensor<4x1xf32>
}

// -----

// split C4: pieces of 3 and 4 leave one index of dim 1 (size 8) behind.
func.func @split_sum(%x: tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects sizes adding up to 8 (the size of dim 1), got 7}}
  %0:2 = loom.split %x {axis = 1 : i64, sizes = array<i64: 3, 4>} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x4xf32>)
  return %0#0, %0#1 : tensor<4x3xf32>, tensor<4x4xf32>
}

// -----

// ===== Transformer ops =====

// embedding C1: the table is [vocab, hidden].
func.func @embedding_table_rank(%t: tensor<100xf32>, %ids: tensor<8xi64>) -> tensor<8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects a table of rank 2 [vocab, hidden], got 'tensor<100xf32>'}}
  %0 = loom.embedding %t, %ids : (tensor<100xf32>, tensor<8xi64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// embedding: ids must be integers (an ODS type constraint, not numbered).
func.func @embedding_float_ids(%t: tensor<100x16xf32>, %ids: tensor<8xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of}}
  %0 = loom.embedding %t, %ids : (tensor<100x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// embedding_grad C1: an empty vocabulary has no rows to accumulate into.
func.func @embedding_grad_vocab(%dy: tensor<8x16xf32>, %ids: tensor<8xi64>) -> tensor<0x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects a positive vocab_size, got 0}}
  %0 = loom.embedding_grad %dy, %ids {vocab_size = 0 : i64} : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<0x16xf32>
  return %0 : tensor<0x16xf32>
}

// -----

// embedding_grad C2: dy lacks the hidden dim.
func.func @embedding_grad_rank(%dy: tensor<8xf32>, %ids: tensor<8xi64>) -> tensor<100x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects dy of rank 2 (rank of ids + 1), got 'tensor<8xf32>' and 'tensor<8xi64>'}}
  %0 = loom.embedding_grad %dy, %ids {vocab_size = 100 : i64} : (tensor<8xf32>, tensor<8xi64>) -> tensor<100x8xf32>
  return %0 : tensor<100x8xf32>
}

// -----

// embedding_grad C3: dy has 4 positions, ids 8.
func.func @embedding_grad_positions(%dy: tensor<4x16xf32>, %ids: tensor<8xi64>) -> tensor<100x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects the leading dims of dy to equal the shape of ids, got 'tensor<4x16xf32>' and 'tensor<8xi64>'}}
  %0 = loom.embedding_grad %dy, %ids {vocab_size = 100 : i64} : (tensor<4x16xf32>, tensor<8xi64>) -> tensor<100x16xf32>
  return %0 : tensor<100x16xf32>
}

// -----

// attention C1: a query without a batch dim.
func.func @attention_rank(%q: tensor<4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects query, key and value of rank 4, got 'tensor<4x8x16xf32>', 'tensor<1x2x8x16xf32>' and 'tensor<1x2x8x16xf32>'}}
  %0 = loom.attention %q, %k, %v : (tensor<4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// attention C2: a key in another precision.
func.func @attention_element_types(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects key of the query's element type 'f32', got 'f16'}}
  %0 = loom.attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// attention C3: 8 keys but 6 values.
func.func @attention_key_value(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x6x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects key and value to agree on [B, Hkv, Skv], got 'tensor<1x2x8x16xf32>' and 'tensor<1x2x6x16xf32>'}}
  %0 = loom.attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x6x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// attention C4: two query sequences against one key sequence.
func.func @attention_batch(%q: tensor<2x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects query and key of one batch size, got 2 and 1}}
  %0 = loom.attention %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// attention C5: 4 query heads cannot share 3 key/value heads evenly.
func.func @attention_groups(%q: tensor<1x4x8x16xf32>, %k: tensor<1x3x8x16xf32>, %v: tensor<1x3x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects the key/value head count 3 to be positive and divide the query head count 4}}
  %0 = loom.attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x3x8x16xf32>, tensor<1x3x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// attention C6: query and key head sizes differ (value's may).
func.func @attention_head_size(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects query and key of one head size, got 16 and 8}}
  %0 = loom.attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// attention C7: with causal, the first 4 of 8 queries would attend no key.
func.func @attention_causal(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects no more queries than keys with causal, got 8 queries and 4 keys}}
  %0 = loom.attention %q, %k, %v {causal} : (tensor<1x4x8x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// attention C8: a mask with 4 rows cannot broadcast to 8 queries.
func.func @attention_mask(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<4x8xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects a mask that broadcasts to the scores [1, 4, 8, 8], got 'tensor<4x8xf32>'}}
  %0 = loom.attention %q, %k, %v, %m : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4x8xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// attention_grad C1: a value without a batch dim.
func.func @attention_grad_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<2x8x16xf32>, %o: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects query, key and value of rank 4, got 'tensor<1x4x8x16xf32>', 'tensor<1x2x8x16xf32>' and 'tensor<2x8x16xf32>'}}
  %0:3 = loom.attention_grad %q, %k, %v, %o, %o : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<2x8x16xf32>)
  return %0#0 : tensor<1x4x8x16xf32>
}

// -----

// attention_grad C2: the result gradient in another precision than the query.
func.func @attention_grad_element_types(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xbf16>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects dout of the query's element type 'f32', got 'bf16'}}
  %0:3 = loom.attention_grad %q, %k, %v, %o, %do : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xbf16>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return %0#0 : tensor<1x4x8x16xf32>
}

// -----

// attention_grad C3: 2 key heads but 1 value head.
func.func @attention_grad_key_value(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x1x8x16xf32>, %o: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects key and value to agree on [B, Hkv, Skv], got 'tensor<1x2x8x16xf32>' and 'tensor<1x1x8x16xf32>'}}
  %0:3 = loom.attention_grad %q, %k, %v, %o, %o : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x16xf32>)
  return %0#0 : tensor<1x4x8x16xf32>
}

// -----

// attention_grad C4: batch sizes 1 and 2.
func.func @attention_grad_batch(%q: tensor<1x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects query and key of one batch size, got 1 and 2}}
  %0:3 = loom.attention_grad %q, %k, %v, %o, %o : (tensor<1x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>)
  return %0#0 : tensor<1x4x8x16xf32>
}

// -----

// attention_grad C5: more key/value heads (8) than query heads (4).
func.func @attention_grad_groups(%q: tensor<1x4x8x16xf32>, %k: tensor<1x8x8x16xf32>, %v: tensor<1x8x8x16xf32>, %o: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects the key/value head count 8 to be positive and divide the query head count 4}}
  %0:3 = loom.attention_grad %q, %k, %v, %o, %o : (tensor<1x4x8x16xf32>, tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>)
  return %0#0 : tensor<1x4x8x16xf32>
}

// -----

// attention_grad C6: head sizes 16 and 32.
func.func @attention_grad_head_size(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects query and key of one head size, got 16 and 32}}
  %0:3 = loom.attention_grad %q, %k, %v, %o, %o : (tensor<1x4x8x16xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x16xf32>)
  return %0#0 : tensor<1x4x8x16xf32>
}

// -----

// attention_grad C7: causal with 8 queries over 2 keys.
func.func @attention_grad_causal(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x2x16xf32>, %v: tensor<1x2x2x16xf32>, %o: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects no more queries than keys with causal, got 8 queries and 2 keys}}
  %0:3 = loom.attention_grad %q, %k, %v, %o, %o {causal} : (tensor<1x4x8x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>)
  return %0#0 : tensor<1x4x8x16xf32>
}

// -----

// attention_grad C8: a mask over the 2 key/value heads, not the 4 query heads.
func.func @attention_grad_mask(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %m: tensor<1x2x8x8xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects a mask that broadcasts to the scores [1, 4, 8, 8], got 'tensor<1x2x8x8xf32>'}}
  %0:3 = loom.attention_grad %q, %k, %v, %o, %o, %m : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return %0#0 : tensor<1x4x8x16xf32>
}

// -----

// attention_grad C9: out has the key/value head count, not the query's.
func.func @attention_grad_out(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x2x8x16xf32>, %do: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects out of the forward's result shape [1, 4, 8, 16], got 'tensor<1x2x8x16xf32>'}}
  %0:3 = loom.attention_grad %q, %k, %v, %o, %do : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return %0#0 : tensor<1x4x8x16xf32>
}

// -----

// rope C1: the input needs batch and head dims.
func.func @rope_rank(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank 4 [B, H, S, D], got 'tensor<16x8xf32>'}}
  %0 = loom.rope %x : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// rope C2: an odd head size cannot be split into rotated halves.
func.func @rope_odd(%x: tensor<2x4x16x7xf32>) -> tensor<2x4x16x7xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an even head size, got 7}}
  %0 = loom.rope %x : (tensor<2x4x16x7xf32>) -> tensor<2x4x16x7xf32>
  return %0 : tensor<2x4x16x7xf32>
}

// -----

// rope C3: positions are [B, S], not [S, B].
func.func @rope_positions(%x: tensor<2x4x16x8xf32>, %p: tensor<16x2xi64>) -> tensor<2x4x16x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects positions of shape [2, 16] or [16], got 'tensor<16x2xi64>'}}
  %0 = loom.rope %x, %p : (tensor<2x4x16x8xf32>, tensor<16x2xi64>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

// rope C4: theta is the base of the frequencies' powers.
func.func @rope_theta(%x: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects a positive theta, got 0.000000e+00}}
  %0 = loom.rope %x {theta = 0.0 : f64} : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

// cross_entropy C1: a scalar has no class dim.
func.func @cross_entropy_rank(%logits: tensor<f32>, %labels: tensor<i64>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects logits of rank >= 1 (classes last), got 'tensor<f32>'}}
  %0 = loom.cross_entropy %logits, %labels : (tensor<f32>, tensor<i64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// cross_entropy C2: 7 labels per row for 8 positions.
func.func @cross_entropy_labels(%logits: tensor<2x8x100xf32>, %labels: tensor<2x7xi64>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects labels shaped like the logits without their last dim, got 'tensor<2x8x100xf32>' and 'tensor<2x7xi64>'}}
  %0 = loom.cross_entropy %logits, %labels : (tensor<2x8x100xf32>, tensor<2x7xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// label_count C1: a count is one scalar.
func.func @label_count_rank(%labels: tensor<8xi64>) -> tensor<1xf32> {
  // expected-error @+1 {{'loom.label_count' op expects a rank-0 result, got 'tensor<1xf32>'}}
  %0 = loom.label_count %labels : (tensor<8xi64>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// cross_entropy: the offset is a scalar index or i64 (an ODS type
// constraint, not numbered).
func.func @cross_entropy_offset_type(%logits: tensor<8x100xf32>, %labels: tensor<8xi64>, %o: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{operand #2 must be index or i64}}
  %0 = loom.cross_entropy %logits, %labels offset %o : (tensor<8x100xf32>, tensor<8xi64>, tensor<i64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// cross_entropy_grad C1: a scalar has no class dim.
func.func @cross_entropy_grad_rank(%logits: tensor<f32>, %labels: tensor<i64>, %dloss: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects logits of rank >= 1 (classes last), got 'tensor<f32>'}}
  %0 = loom.cross_entropy_grad %logits, %labels, %dloss : (tensor<f32>, tensor<i64>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// cross_entropy_grad C2: the labels keep the class dim.
func.func @cross_entropy_grad_labels(%logits: tensor<8x100xf32>, %labels: tensor<8x100xi32>, %dloss: tensor<f32>) -> tensor<8x100xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects labels shaped like the logits without their last dim, got 'tensor<8x100xf32>' and 'tensor<8x100xi32>'}}
  %0 = loom.cross_entropy_grad %logits, %labels, %dloss : (tensor<8x100xf32>, tensor<8x100xi32>, tensor<f32>) -> tensor<8x100xf32>
  return %0 : tensor<8x100xf32>
}

// -----

// cross_entropy_grad C3: the loss gradient is a scalar, not per position.
func.func @cross_entropy_grad_dloss_rank(%logits: tensor<8x100xf32>, %labels: tensor<8xi64>, %dloss: tensor<8xf32>) -> tensor<8x100xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects a rank-0 dloss, got 'tensor<8xf32>'}}
  %0 = loom.cross_entropy_grad %logits, %labels, %dloss : (tensor<8x100xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<8x100xf32>
  return %0 : tensor<8x100xf32>
}

// -----

// cross_entropy_grad C4: dloss in another precision than the logits.
func.func @cross_entropy_grad_dloss_type(%logits: tensor<8x100xbf16>, %labels: tensor<8xi64>, %dloss: tensor<f32>) -> tensor<8x100xbf16> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects dloss of the logits' element type 'bf16', got 'f32'}}
  %0 = loom.cross_entropy_grad %logits, %labels, %dloss : (tensor<8x100xbf16>, tensor<8xi64>, tensor<f32>) -> tensor<8x100xbf16>
  return %0 : tensor<8x100xbf16>
}

// -----

// ===== Reduction, softmax and normalization ops =====

// reduce_mean C1.
func.func @reduce_mean_no_axes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one axis}}
  %0 = loom.reduce_mean %x {axes = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reduce_mean C2: axis 2 does not exist in a rank-2 input.
func.func @reduce_mean_axis_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 2 is out of range for an input of rank 2}}
  %0 = loom.reduce_mean %x {axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// reduce_mean C3: a repeated axis is not strictly increasing.
func.func @reduce_mean_axis_order(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects strictly increasing axes, got 1 before 1}}
  %0 = loom.reduce_mean %x {axes = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// reduce_mean: an integer mean would need a rounding rule, so it is refused.
func.func @reduce_mean_integer(%x: tensor<4x8xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x8xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// reduce_max C1.
func.func @reduce_max_no_axes(%x: tensor<4x8xi64>) -> tensor<4x8xi64> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one axis}}
  %0 = loom.reduce_max %x {axes = array<i64>} : (tensor<4x8xi64>) -> tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}

// -----

// reduce_max C2: negative axes are not accepted.
func.func @reduce_max_axis_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis -2 is out of range for an input of rank 2}}
  %0 = loom.reduce_max %x {axes = array<i64: -2>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// reduce_max C3.
func.func @reduce_max_axis_order(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects strictly increasing axes, got 1 before 0}}
  %0 = loom.reduce_max %x {axes = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// softmax C1: the axis must name a dim (negative axes are not accepted).
func.func @softmax_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis -1 to be in [0, 2)}}
  %0 = loom.softmax %x {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// log_softmax C1: a scalar has no axis to normalize along.
func.func @log_softmax_axis(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis 0 to be in [0, 0)}}
  %0 = loom.log_softmax %x {axis = 0 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// softmax_grad C1: the gradient has the forward output's type.
func.func @softmax_grad_types(%y: tensor<4x8xf32>, %dy: tensor<4x8xbf16>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad of the same type as output, got 'tensor<4x8xbf16>' and 'tensor<4x8xf32>'}}
  %0 = loom.softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// softmax_grad C2.
func.func @softmax_grad_axis(%y: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis 2 to be in [0, 2)}}
  %0 = loom.softmax_grad %y, %dy {axis = 2 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// log_softmax_grad C1: the gradient has the forward output's shape.
func.func @log_softmax_grad_types(%y: tensor<4x8xf32>, %dy: tensor<8x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad of the same type as output, got 'tensor<8x4xf32>' and 'tensor<4x8xf32>'}}
  %0 = loom.log_softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// log_softmax_grad C2.
func.func @log_softmax_grad_axis(%y: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis 5 to be in [0, 2)}}
  %0 = loom.log_softmax_grad %y, %dy {axis = 5 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm C1: a scalar has no last dim to normalize over.
func.func @layer_norm_rank(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank >= 1, got 'tensor<f32>'}}
  %0 = loom.layer_norm %x : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// layer_norm C2: a lone parameter is gamma without beta.
func.func @layer_norm_gamma_only(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects gamma and beta both present or both absent, got gamma only}}
  %0 = loom.layer_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm C3: beta must span the last dim (8), not the first.
func.func @layer_norm_beta_type(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects beta of type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %0 = loom.layer_norm %x, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm C4: eps = 0 would divide by zero on a constant row.
func.func @layer_norm_eps(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects eps to be positive and finite, got 0.000000e+00}}
  %0 = loom.layer_norm %x {eps = 0.0 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// rms_norm C1.
func.func @rms_norm_rank(%x: tensor<f16>) -> tensor<f16> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank >= 1, got 'tensor<f16>'}}
  %0 = loom.rms_norm %x : (tensor<f16>) -> tensor<f16>
  return %0 : tensor<f16>
}

// -----

// rms_norm C2: gamma has the input's element type.
func.func @rms_norm_gamma_type(%x: tensor<4x8xbf16>, %g: tensor<8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects gamma of type 'tensor<8xbf16>', got 'tensor<8xf32>'}}
  %0 = loom.rms_norm %x, %g : (tensor<4x8xbf16>, tensor<8xf32>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// rms_norm C3: a negative eps could make the root imaginary.
func.func @rms_norm_eps(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects eps to be positive and finite, got -1.000000e-05}}
  %0 = loom.rms_norm %x {eps = -1.0e-5 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm_grad C1: the gradient has the input's type.
func.func @layer_norm_grad_types(%dy: tensor<4x8xf16>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad of the same type as input, got 'tensor<4x8xf16>' and 'tensor<4x8xf32>'}}
  %0 = loom.layer_norm_grad %dy, %x : (tensor<4x8xf16>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm_grad C2.
func.func @layer_norm_grad_rank(%dy: tensor<f32>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank >= 1, got 'tensor<f32>'}}
  %0 = loom.layer_norm_grad %dy, %x : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// layer_norm_grad C3: gamma is a vector, not a row.
func.func @layer_norm_grad_gamma(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %g: tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects gamma of type 'tensor<8xf32>', got 'tensor<1x8xf32>'}}
  %0:3 = loom.layer_norm_grad %dy, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<4x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>
}

// -----

// layer_norm_grad C4: eps must match a valid forward op's.
func.func @layer_norm_grad_eps(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects eps to be positive and finite, got -0.000000e+00}}
  %0 = loom.layer_norm_grad %dy, %x {eps = -0.0 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm_grad: with gamma the op also returns dgamma and dbeta, so a
// single declared result disagrees with inference.
func.func @layer_norm_grad_results(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<4x8xf32>', 'tensor<8xf32>', 'tensor<8xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  %0 = loom.layer_norm_grad %dy, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// rms_norm_grad C1.
func.func @rms_norm_grad_types(%dy: tensor<4x8xf32>, %x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad of the same type as input, got 'tensor<4x8xf32>' and 'tensor<2x8xf32>'}}
  %0 = loom.rms_norm_grad %dy, %x : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// rms_norm_grad C2.
func.func @rms_norm_grad_rank(%dy: tensor<bf16>, %x: tensor<bf16>) -> tensor<bf16> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank >= 1, got 'tensor<bf16>'}}
  %0 = loom.rms_norm_grad %dy, %x : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// rms_norm_grad C3: gamma spans the last dim.
func.func @rms_norm_grad_gamma(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %g: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects gamma of type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %0:2 = loom.rms_norm_grad %dy, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// rms_norm_grad C4: an infinite eps is rejected like a non-positive one.
func.func @rms_norm_grad_eps(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects eps to be positive and finite, got INF}}
  %0 = loom.rms_norm_grad %dy, %x {eps = 0x7FF0000000000000 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// ===== Elementwise and optimizer ops =====

// sub C1: mixed precision must be explicit (a loom.cast).
func.func @sub_element_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'bf16'}}
  %0 = loom.sub %a, %b : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// sub C2: dims 2 and 3 differ and neither is 1.
func.func @sub_broadcast(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible shapes, got 'tensor<2x4xf32>' and 'tensor<3x4xf32>'}}
  %0 = loom.sub %a, %b : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// mul C1: an i1 mask must be cast before it scales a float tensor.
func.func @mul_element_types(%a: tensor<4xf32>, %m: tensor<4xi1>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'i1'}}
  %0 = loom.mul %a, %m : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// mul C2: trailing dims 8 and 4 do not broadcast.
func.func @mul_broadcast(%a: tensor<2x8xf32>, %b: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible shapes, got 'tensor<2x8xf32>' and 'tensor<4xf32>'}}
  %0 = loom.mul %a, %b : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// div C1.
func.func @div_element_types(%a: tensor<4xf64>, %b: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f64' and 'f32'}}
  %0 = loom.div %a, %b : (tensor<4xf64>, tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// div C2: dims 5 and 6 differ.
func.func @div_broadcast(%a: tensor<5x1xf32>, %b: tensor<6x1xf32>) -> tensor<6x1xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible shapes, got 'tensor<5x1xf32>' and 'tensor<6x1xf32>'}}
  %0 = loom.div %a, %b : (tensor<5x1xf32>, tensor<6x1xf32>) -> tensor<6x1xf32>
  return %0 : tensor<6x1xf32>
}

// -----

// div: integer division is not defined (no rounding mode, no rule for 0).
func.func @div_integer(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Unary math is floating point only.
func.func @exp_integer(%a: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.exp %a : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// A unary op's result has its operand's type (only the generic form can
// write a different one).
func.func @tanh_result_type(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// gelu: `approximate` is `none` or `tanh`, as in PyTorch.
func.func @gelu_approximate(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected `none` or `tanh`, got `sigmoid`}}
  %0 = loom.gelu %a approximate = sigmoid : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// gelu_grad: dy has the shape of gelu's input (generic form only).
func.func @gelu_grad_types(%dy: tensor<4xf32>, %x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.gelu_grad"(%dy, %x) : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// scale C1: an infinite factor.
func.func @scale_infinite(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loom.scale' op expects a finite factor, got INF}}
  %0 = loom.scale %a {factor = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// cast C1: a cast changes the element type only; reshapes are separate.
func.func @cast_shape(%a: tensor<4x8xf32>) -> tensor<32xbf16> {
  // expected-error @+1 {{'loom.cast' op expects the operand and result to have the same shape, got 'tensor<4x8xf32>' and 'tensor<32xbf16>'}}
  %0 = loom.cast %a : tensor<4x8xf32> to tensor<32xbf16>
  return %0 : tensor<32xbf16>
}

// -----

// dropout C1: rate 1 would drop everything and divide by zero.
func.func @dropout_rate(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loom.dropout' op expects rate to be in [0, 1), got 1.000000e+00}}
  %0 = loom.dropout %a {rate = 1.0, seed = 0} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// sgd_update C1: a bf16 gradient must be cast to the f32 master weight's type.
func.func @sgd_grad_type(%p: tensor<8xf32>, %g: tensor<8xbf16>) -> tensor<8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad to have the param's type 'tensor<8xf32>', got 'tensor<8xbf16>'}}
  %0 = loom.sgd_update %p, %g {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8xf32>, tensor<8xbf16>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// sgd_update C2: momentum 0.9 needs a momentum buffer.
func.func @sgd_missing_buffer(%p: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects a momentum_buf exactly when momentum != 0, got none with momentum 9.000000e-01}}
  %0 = loom.sgd_update %p, %g {lr = 0.1, momentum = 0.9, weight_decay = 0.0} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// sgd_update C3: a negative learning rate.
func.func @sgd_negative_lr(%p: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'loom.sgd_update' op expects lr, momentum and weight_decay >= 0, got -1.000000e-01, 0.000000e+00 and 0.000000e+00}}
  %0 = loom.sgd_update %p, %g {lr = -0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// sgd_update C5: the learning-rate factor is a rank-0 float.
func.func @sgd_lr_scale_rank(%p: tensor<8xf32>, %g: tensor<8xf32>, %s: tensor<1xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'loom.sgd_update' op operand #2 must be 0D tensor of 64-bit float or 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<1xf32>'}}
  %0 = loom.sgd_update %p, %g lr_scale(%s) {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// sgd_update C4: Nesterov momentum is undamped.
func.func @sgd_nesterov(%p: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'loom.sgd_update' op expects momentum > 0 and dampening = 0 with nesterov, got momentum 9.000000e-01 and dampening 5.000000e-01}}
  %0:2 = loom.sgd_update %p, %g, %b {lr = 0.1, momentum = 0.9, weight_decay = 0.0, dampening = 0.5, nesterov} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// adamw_update C1: the second moment has the wrong shape.
func.func @adamw_state_type(%p: tensor<8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<4xf32>, %step: tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects exp_avg_sq to have the param's type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %0:3 = loom.adamw_update %p, %g, %m, %v, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// adamw_update C2: a negative eps.
func.func @adamw_negative_eps(%p: tensor<8xf32>, %step: tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'loom.adamw_update' op expects lr, eps and weight_decay >= 0, got 1.000000e-03, -1.000000e+00 and 1.000000e-02}}
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = -1.0, weight_decay = 0.01} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// adamw_update C3: beta2 = 1 never forgets and zeroes the bias correction.
func.func @adamw_beta(%p: tensor<8xf32>, %step: tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'loom.adamw_update' op expects beta1 and beta2 in [0, 1), got 9.000000e-01 and 1.000000e+00}}
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 1.0, eps = 1.0e-8, weight_decay = 0.01} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// adamw_update C4: the learning-rate factor is a rank-0 float.
func.func @adamw_lr_scale_type(%p: tensor<8xf32>, %step: tensor<i64>, %s: tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{operand #5 must be 0D tensor of 64-bit float or 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<i64>'}}
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step lr_scale(%s) {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// adamw_update: the step counter is a rank-0 i64 tensor.
func.func @adamw_step_type(%p: tensor<8xf32>, %step: tensor<1xi64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{operand #4 must be 0D tensor of 64-bit signless integer values}}
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1xi64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// nonfinite_count C1: a count is one scalar.
func.func @nonfinite_count_rank(%g: tensor<8xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'loom.nonfinite_count' op expects a rank-0 result, got 'tensor<1xf32>'}}
  %0 = loom.nonfinite_count %g : (tensor<8xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// select C1: the condition is one scalar for the whole tensor.
func.func @select_condition_rank(%c: tensor<8xf32>, %p: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects a rank-0 condition, got 'tensor<8xf32>'}}
  %0 = loom.select %c, %p, %p : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// select C2: both choices have the result's type.
func.func @select_types(%c: tensor<f32>, %p: tensor<8xf32>, %q: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects on_false to have on_true's type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %0 = loom.select %c, %p, %q : (tensor<f32>, tensor<8xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// update_loss_scale C1: the growth tracker is a rank-0 i64.
func.func @update_loss_scale_tracker(%s: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  // expected-error @+1 {{operand #1 must be 0D tensor of 64-bit signless integer values}}
  %0:2 = loom.update_loss_scale %s, %t, %s {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}

// -----

// update_loss_scale C2: a backoff factor above 1 would grow the scale on
// overflow.
func.func @update_loss_scale_backoff(%s: tensor<f32>, %t: tensor<i64>) -> (tensor<f32>, tensor<i64>) {
  // expected-error @+1 {{'loom.update_loss_scale' op expects backoff_factor in (0, 1], got 2}}
  %0:2 = loom.update_loss_scale %s, %t, %s {growth_factor = 2.0 : f64, backoff_factor = 2.0 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return %0#0, %0#1 : tensor<f32>, tensor<i64>
}

// -----

// update_loss_scale C2: the interval counts clean steps, at least one.
func.func @update_loss_scale_interval(%s: tensor<f32>, %t: tensor<i64>) -> (tensor<f32>, tensor<i64>) {
  // expected-error @+1 {{'loom.update_loss_scale' op expects growth_interval >= 1, got 0}}
  %0:2 = loom.update_loss_scale %s, %t, %s {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 0 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return %0#0, %0#1 : tensor<f32>, tensor<i64>
}
