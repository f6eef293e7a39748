#!/usr/bin/env python3
"""Writes a matmul-heavy benchmark for loom-run: a stack of MLP blocks.

    tools/bench/make-mlp-stack.py [--layers 12] [--hidden 768] [--tokens 128]
                                  [--dtype f32] > mlp.mlir

Each block is x + W2(tanh(W1 x)) with GPT-2 small widths (hidden 768, FFN
3072) on batch x seq = 128 tokens. Weights start from `ones` scaled by
1/fan-in, so no input file is needed and values stay in range; the token
activations `x` are a named state (zeros) unless given with --inputs.
Used for the interpreter numbers in docs/Performance.md.
"""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--layers", type=int, default=12)
parser.add_argument("--hidden", type=int, default=768)
parser.add_argument("--tokens", type=int, default=128)
parser.add_argument("--dtype", default="f32")
args = parser.parse_args()

h, f, t, e = args.hidden, 4 * args.hidden, args.tokens, args.dtype
act, hid = f"tensor<{t}x{h}x{e}>", f"tensor<{t}x{f}x{e}>"
params, body = [], []
for i in range(args.layers):
    params.append(f'%w1_{i}: tensor<{h}x{f}x{e}> {{loom.param = #loom.param<'
                  f'"h.{i}.mlp.c_fc.weight", init = ones, decay = true>}}')
    params.append(f'%w2_{i}: tensor<{f}x{h}x{e}> {{loom.param = #loom.param<'
                  f'"h.{i}.mlp.c_proj.weight", init = ones, decay = true>}}')
    prev = "%x" if i == 0 else f"%r{i - 1}"
    body += [
        f"  %a{i} = loom.matmul {prev}, %w1_{i} : ({act}, tensor<{h}x{f}x{e}>) -> {hid}",
        f"  %s{i} = loom.scale %a{i} {{factor = {1.0 / h!r} : f64}} : {hid}",
        f"  %t{i} = loom.tanh %s{i} : {hid}",
        f"  %b{i} = loom.matmul %t{i}, %w2_{i} : ({hid}, tensor<{f}x{h}x{e}>) -> {act}",
        f"  %c{i} = loom.scale %b{i} {{factor = {1.0 / f!r} : f64}} : {act}",
        f"  %r{i} = loom.add {prev}, %c{i} : ({act}, {act}) -> {act}",
    ]
last = f"%r{args.layers - 1}"
print(f'func.func @mlp_stack(%x: {act} {{loom.name = "x"}},')
print("    " + ",\n    ".join(params) + f") -> tensor<{e}> {{")
print("\n".join(body))
print(f"  %l = loom.reduce_mean {last} {{axes = array<i64: 0, 1>}} : ({act}) -> tensor<{e}>")
print(f"  return %l : tensor<{e}>")
print("}")
