// RUN: loom-opt %s -split-input-file -verify-diagnostics

// One case per numbered constraint of each dist op and of #dist.layout (see
// DistOps.td and DistAttrs.td). Checks that need the mesh run when symbols
// resolve, so their errors name the mesh's axes and sizes.

// layout C1: axis names are non-empty.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @layout_empty_name(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects non-empty axis names in dim 0, got ""}}
  %0 = dist.annotate %x layout <@m, [[""]]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// layout C2: an axis splits at most one dim, and is never both split and partial.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @layout_axis_twice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{mesh axis `tp` is used twice in the layout}}
  %0 = dist.annotate %x layout <@m, [["tp"], []], partial = ["tp"]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// mesh C1: one name per size.
// expected-error @+1 {{expects one axis name per size, got 1 sizes and 2 names}}
dist.mesh @bad shape [2] axes ["dp", "tp"]

// -----

// mesh C2: an axis of size 0 would leave no devices.
// expected-error @+1 {{mesh axis `dp` has size 0; sizes must be at least 1}}
dist.mesh @bad shape [0, 4] axes ["dp", "tp"]

// -----

// mesh C3: axis names are distinct, so layouts can name them.
// expected-error @+1 {{mesh axis `dp` is declared twice}}
dist.mesh @bad shape [2, 4] axes ["dp", "dp"]

// -----

// mesh C3: axis names are non-empty.
// expected-error @+1 {{mesh axis 1 has an empty name}}
dist.mesh @bad shape [2, 4] axes ["dp", ""]

// -----

// mesh C4: 2^16 x 2^16 devices exceed the 2^30 that ranks may number.
// expected-error @+1 {{mesh has more than 1073741824 devices (at axis `b` of size 65536)}}
dist.mesh @bad shape [65536, 65536] axes ["a", "b"]

// -----

// mesh: meshes are declared at module level, where every op can resolve them.
func.func @nested_mesh() {
  // expected-error @+1 {{expects parent op 'builtin.module'}}
  dist.mesh @inner shape [2] axes ["dp"]
  return
}

// -----

// axis_index C1: the mesh symbol must name a dist.mesh, not a function.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @axis_index_not_a_mesh() -> index {
  // expected-error @+1 {{@axis_index_not_a_mesh does not name a dist.mesh}}
  %0 = dist.axis_index @axis_index_not_a_mesh "tp" : index
  return %0 : index
}

// -----

// axis_index C2.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @axis_index_unknown_axis() -> index {
  // expected-error @+1 {{`sp` is not an axis of mesh {dp:2, tp:4}}}
  %0 = dist.axis_index @m "sp" : index
  return %0 : index
}

// -----

// annotate C1: the layout names a mesh that does not exist.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @annotate_no_mesh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.annotate %x layout <@missing, [[], []]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// annotate C2.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @annotate_unknown_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{layout: layout names `sp`, which is not an axis of mesh {dp:2, tp:4}}}
  %0 = dist.annotate %x layout <@m, [["sp"], []]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// annotate C3: a pending sum has one spelling, its axes in mesh order.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @annotate_partial_order(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{layout: expects partial axes in mesh order ["dp", "tp"], got ["tp", "dp"]}}
  %0 = dist.annotate %x layout <@m, [[], []], partial = ["tp", "dp"]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// annotate C4: a rank-2 layout on a rank-3 tensor.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @annotate_rank(%x: tensor<4x8x2xf32>) -> tensor<4x8x2xf32> {
  // expected-error @+1 {{layout: layout of rank 2 does not fit a tensor of rank 3}}
  %0 = dist.annotate %x layout <@m, [["dp"], ["tp"]]> : tensor<4x8x2xf32>
  return %0 : tensor<4x8x2xf32>
}

// -----

