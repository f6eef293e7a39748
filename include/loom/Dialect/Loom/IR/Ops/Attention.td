//===- Attention.td - loom attention ops -------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/Attention.cpp.
//
// Fused scaled-dot-product attention (self- and cross-attention, causal,
// grouped-query heads, additive masks), its flash-style gradient, and rotary
// position embeddings. The sequence factors of these ops are where context
// parallelism (ring attention over the keys, Ulysses by splitting heads
// instead) enters the strategy search.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_ATTENTION_TD
#define LOOM_DIALECT_LOOM_IR_OPS_ATTENTION_TD

//===----------------------------------------------------------------------===//
// Scaled-dot-product attention
//===----------------------------------------------------------------------===//

// The attention ops share their operands' layout, semantics and checks; the
// gradient repeats the forward's constraints under the same numbers.
defvar Loom_AttentionConstraints = [{
    - C1: `query`, `key` and `value` have rank 4.
    - C2: every operand has the element type of `query`.
    - C3: `key` and `value` agree on `B`, `Hkv` and `Skv` (dims 0 to 2).
    - C4: `query` and `key` have the same batch size `B`.
    - C5: `Hkv` is positive and divides `Hq`.
    - C6: `query` and `key` have the same head size `D`.
    - C7: with `causal`, `Sq <= Skv`, so every query attends at least one
      key.
    - C8: `mask` has rank at most 4 and broadcasts to `[B, Hq, Sq, Skv]`:
      aligned at the last dim, each of its dims is 1 or the size it faces.}];

def Loom_AttentionOp : Loom_Op<"attention", [Pure, InferTypeOpAdaptor]> {
  let summary = "fused scaled-dot-product attention";
  let description = !strconcat([{
    Computes `softmax(scale * query @ key^T + mask) @ value` per batch and
    head without materializing the scores:

    - `query` is `[B, Hq, Sq, D]`, `key` `[B, Hkv, Skv, D]`, `value`
      `[B, Hkv, Skv, Dv]`; the result is `[B, Hq, Sq, Dv]` with the element
      type of `query`. `Sq` may differ from `Skv` (cross-attention).
    - Grouped-query attention: `Hkv` divides `Hq`, and query head `h` uses
      key/value head `h / (Hq / Hkv)` (multi-query attention is `Hkv = 1`).
    - `scale` defaults to `1 / sqrt(D)`.
    - `causal`: query `i` attends keys `j <= i + (Skv - Sq)`, the mask
      aligned at the bottom-right corner of the scores as in FlashAttention 2
      (equal to PyTorch's `is_causal` when `Sq = Skv`). It is what a chunk of
      new queries attending a longer key/value cache needs.
    - `mask` (optional) is added to the scaled scores, numpy-broadcast to
      `[B, Hq, Sq, Skv]` (use a large negative value to mask out a key). It
      is data: `loom.attention_grad` gives no gradient for it.

    ```mlir
    %o = loom.attention %q, %k, %v {causal}
        : (tensor<2x32x128x64xbf16>, tensor<2x8x128x64xbf16>,
           tensor<2x8x128x64xbf16>) -> tensor<2x32x128x64xbf16>
    ```

    Sharding: `B` and `Dv` are parallel. The query head dim is the compound
    `(hkv, g)` with `g = Hq / Hkv`, and the key/value head dim is `hkv`, so
    splitting key/value heads splits query heads consistently (splitting `g`
    replicates the key/value heads). When `Sq = Skv` (self-attention), one
    sequence factor spans the queries, keys and values alike and is
    op-partitioned: ring attention rotates key/value blocks between the
    devices of the split and merges the partial softmaxes, each device
    keeping its query block; the mask's key dim is then a factor of its own
    that stays whole. When they differ, `Sq` is parallel and `Skv` is
    op-partitioned (the output, which lacks it, comes out whole). With
    `causal` the sequence factors are globally indexed: a device needs its
    blocks' global offsets. `D` is contracted inside the softmax and needs
    replication. Mask dims carry the factors of the dims they face, none
    where they broadcast.

    Cost: `2 * B * Hq * P * (D + Dv)` FLOPs for the two products, where `P`
    counts the (query, key) pairs attended: `Sq * Skv`, or with `causal`
    only the pairs the mask keeps (`S * (S + 1) / 2` for `Sq = Skv = S`), as
    a block-skipping kernel computes (on local shapes, the block given is
    counted as a whole problem; the schedules of op-partitioned sequence
    splits are the cost model's to price). The softmax adds 5 FLOPs per pair
    (scale, max, subtract, exp, sum), 6 with a mask, and one division per
    output element. Operands are read and the result written once.

    Constraints:
  }], Loom_AttentionConstraints);

  let arguments = (ins Loom_FloatTensor:$query, Loom_FloatTensor:$key,
                       Loom_FloatTensor:$value,
                       Optional<Loom_FloatTensor>:$mask, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Returns `scale`, or `1 / sqrt(D)` when it is absent.
    double getScaleOrDefault();
  }];
}

def Loom_AttentionGradOp : Loom_Op<"attention_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "gradient of fused attention for its query, key and value";
  let description = !strconcat([{
    Given the operands of a `loom.attention` with the same `causal`, `scale`
    and `mask`, its result `out` and the gradient `dout` of the result,
    returns the gradients `(dquery, dkey, dvalue)`, each of its operand's
    type. The softmax is recomputed from `query` and `key` as in
    FlashAttention's backward pass (`out` supplies `rowsum(dout * out)`), so
    the forward keeps no scores. This is the VJP of `loom.attention` for its
    float operands; the mask gets no gradient (masks are data).

    ```mlir
    %dq, %dk, %dv = loom.attention_grad %q, %k, %v, %o, %do {causal}
        : (tensor<2x32x128x64xbf16>, tensor<2x8x128x64xbf16>,
           tensor<2x8x128x64xbf16>, tensor<2x32x128x64xbf16>,
           tensor<2x32x128x64xbf16>)
        -> (tensor<2x32x128x64xbf16>, tensor<2x8x128x64xbf16>,
            tensor<2x8x128x64xbf16>)
    ```

    Sharding: the factors of the forward, with `out` and `dout` mapped like
    its result. `B` and `hkv` are parallel. `g` is a reduction factor:
    `dkey` and `dvalue` lack it and sum over the query heads of a group, so
    a split leaves them partial. With `Sq != Skv`, `Sq` likewise leaves
    `dkey` and `dvalue` partial (a reduction factor) and `Skv` is
    op-partitioned; with `Sq = Skv` the shared sequence factor is
    op-partitioned as in the forward pass (every gradient keeps its block).
    With `causal` the sequence factors are globally indexed. `Dv`
    is a reduction factor too: `dquery` and `dkey` depend on `dout @ value^T`
    and `rowsum(dout * out)`, both sums over `Dv`, and only linearly, so a
    split leaves them partial while `dvalue` is split. `D` needs
    replication.

    Cost: five products over the `P` pairs counted as in the forward,
    three contracting or producing `D` (`query @ key^T`, recomputed;
    `dscores @ key`; `dscores^T @ query`) and two with `Dv`
    (`dout @ value^T`; `probs^T @ dout`): `2 * B * Hq * P * (3 * D + 2 *
    Dv)` FLOPs. Per pair, recomputing the probabilities costs
    6 FLOPs (scale, max, subtract, exp, sum, divide; 7 with a mask) and
    `dscores = scale * probs * (dprobs - rowsum)` 3 more; `rowsum(dout *
    out)` costs 2 per element of `out`. Operands are read and results
    written once.

    Constraints:
  }], Loom_AttentionConstraints, [{
    - C9: `out` and `dout` have the forward's result shape `[B, Hq, Sq, Dv]`.
  }]);

  let arguments = (ins Loom_FloatTensor:$query, Loom_FloatTensor:$key,
                       Loom_FloatTensor:$value, Loom_FloatTensor:$out,
                       Loom_FloatTensor:$dout,
                       Optional<Loom_FloatTensor>:$mask, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Loom_FloatTensor:$dquery, Loom_FloatTensor:$dkey,
                      Loom_FloatTensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $dout (`,` $mask^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Returns `scale`, or `1 / sqrt(D)` when it is absent.
    double getScaleOrDefault();
  }];
}

