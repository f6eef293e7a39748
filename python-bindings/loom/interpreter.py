#===- interpreter.py - loom.run: the reference interpreter ---------------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""`loom.run` executes a program in Loom's reference interpreter
(docs/Interpreter.md) with numpy arrays in and out. Inputs and outputs are
*global* tensors, so a partitioned program over simulated ranks and the
single-device program compare directly. Inputs find their argument by name
(`loom.name`, the parameter's ecosystem name, the input role); parameters
left out start from their initializers, drawn with `seed`."""

from __future__ import annotations

import pathlib

from loom import _backend
from loom.errors import LoomError


def _program_text(program) -> tuple:
    """(IR text, default entry) of a Compiled, a Graph/Model, IR text or a
    path."""
    from loom.compiler import Compiled, compile as loom_compile
    from loom.graph import Graph
    from loom.models import Model
    if isinstance(program, (Graph, Model)) or (
            isinstance(program, (str, pathlib.Path))
            and str(program).endswith(".onnx")):
        program = loom_compile(program, phase="import")
    if isinstance(program, Compiled):
        return program.ir, program.entry
    if isinstance(program, pathlib.Path) or (
            isinstance(program, str) and "func.func" not in program):
        path = pathlib.Path(program)
        if not path.is_file():
            raise LoomError(f"cannot read the program `{path}`: no such file")
        return path.read_text(), None
    if isinstance(program, str):
        return program, None
    raise LoomError(f"cannot run a {type(program).__name__}: expected a "
                    "loom.Compiled, a loom.Graph, IR text or a path")


def run(program, inputs: dict | None = None, *, entry: str | None = None,
        ranks: int | None = None, dtype: str = "f64",
        seed: int = 0) -> dict:
    """Runs `entry` of `program` and returns its results by name (`loss`,
    the updated parameters by their names, optimizer states, ...).

    `program`: a `loom.Compiled` (entry defaults to its `train_step` or
    `forward`), a `loom.Graph` or model (its forward), IR text or a path.
    `inputs`: name -> numpy array (global shapes): parameters by their
    ecosystem names, data inputs by role (for a `loom.Graph`, and a
    `Compiled` of one, by tensor name too). `ranks`: simulated ranks
    of an SPMD program (default: the mesh's device count). `dtype`: the
    precision of the run, "f64" or "f32".
    """
    from loom.compiler import Compiled
    from loom.graph import Graph
    roles = {}
    if isinstance(program, Graph):
        roles = program.input_roles()
    elif isinstance(program, Compiled) and program.source[0] == "json":
        roles = Graph.from_json(program.source[1]).input_roles()
    if roles and inputs:
        # The interpreter knows data inputs by role; a graph's user knows
        # them by tensor name (`loom.from_torch`: the forward's argument
        # names).
        inputs = {roles.get(k, k): v for k, v in inputs.items()}
    text, default_entry = _program_text(program)
    entry = entry or default_entry
    if entry is None:
        raise LoomError("loom.run: give entry= (the function to run)")
    if dtype not in ("f64", "f32"):
        raise LoomError(f"loom.run: dtype must be f64 or f32, got {dtype}")
    return _backend.get().interpret(text, inputs or {}, entry, dtype, ranks,
                                    seed)