// annotate C5: dim 1 has 6 elements, which 4 devices cannot share evenly.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @annotate_divides(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{layout: mesh axis `tp` (size 4) does not divide dim 1 (size 6)}}
  %0 = dist.annotate %x layout <@m, [["dp"], ["tp"]]> : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// reshard C1, for `from`.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reshard_no_mesh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.reshard %x from <@missing, [[], []]> to <@missing, [[], []]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reshard C2, for `to`.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reshard_unknown_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{`to`: layout names `sp`, which is not an axis of mesh {dp:2, tp:4}}}
  %0 = dist.reshard %x from <@m, [[], []]> to <@m, [["sp"], []]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reshard C3, for `from`.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reshard_partial_order(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{`from`: expects partial axes in mesh order ["dp", "tp"], got ["tp", "dp"]}}
  %0 = dist.reshard %x from <@m, [[], []], partial = ["tp", "dp"]> to <@m, [[], []]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reshard C4, for `to`.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reshard_rank(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{`to`: layout of rank 1 does not fit a tensor of rank 2}}
  %0 = dist.reshard %x from <@m, [[], []]> to <@m, [["dp"]]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reshard C5, for `to`: dim 0 has 4 elements and [dp, tp] makes 8 blocks.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reshard_divides(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{`to`: mesh axes [`dp`, `tp`] (8 blocks) do not divide dim 0 (size 4)}}
  %0 = dist.reshard %x from <@m, [[], []]> to <@m, [["dp", "tp"], []]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reshard C6: moving between meshes is send/recv, not a reshard.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
dist.mesh @other shape [8] axes ["x"]
func.func @reshard_two_meshes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects `from` and `to` on one mesh, got @m and @other}}
  %0 = dist.reshard %x from <@m, [[], []]> to <@other, [[], []]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// all_gather C1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_gather_no_mesh(%x: tensor<4x8xf32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.all_gather %x on @missing axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

// all_gather C2: a collective runs over at least one axis.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_gather_no_axes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{a collective needs at least one mesh axis}}
  %0 = dist.all_gather %x on @m axes [] dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// all_gather C3.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_gather_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{`dim` 2 is out of range for an operand of rank 2}}
  %0 = dist.all_gather %x on @m axes ["tp"] dim 2 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// all_gather C4: a collective never converts.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_gather_element_type(%x: tensor<4x8xf32>) -> tensor<4x32xf16> {
  // expected-error @+1 {{expects operand and result of one element type, got 'f32' and 'f16'}}
  %0 = dist.all_gather %x on @m axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x32xf16>
  return %0 : tensor<4x32xf16>
}

// -----

// all_gather C5: four devices over `tp` make dim 1 four times larger.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_gather_size(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{expects result dim 1 of size 32 (group size 4 times operand size 8), got 16}}
  %0 = dist.all_gather %x on @m axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// all_gather C5: the other dims do not change.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_gather_other_dim(%x: tensor<4x8xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{expects result dim 0 of size 4 (the operand's), got 8}}
  %0 = dist.all_gather %x on @m axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// all_slice C1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_slice_no_mesh(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.all_slice %x on @missing axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// all_slice C2: an axis is named once.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_slice_axis_twice(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{mesh axis `tp` is named twice}}
  %0 = dist.all_slice %x on @m axes ["tp", "tp"] dim 1 : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// all_slice C3.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_slice_dim(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{`dim` -1 is out of range for an operand of rank 2}}
  %0 = dist.all_slice %x on @m axes ["tp"] dim -1 : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// all_slice C4.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_slice_rank(%x: tensor<4x8xf32>) -> tensor<4x2x1xf32> {
  // expected-error @+1 {{expects operand and result of one rank, got 2 and 3}}
  %0 = dist.all_slice %x on @m axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x2x1xf32>
  return %0 : tensor<4x2x1xf32>
}

// -----

// all_slice C5: 8 devices cannot cut 4 rows evenly.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_slice_divides(%x: tensor<4x8xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{group size 8 does not divide operand dim 0 (size 4)}}
  %0 = dist.all_slice %x on @m axes ["dp", "tp"] dim 0 : tensor<4x8xf32> -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

// all_slice C6.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_slice_size(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expects result dim 1 of size 2 (operand size 8 divided by group size 4), got 4}}
  %0 = dist.all_slice %x on @m axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// all_reduce C1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_reduce_no_mesh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.all_reduce sum %x on @missing axes ["tp"] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// all_reduce C2.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_reduce_unknown_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{`sp` is not an axis of mesh {dp:2, tp:4}}}
  %0 = dist.all_reduce sum %x on @m axes ["sp"] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reduce_scatter C1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reduce_scatter_no_mesh(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.reduce_scatter %x on @missing axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// reduce_scatter C2.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reduce_scatter_no_axes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{a collective needs at least one mesh axis}}
  %0 = dist.reduce_scatter %x on @m axes [] dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reduce_scatter C3.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reduce_scatter_dim(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{`dim` 5 is out of range for an operand of rank 2}}
  %0 = dist.reduce_scatter %x on @m axes ["tp"] dim 5 : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// reduce_scatter C4.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reduce_scatter_element_type(%x: tensor<4x8xf32>) -> tensor<4x2xbf16> {
  // expected-error @+1 {{expects operand and result of one element type, got 'f32' and 'bf16'}}
  %0 = dist.reduce_scatter %x on @m axes ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x2xbf16>
  return %0 : tensor<4x2xbf16>
}

