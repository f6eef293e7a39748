//===- Loss.td - loom loss ops -----------------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/Loss.cpp.
//
// The token-level cross-entropy loss of a language model and its gradient.
// Both may split the vocabulary (vocab-parallel loss, after a vocab-parallel
// output projection) as well as the positions.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_LOSS_TD
#define LOOM_DIALECT_LOOM_IR_OPS_LOSS_TD

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

def Loom_CrossEntropyOp : Loom_Op<"cross_entropy", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "mean softmax cross-entropy over labelled positions";
  let description = [{
    Returns the mean, over the positions whose label is not `ignore_index`,
    of `logsumexp(logits[n..., :]) - logits[n..., labels[n...]]`: PyTorch's
    `F.cross_entropy(logits, labels, ignore_index=..., reduction='mean')`
    with the classes in the last dim. `logits` is `[N..., V]`, `labels`
    `[N...]` (i32 or i64), the result rank 0 with the element type of
    `logits`. If every label is ignored the result is NaN (0 / 0), as in
    PyTorch. A label outside `[0, V)` other than `ignore_index` is a run-time
    error of the kernels.

    ```mlir
    %loss = loom.cross_entropy %logits, %labels
        : (tensor<8x128x32000xf32>, tensor<8x128xi64>) -> tensor<f32>
    ```

    Sharding: the position dims `N...` are op-partitioned: a device with a
    block of positions all-reduces the sum of its per-position losses and
    its count of labelled positions (two scalars) over the axes that split
    them, so the mean comes out whole. `V` is op-partitioned
    (vocab-parallel loss): the devices all-reduce the row max, the row sum of
    `exp` and the label's logit (contributed by the device that holds it),
    so the result is whole, not partial, over the vocab axes.

    Cost: 4 FLOPs per logit (max, subtract, exp, sum), 3 per position (log,
    subtract the label's logit, accumulate) and one division. Operands are
    read and the result written once.

    Local forms (what the partitioner emits; docs/Partitioning.md):
    - `sum`: returns the sum of the per-position losses instead of their
      mean (0 when every label is ignored). The position dims are then
      reduction factors: a block of positions gives a partial sum.
    - `offset`: `logits` is the block of columns `[offset, offset + V)` of
      the global *log-probabilities* (logits minus each row's global
      log-sum-exp, which one device cannot compute from its block). The op
      does not normalize them again: a position adds `-logits[n..., label -
      offset]` when its label lies in the block and nothing otherwise, so
      the result is a partial sum over the devices holding the vocabulary
      blocks (the vocab factor becomes a globally indexed reduction factor).
      The mean still divides by the count of every labelled local position.
      Labels outside the block are not range-checked.

    ```mlir
    %part = loom.cross_entropy %logprobs, %labels offset %o {sum}
        : (tensor<4x128x16000xf32>, tensor<4x128xi64>, index) -> tensor<f32>
    ```

    Constraints:
    - C1: `logits` has rank >= 1.
    - C2: the shape of `labels` is that of `logits` without its last dim.
  }];

  let arguments = (ins Loom_FloatTensor:$logits, Loom_IndexTensor:$labels,
                       Optional<Loom_Offset>:$offset,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       UnitAttr:$sum);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels (`offset` $offset^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Loom_CrossEntropyGradOp : Loom_Op<"cross_entropy_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "gradient of the mean cross-entropy for the logits";
  let description = [{
    The VJP of `loom.cross_entropy` for its logits (labels are integers and
    get no gradient): with `count` the number of labels that are not
    `ignore_index`,

    ```
    dlogits[n..., :] = (softmax(logits[n..., :]) - onehot(labels[n...]))
                       * dloss / count
    ```

    and zero rows where the label is ignored. The result has the type of
    `logits`; `dloss` is the rank-0 gradient of the loss.

    ```mlir
    %dlogits = loom.cross_entropy_grad %logits, %labels, %dloss
        : (tensor<8x128x32000xf32>, tensor<8x128xi64>, tensor<f32>)
        -> tensor<8x128x32000xf32>
    ```

    Sharding: the position dims are op-partitioned: each device keeps its
    rows, but `count` is global, so a device with a block of positions
    all-reduces its label count (a scalar) over the axes that split them.
    `V` is op-partitioned: the softmax needs the
    row max and the row sum of `exp` all-reduced over the vocab axes, and
    each device subtracts the one-hot only in its own columns.

    Cost: 6 FLOPs per logit (max, subtract, exp, sum, divide by the sum,
    multiply by `dloss / count`), one per position (subtract the one-hot)
    and one for `dloss / count`. Operands are read and the result written
    once.

    Local forms (what the partitioner emits; docs/Partitioning.md):
    - `sum`: the gradient of the summed loss, `(softmax - onehot) * dloss`
      (no division by the count; the partitioner divides `dloss` by the
      global count instead). Rows are then independent: the position dims
      are parallel factors.
    - `offset`: `logits` is the block of columns `[offset, offset + V)` of
      the global log-probabilities (as for `loom.cross_entropy`), so
      `softmax = exp(logits)` without normalizing again, and the one-hot is
      subtracted only where the label lies in the block. The vocab factor
      is then parallel and globally indexed.

    Constraints:
    - C1: `logits` has rank >= 1.
    - C2: the shape of `labels` is that of `logits` without its last dim.
    - C3: `dloss` has rank 0.
    - C4: `dloss` has the element type of `logits`.
  }];

  let arguments = (ins Loom_FloatTensor:$logits, Loom_IndexTensor:$labels,
                       Loom_FloatTensor:$dloss, Optional<Loom_Offset>:$offset,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       UnitAttr:$sum);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $dloss (`offset` $offset^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Label count
//===----------------------------------------------------------------------===//

def Loom_LabelCountOp : Loom_Op<"label_count", [Pure]> {
  let summary = "number of labels that are not the ignore index";
  let description = [{
    Counts the elements of `labels` that differ from `ignore_index`, as a
    rank-0 float: the divisor of the mean `loom.cross_entropy`. Partitioned
    code all-reduces the counts of blocks of positions to get the global
    divisor of a data-parallel loss.

    ```mlir
    %n = loom.label_count %labels : (tensor<8x128xi64>) -> tensor<f32>
    ```

    Sharding: every dim of `labels` is a reduction factor (a block of
    positions gives a partial count).

    Cost: one FLOP (compare and accumulate) per label; the labels are read
    and the scalar written once.

    Constraints:
    - C1: the result has rank 0.
  }];

  let arguments = (ins Loom_IndexTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $labels attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_LOSS_TD
