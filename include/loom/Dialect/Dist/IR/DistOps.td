//===- DistOps.td - dist dialect operations ----------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Operations of the `dist` dialect. Each op lists its constraints as C1, C2,
// ... in its description; the verifier and test/Dialect/Dist/invalid.mlir
// cite the same numbers. Per-op C++ lives in lib/Dialect/Dist/IR/Ops/.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_DISTOPS_TD
#define LOOM_DIALECT_DIST_IR_DISTOPS_TD

include "loom/Dialect/Dist/IR/DistAttrs.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

/// An op that names a mesh and checks itself against it once symbols resolve.
class Dist_MeshUserOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic,
              !listconcat(traits,
                          [DeclareOpInterfaceMethods<SymbolUserOpInterface>])>;

// Layouts must divide exact sizes, so every tensor has a static shape.
def Dist_Tensor : StaticShapeTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

def Dist_MeshOp : Dist_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a logical grid of devices with named axes";
  let description = [{
    Declares mesh `@sym_name` with one named axis per entry of `shape`. A
    device's rank is the row-major index of its coordinates, the last axis
    fastest, so the last axis should be the one mapped inside a node.

    ```mlir
    // 8 devices; rank 5 is (dp 1, tp 1).
    dist.mesh @m shape [2, 4] axes ["dp", "tp"]
    ```

    Constraints:
    - C1: `shape` and `axes` have the same length.
    - C2: every axis size is at least 1.
    - C3: axis names are non-empty and distinct.
    - C4: the mesh has at most 2^30 devices (ranks fit MPI's and NCCL's
      `int`, and every group size and offset fits 64 bits).
  }];

  let arguments = (ins SymbolNameAttr:$sym_name, DenseI64ArrayAttr:$shape,
                       StrArrayAttr:$axes);
  let assemblyFormat = "$sym_name `shape` $shape `axes` $axes attr-dict";
  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// The mesh as the layout library sees it; fails only on an op that does
    /// not verify.
    ValueOrError<Mesh> getMesh();
  }];
}

def Dist_AxisIndexOp : Dist_MeshUserOp<"axis_index", [Pure]> {
  let summary = "this device's coordinate on a mesh axis";
  let description = [{
    The coordinate, on `axis` of `mesh`, of the device running the program.
    Partitioned code uses it for offsets: the first vocabulary row of a
    vocab-parallel embedding, the RNG stream of a data-parallel replica.

    ```mlir
    %i = dist.axis_index @m "tp" : index
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axis` is an axis of the mesh.
  }];

  let arguments = (ins FlatSymbolRefAttr:$mesh, StrAttr:$axis);
  let results = (outs AnyTypeOf<[Index, I64]>:$result);
  let assemblyFormat = "$mesh $axis attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Layouts of global values
//===----------------------------------------------------------------------===//

def Dist_AnnotateOp : Dist_MeshUserOp<"annotate",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "requires a global value to have a layout";
  let description = [{
    A user constraint: the strategy search must give `result` (the same
    global value as `input`) the layout `layout`. Partitioning removes it.
    Like Shardy's ops, the custom form prints the layout without its
    `#dist.layout` prefix (a prefixed attribute would swallow the `:` that
    follows it); the generic form spells it out.

    ```mlir
    %w1 = dist.annotate %w layout <@m, [[], ["tp"]]> : tensor<768x3072xf32>
    ```

    Constraints:
    - C1: the layout's mesh names a `dist.mesh`.
    - C2: every axis of the layout is an axis of the mesh.
    - C3: `partial` lists its axes in mesh order (one spelling per layout).
    - C4: the layout's rank is the tensor's rank.
    - C5: each dim's axes divide its size.
  }];

  let arguments = (ins Dist_Tensor:$input, Dist_LayoutAttr:$layout);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `layout` $layout attr-dict `:` type($result)
  }];
}

def Dist_ReshardOp : Dist_MeshUserOp<"reshard",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "changes the layout of a global value";
  let description = [{
    The same global value, moved from layout `from` to layout `to`. It is
    abstract: `dist-lower-reshards` replaces it by the cheapest chain of
    collectives. Both layouts are spelled out so that lowering needs no
    analysis and the op can be checked on its own.

    ```mlir
    %y = dist.reshard %x from <@m, [["dp"], []], partial = ["tp"]>
                         to <@m, [["dp"], ["tp"]]> : tensor<8x64xf32>
    ```

    Constraints:
    - C1 to C5: as for `dist.annotate`, for both `from` and `to`.
    - C6: `from` and `to` name the same mesh.
  }];

  let arguments = (ins Dist_Tensor:$input, Dist_LayoutAttr:$from,
                       Dist_LayoutAttr:$to);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `from` $from `to` $to attr-dict `:`
    type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Collectives on local tensors
