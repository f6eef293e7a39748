//===- Shape.td - loom shape ops ---------------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Included by LoomOps.td. C++ behaviour: lib/Dialect/Loom/IR/Ops/Shape.cpp.
//
// Ops that move elements without computing on them: reshape, transpose,
// slice, pad, concat, split. They accept every Loom element type (tokens and
// masks are reshaped and sliced too). Each op's VJP is another op of this
// family: reshape and transpose invert themselves, slice <-> pad (interior
// padding undoes a stride), concat <-> split.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_OPS_SHAPE_TD
#define LOOM_DIALECT_LOOM_IR_OPS_SHAPE_TD

//===----------------------------------------------------------------------===//
// Reshape and transpose
//===----------------------------------------------------------------------===//

def Loom_ReshapeOp : Loom_Op<"reshape", [Pure]> {
  let summary = "row-major reshape to a declared shape";
  let description = [{
    Reinterprets `input` with the shape of the result type: the elements keep
    their row-major (last dim fastest) order. The result shape cannot be
    inferred, so the assembly names it.

    ```mlir
    // Split the hidden dim into heads.
    %y = loom.reshape %x : tensor<2x128x768xf32> to tensor<2x128x12x64xf32>
    ```

    Constraints:
    - C1: input and result have the same element type.
    - C2: input and result have the same number of elements.

    Sharding rule: both shapes are decomposed into one sequence of factors
    (see `factorizeReshape`), so a split of the hidden dim over an axis is a
    split of the heads dim over the same axis, with no communication.
  }];

  let arguments = (ins Loom_Tensor:$input);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `to` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_TransposeOp : Loom_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permutes the dims of a tensor";
  let description = [{
    Result dim `i` is input dim `permutation[i]` (the convention of
    `stablehlo.transpose`).

    ```mlir
    // [B, S, H, D] -> [B, H, S, D]
    %y = loom.transpose %x {permutation = array<i64: 0, 2, 1, 3>}
        : (tensor<2x128x12x64xf32>) -> tensor<2x12x128x64xf32>
    ```

    Constraints:
    - C1: `permutation` has one entry per input dim.
    - C2: every entry is in `[0, rank)`.
    - C3: no entry repeats (with C1 and C2: a permutation of `[0, rank)`).
  }];

  let arguments = (ins Loom_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Slice and pad
//===----------------------------------------------------------------------===//

def Loom_SliceOp : Loom_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "static strided slice";
  let description = [{
    Takes, in each dim `d`, the indices `starts[d], starts[d] + strides[d],
    ...` below `limits[d]` (as `stablehlo.slice`). Result dim `d` has size
    `ceil((limits[d] - starts[d]) / strides[d])`.

    ```mlir
    // The second half of the hidden dim, every other row.
    %y = loom.slice %x {starts = array<i64: 0, 384>, limits = array<i64: 8, 768>,
                        strides = array<i64: 2, 1>}
        : (tensor<8x768xf32>) -> tensor<4x384xf32>
    ```

    Constraints:
    - C1: `starts`, `limits` and `strides` have one entry per input dim.
    - C2: every stride is >= 1.
    - C3: in every dim, `0 <= start <= limit <= size`.
  }];

  let arguments = (ins Loom_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$strides);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_PadOp : Loom_Op<"pad", [Pure, InferTypeOpAdaptor]> {
  let summary = "pads with zeros at the edges and between elements";
  let description = [{
    Places `input` inside a zero tensor: in each dim `d`, `low[d]` zeros
    before the first element, `interior[d]` zeros between neighbouring
    elements and `high[d]` zeros after the last (as `stablehlo.pad` with a
    zero padding value and no negative padding). Result dim `d` has size
    `low + size + max(size - 1, 0) * interior + high`.

    `pad` is the VJP of `slice`: the gradient of a slice with starts `s`,
    strides `t` is `dy` padded with `low = s`, `interior = t - 1` and the
    rest of the dim as `high`.

    ```mlir
    %y = loom.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>,
                      interior = array<i64: 1, 0>}
        : (tensor<4x8xf32>) -> tensor<7x11xf32>
    ```

    Constraints:
    - C1: `low`, `high` and `interior` have one entry per input dim.
    - C2: every entry is >= 0 (cropping is a `slice`).
    - C3: every result dim size fits in 64 bits.
  }];

  let arguments = (ins Loom_Tensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, DenseI64ArrayAttr:$interior);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Concat and split
//===----------------------------------------------------------------------===//

def Loom_ConcatOp : Loom_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "joins tensors along one dim";
  let description = [{
    Concatenates `inputs`, in order, along dim `axis`; every other dim is
    shared. `split` with the operands' sizes along `axis` is its VJP.

    ```mlir
    %qkv = loom.concat %q, %k, %v {axis = 2 : i64}
        : (tensor<8x128x768xf32>, tensor<8x128x768xf32>, tensor<8x128x768xf32>)
        -> tensor<8x128x2304xf32>
    ```

    Constraints:
    - C1: there is at least one operand.
    - C2: all operands have the same element type.
    - C3: all operands have the same rank.
    - C4: `axis` is in `[0, rank)`.
    - C5: all operands have the same size in every dim but `axis`.
    - C6: the result's size along `axis` fits in 64 bits.
  }];

  let arguments = (ins Variadic<Loom_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_SplitOp : Loom_Op<"split", [Pure, InferTypeOpAdaptor]> {
  let summary = "cuts a tensor into consecutive pieces along one dim";
  let description = [{
    Cuts `input` along dim `axis` into one result per entry of `sizes`:
    result `i` holds the `sizes[i]` indices following those of results
    `0..i-1`. `concat` along `axis` is its VJP.

    ```mlir
    %q, %k, %v = loom.split %qkv {axis = 2 : i64, sizes = array<i64: 768, 768, 768>}
        : (tensor<8x128x2304xf32>)
        -> (tensor<8x128x768xf32>, tensor<8x128x768xf32>, tensor<8x128x768xf32>)
    ```

    Constraints:
    - C1: `axis` is in `[0, rank)`.
    - C2: `sizes` is not empty.
    - C3: every size is >= 0.
    - C4: the sizes add up to the size of dim `axis`.
  }];

  let arguments = (ins Loom_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Loom_Tensor>:$outputs);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_OPS_SHAPE_TD
