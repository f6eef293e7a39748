#!/usr/bin/python3
#===- torch_to_loom.py - Trace a PyTorch module into Loom and parallelize it ===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""A worked example of the `loom` package:

1. trace a small PyTorch `nn.Module` (token embedding, a GELU MLP, an output
   projection and a cross-entropy loss) with `torch.fx`;
2. translate the traced graph into Loom's graph JSON with `loom.Graph`;
3. auto-parallelize it: strategy search on 4 host devices (or `--mesh`),
   and print the plan;
4. run one SGD training step in Loom's interpreter on 1 rank and on 4
   simulated ranks from PyTorch's weights, check they agree, and check
   Loom's loss and updated weights against PyTorch's own step.

    /usr/bin/python3 python-bindings/examples/torch_to_loom.py [--mesh dp=2,tp=2]

Exits non-zero if any check fails. The translator covers the modules and
functions this model uses (Embedding, Linear, LayerNorm, GELU/ReLU/Tanh,
add/mul, view/reshape, cross_entropy); anything else is reported by name.
"""

import argparse
import operator
import sys

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

import loom

VOCAB, HIDDEN, FFN, BATCH, SEQ = 32, 16, 32, 4, 8
LR = 0.1


class TinyLM(nn.Module):
    """Embedding -> LayerNorm -> GELU MLP (residual) -> logits -> loss."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN)
        self.fc1 = nn.Linear(HIDDEN, FFN)
        self.fc2 = nn.Linear(FFN, HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids, labels):
        x = self.wte(input_ids)
        x = x + self.fc2(F.gelu(self.fc1(self.ln(x))))
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))


def to_loom(module: nn.Module, example: dict) -> loom.Graph:
    """Translates `module`'s torch.fx graph into a loom.Graph (f64)."""
    traced = torch.fx.symbolic_trace(module)
    g = loom.Graph()
    params = {}
    for name, p in module.named_parameters():
        params[name] = g.param(name.replace(".", "_"), list(p.shape),
                               dtype="f64", name=name,
                               decay=p.dim() >= 2)
    env = {}

    def arg(a):
        return env[a.name] if isinstance(a, torch.fx.Node) else a

    for node in traced.graph.nodes:
        if node.op == "placeholder":
            env[node.name] = g.input(node.target,
                                     list(example[node.target].shape))
        elif node.op == "call_module":
            sub = traced.get_submodule(node.target)
            x = arg(node.args[0])
            if isinstance(sub, nn.Embedding):
                env[node.name] = g.embedding(params[f"{node.target}.weight"],
                                             x)
            elif isinstance(sub, nn.Linear):
                bias = params.get(f"{node.target}.bias")
                env[node.name] = g.linear(x, params[f"{node.target}.weight"],
                                          bias)
            elif isinstance(sub, nn.LayerNorm):
                env[node.name] = g.layer_norm(
                    x, params[f"{node.target}.weight"],
                    params[f"{node.target}.bias"], eps=sub.eps)
            else:
                raise NotImplementedError(f"module {type(sub).__name__}")
        elif node.op == "call_function":
            args = [arg(a) for a in node.args]
            fn = node.target
            if fn is F.gelu:
                env[node.name] = g.gelu(
                    args[0], node.kwargs.get("approximate", "none"))
            elif fn in (F.relu, torch.relu):
                env[node.name] = g.relu(args[0])
            elif fn is torch.tanh:
                env[node.name] = g.tanh(args[0])
            elif fn in (operator.add, torch.add):
                env[node.name] = g.add(*args)
            elif fn in (operator.mul, torch.mul):
                env[node.name] = g.mul(*args)
            elif fn is F.cross_entropy:
                env[node.name] = g.cross_entropy(
                    *args, ignore_index=node.kwargs.get("ignore_index", -100))
            else:
                raise NotImplementedError(f"function {fn}")
        elif node.op == "call_method" and node.target in ("view", "reshape"):
            x, *shape = [arg(a) for a in node.args]
            env[node.name] = g.reshape(x, shape)
        elif node.op == "output":
            g.loss(arg(node.args[0]))
        else:
            raise NotImplementedError(f"{node.op} {node.target}")
    return g


def max_rel_err(actual, expected) -> float:
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    return float(np.max(np.abs(np.asarray(actual) - expected))) / scale


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mesh", help="a mesh such as dp=2,tp=2 (default: "
                        "search on 4 host devices)")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    model = TinyLM().double()
    gen = torch.Generator().manual_seed(1)
    batch = {"input_ids": torch.randint(0, VOCAB, (BATCH, SEQ), generator=gen),
             "labels": torch.randint(0, VOCAB, (BATCH, SEQ), generator=gen)}

    # 1-2. Trace and translate.
    graph = to_loom(model, batch)
    print(f"traced {len(graph.to_json()['ops'])} Loom ops from "
          f"{type(model).__name__}")

    # 3. Auto-parallelize, with plain SGD so that the update exposes the
    # gradients: new = old - LR * grad.
    sgd = dict(optimizer="sgd", lr=LR, momentum=0.0, weight_decay=0.0)
    where = ({"mesh": args.mesh} if args.mesh else
             {"cluster": "host", "devices": 4})
    compiled = loom.compile(graph, **where, **sgd)
    print(compiled.plan)
    ranks = compiled.plan.mesh.devices

    # 4. One step from PyTorch's weights on 1 rank and on `ranks` ranks.
    weights = {n: p.detach().numpy() for n, p in model.named_parameters()}
    inputs = {**weights, **{k: v.numpy() for k, v in batch.items()}}
    single = loom.run(loom.compile(graph, phase="autodiff", **sgd), inputs)
    parallel = loom.run(compiled, inputs)
    worst = max(max_rel_err(parallel[k], v) for k, v in single.items())
    print(f"{ranks} ranks vs 1 rank: max relative error {worst:.2e}")

    # PyTorch's step on the same weights and batch.
    loss = model(**batch)
    loss.backward()
    torch_loss = float(loss)
    print(f"loss: loom {float(single['loss']):.12f}  torch {torch_loss:.12f}")
    grad_err = 0.0
    for name, p in model.named_parameters():
        expected = (p - LR * p.grad).detach().numpy()
        grad_err = max(grad_err, max_rel_err(single[name], expected))
    print(f"updated weights vs torch SGD: max relative error {grad_err:.2e}")

    ok = (worst <= 1e-10 and abs(float(single["loss"]) - torch_loss)
          <= 1e-10 * abs(torch_loss) and grad_err <= 1e-10)
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