//===----------------------------------------------------------------------===//

def Dist_AllGatherOp : Dist_MeshUserOp<"all_gather", [Pure]> {
  let summary = "concatenates the group's tensors along a dim";
  let description = [{
    Every device receives the tensors of its group over `axes`, concatenated
    along `dim` in group order (the mixed-radix index of the devices'
    coordinates on `axes`, the first axis most significant). On layouts it
    removes `axes` from the minor end of `dim`: `[.., d: P ++ axes, ..]` ->
    `[.., d: P, ..]`.

    ```mlir
    %1 = dist.all_gather %0 on @m axes ["tp"] dim 1
        : tensor<4x2xf32> -> tensor<4x8xf32>
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axes` is non-empty and names distinct axes of the mesh.
    - C3: `dim` is a dim of the operand.
    - C4: operand and result have the same element type and rank.
    - C5: result dim `dim` is the group size times the operand's; the other
      dims are equal.
  }];

  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `dim` $dim attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_AllSliceOp : Dist_MeshUserOp<"all_slice", [Pure]> {
  let summary = "keeps this device's piece of a dim (no communication)";
  let description = [{
    Every device cuts its tensor along `dim` into one piece per member of its
    group over `axes` and keeps the piece at its own group index. No data
    moves. On layouts it appends `axes` (which must be unused) to the minor
    end of `dim`: `[.., d: P, ..]` -> `[.., d: P ++ axes, ..]`.

    ```mlir
    %1 = dist.all_slice %0 on @m axes ["tp"] dim 1
        : tensor<4x8xf32> -> tensor<4x2xf32>
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axes` is non-empty and names distinct axes of the mesh.
    - C3: `dim` is a dim of the operand.
    - C4: operand and result have the same element type and rank.
    - C5: the group size divides operand dim `dim`.
    - C6: result dim `dim` is the operand's divided by the group size; the
      other dims are equal.
  }];

  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `dim` $dim attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_AllReduceOp : Dist_MeshUserOp<"all_reduce",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "combines the group's tensors element by element";
  let description = [{
    Every device receives the elementwise sum (or max) of the tensors of its
    group over `axes`. On layouts, `sum` removes `axes` from `partial`:
    `partial S + axes` -> `partial S`. `max` has no layout effect (a pending
    sum cannot be maxed); partitioned code uses it on local values, e.g. the
    row max of a vocab-parallel softmax.

    ```mlir
    %1 = dist.all_reduce sum %0 on @m axes ["tp"] : tensor<4x8xf32>
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axes` is non-empty and names distinct axes of the mesh.
  }];

  let arguments = (ins Dist_ReductionKind:$kind, Dist_Tensor:$input,
                       FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $kind $input `on` $mesh `axes` $axes attr-dict `:` type($result)
  }];
}

