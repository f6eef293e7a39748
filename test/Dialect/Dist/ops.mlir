// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --mlir-print-op-generic | loom-opt | FileCheck %s

// CHECK: dist.mesh @m shape [2, 4] axes ["dp", "tp"]
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
// A pipeline mesh: stages on the major axis.
// CHECK: dist.mesh @pipe shape [2, 2] axes ["pp", "dp"]
dist.mesh @pipe shape [2, 2] axes ["pp", "dp"]

// Layouts print without `#dist.layout` in the custom form; an empty partial
// list is omitted, a non-empty one kept. (`{{\[\[}}` spells `[[`, which
// FileCheck would read as a variable.)
// CHECK-LABEL: func.func @annotate
func.func @annotate(%x: tensor<8x3x16xf32>) -> tensor<8x3x16xf32> {
  // CHECK: dist.annotate %{{.+}} layout <@m, {{\[\[}}"dp"], [], ["tp"]]> : tensor<8x3x16xf32>
  %0 = dist.annotate %x layout <@m, [["dp"], [], ["tp"]], partial = []> : tensor<8x3x16xf32>
  // CHECK: dist.annotate %{{.+}} layout <@m, {{\[\[}}"dp", "tp"], [], []]> : tensor<8x3x16xf32>
  %1 = dist.annotate %0 layout <@m, [["dp", "tp"], [], []]> : tensor<8x3x16xf32>
  return %1 : tensor<8x3x16xf32>
}

