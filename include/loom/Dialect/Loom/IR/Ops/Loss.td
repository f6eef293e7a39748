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

    Constraints:
    - C1: `logits` has rank >= 1.
    - C2: the shape of `labels` is that of `logits` without its last dim.
  }];

  let arguments = (ins Loom_FloatTensor:$logits, Loom_IndexTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
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

    Constraints:
    - C1: `logits` has rank >= 1.
    - C2: the shape of `labels` is that of `logits` without its last dim.
    - C3: `dloss` has rank 0.
    - C4: `dloss` has the element type of `logits`.
  }];

  let arguments = (ins Loom_FloatTensor:$logits, Loom_IndexTensor:$labels,
                       Loom_FloatTensor:$dloss,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $dloss attr-dict `:`
    functional-type(operands, results)
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_LOSS_TD
