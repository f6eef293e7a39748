// RUN: loom-opt %s -split-input-file -verify-diagnostics

// Where `loom.param` and `loom.input` may appear, and what their
// initializers accept. One case per check.

// Parameters are trained, so they are floating point.
// expected-error @+1 {{`loom.param` expects argument #0 to be a floating-point tensor, got 'tensor<4xi64>'}}
func.func @param_integer(%w: tensor<4xi64> {loom.param = #loom.param<"w", init = zeros, decay = false>}) {
  return
}

// -----

// Token ids index an embedding: a float tensor is a front-end bug.
// expected-error @+1 {{`loom.input` role `input_ids` expects argument #1 to be an integer tensor, got 'tensor<8xf32>'}}
func.func @ids_float(%m: tensor<8xi1> {loom.input = #loom.input<mask>}, %ids: tensor<8xf32> {loom.input = #loom.input<input_ids>}) {
  return
}

// -----

// Labels are integer class ids too.
// expected-error @+1 {{`loom.input` role `labels` expects argument #0 to be an integer tensor, got 'tensor<8xbf16>'}}
func.func @labels_float(%labels: tensor<8xbf16> {loom.input = #loom.input<labels>}) {
  return
}

// -----

// An argument is a parameter or an input, never both.
// expected-error @+1 {{argument #0 cannot be both `loom.param` and `loom.input`}}
func.func @param_and_input(%x: tensor<8xf32> {loom.param = #loom.param<"x", init = zeros, decay = false>, loom.input = #loom.input<mask>}) {
  return
}

// -----

// Loom values are statically shaped tensors.
// expected-error @+1 {{`loom.input` expects argument #0 to be a statically shaped tensor, got 'i64'}}
func.func @input_scalar(%n: i64 {loom.input = #loom.input<positions>}) {
  return
}

// -----

// The value under `loom.param` must be a #loom.param.
// expected-error @+1 {{`loom.param` expects a #loom.param attribute, got true}}
func.func @param_wrong_kind(%x: tensor<8xf32> {loom.param = true}) {
  return
}

// -----

// The value under `loom.input` must be a #loom.input.
// expected-error @+1 {{`loom.input` expects a #loom.input attribute, got "labels"}}
func.func @input_wrong_kind(%x: tensor<8xi64> {loom.input = "labels"}) {
  return
}

// -----

// Only the five argument attributes exist.
// expected-error @+1 {{unknown loom argument attribute `loom.weight`, expected `loom.param`, `loom.input`, `loom.name`, `loom.file_shape` or `loom.initial_value`}}
func.func @unknown(%x: tensor<8xf32> {loom.weight = true}) {
  return
}

// -----

// A file shape is a row-major view of the tensor: as many elements.
// expected-error @+1 {{`loom.file_shape` of argument #0 holds 12 elements, the tensor 8 ('tensor<2x4xf32>')}}
func.func @file_shape_count(%x: tensor<2x4xf32> {loom.file_shape = array<i64: 12>}) {
  return
}

// -----

// A file shape is an array of sizes.
// expected-error @+1 {{`loom.file_shape` expects an array<i64: ...>, got [8]}}
func.func @file_shape_kind(%x: tensor<8xf32> {loom.file_shape = [8]}) {
  return
}

// -----

// So on results (a gradient or an updated parameter of a viewed tensor).
// expected-error @+1 {{`loom.file_shape` of result #0 holds 6 elements, the tensor 8 ('tensor<8xf32>')}}
func.func @file_shape_result(%x: tensor<8xf32>) -> (tensor<8xf32> {loom.file_shape = array<i64: 2, 3>}) {
  return %x : tensor<8xf32>
}

// -----

// Results carry names and file shapes only.
// expected-error @+1 {{unknown loom result attribute `loom.param`, expected `loom.name` or `loom.file_shape`}}
func.func @unknown_result(%x: tensor<8xf32>) -> (tensor<8xf32> {loom.param = 1}) {
  return %x : tensor<8xf32>
}

// -----

// A tensor name is a non-empty string.
// expected-error @+1 {{`loom.name` expects a non-empty string, got ""}}
func.func @empty_name(%x: tensor<8xf32> {loom.name = ""}) {
  return
}

// -----

// Roles are a closed set.
// expected-error @+2 {{expected ::mlir::loom::InputRole to be one of: input_ids, labels, positions, mask, decoder_input_ids}}
// expected-error @+1 {{failed to parse Loom_InputAttr parameter 'value'}}
func.func @unknown_role(%x: tensor<8xi64> {loom.input = #loom.input<tokens>}) {
  return
}

// -----

// Checkpoints load parameters by name, so it may not be empty.
// expected-error @+1 {{expects a non-empty parameter name}}
func.func @empty_name(%x: tensor<8xf32> {loom.param = #loom.param<"", init = zeros, decay = false>}) {
  return
}

// -----

// decay is spelled true or false.
// expected-error @+2 {{expected `true` or `false`}}
// expected-error @+1 {{failed to parse Loom_ParamAttr parameter 'decay'}}
func.func @decay_spelling(%x: tensor<8xf32> {loom.param = #loom.param<"x", init = zeros, decay = yes>}) {
  return
}

// -----

// Initializers are a closed set.
// expected-error @+2 {{unknown initializer `xavier`, expected normal, zeros, ones, uniform or scaled_normal}}
// expected-error @+1 {{failed to parse Loom_ParamAttr parameter 'init'}}
func.func @unknown_init(%x: tensor<8xf32> {loom.param = #loom.param<"x", init = xavier(1.0), decay = true>}) {
  return
}

// -----

// normal takes exactly its std.
// expected-error @+2 {{initializer `normal` takes 1 argument(s), got 2}}
// expected-error @+1 {{failed to parse Loom_ParamAttr parameter 'init'}}
func.func @normal_arity(%x: tensor<8xf32> {loom.param = #loom.param<"x", init = normal(0.0, 0.02), decay = true>}) {
  return
}

// -----

// A std must be positive.
// expected-error @+2 {{initializer `normal` expects a finite std > 0, got -2.000000e-02}}
// expected-error @+1 {{failed to parse Loom_ParamAttr parameter 'init'}}
func.func @normal_std(%x: tensor<8xf32> {loom.param = #loom.param<"x", init = normal(-0.02), decay = true>}) {
  return
}

// -----

// scaled_normal divides std by sqrt(factor): the factor must be positive.
// expected-error @+2 {{initializer `scaled_normal` expects a finite factor > 0, got 0.000000e+00}}
// expected-error @+1 {{failed to parse Loom_ParamAttr parameter 'init'}}
func.func @scaled_normal_factor(%x: tensor<8xf32> {loom.param = #loom.param<"x", init = scaled_normal(0.02, 0), decay = true>}) {
  return
}

// -----

// uniform's bounds must be ordered.
// expected-error @+2 {{initializer `uniform` expects finite bounds with low < high, got 1.000000e-01 and -1.000000e-01}}
// expected-error @+1 {{failed to parse Loom_ParamAttr parameter 'init'}}
func.func @uniform_bounds(%x: tensor<8xf32> {loom.param = #loom.param<"x", init = uniform(0.1, -0.1), decay = true>}) {
  return
}

// -----

// `loom.initial_value` (the loss scale's start) is a finite f64.
// expected-error @+1 {{`loom.initial_value` expects a finite f64, got 1.000000e+00 : f32}}
func.func @initial_value_type(%s: tensor<f32> {loom.name = "loss_scale", loom.initial_value = 1.0 : f32}) {
  return
}

// -----

// `loom.initial_value` belongs to a named state.
// expected-error @+1 {{`loom.initial_value` expects a float func.func argument with a `loom.name` (a named state)}}
func.func @initial_value_unnamed(%s: tensor<f32> {loom.initial_value = 1.0 : f64}) {
  return
}