//===----------------------------------------------------------------------===//
// Rotary position embedding
//===----------------------------------------------------------------------===//

def Loom_RopeOp : Loom_Op<"rope", [Pure, InferTypeOpAdaptor]> {
  let summary = "rotary position embedding (Hugging Face rotate_half form)";
  let description = [{
    Rotates `input` `[B, H, S, D]` by position-dependent angles, in the
    convention of Hugging Face's Llama (`rotate_half`), which pairs element
    `i` with element `i + D/2`:

    ```
    inv_freq[i] = theta ^ (-2i / D)              for i < D/2
    angle[p, :] = cat(p * inv_freq, p * inv_freq)             (length D)
    result = input * cos(angle) + rotate_half(input) * sin(angle)
    rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2])
    ```

    The position `p` of row `s` is `s` (0 to `S - 1`), or `positions[b, s]`
    / `positions[s]` when the integer operand `positions` (`[B, S]` or
    `[S]`) is given (packed sequences, a key/value cache). With `inverse`
    every angle is negated: the rotation is orthogonal, so the inverse is
    the transpose and `rope(dy) {inverse}` (same positions and `theta`) is
    the VJP of `rope` for its input. The result has the type of `input`.

    ```mlir
    %qr = loom.rope %q : (tensor<2x32x128x64xf32>) -> tensor<2x32x128x64xf32>
    %qp = loom.rope %q, %pos {theta = 5.0e+05 : f64}
        : (tensor<2x32x128x64xf32>, tensor<2x128xi64>)
        -> tensor<2x32x128x64xf32>
    ```

    Sharding: `B` and `H` are parallel. `D` needs replication (element `i`
    pairs with `i + D/2`). `S` is parallel; without `positions` it is
    globally indexed, as a device must know the global offset of its rows.

    Constraints:
    - C1: `input` has rank 4.
    - C2: `D` (dim 3 of `input`) is even.
    - C3: `positions` is `[B, S]` or `[S]`, matching `input`.
    - C4: `theta` is positive.
  }];

  let arguments = (ins Loom_FloatTensor:$input,
                       Optional<Loom_IndexTensor>:$positions,
                       DefaultValuedAttr<F64Attr, "10000.0">:$theta,
                       UnitAttr:$inverse);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $positions^)? attr-dict `:` functional-type(operands, results)
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_ATTENTION_TD
