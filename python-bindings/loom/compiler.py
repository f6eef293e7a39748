#===- compiler.py - loom.compile and the compiled program ----------------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""`loom.compile`: runs Loom's phases (DESIGN.md §1) on a graph and returns a
`Compiled` with the IR text, the plan and the report. Keyword arguments are
the `loomc` options of DESIGN.md §8 in Python spelling; the backend
(`loom._backend`) runs them through the C API or, without the native module,
through `loomc`."""

from __future__ import annotations

import functools
import json
import os
import pathlib

from loom import _backend
from loom.errors import LoomError
from loom.graph import Graph
from loom.plan import Plan

# `codegen` is `Compiled.emit`.
PHASES = ("import", "autodiff", "sharding", "pipeline", "partition")


@functools.lru_cache(maxsize=None)
def options() -> dict:
    """The keyword options of `loom.compile`: Python name -> (C API name,
    kind, description), read once from the Loom library's option table
    (the one `loomc`'s flags come from; the C API's names are the flags
    without dashes, Python's have `_` for `-`)."""
    return {name.replace("-", "_"): (name, kind, description)
            for name, kind, description in _backend.get().options()}


def source_of(source) -> tuple:
    """What a backend loads: ("json", text), ("mlir", text), ("onnx",
    path) or ("model", family, options), from a Graph, a Model, a dict, JSON
    or IR text, or a path to a `.json` / `.mlir` / `.onnx` file."""
    if isinstance(source, Graph):
        return ("json", source.dumps())
    if hasattr(source, "family") and hasattr(source, "options"):
        return ("model", source.family, source.model_options())
    if isinstance(source, dict):
        return ("json", json.dumps(source))
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return ("json", source)
    if isinstance(source, str) and ("func.func" in source or
                                    "module" in source.split("\n", 1)[0]):
        return ("mlir", source)
    if isinstance(source, (str, os.PathLike)):
        path = pathlib.Path(source)
        if not path.is_file():
            raise LoomError(f"cannot read the graph `{path}`: no such file")
        if path.suffix == ".onnx":
            # Binary: the backend's loader reads the file itself.
            return ("onnx", str(path.resolve()))
        return ("mlir" if path.suffix == ".mlir" else "json",
                path.read_text())
    raise LoomError(f"cannot compile a {type(source).__name__}: expected a "
                    "loom.Graph, a loom.models model, a graph JSON dict or "
                    "text, IR text, or a path")


def collect_options(**kwargs) -> dict:
    """The C API options (name -> text) of `loom.compile`'s keywords."""
    known = options()
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        raise LoomError(f"loom.compile: unknown option(s) "
                        f"{', '.join(unknown)}; expected {', '.join(known)}")
    texts = {}
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        if key == "mesh" and isinstance(value, dict):
            value = ",".join(f"{a}={n}" for a, n in value.items())
        elif key == "parallel_config" and isinstance(value, dict):
            value = json.dumps(value)
        elif key == "strategy" and isinstance(value, dict):
            raise LoomError("loom.compile: strategy= takes a strategy file "
                            "path")
        elif value is True:
            value = 1
        texts[known[key][0]] = str(value)
    return texts


class Compiled:
    """The result of `loom.compile`.

    - `ir`: the IR text after the last phase run;
    - `plan`: a `loom.Plan` (after the partition phase), else None;
    - `report`: the readable plan report (when a cluster was given), else "";
    - `entry`: the function to run (`train_step` after autodiff, else
      `forward`);
    - `emit(dir, target="host")`: writes and builds the per-rank programs.
    """

    def __init__(self, source: tuple, options: dict, phase: str, ir: str,
                 plan: Plan | None, report: str):
        self.source = source
        self.options = dict(options)
        self.phase = phase
        self.ir = ir
        self.plan = plan
        self.report = report

    @property
    def entry(self) -> str:
        return "forward" if self.phase == "import" else "train_step"

    def emit(self, directory, target: str = "host") -> pathlib.Path:
        """Emits the per-rank `target` ("host" or "cuda") programs into
        `directory`, builds them and writes `launch.sh` (docs/Codegen.md);
        returns the directory."""
        if target not in ("host", "cuda"):
            raise LoomError(f"unknown target `{target}`; expected host or "
                            "cuda")
        directory = pathlib.Path(directory)
        _backend.get().emit(self.source, self.options, target, directory)
        return directory

    def __repr__(self) -> str:
        return (f"Compiled(phase={self.phase!r}, "
                f"mesh={self.plan.mesh if self.plan else None})")


def compile(source, *, phase: str = "partition", **kwargs) -> Compiled:
    """Compiles a model graph up to `phase` (import, autodiff, sharding,
    pipeline, partition; code generation is `Compiled.emit`).

    `source`: a `loom.Graph`, a `loom.models` model, a graph JSON dict or
    text, IR text, or a path (`.json`, `.mlir`, `.onnx`). Options (the
    `loomc` flags, DESIGN.md §8): `cluster`: a preset (`host`,
    `dgx-a100-80g`, ...) or a cluster spec file, which the strategy search
    needs; `devices`: the device count (the search
    picks the mesh) or `mesh`: `"dp=2,tp=2"` / `{"dp": 2, "tp": 2}`;
    `parallel_config`: a dict or JSON text (MindSpore-style, docs/Search.md);
    `strategy`: a strategy file; `memory_limit`: GiB per device;
    `pipeline_stages`, `micro_batches`, `schedule`; `optimizer` ("adamw" |
    "sgd"), `lr`, `weight_decay` (unset: torch.optim's default for the
    optimizer, 0 for SGD and 0.01 for AdamW), `beta1`, `beta2`, `eps`, `momentum`,
    `clip_norm`; `explain`; the rest that `loom.compiler.options()` lists
    (the library's option table). Raises `LoomError` with Loom's
    diagnostics.
    """
    if phase not in PHASES:
        raise LoomError(f"unknown phase `{phase}`; expected one of "
                        f"{', '.join(PHASES)} (code generation is "
                        "Compiled.emit)")
    opts = collect_options(**kwargs)
    src = source_of(source)
    ir, plan_text, report = _backend.get().compile(
        src, opts, phase, want_plan=phase == "partition",
        want_report=("cluster" in opts or "cluster-json" in opts) and
        phase not in ("import", "autodiff"))
    plan = Plan.from_json(plan_text) if plan_text else None
    return Compiled(src, opts, phase, ir, plan, report)
