#===- __init__.py - The loom package -------------------------------------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""Loom: an MLIR compiler that auto-parallelizes Transformer training.

    import loom
    model = loom.models.gpt2(layers=2, hidden=64, heads=4, vocab=128, seq=16)
    c = loom.compile(model, cluster="host", devices=4)
    print(c.plan.mesh, c.plan.predicted.step_time_s)
    out = loom.run(c, {"input_ids": ids, "labels": labels})
    r = loom.train(c.emit("prog"), data="tokens.bin", steps=100,
                   lr_schedule="cosine", warmup_steps=10, metrics="m.jsonl")

    graph = loom.from_torch(gpt, (idx, targets), loss=1)   # a PyTorch model

See docs/Embedding.md, docs/Frontends.md ("Python") and python-bindings/README.md.
"""

from loom import models
from loom._backend import name as backend
from loom.compiler import Compiled, compile
from loom.errors import LoomError
from loom.graph import Graph, Tensor
from loom.interpreter import run
from loom.plan import Collective, Layout, Mesh, Pipeline, Plan, Predicted
from loom.tools import find_tool, op_census, run_pipeline
from loom.trainer import TrainResult, train


def from_torch(module, example_args=(), example_kwargs=None, loss=None):
    """A PyTorch module's loss as a `loom.Graph`, traced on example inputs
    (`loom.frontends.torch.from_torch`, docs/Frontends.md); imports PyTorch
    only when called."""
    from loom.frontends.torch import from_torch as trace
    return trace(module, example_args, example_kwargs, loss)


__all__ = ["Collective", "Compiled", "Graph", "Layout", "LoomError", "Mesh",
           "Pipeline", "Plan", "Predicted", "Tensor", "backend", "compile", "find_tool",
           "from_torch", "models", "op_census", "run", "run_pipeline",
           "train", "TrainResult"]
__version__ = "0.1.0"