// -----

// reduce_scatter C5: 4 devices cannot cut 6 columns evenly.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reduce_scatter_divides(%x: tensor<4x6xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{group size 4 does not divide operand dim 1 (size 6)}}
  %0 = dist.reduce_scatter %x on @m axes ["tp"] dim 1 : tensor<4x6xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// reduce_scatter C6.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @reduce_scatter_size(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects result dim 0 of size 2 (operand size 4 divided by group size 2), got 4}}
  %0 = dist.reduce_scatter %x on @m axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// all_to_all C1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_to_all_no_mesh(%x: tensor<4x8xf32>) -> tensor<16x2xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.all_to_all %x on @missing axes ["tp"] split_dim 1 concat_dim 0 : tensor<4x8xf32> -> tensor<16x2xf32>
  return %0 : tensor<16x2xf32>
}

// -----

// all_to_all C2.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_to_all_unknown_axis(%x: tensor<4x8xf32>) -> tensor<16x2xf32> {
  // expected-error @+1 {{`pp` is not an axis of mesh {dp:2, tp:4}}}
  %0 = dist.all_to_all %x on @m axes ["pp"] split_dim 1 concat_dim 0 : tensor<4x8xf32> -> tensor<16x2xf32>
  return %0 : tensor<16x2xf32>
}

// -----

// all_to_all C3.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_to_all_dim(%x: tensor<4x8xf32>) -> tensor<16x2xf32> {
  // expected-error @+1 {{`concat_dim` 2 is out of range for an operand of rank 2}}
  %0 = dist.all_to_all %x on @m axes ["tp"] split_dim 1 concat_dim 2 : tensor<4x8xf32> -> tensor<16x2xf32>
  return %0 : tensor<16x2xf32>
}

// -----

// all_to_all C4: pieces received along the dim they were cut from would interleave.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_to_all_same_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects distinct `split_dim` and `concat_dim`, got 1 for both}}
  %0 = dist.all_to_all %x on @m axes ["tp"] split_dim 1 concat_dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// all_to_all C5.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_to_all_rank(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{expects operand and result of one rank, got 2 and 1}}
  %0 = dist.all_to_all %x on @m axes ["tp"] split_dim 1 concat_dim 0 : tensor<4x8xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// all_to_all C6: 8 devices cannot cut 4 rows evenly.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_to_all_divides(%x: tensor<4x8xf32>) -> tensor<1x64xf32> {
  // expected-error @+1 {{group size 8 does not divide operand dim 0 (size 4)}}
  %0 = dist.all_to_all %x on @m axes ["dp", "tp"] split_dim 0 concat_dim 1 : tensor<4x8xf32> -> tensor<1x64xf32>
  return %0 : tensor<1x64xf32>
}

// -----

// all_to_all C7: the concat dim grows by the group size.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_to_all_size(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{expects result dim 0 of size 16 (group size 4 times operand size 4), got 4}}
  %0 = dist.all_to_all %x on @m axes ["tp"] split_dim 1 concat_dim 0 : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// collective_permute C1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @permute_no_mesh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.collective_permute %x on @missing axes ["tp"] shift 1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// collective_permute C2.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @permute_no_axes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{a collective needs at least one mesh axis}}
  %0 = dist.collective_permute %x on @m axes [] shift 1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// collective_permute C3: a shift by the group size moves nothing.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @permute_shift(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects `shift` in [1, 4), got 4}}
  %0 = dist.collective_permute %x on @m axes ["tp"] shift 4 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// broadcast C1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @broadcast_no_mesh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.broadcast %x on @missing axes ["dp"] root 0 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// broadcast C2.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @broadcast_axis_twice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{mesh axis `dp` is named twice}}
  %0 = dist.broadcast %x on @m axes ["dp", "dp"] root 0 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// broadcast C3: the group over `dp` has members 0 and 1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @broadcast_root(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expects `root` in [0, 2), got 2}}
  %0 = dist.broadcast %x on @m axes ["dp"] root 2 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// send C1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @send_no_mesh(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  dist.send %x on @missing axis "dp" to 1 : tensor<4x8xf32>
  return
}

// -----

