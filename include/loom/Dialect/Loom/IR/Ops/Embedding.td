//===- Embedding.td - loom embedding ops -------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/Embedding.cpp.
//
// Token embedding lookup and its gradient. Both may split the vocabulary
// (MindSpore's `vocab_emb_dp = False`, Megatron's vocab-parallel embedding):
// the table's rows are then spread over devices and the ops mask the ids that
// fall outside a device's rows.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_EMBEDDING_TD
#define LOOM_DIALECT_LOOM_IR_OPS_EMBEDDING_TD

//===----------------------------------------------------------------------===//
// Embedding lookup
//===----------------------------------------------------------------------===//

def Loom_EmbeddingOp : Loom_Op<"embedding", [Pure, InferTypeOpAdaptor]> {
  let summary = "row lookup in an embedding table";
  let description = [{
    Looks up, for every element of `ids`, that row of `table` `[V, H]`:
    `result[i..., h] = table[ids[i...], h]`, so the result is
    `[ids dims..., H]` with the table's element type. `ids` may have any
    rank (rank 0 looks up one row). An id outside `[0, V)` is a run-time
    error of the kernels.

    ```mlir
    %x = loom.embedding %table, %tokens
        : (tensor<32000x768xf32>, tensor<8x128xi64>) -> tensor<8x128x768xf32>
    ```

    Sharding: the ids dims and `H` are parallel. `V` is a globally indexed
    reduction factor (vocab-parallel embedding): a device holding rows `[v0, v0 + V/n)` looks
    up the ids in that range at `id - v0` and writes zeros for the others,
    so its result is a *partial sum* over the vocab mesh axes, resolved by
    the all-reduce (or reduce-scatter) that follows.

    Local form (what the partitioner emits for a vocab split): with
    `offset`, `table` holds the rows `[offset, offset + V)` of the global
    table; an id in that range reads row `id - offset`, any other id gives a
    zero row (it is some other device's, so it is not range-checked):

    ```mlir
    %x = loom.embedding %table, %tokens offset %o
        : (tensor<16000x768xf32>, tensor<8x128xi64>, index)
        -> tensor<8x128x768xf32>
    ```

    Constraints:
    - C1: `table` has rank 2.
  }];

  let arguments = (ins Loom_FloatTensor:$table, Loom_IndexTensor:$ids,
                       Optional<Loom_Offset>:$offset);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids (`offset` $offset^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Loom_EmbeddingGradOp
    : Loom_Op<"embedding_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of an embedding lookup with respect to the table";
  let description = [{
    Scatter-adds the rows of `dy` into a zero table of `vocab_size` rows:
    `dtable[v, h] = sum over i... with ids[i...] = v of dy[i..., h]`. This is
    the VJP of `loom.embedding` for its table (ids are integers and get no
    gradient). `dy` is `[ids dims..., H]` and the result `[vocab_size, H]`
    with `dy`'s element type. An id outside `[0, vocab_size)` is a run-time
    error of the kernels.

    ```mlir
    %dtable = loom.embedding_grad %dy, %tokens {vocab_size = 32000 : i64}
        : (tensor<8x128x768xf32>, tensor<8x128xi64>) -> tensor<32000x768xf32>
    ```

    Sharding: the ids dims are reduction factors (`dtable` lacks them, so a
    split leaves each device a partial sum of the table gradient, as the
    data-parallel gradient all-reduce expects); `H` is parallel; `V` is
    parallel and globally indexed: a device holding rows `[v0, v0 + V/n)`
    accumulates only the ids in that range, into its own rows.

    Local form (what the partitioner emits for a vocab split): with
    `offset`, the result is the block of rows `[offset, offset +
    vocab_size)` of the table gradient: an id in that range adds into row
    `id - offset`, any other id is skipped (not range-checked).

    Constraints:
    - C1: `vocab_size` is positive.
    - C2: `dy` has rank `rank(ids) + 1`.
    - C3: the leading dims of `dy` equal the shape of `ids`.
  }];

  let arguments = (ins Loom_FloatTensor:$dy, Loom_IndexTensor:$ids,
                       Optional<Loom_Offset>:$offset, I64Attr:$vocab_size);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $dy `,` $ids (`offset` $offset^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_EMBEDDING_TD
