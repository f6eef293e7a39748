"""A minimal ONNX writer for tests: encodes ModelProto by hand.

The bad-input corpus needs ONNX files that no exporter writes (an
unsupported operator, an initializer whose shape disagrees with its use,
data that disagrees with its dims, dynamic shapes), and Debian has no
`onnx` Python package, so the protobuf wire format is written here directly
from onnx.proto's field numbers (varints, length-delimited fields). Only
what the tests use is covered.
"""

import struct

import numpy as np

FLOAT, INT64, BOOL, DOUBLE = 1, 7, 9, 11
_NUMPY = {FLOAT: np.float32, INT64: np.int64, BOOL: np.bool_,
          DOUBLE: np.float64}


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, n: int) -> bytes:
    return _key(field, 0) + _varint(n)


def _bytes(field: int, data) -> bytes:
    if isinstance(data, str):
        data = data.encode()
    return _key(field, 2) + _varint(len(data)) + data


def tensor(name: str, array, dtype: int = DOUBLE, dims=None) -> bytes:
    """TensorProto with raw data; `dims` may disagree with the data."""
    array = np.asarray(array, dtype=_NUMPY[dtype])
    dims = array.shape if dims is None else dims
    out = b"".join(_int(1, d) for d in dims) + _int(2, dtype)
    return out + _bytes(8, name) + _bytes(9, array.tobytes())


def attr_int(name: str, value: int) -> bytes:
    return _bytes(1, name) + _int(3, value) + _int(20, 2)


def attr_float(name: str, value: float) -> bytes:
    return (_bytes(1, name) + _key(2, 5) + struct.pack("<f", value)
            + _int(20, 1))


def attr_ints(name: str, values) -> bytes:
    return _bytes(1, name) + b"".join(_int(8, v) for v in values) + \
        _int(20, 7)


def attr_string(name: str, value: str) -> bytes:
    return _bytes(1, name) + _bytes(4, value) + _int(20, 3)


def attr_tensor(name: str, value: bytes) -> bytes:
    return _bytes(1, name) + _bytes(5, value) + _int(20, 4)


def node(op_type: str, inputs, outputs, name: str = "", attrs=()) -> bytes:
    out = b"".join(_bytes(1, i) for i in inputs)
    out += b"".join(_bytes(2, o) for o in outputs)
    out += _bytes(3, name or f"/{op_type}") + _bytes(4, op_type)
    return out + b"".join(_bytes(5, a) for a in attrs)


def value_info(name: str, dtype: int, shape) -> bytes:
    """`shape` entries are ints or strings (a symbolic dim)."""
    dims = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str)
                           else _int(1, d)) for d in shape)
    tensor_type = _int(1, dtype) + _bytes(2, dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def model(nodes, inputs, outputs, initializers=(), opset: int = 17) -> bytes:
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, "g")
    graph += b"".join(_bytes(5, t) for t in initializers)
    graph += b"".join(_bytes(11, i) for i in inputs)
    graph += b"".join(_bytes(12, o) for o in outputs)
    opset_id = _bytes(1, "") + _int(2, opset)
    return _int(1, 8) + _bytes(2, "loom-test") + _bytes(7, graph) + \
        _bytes(8, opset_id)


def tiny_lm(vocab=11, dim=4, batch=2, seq=3, wte_dims=None, ops=(),
            ln_dim=None, ids_shape=None):
    """A tiny LM: embedding, LayerNorm, tied head (Transpose + MatMul),
    cross-entropy; `ops` inserts nodes (x -> x) before the norm; `wte_dims`
    declares other dims than the data's, `ln_dim` another norm size,
    `ids_shape` another (e.g. symbolic) ids shape."""
    rng = np.random.default_rng(0)
    wte = rng.normal(size=(vocab, dim))
    ln_dim = dim if ln_dim is None else ln_dim
    nodes = [node("Gather", ["wte", "ids"], ["x0"], "/wte/Gather")]
    x = "x0"
    for i, (op_type, attrs) in enumerate(ops):
        nodes.append(node(op_type, [x], [f"e{i}"], f"/extra/{op_type}_{i}",
                          attrs))
        x = f"e{i}"
    nodes += [
        node("LayerNormalization", [x, "ln.weight", "ln.bias"], ["h"],
             "/ln/LayerNormalization",
             [attr_int("axis", -1), attr_float("epsilon", 1e-5)]),
        node("Transpose", ["wte"], ["wteT"], "/head/Transpose",
             [attr_ints("perm", [1, 0])]),
        node("MatMul", ["h", "wteT"], ["logits"], "/head/MatMul"),
        node("Constant", [], ["flat"], "/Constant",
             [attr_tensor("value", tensor("", [-1, vocab], INT64))]),
        node("Reshape", ["logits", "flat"], ["logits2"], "/Reshape"),
        node("Constant", [], ["flat1"], "/Constant_1",
             [attr_tensor("value", tensor("", [-1], INT64))]),
        node("Reshape", ["labels", "flat1"], ["labels1"], "/Reshape_1"),
        node("SoftmaxCrossEntropyLoss", ["logits2", "labels1"], ["loss"],
             "/SoftmaxCrossEntropyLoss",
             [attr_string("reduction", "mean"),
              attr_int("ignore_index", -1)]),
    ]
    inits = [tensor("wte", wte, dims=wte_dims),
             tensor("ln.weight", np.ones(ln_dim)),
             tensor("ln.bias", np.zeros(ln_dim))]
    inputs = [value_info("ids", INT64, ids_shape or [batch, seq]),
              value_info("labels", INT64, [batch, seq])]
    return model(nodes, inputs, [value_info("loss", DOUBLE, [])], inits)


