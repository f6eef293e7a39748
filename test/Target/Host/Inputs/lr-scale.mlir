// A learning-rate factor of 1/2 for the step's `lr_scale` argument:
// `loom-run --entry half --outputs F` writes it as an input of the step.
func.func @half() -> (tensor<f32> {loom.name = "lr_scale"}) {
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  return %half : tensor<f32>
}
