// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-lower-reshards | FileCheck %s

// With the cluster the search planned for (the module's dist.cluster), a
// gather of a dim split over both levels is one all_gather, which the cluster
// model prices as one hierarchical collective.
// CHECK-LABEL: func.func @gather_two_levels
// CHECK: dist.all_gather %{{.+}} on @mesh axes ["node", "gpu"] dim 0 : tensor<4x64xf32> -> tensor<64x64xf32>
// CHECK-NOT: dist.all_gather
// CHECK: return
module attributes {dist.cluster = "{\"name\": \"two-level\", \"devices_per_node\": 8, \"device\": {\"name\": \"gpu\", \"peak_flops\": {\"f32\": 1e14}, \"memory_bandwidth\": 2e12, \"memory_gib\": 80}, \"intra_node\": {\"bandwidth\": 300e9, \"latency\": 3e-6}, \"inter_node\": {\"bandwidth\": 25e9, \"latency\": 6e-6}}"} {
  dist.mesh @mesh shape [2, 8] axes ["node", "gpu"]
  func.func @gather_two_levels(%arg0: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %0 = dist.reshard %arg0 from <@mesh, [["node", "gpu"], []]> to <@mesh, [[], []]> : tensor<64x64xf32>
    return %0 : tensor<64x64xf32>
  }
}

// -----

// Without one, the default α–β model prices every step alike and gathers
// one axis at a time.
// CHECK-LABEL: func.func @gather_two_levels_uniform
// CHECK: dist.all_gather %{{.+}} on @mesh axes ["gpu"] dim 0
// CHECK: dist.all_gather %{{.+}} on @mesh axes ["node"] dim 0
module {
  dist.mesh @mesh shape [2, 8] axes ["node", "gpu"]
  func.func @gather_two_levels_uniform(%arg0: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %0 = dist.reshard %arg0 from <@mesh, [["node", "gpu"], []]> to <@mesh, [[], []]> : tensor<64x64xf32>
    return %0 : tensor<64x64xf32>
  }
}

// -----

// A cluster spec that does not parse is an error naming the attribute.
// expected-error @+1 {{dist.cluster: expected a JSON object, got [1]}}
module attributes {dist.cluster = "[1]"} {
  dist.mesh @mesh shape [2] axes ["x"]
  func.func @bad_cluster(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = dist.reshard %arg0 from <@mesh, [["x"]]> to <@mesh, [[]]> : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