// send C2.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @send_unknown_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{`pp` is not an axis of mesh {dp:2, tp:4}}}
  dist.send %x on @m axis "pp" to 1 : tensor<4x8xf32>
  return
}

// -----

// send C3: `dp` has coordinates 0 and 1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @send_peer(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expects `to` in [0, 2) for mesh axis `dp`, got 2}}
  dist.send %x on @m axis "dp" to 2 : tensor<4x8xf32>
  return
}

// -----

// recv C1.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @recv_no_mesh() -> tensor<4x8xf32> {
  // expected-error @+1 {{@missing does not name a dist.mesh}}
  %0 = dist.recv on @missing axis "dp" from 0 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A tag beyond the least MPI tag bound is rejected.
dist.mesh @m shape [2, 4] axes ["pp", "tp"]
func.func @send_tag(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expects `tag` in [0, 32767], got 40000}}
  dist.send %x on @m axis "pp" to 1 {tag = 40000 : i64} : tensor<4x8xf32>
  return
}

// -----

// recv C2.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @recv_unknown_axis() -> tensor<4x8xf32> {
  // expected-error @+1 {{`pp` is not an axis of mesh {dp:2, tp:4}}}
  %0 = dist.recv on @m axis "pp" from 0 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// recv C3: a negative stage does not exist.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @recv_peer() -> tensor<4x8xf32> {
  // expected-error @+1 {{expects `from` in [0, 2) for mesh axis `dp`, got -1}}
  %0 = dist.recv on @m axis "dp" from -1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Every dist tensor has a static shape: layouts must divide exact sizes.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @all_reduce_dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = dist.all_reduce sum %x on @m axes ["tp"] : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Strategy C2: an axis splits at most one factor.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @strategy_axis_twice(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{mesh axis `tp` is used twice in the strategy}}
  %0 = loom.matmul %x, %w {transpose_rhs, dist.strategy = #dist.strategy<@m, [["tp"], ["tp"], []]>} : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Strategy C2: an axis that splits a factor cannot also be a pending sum.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @strategy_split_and_partial(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{mesh axis `tp` is used twice in the strategy}}
  %0 = loom.add %a, %b {dist.strategy = #dist.strategy<@m, [["tp"], []], partial = ["tp"]>} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Strategy C1: partial axes are non-empty names.
dist.mesh @m shape [2, 4] axes ["dp", "tp"]
func.func @strategy_empty_partial_axis(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects non-empty axis names in partial}}
  %0 = loom.add %a, %b {dist.strategy = #dist.strategy<@m, [[], []], partial = [""]>} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// #dist.plan C1: the ZeRO level and the memory are not negative.
// expected-error @+1 {{expects `zero` >= 0, got -1}}
func.func @plan_negative_zero() attributes {dist.plan = #dist.plan<zero = -1, recompute = false, step_time_s = 1.0, compute_s = 1.0, comm_s = 0.0, bubble_s = 0.0, memory_bytes_per_device = 0, model_flops_per_step = 0.0>} {
  return
}

// -----

// expected-error @+1 {{expects `memory_bytes_per_device` >= 0, got -8}}
func.func @plan_negative_memory() attributes {dist.plan = #dist.plan<zero = 0, recompute = false, step_time_s = 1.0, compute_s = 1.0, comm_s = 0.0, bubble_s = 0.0, memory_bytes_per_device = -8, model_flops_per_step = 0.0>} {
  return
}

// -----

// #dist.plan C2: times and FLOPs are finite and not negative.
// expected-error @+1 {{expects `comm_s` finite and >= 0, got -1}}
func.func @plan_negative_time() attributes {dist.plan = #dist.plan<zero = 0, recompute = false, step_time_s = 1.0, compute_s = 1.0, comm_s = -1.0, bubble_s = 0.0, memory_bytes_per_device = 0, model_flops_per_step = 0.0>} {
  return
}

// -----

// expected-error @+2 {{expected `true` or `false`}}
// expected-error @+1 {{failed to parse Dist_PlanAttr parameter 'recompute' which is to be a `bool`}}
func.func @plan_bad_bool() attributes {dist.plan = #dist.plan<zero = 0, recompute = maybe, step_time_s = 1.0, compute_s = 1.0, comm_s = 0.0, bubble_s = 0.0, memory_bytes_per_device = 0, model_flops_per_step = 0.0>} {
  return
}

// -----

// #dist.pipeline C1: counts are positive.
// expected-error @+1 {{expects `stages` >= 1, got 0}}
func.func @pipeline_no_stages() attributes {dist.pipeline = #dist.pipeline<stages = 0>} {
  return
}

// -----

// expected-error @+1 {{expects `micro_batches` >= 1, got 0}}
func.func @pipeline_no_micro_batches() attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 0>} {
  return
}

// -----

// expected-error @+2 {{expected schedule "1f1b", "gpipe" or "interleaved-1f1b", found "zigzag"}}
// expected-error @+1 {{failed to parse Dist_PipelineAttr parameter 'schedule'}}
func.func @pipeline_bad_schedule() attributes {dist.pipeline = #dist.pipeline<stages = 2, schedule = "zigzag">} {
  return
}

// -----

// #dist.pipeline C1: virtual stages only under interleaved 1F1B, which needs
// the micro-batches a multiple of the stages.
// expected-error @+1 {{virtual stages (2) need the interleaved-1f1b schedule, found 1f1b}}
func.func @pipeline_chunks_without_interleaving() attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 4, virtual_stages = 2>} {
  return
}

