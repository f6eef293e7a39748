// RUN: loom-opt %s -split-input-file -dist-lower-reshards | FileCheck %s

// A pending sum becomes replicated with one all_reduce, between casts that
// carry the layouts of their local sides.
// CHECK-LABEL: func.func @partial_to_replicated
// CHECK-SAME: (%[[G:.+]]: tensor<1024x1024xf32>)
// CHECK: %[[L0:.+]] = builtin.unrealized_conversion_cast %[[G]] : tensor<1024x1024xf32> to tensor<1024x1024xf32> {dist.layout = #dist.layout<@m, {{\[\[}}], []], partial = ["x"]>}
// CHECK-NEXT: %[[R:.+]] = dist.all_reduce sum %[[L0]] on @m axes ["x"] : tensor<1024x1024xf32>
// CHECK-NEXT: %[[G2:.+]] = builtin.unrealized_conversion_cast %[[R]] : tensor<1024x1024xf32> to tensor<1024x1024xf32> {dist.layout = #dist.layout<@m, {{\[\[}}], []]>}
// CHECK-NEXT: return %[[G2]]
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @partial_to_replicated(%g: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = dist.reshard %g from <@m, [[], []], partial = ["x"]> to <@m, [[], []]> : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// A pending sum becomes split with one reduce_scatter, never an all_reduce
// and a slice.
// CHECK-LABEL: func.func @partial_to_split
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : tensor<1024x1024xf32> to tensor<1024x1024xf32>
// CHECK-NEXT: dist.reduce_scatter %{{.+}} on @m axes ["x"] dim 1 : tensor<1024x1024xf32> -> tensor<1024x512xf32>
// CHECK-NEXT: builtin.unrealized_conversion_cast %{{.+}} : tensor<1024x512xf32> to tensor<1024x1024xf32> {dist.layout = #dist.layout<@m, {{\[\[}}], ["x"]]>}
// CHECK-NOT: dist.all_reduce
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @partial_to_split(%g: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = dist.reshard %g from <@m, [[], []], partial = ["x"]> to <@m, [[], ["x"]]> : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// A split dim becomes replicated with one all_gather.
// CHECK-LABEL: func.func @split_to_replicated
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : tensor<1024x1024xf32> to tensor<512x1024xf32> {dist.layout = #dist.layout<@m, {{\[\[}}"y"], []]>}
// CHECK-NEXT: dist.all_gather %{{.+}} on @m axes ["y"] dim 0 : tensor<512x1024xf32> -> tensor<1024x1024xf32>
// CHECK-NEXT: builtin.unrealized_conversion_cast
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @split_to_replicated(%g: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = dist.reshard %g from <@m, [["y"], []]> to <@m, [[], []]> : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// A replicated value becomes split with one free all_slice.
// CHECK-LABEL: func.func @replicated_to_split
// CHECK: builtin.unrealized_conversion_cast
// CHECK-NEXT: dist.all_slice %{{.+}} on @m axes ["x", "y"] dim 0 : tensor<1024x1024xf32> -> tensor<256x1024xf32>
// CHECK-NEXT: builtin.unrealized_conversion_cast %{{.+}} : tensor<256x1024xf32> to tensor<1024x1024xf32> {dist.layout = #dist.layout<@m, {{\[\[}}"x", "y"], []]>}
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @replicated_to_split(%g: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = dist.reshard %g from <@m, [[], []]> to <@m, [["x", "y"], []]> : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// Moving a split from one dim to another is one all_to_all, which moves half
// the bytes a gather would.
// CHECK-LABEL: func.func @move_dim
// CHECK: builtin.unrealized_conversion_cast
// CHECK-NEXT: dist.all_to_all %{{.+}} on @m axes ["x"] split_dim 1 concat_dim 0 : tensor<512x1024xf32> -> tensor<1024x512xf32>
// CHECK-NEXT: builtin.unrealized_conversion_cast
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @move_dim(%g: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = dist.reshard %g from <@m, [["x"], []]> to <@m, [[], ["x"]]> : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// A dim split over two axes becomes replicated by gathering its minor axis,
// then its major one: on rings, 1 + 1 latency steps instead of 3.
// CHECK-LABEL: func.func @multi_axis_to_replicated
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : tensor<1024x1024xf32> to tensor<256x1024xf32>
// CHECK-NEXT: dist.all_gather %{{.+}} on @m axes ["y"] dim 0 : tensor<256x1024xf32> -> tensor<512x1024xf32>
// CHECK-NEXT: dist.all_gather %{{.+}} on @m axes ["x"] dim 0 : tensor<512x1024xf32> -> tensor<1024x1024xf32>
// CHECK-NEXT: builtin.unrealized_conversion_cast
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @multi_axis_to_replicated(%g: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = dist.reshard %g from <@m, [["x", "y"], []]> to <@m, [[], []]> : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// Swapping the order of a dim's axes on a large tensor parks both axes on
// the other dim with all_to_alls and brings them back in the new order,
// rather than gathering the whole tensor.
// CHECK-LABEL: func.func @reorder
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : tensor<4096x4096xf32> to tensor<1024x4096xf32>
// CHECK-NEXT: dist.all_to_all %{{.+}} on @m axes ["y"] split_dim 1 concat_dim 0 : tensor<1024x4096xf32> -> tensor<2048x2048xf32>
// CHECK-NEXT: dist.all_to_all %{{.+}} on @m axes ["x"] split_dim 1 concat_dim 0 : tensor<2048x2048xf32> -> tensor<4096x1024xf32>
// CHECK-NEXT: dist.all_to_all %{{.+}} on @m axes ["y", "x"] split_dim 0 concat_dim 1 : tensor<4096x1024xf32> -> tensor<1024x4096xf32>
// CHECK-NEXT: builtin.unrealized_conversion_cast %{{.+}} : tensor<1024x4096xf32> to tensor<4096x4096xf32> {dist.layout = #dist.layout<@m, {{\[\[}}"y", "x"], []]>}
// CHECK-NOT: dist.all_gather
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @reorder(%g: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = dist.reshard %g from <@m, [["x", "y"], []]> to <@m, [["y", "x"], []]> : tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// A reshard to the layout it starts from folds away.
// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%[[G:.+]]: tensor<8x8xf32>)
// CHECK-NOT: dist.reshard
// CHECK-NOT: builtin.unrealized_conversion_cast
// CHECK: return %[[G]]
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @identity(%g: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = dist.reshard %g from <@m, [["x"], []], partial = ["y"]> to <@m, [["x"], []], partial = ["y"]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Every reshard of a function is lowered, and later uses see the global value
// the closing cast gives.
// CHECK-LABEL: func.func @chain
// CHECK: dist.reduce_scatter
// CHECK: %[[A:.+]] = builtin.unrealized_conversion_cast %{{.+}} : tensor<4x8xf32> to tensor<8x8xf32>
// CHECK: builtin.unrealized_conversion_cast %[[A]] : tensor<8x8xf32> to tensor<4x8xf32>
// CHECK-NEXT: dist.all_gather
// CHECK: %[[B:.+]] = builtin.unrealized_conversion_cast %{{.+}} : tensor<8x8xf32> to tensor<8x8xf32>
// CHECK: return %[[A]], %[[B]]
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @chain(%g: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = dist.reshard %g from <@m, [[], []], partial = ["x"]> to <@m, [["x"], []]> : tensor<8x8xf32>
  %1 = dist.reshard %0 from <@m, [["x"], []]> to <@m, [[], []]> : tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
