// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --mlir-print-op-generic | loom-opt | FileCheck %s

// The function-argument attributes: `loom.param` marks trainable parameters
// (name, initializer, weight-decay flag), `loom.input` marks data inputs by
// role. Initializer arguments print as f64 literals; integers are accepted.

// CHECK-LABEL: func.func @params
// CHECK-SAME: {loom.param = #loom.param<"transformer.wte.weight", init = normal(2.000000e-02), decay = true>}
// CHECK-SAME: {loom.param = #loom.param<"transformer.h.0.ln_1.bias", init = zeros, decay = false>}
// CHECK-SAME: {loom.param = #loom.param<"transformer.h.0.ln_1.weight", init = ones, decay = false>}
// CHECK-SAME: {loom.param = #loom.param<"lm_head.bias", init = uniform(-1.000000e-01, 1.000000e-01), decay = false>}
// CHECK-SAME: {loom.param = #loom.param<"transformer.h.0.attn.c_proj.weight", init = scaled_normal(2.000000e-02, 2.400000e+01), decay = true>}
func.func @params(
    %wte: tensor<64x16xf32> {loom.param = #loom.param<"transformer.wte.weight", init = normal(0.02), decay = true>},
    %bias: tensor<16xf32> {loom.param = #loom.param<"transformer.h.0.ln_1.bias", init = zeros, decay = false>},
    %gamma: tensor<16xbf16> {loom.param = #loom.param<"transformer.h.0.ln_1.weight", init = ones, decay = false>},
    %head_bias: tensor<64xf32> {loom.param = #loom.param<"lm_head.bias", init = uniform(-0.1, 0.1), decay = false>},
    %proj: tensor<16x16xf32> {loom.param = #loom.param<"transformer.h.0.attn.c_proj.weight", init = scaled_normal(0.02, 24), decay = true>}) {
  return
}

// Ids are integer tensors; a mask may be boolean or additive (float).
// CHECK-LABEL: func.func @inputs
// CHECK-SAME: {loom.input = #loom.input<input_ids>}
// CHECK-SAME: {loom.input = #loom.input<labels>}
// CHECK-SAME: {loom.input = #loom.input<positions>}
// CHECK-SAME: {loom.input = #loom.input<mask>}
// CHECK-SAME: {loom.input = #loom.input<mask>}
// CHECK-SAME: {loom.input = #loom.input<decoder_input_ids>}
func.func @inputs(
    %ids: tensor<8x128xi64> {loom.input = #loom.input<input_ids>},
    %labels: tensor<8x128xi64> {loom.input = #loom.input<labels>},
    %pos: tensor<8x128xi32> {loom.input = #loom.input<positions>},
    %keep: tensor<8x128xi1> {loom.input = #loom.input<mask>},
    %additive: tensor<8x1x128x128xf32> {loom.input = #loom.input<mask>},
    %dec: tensor<8x64xi64> {loom.input = #loom.input<decoder_input_ids>}) {
  return
}

// A declaration (no body) may carry them too: an importer's signature.
// CHECK-LABEL: func.func private @declaration
// CHECK-SAME: {loom.param = #loom.param<"w", init = normal(1.000000e+00), decay = true>}
func.func private @declaration(tensor<4xf32> {loom.param = #loom.param<"w", init = normal(1), decay = true>})