// -----

// expected-error @+1 {{the interleaved-1f1b schedule needs at least 2 virtual stages (chunks per device), found 1}}
func.func @pipeline_interleaved_one_chunk() attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 4, schedule = "interleaved-1f1b">} {
  return
}

// -----

// expected-error @+1 {{the interleaved-1f1b schedule needs the micro-batches (3) to be a multiple of the pipeline stages (2)}}
func.func @pipeline_interleaved_micro_batches() attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 3, schedule = "interleaved-1f1b", virtual_stages = 2>} {
  return
}

// -----

// expected-error @+1 {{expects `virtual_stages` >= 1, got 0}}
func.func @pipeline_no_chunks() attributes {dist.pipeline = #dist.pipeline<stages = 2, virtual_stages = 0>} {
  return
}

// -----

// #dist.pipeline C2: one layer range per chunk (per stage without virtual
// stages), each non-empty, in order.
// expected-error @+1 {{expects one `stage_layers` range per chunk (4), got 2}}
func.func @pipeline_chunk_ranges_count() attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 2, schedule = "interleaved-1f1b", virtual_stages = 2, stage_layers = [[0, 1], [1, 2]]>} {
  return
}

// -----

// #dist.pipeline C2: one layer range per stage, each non-empty, in order.
// expected-error @+1 {{expects one `stage_layers` range per stage (2), got 3}}
func.func @pipeline_ranges_count() attributes {dist.pipeline = #dist.pipeline<stages = 2, stage_layers = [[0, 1], [1, 2], [2, 3]]>} {
  return
}

// -----

// expected-error @+1 {{expects stage 1's layers [first, end) with 0 <= first < end, got [2, 2)}}
func.func @pipeline_empty_range() attributes {dist.pipeline = #dist.pipeline<stages = 2, stage_layers = [[0, 2], [2, 2]]>} {
  return
}

// -----

// expected-error @+1 {{expects stage 1's layers to start at or after 3, where stage 0's end, got 2}}
func.func @pipeline_overlap() attributes {dist.pipeline = #dist.pipeline<stages = 2, stage_layers = [[0, 3], [2, 4]]>} {
  return
}

// -----

// #dist.pipeline C3: the prediction covers every stage (its times every
// chunk).
// expected-error @+1 {{expects `predicted` for 2 stages of 1 chunk(s), got 1 time(s) and 1 memory size(s)}}
func.func @pipeline_prediction_stages() attributes {dist.pipeline = #dist.pipeline<stages = 2, predicted = <step_time_s = 1.0, bubble_s = 0.0, p2p_s = 0.0, stage_forward_s = [1.0], stage_backward_s = [1.0], stage_memory_bytes = [1]>>} {
  return
}

// -----

// #dist.pipeline_prediction C1: times finite and not negative, sizes not
// negative.
// expected-error @+1 {{expects `bubble_s` finite and >= 0, got -1}}
func.func @prediction_negative_bubble() attributes {p = #dist.pipeline_prediction<step_time_s = 1.0, bubble_s = -1.0, p2p_s = 0.0, stage_forward_s = [1.0], stage_backward_s = [1.0], stage_memory_bytes = [1]>} {
  return
}

// -----

// expected-error @+1 {{expects every `stage_backward_s` finite and >= 0, got -2}}
func.func @prediction_negative_stage() attributes {p = #dist.pipeline_prediction<step_time_s = 1.0, bubble_s = 0.0, p2p_s = 0.0, stage_forward_s = [1.0], stage_backward_s = [-2.0], stage_memory_bytes = [1]>} {
  return
}

