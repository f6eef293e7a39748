// Random initializers and dropout draw from the counter-based RNG keyed by
// the global element index, so sharded runs equal single-device runs.
//
// A parameter without data takes its random initializer, keyed by --seed and
// its name; the same seed gives the same values, another seed other values.
// RUN: loom-run %s --entry init --seed 7 --outputs %t.init.safetensors | FileCheck %s --check-prefix=INIT
// INIT: w: shape [4, 6] dtype F64
// INIT-NEXT: u: shape [4, 6] dtype F64 mean {{2\.[0-9]+}} absmax {{2\.[0-9]+}}
// INIT-NEXT: s: shape [4, 6] dtype F64
// RUN: loom-run %s --entry init --seed 7 --outputs %t.init2.safetensors
// RUN: loom-run --compare %t.init.safetensors %t.init2.safetensors --rtol 0 --atol 0 | FileCheck %s --check-prefix=SAME
// SAME: all {{[0-9]+}} tensors match
// RUN: loom-run %s --entry init --seed 8 --outputs %t.init8.safetensors
// RUN: not loom-run --compare %t.init.safetensors %t.init8.safetensors --rtol 0 --atol 0 | FileCheck %s --check-prefix=OTHER
// OTHER: 3 of 3 tensors differ
//
// Sharded parameters start from the blocks of the single-device values.
// RUN: loom-run %s --entry init_tp --seed 7 --outputs %t.init_tp.safetensors
// RUN: loom-run --compare %t.init.safetensors %t.init_tp.safetensors --rtol 0 --atol 0 | FileCheck %s --check-prefix=SAME
//
// f32 runs draw the same numbers rounded to f32.
// RUN: loom-run %s --entry init --seed 7 --dtype f32 --outputs %t.init32.safetensors
// RUN: loom-run --compare %t.init.safetensors %t.init32.safetensors --rtol 1e-6 --atol 1e-7 | FileCheck %s --check-prefix=SAME
//
// Dropout with rate 1/2 keeps about half of the ones, scaled to 2; rate 0
// is the identity.
// RUN: loom-run %s --entry ones --outputs %t.ones.safetensors
// RUN: loom-run %s --entry drop --inputs %t.ones.safetensors --outputs %t.drop.safetensors | FileCheck %s --check-prefix=DROP
// DROP: y: shape [4, 6] dtype F64 mean 1 absmax 2
// DROP-NEXT: id: shape [4, 6] dtype F64 mean 1 absmax 1
//
// In an SPMD run a dropout carries its layout; each rank then draws the
// mask of its block, split along rows or columns, and the results equal
// the single-device result.
// RUN: loom-run %s --entry drop_rows --inputs %t.ones.safetensors --outputs %t.drop_rows.safetensors
// RUN: loom-run --compare %t.drop.safetensors %t.drop_rows.safetensors --rtol 0 --atol 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry drop_cols --inputs %t.ones.safetensors --outputs %t.drop_cols.safetensors
// RUN: loom-run --compare %t.drop.safetensors %t.drop_cols.safetensors --rtol 0 --atol 0 | FileCheck %s --check-prefix=SAME
//
// Without its layout a dropout in an SPMD program is an error.
// RUN: not loom-run %s --entry drop_no_layout --inputs %t.ones.safetensors 2>&1 | FileCheck %s --check-prefix=NOLAYOUT
// NOLAYOUT: loom-run: error: rank 0: `loom.dropout` at {{.*}}: dropout in an SPMD program needs the layout of its input

dist.mesh @m shape [2] axes ["tp"]