def Dist_ReduceScatterOp : Dist_MeshUserOp<"reduce_scatter", [Pure]> {
  let summary = "sums the group's tensors and keeps this device's piece";
  let description = [{
    Every device receives its piece of the elementwise sum of its group's
    tensors over `axes`: the sum is cut along `dim` into one piece per group
    member, and member `i` keeps piece `i`. On layouts it moves `axes` from
    `partial` to the minor end of `dim`: `[.., d: P, ..] partial S + axes` ->
    `[.., d: P ++ axes, ..] partial S`. This is how a partial value becomes a
    split one; an all_reduce followed by an all_slice moves the group size
    times more data.

    ```mlir
    %1 = dist.reduce_scatter %0 on @m axes ["tp"] dim 0
        : tensor<8x16xf32> -> tensor<2x16xf32>
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axes` is non-empty and names distinct axes of the mesh.
    - C3: `dim` is a dim of the operand.
    - C4: operand and result have the same element type and rank.
    - C5: the group size divides operand dim `dim`.
    - C6: result dim `dim` is the operand's divided by the group size; the
      other dims are equal.
  }];

  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `dim` $dim attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_AllToAllOp : Dist_MeshUserOp<"all_to_all", [Pure]> {
  let summary = "exchanges pieces: splits one dim, concatenates another";
  let description = [{
    Every device cuts its tensor along `split_dim` into one piece per member
    of its group over `axes` and sends piece `j` to member `j`; each device
    concatenates the pieces it receives along `concat_dim`, in group order.
    On layouts it moves `axes` from the minor end of `concat_dim` to the
    minor end of `split_dim`: `[s: Q, c: P ++ axes]` -> `[s: Q ++ axes, c: P]`
    (Ulysses attention: heads become split, the sequence gathered).

    ```mlir
    %1 = dist.all_to_all %0 on @m axes ["tp"] split_dim 1 concat_dim 0
        : tensor<2x16xf32> -> tensor<8x4xf32>
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axes` is non-empty and names distinct axes of the mesh.
    - C3: `split_dim` and `concat_dim` are dims of the operand.
    - C4: `split_dim` and `concat_dim` differ.
    - C5: operand and result have the same element type and rank.
    - C6: the group size divides operand dim `split_dim`.
    - C7: result dim `split_dim` is the operand's divided by the group size,
      result dim `concat_dim` the operand's times the group size; the other
      dims are equal.
  }];

  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$split_dim,
                       I64Attr:$concat_dim);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `split_dim` $split_dim `concat_dim`
    $concat_dim attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_CollectivePermuteOp : Dist_MeshUserOp<"collective_permute",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotates tensors around the group";
  let description = [{
    Group member `i` (over `axes`) sends its tensor to member
    `(i + shift) mod n`, where `n` is the group size; every device receives
    exactly one tensor. This is the ring step of ring attention and of ring
    collectives. On layouts it is the identity when the layout is replicated
    over `axes`; on split data the program tracks which block it holds (with
    `dist.axis_index`).

    ```mlir
    %kv1 = dist.collective_permute %kv on @m axes ["sp"] shift 1
        : tensor<2x128x64xf32>
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axes` is non-empty and names distinct axes of the mesh.
    - C3: `shift` is in `[1, n)`: a shift of 0 moves nothing, and a negative
      shift `-k` is spelled `n - k`.
  }];

  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$shift);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `shift` $shift attr-dict `:` type($result)
  }];
}

