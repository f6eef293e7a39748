// A data-parallel step with three 256-byte weight gradients produced in
// backward order g2, g1, g0, their reductions over `dp` and the updates
// (emit-host-overlap.test buckets it and checks the emitted order).
dist.mesh @mesh shape [2] axes ["dp"]
func.func @train_step(%w0: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                      %w1: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                      %w2: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
                      %x: tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
        tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>},
        tensor<8x8xf32> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %g2 = loom.matmul %x, %w2 {loom.backward} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r2 = dist.all_reduce sum %g2 on @mesh axes ["dp"] : tensor<8x8xf32>
  %g1 = loom.matmul %x, %w1 {loom.backward} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r1 = dist.all_reduce sum %g1 on @mesh axes ["dp"] : tensor<8x8xf32>
  %g0 = loom.matmul %x, %w0 {loom.backward} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r0 = dist.all_reduce sum %g0 on @mesh axes ["dp"] : tensor<8x8xf32>
  %n2 = loom.sgd_update %w2, %r2 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %n1 = loom.sgd_update %w1, %r1 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %n0 = loom.sgd_update %w0, %r0 {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %n0, %n1, %n2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
