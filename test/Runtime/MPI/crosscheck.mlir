// The MPI communicator computes what the interpreter computes, bit for bit:
// the same inputs go through `loom-run` over 6 simulated ranks and through
// `loom-mpi-crosscheck` on 6 MPI ranks, which compares each rank's results
// with its block of the interpreter's outputs (in f32, where the order of a
// sum shows in the bits, and in f64). The table in CrossCheck.cpp restates
// @collectives and must be kept in step with it.
//
// REQUIRES: mpi
// RUN: loom-run %s --entry inputs --dtype f32 --outputs %t.in32.safetensors
// RUN: loom-run %s --entry collectives --dtype f32 --inputs %t.in32.safetensors --outputs %t.out32.safetensors
// RUN: %mpirun -np 6 loom-mpi-crosscheck --dtype f32 --inputs %t.in32.safetensors --expected %t.out32.safetensors | FileCheck %s
// RUN: loom-run %s --entry inputs --dtype f64 --outputs %t.in64.safetensors
// RUN: loom-run %s --entry collectives --dtype f64 --inputs %t.in64.safetensors --outputs %t.out64.safetensors
// RUN: %mpirun -np 6 loom-mpi-crosscheck --dtype f64 --inputs %t.in64.safetensors --expected %t.out64.safetensors | FileCheck %s
//
// Results the interpreter computed from other inputs (another seed) are
// reported as mismatches, naming the rank and element.
// RUN: loom-run %s --entry inputs --dtype f64 --seed 1 --outputs %t.other.safetensors
// RUN: loom-run %s --entry collectives --dtype f64 --inputs %t.other.safetensors --outputs %t.wrong.safetensors
// RUN: not %mpirun -np 6 loom-mpi-crosscheck --dtype f64 --inputs %t.in64.safetensors --expected %t.wrong.safetensors > %t.wrong.out 2> %t.wrong.err
// RUN: FileCheck %s --check-prefix=WRONG < %t.wrong.out
// RUN: FileCheck %s --check-prefix=WRONG-RANK < %t.wrong.err
// WRONG: sum_b: MISMATCH
// WRONG: recv_a: MISMATCH
// WRONG-RANK: rank {{[0-5]}}: sum_b: element 0 is {{.*}}, expected
//
// CHECK: sum_b: bit-identical on every rank
// CHECK-NEXT: sum_ab: bit-identical on every rank
// CHECK-NEXT: sum_ba: bit-identical on every rank
// CHECK-NEXT: max_a: bit-identical on every rank
// CHECK-NEXT: rs_b: bit-identical on every rank
// CHECK-NEXT: rs_a: bit-identical on every rank
// CHECK-NEXT: ag_b: bit-identical on every rank
// CHECK-NEXT: ag_ba: bit-identical on every rank
// CHECK-NEXT: a2a_ab: bit-identical on every rank
// CHECK-NEXT: a2a_b: bit-identical on every rank
// CHECK-NEXT: perm_b: bit-identical on every rank
// CHECK-NEXT: perm_ba: bit-identical on every rank
// CHECK-NEXT: bcast_a: bit-identical on every rank
// CHECK-NEXT: slice_b: bit-identical on every rank
// CHECK-NEXT: recv_a: bit-identical on every rank

dist.mesh @m shape [2, 3] axes ["a", "b"]

