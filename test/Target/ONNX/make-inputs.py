#!/usr/bin/python3
"""Writes test/Target/ONNX/Inputs/: small ONNX files for the lit tests.

Run from anywhere: `/usr/bin/python3 test/Target/ONNX/make-inputs.py`. The files are
committed; this script is how they were made (test/python/onnx_writer.py
encodes the protobuf). tiny.onnx and attention*.onnx are well-formed LMs; bad/ holds one file
per class of bad input that import-invalid.test checks.
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
import onnx_writer as w  # noqa: E402

inputs = os.path.join(here, "Inputs")


def write(name, data):
    with open(os.path.join(inputs, name), "wb") as f:
        f.write(data)


tiny = w.tiny_lm()
write("tiny.onnx", tiny)
# One attention layer with the causal mask, and with a band mask (kept as
# the additive mask operand).
write("attention.onnx", w.attention_lm())
write("attention-band.onnx", w.attention_lm(band=2))
# Every unsupported node at once: two operators Loom has no mapping for.
write("bad/unsupported-ops.onnx", w.tiny_lm(ops=[
    ("CumSum", []), ("HardSwish", []), ("Relu", [])]))
# A file cut in the middle of its graph.
write("bad/truncated.onnx", tiny[:len(tiny) // 2])
# Not protobuf at all.
write("bad/garbage.onnx", b"this is not an onnx model\n" * 4)
# The LayerNorm's scale and bias are [5], but the embedding gives rows of
# 4: an initializer whose shape disagrees with its use.
write("bad/shape-mismatch.onnx", w.tiny_lm(dim=4, ln_dim=5))
# The table's dims say [11, 5] (55 elements), its data holds 11 x 4.
write("bad/data-count.onnx", w.tiny_lm(wte_dims=(11, 5)))
# A symbolic batch dim (torch.onnx.export with dynamic_axes).
write("bad/dynamic-shape.onnx", w.tiny_lm(ids_shape=["batch", 3]))