def attention_lm(vocab=11, dim=8, heads=2, batch=2, seq=4, band=None):
    """One attention layer written as torch.onnx.export spells nanoGPT's:
    q/k/v projections (Transpose(W) -> MatMul), head reshape + Transpose,
    keys transposed to [B, H, D, S], scores * 1/sqrt(D), Where(mask, -inf,
    scores) with a constant mask (the causal triangle, or a band of width
    `band`), Softmax, @ v, heads merged, output projection, tied head."""
    rng = np.random.default_rng(1)
    hd = dim // heads
    i, j = np.indices((seq, seq))
    masked = j > i if band is None else (j > i) | (i - j >= band)
    nodes = [node("Gather", ["wte", "ids"], ["x"], "/wte/Gather")]
    inits = [tensor("wte", rng.normal(size=(vocab, dim)))]

    def const(name, array, dtype=INT64):
        nodes.append(node("Constant", [], [name], f"/{name}",
                          [attr_tensor("value", tensor("", array, dtype))]))

    const("heads_shape", [batch, seq, heads, hd])
    const("merged_shape", [batch, seq, dim])
    const("scale", 1 / np.sqrt(hd), DOUBLE)
    const("neg_inf", -np.inf, DOUBLE)
    const("mask", masked, BOOL)
    for p, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]),
                    ("v", [0, 2, 1, 3])):
        inits.append(tensor(f"attn.{p}.weight", rng.normal(size=(dim, dim))))
        nodes += [
            node("Transpose", [f"attn.{p}.weight"], [f"{p}_wT"],
                 f"/attn/{p}/Transpose", [attr_ints("perm", [1, 0])]),
            node("MatMul", ["x", f"{p}_wT"], [f"{p}_flat"],
                 f"/attn/{p}/MatMul"),
            node("Reshape", [f"{p}_flat", "heads_shape"], [f"{p}_heads"],
                 f"/attn/{p}/Reshape"),
            node("Transpose", [f"{p}_heads"], [p], f"/attn/{p}/Transpose_1",
                 [attr_ints("perm", perm)])]
    inits.append(tensor("attn.o.weight", rng.normal(size=(dim, dim))))
    nodes += [
        node("MatMul", ["q", "k"], ["scores"], "/attn/MatMul"),
        node("Mul", ["scores", "scale"], ["scaled"], "/attn/Mul"),
        node("Where", ["mask", "neg_inf", "scaled"], ["masked"], "/attn/Where"),
        node("Softmax", ["masked"], ["probs"], "/attn/Softmax",
             [attr_int("axis", -1)]),
        node("MatMul", ["probs", "v"], ["y_heads"], "/attn/MatMul_1"),
        node("Transpose", ["y_heads"], ["y_t"], "/attn/Transpose",
             [attr_ints("perm", [0, 2, 1, 3])]),
        node("Reshape", ["y_t", "merged_shape"], ["y"], "/attn/Reshape"),
        node("Transpose", ["attn.o.weight"], ["o_wT"], "/attn/o/Transpose",
             [attr_ints("perm", [1, 0])]),
        node("MatMul", ["y", "o_wT"], ["h"], "/attn/o/MatMul"),
        node("Transpose", ["wte"], ["wteT"], "/head/Transpose",
             [attr_ints("perm", [1, 0])]),
        node("MatMul", ["h", "wteT"], ["logits"], "/head/MatMul"),
        node("Transpose", ["logits"], ["logits_t"], "/head/Transpose_1",
             [attr_ints("perm", [0, 2, 1])]),
        node("SoftmaxCrossEntropyLoss", ["logits_t", "labels"], ["loss"],
             "/SoftmaxCrossEntropyLoss", [attr_string("reduction", "mean")]),
    ]
    inputs = [value_info("ids", INT64, [batch, seq]),
              value_info("labels", INT64, [batch, seq])]
    return model(nodes, inputs, [value_info("loss", DOUBLE, [])], inits)