// Global inputs drawn from N(0, 1): full mantissas, so sums in different
// orders differ in their last bits.
func.func @inputs(%x: tensor<12x6x4xf64> {loom.param = #loom.param<"x", init = normal(1.000000e+00), decay = false>},
                  %y: tensor<4x6x12xf64> {loom.param = #loom.param<"y", init = normal(1.000000e+00), decay = false>})
    -> (tensor<12x6x4xf64> {loom.name = "x"}, tensor<4x6x12xf64> {loom.name = "y"}) {
  return %x, %y : tensor<12x6x4xf64>, tensor<4x6x12xf64>
}

// x: rank r holds rows 2r..2r+1 (block a * 3 + b); y is split over a in dim 0
// and over b in dim 2. Each result's layout says where its blocks lie in the
// global output (replicas must agree, which the interpreter checks).
func.func @collectives(
    %x: tensor<2x6x4xf64> {loom.name = "x", dist.layout = #dist.layout<@m, [["a", "b"], [], []]>},
    %y: tensor<2x6x4xf64> {loom.name = "y", dist.layout = #dist.layout<@m, [["a"], [], ["b"]]>})
    -> (tensor<2x6x4xf64> {loom.name = "sum_b", dist.layout = #dist.layout<@m, [["a"], [], []]>},
        tensor<2x6x4xf64> {loom.name = "sum_ab"},
        tensor<2x6x4xf64> {loom.name = "sum_ba"},
        tensor<2x6x4xf64> {loom.name = "max_a", dist.layout = #dist.layout<@m, [["b"], [], []]>},
        tensor<2x2x4xf64> {loom.name = "rs_b", dist.layout = #dist.layout<@m, [["a"], ["b"], []]>},
        tensor<2x6x2xf64> {loom.name = "rs_a", dist.layout = #dist.layout<@m, [["b"], [], ["a"]]>},
        tensor<2x18x4xf64> {loom.name = "ag_b", dist.layout = #dist.layout<@m, [["a"], [], []]>},
        tensor<2x6x24xf64> {loom.name = "ag_ba"},
        tensor<12x1x4xf64> {loom.name = "a2a_ab", dist.layout = #dist.layout<@m, [[], ["a", "b"], []]>},
        tensor<2x2x12xf64> {loom.name = "a2a_b", dist.layout = #dist.layout<@m, [["a"], ["b"], []]>},
        tensor<2x6x4xf64> {loom.name = "perm_b", dist.layout = #dist.layout<@m, [["a", "b"], [], []]>},
        tensor<2x6x4xf64> {loom.name = "perm_ba", dist.layout = #dist.layout<@m, [["a", "b"], [], []]>},
        tensor<2x6x4xf64> {loom.name = "bcast_a", dist.layout = #dist.layout<@m, [["b"], [], []]>},
        tensor<2x2x4xf64> {loom.name = "slice_b", dist.layout = #dist.layout<@m, [["a", "b"], [], []]>},
        tensor<2x6x4xf64> {loom.name = "recv_a", dist.layout = #dist.layout<@m, [["a", "b"], [], []]>}) {
  %sum_b = dist.all_reduce sum %x on @m axes ["b"] : tensor<2x6x4xf64>
  %sum_ab = dist.all_reduce sum %x on @m axes ["a", "b"] : tensor<2x6x4xf64>
  %sum_ba = dist.all_reduce sum %x on @m axes ["b", "a"] : tensor<2x6x4xf64>
  %max_a = dist.all_reduce max %x on @m axes ["a"] : tensor<2x6x4xf64>
  %rs_b = dist.reduce_scatter %x on @m axes ["b"] dim 1 : tensor<2x6x4xf64> -> tensor<2x2x4xf64>
  %rs_a = dist.reduce_scatter %x on @m axes ["a"] dim 2 : tensor<2x6x4xf64> -> tensor<2x6x2xf64>
  %ag_b = dist.all_gather %x on @m axes ["b"] dim 1 : tensor<2x6x4xf64> -> tensor<2x18x4xf64>
  %ag_ba = dist.all_gather %x on @m axes ["b", "a"] dim 2 : tensor<2x6x4xf64> -> tensor<2x6x24xf64>
  %a2a_ab = dist.all_to_all %x on @m axes ["a", "b"] split_dim 1 concat_dim 0 : tensor<2x6x4xf64> -> tensor<12x1x4xf64>
  %a2a_b = dist.all_to_all %y on @m axes ["b"] split_dim 1 concat_dim 2 : tensor<2x6x4xf64> -> tensor<2x2x12xf64>
  %perm_b = dist.collective_permute %x on @m axes ["b"] shift 1 : tensor<2x6x4xf64>
  %perm_ba = dist.collective_permute %x on @m axes ["b", "a"] shift 4 : tensor<2x6x4xf64>
  %bcast_a = dist.broadcast %x on @m axes ["a"] root 1 : tensor<2x6x4xf64>
  %slice_b = dist.all_slice %x on @m axes ["b"] dim 1 : tensor<2x6x4xf64> -> tensor<2x2x4xf64>
  dist.send %x on @m axis "a" to 1 : tensor<2x6x4xf64>
  %recv_a = dist.recv on @m axis "a" from 0 : tensor<2x6x4xf64>
  return %sum_b, %sum_ab, %sum_ba, %max_a, %rs_b, %rs_a, %ag_b, %ag_ba, %a2a_ab, %a2a_b, %perm_b, %perm_ba, %bcast_a, %slice_b, %recv_a
      : tensor<2x6x4xf64>, tensor<2x6x4xf64>, tensor<2x6x4xf64>, tensor<2x6x4xf64>, tensor<2x2x4xf64>, tensor<2x6x2xf64>, tensor<2x18x4xf64>, tensor<2x6x24xf64>, tensor<12x1x4xf64>, tensor<2x2x12xf64>, tensor<2x6x4xf64>, tensor<2x6x4xf64>, tensor<2x6x4xf64>, tensor<2x2x4xf64>, tensor<2x6x4xf64>
}
