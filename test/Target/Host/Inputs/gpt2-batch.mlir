// A batch for the tiny GPT-2 of emit-host-gpt2.test (vocab 32, seq 8,
// batch 4) and AdamW's step counter: `loom-run --entry batch --outputs F`
// writes them as the inputs of the training step.
func.func @batch() -> (tensor<4x8xi64> {loom.name = "input_ids"},
                       tensor<4x8xi64> {loom.name = "labels"},
                       tensor<i64> {loom.name = "step"}) {
  %ids = arith.constant dense<[[20, 9, 25, 3, 4, 6, 23, 3], [13, 2, 5, 27, 26, 4, 15, 5], [27, 3, 7, 14, 3, 25, 3, 14], [2, 8, 18, 26, 9, 7, 19, 11]]> : tensor<4x8xi64>
  %labels = arith.constant dense<[[9, 25, 3, 4, 6, 23, 3, 6], [2, 5, 27, 26, 4, 15, 5, 12], [3, 7, 14, 3, 25, 3, 14, 23], [8, 18, 26, 9, 7, 19, 11, 6]]> : tensor<4x8xi64>
  %step = arith.constant dense<1> : tensor<i64>
  return %ids, %labels, %step : tensor<4x8xi64>, tensor<4x8xi64>, tensor<i64>
}
