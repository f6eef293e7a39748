#!/usr/bin/env python3
# ===- gen-gpt-graph.py - Write a GPT-2/3-style graph as graph JSON --------===#
#
# Part of the Loom project.
#
# ===-----------------------------------------------------------------------===#
#
# Writes the forward graph of a pre-LayerNorm GPT (GPT-2 / GPT-3 layout:
# learned position embeddings, fused QKV projection, causal attention, tanh
# GELU MLP, tied LM head, mean cross-entropy) as graph JSON
# (docs/GraphFormat.md), for the importer's scale test and its lit test. It
# uses only the standard library, so it runs wherever the tests do; the
# model builders of `loom-model` are the supported way to make real models.
#
#   gen-gpt-graph.py --preset gpt3-175b -o gpt3.json     # 96 layers
#   gen-gpt-graph.py --layers 2 --hidden 16 --heads 2 --ffn 64 --vocab 32 \
#                    --seq 8 --batch 2 -o tiny.json
#
# ===-----------------------------------------------------------------------===#

import argparse
import json
import sys

PRESETS = {
    # GPT-3 paper, table 2.1: 96 layers, d_model 12288, 96 heads, context 2048.
    "gpt3-175b": dict(layers=96, hidden=12288, heads=96, ffn=4 * 12288,
                      vocab=50257, seq=2048, batch=1),
    "gpt2-small": dict(layers=12, hidden=768, heads=12, ffn=3072,
                       vocab=50257, seq=1024, batch=8),
}


class Graph:
    def __init__(self):
        self.tensors, self.parameters, self.inputs, self.ops = [], [], [], []

    def tensor(self, name, shape, dtype="f32"):
        self.tensors.append({"name": name, "shape": list(shape), "dtype": dtype})
        return name

    def param(self, name, shape, init, decay):
        self.parameters.append({"tensor": name, "name": name, "init": init,
                                "decay": decay})
        return self.tensor(name, shape)

    def op(self, op, operands, result, shape, dtype="f32", **attributes):
        entry = {"op": op, "operands": operands, "results": [result]}
        if attributes:
            entry["attributes"] = attributes
        self.ops.append(entry)
        return self.tensor(result, shape, dtype)


def build(layers, hidden, heads, ffn, vocab, seq, batch):
    g = Graph()
    head = hidden // heads
    std = {"kind": "normal", "std": 0.02}
    # GPT-2 scales the residual projections by 1/sqrt(2 * n_layer).
    resid = {"kind": "scaled_normal", "std": 0.02, "factor": 2 * layers}
    ones, zeros = {"kind": "ones"}, {"kind": "zeros"}
    B, S, H = batch, seq, hidden

    ids = g.tensor("input_ids", [B, S], "i64")
    labels = g.tensor("labels", [B, S], "i64")
    g.inputs += [{"tensor": ids, "role": "input_ids"},
                 {"tensor": labels, "role": "labels"}]
    wte = g.param("transformer.wte.weight", [vocab, H], std, True)
    wpe = g.param("transformer.wpe.weight", [S, H], std, True)
    g.ops.append({"op": "constant", "results": ["positions"],
                  "attributes": {"value": list(range(S))}})
    pos = g.tensor("positions", [S], "i64")
    tok = g.op("embedding", [wte, ids], "tok_emb", [B, S, H])
    pe = g.op("embedding", [wpe, pos], "pos_emb", [S, H])
    x = g.op("add", [tok, pe], "h0.in", [B, S, H])

    def linear(name, x, shape_in, n_in, n_out, init):
        w = g.param(f"{name}.weight", [n_in, n_out], init, True)
        b = g.param(f"{name}.bias", [n_out], zeros, False)
        y = g.op("matmul", [x, w], f"{name}.mm", shape_in + [n_out])
        return g.op("add", [y, b], f"{name}.out", shape_in + [n_out])

    def layer_norm(name, x):
        w = g.param(f"{name}.weight", [H], ones, False)
        b = g.param(f"{name}.bias", [H], zeros, False)
        return g.op("layer_norm", [x, w, b], f"{name}.out", [B, S, H])

    for i in range(layers):
        p = f"transformer.h.{i}"
        h = layer_norm(f"{p}.ln_1", x)
        qkv = linear(f"{p}.attn.c_attn", h, [B, S], H, 3 * H, std)
        q, k, v = f"{p}.q", f"{p}.k", f"{p}.v"
        g.ops.append({"op": "split", "operands": [qkv], "results": [q, k, v],
                      "attributes": {"axis": 2, "sizes": [H, H, H]}})
        heads_t = []
        for t in (q, k, v):
            g.tensor(t, [B, S, H])
            r = g.op("reshape", [t], f"{t}.heads", [B, S, heads, head])
            heads_t.append(g.op("transpose", [r], f"{t}.bhsd",
                                [B, heads, S, head],
                                permutation=[0, 2, 1, 3]))
        a = g.op("attention", heads_t, f"{p}.attn.out", [B, heads, S, head],
                 causal=True)
        a = g.op("transpose", [a], f"{p}.attn.bshd", [B, S, heads, head],
                 permutation=[0, 2, 1, 3])
        a = g.op("reshape", [a], f"{p}.attn.merged", [B, S, H])
        a = linear(f"{p}.attn.c_proj", a, [B, S], H, H, resid)
        x = g.op("add", [x, a], f"{p}.resid_attn", [B, S, H])
        h = layer_norm(f"{p}.ln_2", x)
        f = linear(f"{p}.mlp.c_fc", h, [B, S], H, ffn, std)
        f = g.op("gelu", [f], f"{p}.mlp.gelu", [B, S, ffn], approximate="tanh")
        f = linear(f"{p}.mlp.c_proj", f, [B, S], ffn, H, resid)
        x = g.op("add", [x, f], f"{p}.resid_mlp", [B, S, H])

    x = layer_norm("transformer.ln_f", x)
    logits = g.op("matmul", [x, wte], "logits", [B, S, vocab],
                  transpose_rhs=True)
    loss = g.op("cross_entropy", [logits, labels], "loss", [])
    return {"format": "loom-graph", "version": 1, "tensors": g.tensors,
            "parameters": g.parameters, "inputs": g.inputs, "ops": g.ops,
            "outputs": [loss]}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--preset", choices=sorted(PRESETS))
    for key in ("layers", "hidden", "heads", "ffn", "vocab", "seq", "batch"):
        parser.add_argument(f"--{key}", type=int)
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args()
    config = dict(PRESETS[args.preset]) if args.preset else {}
    for key in ("layers", "hidden", "heads", "ffn", "vocab", "seq", "batch"):
        if getattr(args, key) is not None:
            config[key] = getattr(args, key)
    missing = [k for k in ("layers", "hidden", "heads", "ffn", "vocab", "seq",
                           "batch") if k not in config]
    if missing:
        parser.error("missing --" + ", --".join(missing) + " (or --preset)")
    graph = build(**config)
    text = json.dumps(graph, separators=(",", ":")) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