// -----

// expected-error @+1 {{expects every `stage_memory_bytes` >= 0, got -5}}
func.func @prediction_negative_memory() attributes {p = #dist.pipeline_prediction<step_time_s = 1.0, bubble_s = 0.0, p2p_s = 0.0, stage_forward_s = [1.0], stage_backward_s = [1.0], stage_memory_bytes = [-5]>} {
  return
}

// -----

// #dist.pipeline_prediction C2: one time per chunk in both time lists, a
// memory size per stage.
// expected-error @+1 {{expects one `stage_forward_s` and `stage_backward_s` entry per chunk and one `stage_memory_bytes` entry per stage, got 2, 1 and 1}}
func.func @prediction_ragged() attributes {p = #dist.pipeline_prediction<step_time_s = 1.0, bubble_s = 0.0, p2p_s = 0.0, stage_forward_s = [1.0, 1.0], stage_backward_s = [1.0], stage_memory_bytes = [1]>} {
  return
}

// -----

// expected-error @+1 {{expects one `stage_forward_s` and `stage_backward_s` entry per chunk and one `stage_memory_bytes` entry per stage, got 3, 3 and 2}}
func.func @prediction_chunks_not_per_stage() attributes {p = #dist.pipeline_prediction<step_time_s = 1.0, bubble_s = 0.0, p2p_s = 0.0, stage_forward_s = [1.0, 1.0, 1.0], stage_backward_s = [1.0, 1.0, 1.0], stage_memory_bytes = [1, 1]>} {
  return
}

// -----

// ring_attention C2.
dist.mesh @m shape [4] axes ["cp"]
func.func @ring_no_axes(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{a collective needs at least one mesh axis}}
  %o, %l = dist.ring_attention %q, %q, %q on @m axes [] : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x4xf32>
}

// -----

// ring_attention C3.
dist.mesh @m shape [4] axes ["cp"]
func.func @ring_rank(%q: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{expects `query` of rank 4, got rank 3}}
  %o, %l = dist.ring_attention %q, %q, %q on @m axes ["cp"] : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8xf32>)
  return %o : tensor<2x8x4xf32>
}

// -----

// ring_attention C4: self-attention only, query and key blocks alike.
dist.mesh @m shape [4] axes ["cp"]
func.func @ring_cross(%q: tensor<1x2x4x4xf32>, %kv: tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{expects `query` and `key` to agree on dim 2, got 4 and 8}}
  %o, %l = dist.ring_attention %q, %kv, %kv on @m axes ["cp"] : (tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4xf32>)
  return %o : tensor<1x2x4x4xf32>
}

// -----

// ring_attention C5: the log-sum-exp of bf16 attention is kept in f32.
dist.mesh @m shape [4] axes ["cp"]
func.func @ring_lse(%q: tensor<1x2x8x4xbf16>) -> tensor<1x2x8x4xbf16> {
  // expected-error @+1 {{expects `lse` of type 'tensor<1x2x8xf32>', got 'tensor<1x2x8xbf16>'}}
  %o, %l = dist.ring_attention %q, %q, %q on @m axes ["cp"] : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xbf16>)
  return %o : tensor<1x2x8x4xbf16>
}

// -----

// ring_attention C6.
dist.mesh @m shape [4] axes ["cp"]
func.func @ring_out(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x2xf32> {
  // expected-error @+1 {{expects `out` of type 'tensor<1x2x8x4xf32>', got 'tensor<1x2x8x2xf32>'}}
  %o, %l = dist.ring_attention %q, %q, %q on @m axes ["cp"] : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x2xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x2xf32>
}

// -----

// ring_attention C7: a block of one row has no two zigzag chunks.
dist.mesh @m shape [4] axes ["cp"]
func.func @ring_odd(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error @+1 {{expects an even sequence block (two zigzag chunks of the 8 the group of 4 cuts), got 3}}
  %o, %l = dist.ring_attention %q, %q, %q on @m axes ["cp"] : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
  return %o : tensor<1x2x3x4xf32>
}

// -----

// ring_attention_grad C8.
dist.mesh @m shape [4] axes ["cp"]
func.func @ring_grad_types(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{expects `dkey` of type 'tensor<1x2x8x4xf32>', got 'tensor<1x2x8x2xf32>'}}
  %dq, %dk, %dv = dist.ring_attention_grad %q, %q, %q, %q, %q, %l on @m axes ["cp"] : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x4xf32>)
  return %dq : tensor<1x2x8x4xf32>
}