// The ring attention ops share their constraints; the gradient adds C8.
defvar Dist_RingAttentionConstraints = [{
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axes` is non-empty and names distinct axes of the mesh.
    - C3: `query`, `key` and `value` have rank 4 and the element type of
      `query`; `key` and `value` agree on `B`, `Hkv` and `S`.
    - C4: `query` and `key` agree on `B`, `S` and `D`; `Hkv` divides `Hq`.
    - C5: `lse` is `[B, Hq, S]`, f64 when `query` is f64 and f32 otherwise.
    - C6: the result `out` (the operand `out` of the gradient) is `[B, Hq,
      S, Dv]` of the element type of `query`.
    - C7: twice the group size divides the global sequence: each device's
      block `S` is even (two zigzag chunks).}];

def Dist_RingAttentionOp : Dist_MeshUserOp<"ring_attention", [Pure]> {
  let summary = "attention over a sequence split around a ring of devices";
  let description = !strconcat([{
    Context-parallel self-attention (ring attention). Each device of the
    group over `axes` holds block `i` of the sequence (dim 2) of `query`,
    `key` and `value`, in group order, and gets block `i` of
    `softmax(scale * q @ k^T) @ v` over the whole sequence, with the
    semantics of `loom.attention` without a mask (grouped-query heads,
    `causal`, `scale`), plus the log-sum-exp `lse` of each query row's scores
    (what `dist.ring_attention_grad` needs).

    The implementation load-balances the causal mask with the zigzag split:
    the sequence is cut into `2n` chunks and device `r` computes the queries
    of chunks `r` and `2n-1-r` (its contiguous block is exchanged into that
    order by point-to-point transfers, and the result exchanged back). The
    key/value zigzag blocks then travel `n - 1` times around the ring; each
    step's block attention is merged into the running result by the online
    softmax. The causal mask compares the chunks' global positions.

    ```mlir
    %o, %lse = dist.ring_attention %q, %k, %v on @m axes ["cp"] {causal}
        : (tensor<2x8x64x32xf32>, tensor<2x2x64x32xf32>,
           tensor<2x2x64x32xf32>)
        -> (tensor<2x8x64x32xf32>, tensor<2x8x64xf32>)
    ```

    Constraints:
  }], Dist_RingAttentionConstraints);

  let arguments = (ins Dist_Tensor:$query, Dist_Tensor:$key,
                       Dist_Tensor:$value, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Dist_Tensor:$result, Dist_Tensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value `on` $mesh `axes` $axes attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dist_RingAttentionGradOp : Dist_MeshUserOp<"ring_attention_grad",
    [Pure]> {
  let summary = "gradient of ring attention, dk and dv sent around the ring";
  let description = !strconcat([{
    The gradients `(dquery, dkey, dvalue)` of a `dist.ring_attention` with
    the same operands and attributes, given its result `out`, its `lse` and
    the result's gradient `dout` (all in the contiguous blocks of the
    forward). The probabilities are recomputed from the ring's `lse`, so
    each step's block is exact over the whole sequence; as the key/value
    zigzag blocks travel around the ring, so do their `dkey`/`dvalue`
    accumulators, which a last transfer returns to their owners.

    ```mlir
    %dq, %dk, %dv = dist.ring_attention_grad %q, %k, %v, %o, %do, %lse
        on @m axes ["cp"] {causal}
        : (tensor<2x8x64x32xf32>, tensor<2x2x64x32xf32>,
           tensor<2x2x64x32xf32>, tensor<2x8x64x32xf32>,
           tensor<2x8x64x32xf32>, tensor<2x8x64xf32>)
        -> (tensor<2x8x64x32xf32>, tensor<2x2x64x32xf32>,
            tensor<2x2x64x32xf32>)
    ```

    Constraints:
  }], Dist_RingAttentionConstraints, [{
    - C8: `dout` has the type of `out`; each gradient has its operand's
      type.
  }]);

  let arguments = (ins Dist_Tensor:$query, Dist_Tensor:$key,
                       Dist_Tensor:$value, Dist_Tensor:$out,
                       Dist_Tensor:$dout, Dist_Tensor:$lse,
                       FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Dist_Tensor:$dquery, Dist_Tensor:$dkey,
                      Dist_Tensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $dout `,` $lse `on` $mesh `axes`
    $axes attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dist_BroadcastOp : Dist_MeshUserOp<"broadcast",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "copies the root's tensor to its whole group";
  let description = [{
    Every device receives the tensor of the member of its group over `axes`
    whose group index is `root`. On layouts it is the identity when the
    layout is replicated over `axes`; it makes replicas agree (initial
    weights, a data-loader's batch).

    ```mlir
    %w1 = dist.broadcast %w on @m axes ["dp"] root 0 : tensor<768x768xf32>
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axes` is non-empty and names distinct axes of the mesh.
    - C3: `root` is in `[0, n)`, `n` the group size.
  }];

  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$root);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `root` $root attr-dict `:` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Point to point (pipeline stages)
//===----------------------------------------------------------------------===//

def Dist_SendOp : Dist_MeshUserOp<"send"> {
  let summary = "sends a tensor to another pipeline stage";
  let description = [{
    Sends `input` to the device whose coordinate on `axis` is `to` and whose
    other coordinates equal the sender's: with `axis` the pipeline axis,
    `to` is the receiving stage. It pairs, in program order, with a
    `dist.recv ... from <sender's coordinate>` with the same `tag` on the
    receiver: messages between two devices with one tag arrive in send
    order; different tags may be received in any order (pipeline stages tag
    every transfer of a step uniquely, docs/Pipeline.md). It has side
    effects, so it is never removed, merged or reordered.

    ```mlir
    // Stage 0 hands its activations to stage 1.
    dist.send %act on @m axis "pp" to 1 : tensor<4x128x768xbf16>
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axis` is an axis of the mesh.
    - C3: `to` is in `[0, size of axis)`.
    - C4: `tag` is in `[0, 32767]` (the least tag bound MPI guarantees).
  }];

  let arguments = (ins Dist_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrAttr:$axis, I64Attr:$to,
                       DefaultValuedAttr<I64Attr, "0">:$tag);
  let assemblyFormat = [{
    $input `on` $mesh `axis` $axis `to` $to attr-dict `:` type($input)
  }];
}

def Dist_RecvOp : Dist_MeshUserOp<"recv"> {
  let summary = "receives a tensor from another pipeline stage";
  let description = [{
    Receives a tensor from the device whose coordinate on `axis` is `from`
    and whose other coordinates equal the receiver's: the first pending
    message from that device with the same `tag` (default 0); the result
    type is the type of the matching `dist.send`. It has side effects, so
    two receives are never merged.

    ```mlir
    %act = dist.recv on @m axis "pp" from 0 : tensor<4x128x768xbf16>
    ```

    Constraints:
    - C1: `mesh` names a `dist.mesh`.
    - C2: `axis` is an axis of the mesh.
    - C3: `from` is in `[0, size of axis)`.
    - C4: `tag` is in `[0, 32767]` (the least tag bound MPI guarantees).
  }];

  let arguments = (ins FlatSymbolRefAttr:$mesh, StrAttr:$axis, I64Attr:$from,
                       DefaultValuedAttr<I64Attr, "0">:$tag);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    `on` $mesh `axis` $axis `from` $from attr-dict `:` type($result)
  }];
}

#endif // LOOM_DIALECT_DIST_IR_DISTOPS_TD