// A reshard names both layouts; partial axes survive the round trip.
// CHECK-LABEL: func.func @reshard
func.func @reshard(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // CHECK: dist.reshard %{{.+}} from <@m, {{\[\[}}"dp"], []], partial = ["tp"]> to <@m, {{\[\[}}"dp"], ["tp"]]> : tensor<8x64xf32>
  %0 = dist.reshard %x from <@m, [["dp"], []], partial = ["tp"]> to <@m, [["dp"], ["tp"]]> : tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// Layouts are also plain attributes, e.g. on function arguments.
// CHECK-LABEL: func.func @layout_attribute
// CHECK-SAME: dist.layout = #dist.layout<@m, {{\[\[}}], ["tp"]], partial = ["dp"]>
func.func @layout_attribute(%x: tensor<4x8xf32> {dist.layout = #dist.layout<@m, [[], ["tp"]], partial = ["dp"]>}) {
  return
}

// The collectives on local tensors of @m.
// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<4x2xf32>, %y: tensor<8x16xbf16>) -> (tensor<4x8xf32>, tensor<4x2xf32>, tensor<8x16xbf16>, tensor<2x16xbf16>, tensor<16x4xbf16>) {
  // CHECK: dist.all_gather %{{.+}} on @m axes ["tp"] dim 1 : tensor<4x2xf32> -> tensor<4x8xf32>
  %0 = dist.all_gather %x on @m axes ["tp"] dim 1 : tensor<4x2xf32> -> tensor<4x8xf32>
  // CHECK: dist.all_slice %{{.+}} on @m axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x2xf32>
  %1 = dist.all_slice %0 on @m axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x2xf32>
  // CHECK: dist.all_reduce sum %{{.+}} on @m axes ["dp", "tp"] : tensor<8x16xbf16>
  %2 = dist.all_reduce sum %y on @m axes ["dp", "tp"] : tensor<8x16xbf16>
  // CHECK: dist.all_reduce max %{{.+}} on @m axes ["tp"] : tensor<8x16xbf16>
  %3 = dist.all_reduce max %2 on @m axes ["tp"] : tensor<8x16xbf16>
  // CHECK: dist.reduce_scatter %{{.+}} on @m axes ["tp"] dim 0 : tensor<8x16xbf16> -> tensor<2x16xbf16>
  %4 = dist.reduce_scatter %3 on @m axes ["tp"] dim 0 : tensor<8x16xbf16> -> tensor<2x16xbf16>
  // Eight devices over [dp, tp]: dim 1 is cut in 8, dim 0 grows 8 times.
  // CHECK: dist.all_to_all %{{.+}} on @m axes ["dp", "tp"] split_dim 1 concat_dim 0 : tensor<2x16xbf16> -> tensor<16x2xbf16>
  %5 = dist.all_to_all %4 on @m axes ["dp", "tp"] split_dim 1 concat_dim 0 : tensor<2x16xbf16> -> tensor<16x2xbf16>
  // CHECK: dist.all_to_all %{{.+}} on @m axes ["dp"] split_dim 0 concat_dim 1 : tensor<16x2xbf16> -> tensor<8x4xbf16>
  %6 = dist.all_to_all %5 on @m axes ["dp"] split_dim 0 concat_dim 1 : tensor<16x2xbf16> -> tensor<8x4xbf16>
  // CHECK: dist.collective_permute %{{.+}} on @m axes ["tp"] shift 3 : tensor<8x4xbf16>
  %7 = dist.collective_permute %6 on @m axes ["tp"] shift 3 : tensor<8x4xbf16>
  // CHECK: dist.broadcast %{{.+}} on @m axes ["dp"] root 1 : tensor<8x4xbf16>
  %8 = dist.broadcast %7 on @m axes ["dp"] root 1 : tensor<8x4xbf16>
  %9 = dist.all_gather %8 on @m axes ["dp"] dim 0 : tensor<8x4xbf16> -> tensor<16x4xbf16>
  return %0, %1, %2, %4, %9 : tensor<4x8xf32>, tensor<4x2xf32>, tensor<8x16xbf16>, tensor<2x16xbf16>, tensor<16x4xbf16>
}

// A device's coordinate, as an index or an i64.
// CHECK-LABEL: func.func @axis_index
func.func @axis_index() -> (index, i64) {
  // CHECK: dist.axis_index @m "tp" : index
  %0 = dist.axis_index @m "tp" : index
  // CHECK: dist.axis_index @m "dp" : i64
  %1 = dist.axis_index @m "dp" : i64
  return %0, %1 : index, i64
}

// Stage 0 sends its activations to stage 1, which receives them.
// CHECK-LABEL: func.func @stage0
func.func @stage0(%act: tensor<4x128xbf16>) {
  // CHECK: dist.send %{{.+}} on @pipe axis "pp" to 1 : tensor<4x128xbf16>
  dist.send %act on @pipe axis "pp" to 1 : tensor<4x128xbf16>
  return
}
// CHECK-LABEL: func.func @stage1
func.func @stage1() -> tensor<4x128xbf16> {
  // CHECK: dist.recv on @pipe axis "pp" from 0 : tensor<4x128xbf16>
  %0 = dist.recv on @pipe axis "pp" from 0 : tensor<4x128xbf16>
  // CHECK: dist.recv on @pipe axis "pp" from 0 {tag = 7 : i64} : tensor<4x128xbf16>
  %1 = dist.recv on @pipe axis "pp" from 0 {tag = 7 : i64} : tensor<4x128xbf16>
  return %0 : tensor<4x128xbf16>
}

// A strategy lists the axes of each sharding-rule factor; an unsplit factor
// keeps its empty list.
// CHECK-LABEL: func.func @strategy
func.func @strategy(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>) -> tensor<8x32xf32> {
  // CHECK: loom.matmul %{{.+}}, %{{.+}} {dist.strategy = #dist.strategy<@m, {{\[\[}}"dp"], ["tp"], []]>, transpose_rhs}
  %0 = loom.matmul %x, %w {transpose_rhs, dist.strategy = #dist.strategy<@m, [["dp"], ["tp"], []]>} : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// A partial strategy keeps pending sums over its axes in every operand and
// result; an empty partial list never prints.
// CHECK-LABEL: func.func @partial_strategy
func.func @partial_strategy(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: loom.add %{{.+}}, %{{.+}} {dist.strategy = #dist.strategy<@m, {{\[\[}}"dp"], []], partial = ["tp"]>}
  %0 = loom.add %a, %b {dist.strategy = #dist.strategy<@m, [["dp"], []], partial = ["tp"]>} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: loom.neg %{{.+}} {dist.strategy = #dist.strategy<@m, {{\[\[}}], []]>}
  %1 = loom.neg %0 {dist.strategy = #dist.strategy<@m, [[], []], partial = []>} : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// The search's plan prints every double exactly (the shortest text that
// reads back to the same bits, hexadecimal where no decimal does), so it
// round-trips.
// CHECK-LABEL: func.func @plan
// CHECK-SAME: dist.plan = #dist.plan<zero = 1, recompute = true, step_time_s = 1.000000e-01, compute_s = 2.500000e-01, comm_s = 1.000000e-03, bubble_s = 0.000000e+00, memory_bytes_per_device = 123456789, model_flops_per_step = 1.000000e+15>
func.func @plan() attributes {dist.plan = #dist.plan<zero = 1, recompute = true, step_time_s = 0.1, compute_s = 0.25, comm_s = 1.0e-3, bubble_s = 0.0, memory_bytes_per_device = 123456789, model_flops_per_step = 1.0e15>} {
  return
}

// #dist.pipeline: fields at their defaults (axis "pp", one micro-batch,
// 1f1b) are elided; the prediction's doubles print exactly, so they
// round-trip.
// CHECK-LABEL: func.func @pipeline_minimal
// CHECK-SAME: dist.pipeline = #dist.pipeline<stages = 2>
func.func @pipeline_minimal() attributes {dist.pipeline = #dist.pipeline<axis = "pp", stages = 2, micro_batches = 1, schedule = "1f1b">} {
  return
}
// CHECK-LABEL: func.func @pipeline_searched
// CHECK-SAME: dist.pipeline = #dist.pipeline<axis = "stage", stages = 2, micro_batches = 8, schedule = "gpipe", stage_layers = {{\[\[}}0, 3], [3, 6]], predicted = <step_time_s = 2.500000e-01, bubble_s = 1.000000e-01, p2p_s = 1.000000e-05, stage_forward_s = [1.000000e-02, 1.100000e-02], stage_backward_s = [2.000000e-02, 2.200000e-02], stage_memory_bytes = [1000, 900]>>
func.func @pipeline_searched() attributes {dist.pipeline = #dist.pipeline<axis = "stage", stages = 2, micro_batches = 8, schedule = "gpipe", stage_layers = [[0, 3], [3, 6]], predicted = <step_time_s = 0.25, bubble_s = 0.1, p2p_s = 1.0e-5, stage_forward_s = [0.01, 0.011], stage_backward_s = [0.02, 0.022], stage_memory_bytes = [1000, 900]>>} {
  return
}

// Interleaved 1F1B: a layer range and the times per chunk, the memory per
// stage.
// CHECK-LABEL: func.func @pipeline_interleaved
// CHECK-SAME: dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 4, schedule = "interleaved-1f1b", virtual_stages = 2, stage_layers = {{\[\[}}0, 1], [1, 2], [2, 3], [3, 4]], predicted = <step_time_s = 1.000000e+00, bubble_s = 1.000000e-01, p2p_s = 0.000000e+00, stage_forward_s = [1.000000e-02, 1.000000e-02, 1.000000e-02, 1.000000e-02], stage_backward_s = [2.000000e-02, 2.000000e-02, 2.000000e-02, 2.000000e-02], stage_memory_bytes = [1000, 900]>>
func.func @pipeline_interleaved() attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 4, schedule = "interleaved-1f1b", virtual_stages = 2, stage_layers = [[0, 1], [1, 2], [2, 3], [3, 4]], predicted = <step_time_s = 1.0, bubble_s = 0.1, p2p_s = 0.0, stage_forward_s = [0.01, 0.01, 0.01, 0.01], stage_backward_s = [0.02, 0.02, 0.02, 0.02], stage_memory_bytes = [1000, 900]>>} {
  return
}

// Ring attention and its gradient (grouped-query heads, f32 log-sum-exp).
dist.mesh @ring shape [4] axes ["cp"]
// CHECK-LABEL: func.func @ring_attention
func.func @ring_attention(%q: tensor<2x8x16x4xf32>, %kv: tensor<2x2x16x4xf32>, %do: tensor<2x8x16x4xf32>) -> tensor<2x8x16x4xf32> {
  // CHECK: %[[O:.+]], %[[L:.+]] = dist.ring_attention %{{.+}}, %{{.+}}, %{{.+}} on @ring axes ["cp"] {causal, scale = 5.000000e-01 : f64} : (tensor<2x8x16x4xf32>, tensor<2x2x16x4xf32>, tensor<2x2x16x4xf32>) -> (tensor<2x8x16x4xf32>, tensor<2x8x16xf32>)
  %o, %lse = dist.ring_attention %q, %kv, %kv on @ring axes ["cp"] {causal, scale = 0.5 : f64} : (tensor<2x8x16x4xf32>, tensor<2x2x16x4xf32>, tensor<2x2x16x4xf32>) -> (tensor<2x8x16x4xf32>, tensor<2x8x16xf32>)
  // CHECK: dist.ring_attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %[[O]], %{{.+}}, %[[L]] on @ring axes ["cp"] {causal}
  %dq, %dk, %dv = dist.ring_attention_grad %q, %kv, %kv, %o, %do, %lse on @ring axes ["cp"] {causal} : (tensor<2x8x16x4xf32>, tensor<2x2x16x4xf32>, tensor<2x2x16x4xf32>, tensor<2x8x16x4xf32>, tensor<2x8x16x4xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x4xf32>, tensor<2x2x16x4xf32>, tensor<2x2x16x4xf32>)
  return %dq : tensor<2x8x16x4xf32>
}
