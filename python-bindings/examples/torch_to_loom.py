#!/usr/bin/python3
#===- torch_to_loom.py - Bring a PyTorch GPT into Loom and parallelize it ===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""A worked example of `loom.from_torch` (docs/Frontends.md):

1. write a nanoGPT-style GPT the ordinary PyTorch way (karpathy/nanoGPT's
   model.py: fused c_attn, manual causal attention with a `tril` buffer,
   GELU MLP, LayerNorm, lm_head tied to wte, cross-entropy with
   ignore_index=-1, forward returning (logits, loss));
2. `loom.from_torch(model, (idx, targets), loss=1)`: trace it on an example
   batch and get a `loom.Graph` (attention becomes one causal
   `loom.attention` per layer);
3. auto-parallelize it: strategy search on 4 host devices (or `--mesh`),
   and print the plan;
4. run one AdamW step in Loom's interpreter on 1 rank and on 4 simulated
   ranks from PyTorch's weights, check they agree, and check Loom's loss and
   updated weights against `torch.optim.AdamW`'s own step (nanoGPT's decay
   groups, torch.optim's defaults otherwise).

    /usr/bin/python3 python-bindings/examples/torch_to_loom.py [--mesh ...]

Exits non-zero if any check fails.
"""

import argparse
import inspect
import math
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import loom

VOCAB, BLOCK, LAYERS, HEADS, EMBD, BATCH = 64, 16, 2, 4, 32, 4
LR = 1e-3


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(EMBD, 3 * EMBD)
        self.c_proj = nn.Linear(EMBD, EMBD)
        self.register_buffer("bias", torch.tril(torch.ones(BLOCK, BLOCK))
                             .view(1, 1, BLOCK, BLOCK))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(EMBD, dim=2)
        k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(EMBD)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(EMBD)
        self.mlp = nn.Sequential(nn.Linear(EMBD, 4 * EMBD), nn.GELU(),
                                 nn.Linear(4 * EMBD, EMBD))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, EMBD), wpe=nn.Embedding(BLOCK, EMBD),
            h=nn.ModuleList([Block() for _ in range(LAYERS)]),
            ln_f=nn.LayerNorm(EMBD)))
        self.lm_head = nn.Linear(EMBD, VOCAB, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= BLOCK, f"Cannot forward sequence of length {t}"
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, [-1], :]), None
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)),
                               targets.view(-1), ignore_index=-1)
        return logits, loss


def max_rel_err(actual, expected) -> float:
    expected = np.asarray(expected)
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    return float(np.max(np.abs(np.asarray(actual) - expected))) / scale


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mesh", help="a mesh such as dp=2,tp=2 (default: "
                        "search on 4 host devices)")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    model = GPT().double()
    gen = torch.Generator().manual_seed(1)
    idx = torch.randint(0, VOCAB, (BATCH, BLOCK), generator=gen)
    targets = torch.randint(0, VOCAB, (BATCH, BLOCK), generator=gen)
    targets[0, :4] = -1  # ignored positions

    # 1-2. Trace and translate.
    graph = loom.from_torch(model, (idx, targets), loss=1)
    census = {}
    for op in graph.to_json()["ops"]:
        census[op["op"]] = census.get(op["op"], 0) + 1
    print(f"traced {sum(census.values())} Loom ops from "
          f"{type(model).__name__}: {census.get('attention', 0)} attention, "
          f"{census.get('matmul', 0)} matmul, "
          f"{census.get('layer_norm', 0)} layer_norm")

    # 3. Auto-parallelize with AdamW (torch.optim's defaults but the lr).
    adamw = dict(optimizer="adamw", lr=LR)
    where = ({"mesh": args.mesh} if args.mesh else
             {"cluster": "host", "devices": 4})
    compiled = loom.compile(graph, **where, **adamw)
    print(compiled.plan)
    ranks = compiled.plan.devices

    # 4. One step from PyTorch's weights on 1 rank and on `ranks` ranks;
    # data inputs by the forward's argument names.
    weights = {n: p.detach().numpy().copy()
               for n, p in model.named_parameters()}
    inputs = {**weights, "idx": idx.numpy(), "targets": targets.numpy()}
    single = loom.run(loom.compile(graph, phase="autodiff", **adamw), inputs)
    parallel = loom.run(compiled, inputs)
    worst = max(max_rel_err(parallel[k], v) for k, v in single.items())
    print(f"{ranks} ranks vs 1 rank: max relative error {worst:.2e}")

    # PyTorch's step: nanoGPT's groups (decay on the matrices).
    decay = inspect.signature(torch.optim.AdamW).parameters[
        "weight_decay"].default
    params = dict(model.named_parameters())
    opt = torch.optim.AdamW(
        [{"params": [p for p in params.values() if p.dim() >= 2],
          "weight_decay": decay},
         {"params": [p for p in params.values() if p.dim() < 2],
          "weight_decay": 0.0}], lr=LR)
    _, loss = model(idx, targets)
    loss.backward()
    opt.step()
    torch_loss = float(loss)
    print(f"loss: loom {float(single['loss']):.12f}  torch {torch_loss:.12f}")
    step_err = max(max_rel_err(single[n], p.detach().numpy())
                   for n, p in params.items())
    print(f"updated weights vs torch AdamW: max relative error {step_err:.2e}")

    ok = (worst <= 1e-10 and abs(float(single["loss"]) - torch_loss)
          <= 1e-10 * abs(torch_loss) and step_err <= 1e-9)
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