func.func @init(%w: tensor<4x6xf64> {loom.param = #loom.param<"w", init = normal(2.000000e-02), decay = true>},
                %u: tensor<4x6xf64> {loom.param = #loom.param<"u", init = uniform(2.000000e+00, 3.000000e+00), decay = true>},
                %s: tensor<4x6xf64> {loom.param = #loom.param<"s", init = scaled_normal(2.000000e-02, 4.000000e+00), decay = true>})
    -> (tensor<4x6xf64> {loom.name = "w"}, tensor<4x6xf64> {loom.name = "u"}, tensor<4x6xf64> {loom.name = "s"}) {
  return %w, %u, %s : tensor<4x6xf64>, tensor<4x6xf64>, tensor<4x6xf64>
}

func.func @init_tp(%w: tensor<2x6xf64> {loom.param = #loom.param<"w", init = normal(2.000000e-02), decay = true>,
                                        dist.layout = #dist.layout<@m, [["tp"], []]>},
                   %u: tensor<4x3xf64> {loom.param = #loom.param<"u", init = uniform(2.000000e+00, 3.000000e+00), decay = true>,
                                        dist.layout = #dist.layout<@m, [[], ["tp"]]>},
                   %s: tensor<4x6xf64> {loom.param = #loom.param<"s", init = scaled_normal(2.000000e-02, 4.000000e+00), decay = true>})
    -> (tensor<2x6xf64> {loom.name = "w", dist.layout = #dist.layout<@m, [["tp"], []]>},
        tensor<4x3xf64> {loom.name = "u", dist.layout = #dist.layout<@m, [[], ["tp"]]>},
        tensor<4x6xf64> {loom.name = "s"}) {
  return %w, %u, %s : tensor<2x6xf64>, tensor<4x3xf64>, tensor<4x6xf64>
}

func.func @ones() -> (tensor<4x6xf64> {loom.name = "x"}) {
  %x = arith.constant dense<1.0> : tensor<4x6xf64>
  return %x : tensor<4x6xf64>
}

func.func @drop(%x: tensor<4x6xf64> {loom.name = "x"})
    -> (tensor<4x6xf64> {loom.name = "y"}, tensor<4x6xf64> {loom.name = "id"}) {
  %y = loom.dropout %x {rate = 5.000000e-01 : f64, seed = 17 : i64} : tensor<4x6xf64>
  %i = loom.dropout %x {rate = 0.000000e+00 : f64, seed = 17 : i64} : tensor<4x6xf64>
  return %y, %i : tensor<4x6xf64>, tensor<4x6xf64>
}

func.func @drop_rows(%x: tensor<2x6xf64> {loom.name = "x", dist.layout = #dist.layout<@m, [["tp"], []]>})
    -> (tensor<2x6xf64> {loom.name = "y", dist.layout = #dist.layout<@m, [["tp"], []]>},
        tensor<2x6xf64> {loom.name = "id", dist.layout = #dist.layout<@m, [["tp"], []]>}) {
  %y = loom.dropout %x {rate = 5.000000e-01 : f64, seed = 17 : i64, dist.layout = #dist.layout<@m, [["tp"], []]>} : tensor<2x6xf64>
  %i = loom.dropout %x {rate = 0.000000e+00 : f64, seed = 17 : i64, dist.layout = #dist.layout<@m, [["tp"], []]>} : tensor<2x6xf64>
  return %y, %i : tensor<2x6xf64>, tensor<2x6xf64>
}

func.func @drop_cols(%x: tensor<4x3xf64> {loom.name = "x", dist.layout = #dist.layout<@m, [[], ["tp"]]>})
    -> (tensor<4x3xf64> {loom.name = "y", dist.layout = #dist.layout<@m, [[], ["tp"]]>},
        tensor<4x3xf64> {loom.name = "id", dist.layout = #dist.layout<@m, [[], ["tp"]]>}) {
  %y = loom.dropout %x {rate = 5.000000e-01 : f64, seed = 17 : i64, dist.layout = #dist.layout<@m, [[], ["tp"]]>} : tensor<4x3xf64>
  %i = loom.dropout %x {rate = 0.000000e+00 : f64, seed = 17 : i64, dist.layout = #dist.layout<@m, [[], ["tp"]]>} : tensor<4x3xf64>
  return %y, %i : tensor<4x3xf64>, tensor<4x3xf64>
}

func.func @drop_no_layout(%x: tensor<2x6xf64> {loom.name = "x", dist.layout = #dist.layout<@m, [["tp"], []]>})
    -> (tensor<2x6xf64> {loom.name = "y", dist.layout = #dist.layout<@m, [["tp"], []]>}) {
  %y = loom.dropout %x {rate = 5.000000e-01 : f64, seed = 17 : i64} : tensor<2x6xf64>
  return %y : tensor<2x6xf64>
}
