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

import json
import os
import pathlib

from loom import _backend
from loom.errors import LoomError
from loom.graph import Graph
from loom.plan import Plan

PHASES = ("import", "autodiff", "sharding", "pipeline", "partition",
          "codegen")
# The phases whose run writes a plan (--plan-json belongs to partition).
_PLAN_PHASES = ("partition", "codegen")


def graph_json_text(source) -> str:
    """The graph JSON text of a Graph, a Model, a dict, JSON text or a path
    to a `.json` file."""
    if isinstance(source, Graph):
        return source.dumps()
    if hasattr(source, "graph_json"):  # loom.models.Model
        return source.graph_json
    if isinstance(source, dict):
        return json.dumps(source)
    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and not source.lstrip().startswith("{")):
        path = pathlib.Path(source)
        if not path.is_file():
            raise LoomError(f"cannot read the graph `{path}`: no such file")
        return path.read_text()
    if isinstance(source, str):
        return source
    raise LoomError(f"cannot compile a {type(source).__name__}: expected a "
                    "loom.Graph, a loom.models model, a graph JSON dict or "
                    "text, or a path")


def _mesh_flag(mesh) -> str:
    if isinstance(mesh, dict):
        return ",".join(f"{axis}={size}" for axis, size in mesh.items())
    return str(mesh)


def options_to_flags(phase: str, cluster=None, devices=None, mesh=None,
                     parallel_config=None, strategy=None, memory_limit=None,
                     pipeline_stages=None, micro_batches=None, schedule=None,
                     optimizer=None, lr=None, weight_decay=None, beta1=None,
                     beta2=None, eps=None, momentum=None, clip_norm=None,
                     explain=False) -> list:
    """The `loomc` flags of the keyword options (both backends parse them:
    the C API takes the same option spellings)."""
    if phase not in PHASES:
        raise LoomError(f"unknown phase `{phase}`; expected one of "
                        f"{', '.join(PHASES)}")
    flags = [f"--compile-to={phase}"]
    if isinstance(parallel_config, dict):
        parallel_config = json.dumps(parallel_config)
    for flag, value in (("--cluster", cluster), ("--devices", devices),
                        ("--mesh", None if mesh is None else _mesh_flag(mesh)),
                        ("--parallel-config", parallel_config),
                        ("--strategy", strategy),
                        ("--memory-limit", memory_limit),
                        ("--pipeline-stages", pipeline_stages),
                        ("--micro-batches", micro_batches),
                        ("--schedule", schedule), ("--optimizer", optimizer),
                        ("--lr", lr), ("--weight-decay", weight_decay),
                        ("--beta1", beta1), ("--beta2", beta2),
                        ("--eps", eps), ("--momentum", momentum),
                        ("--clip-norm", clip_norm)):
        if value is not None:
            flags.append(f"{flag}={value}")
    if explain:
        flags.append("--explain")
    return flags


class Compiled:
    """The result of `loom.compile`.

    - `ir`: the IR text after the last phase run;
    - `plan`: a `loom.Plan` (partition and codegen phases), else None;
    - `report`: the readable plan report (when a cluster was given), else "";
    - `entry`: the function to run (`train_step` after autodiff, else
      `forward`);
    - `emit(dir, target="host")`: writes and builds the per-rank programs.
    """

    def __init__(self, graph_json: str, flags: list, phase: str, ir: str,
                 plan: Plan | None, report: str):
        self.graph_json = graph_json
        self.flags = list(flags)
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
        flags = [f for f in self.flags if not f.startswith("--compile-to")]
        _backend.get().emit(self.graph_json,
                            ["--compile-to=codegen", *flags, f"--emit={target}"],
                            directory)
        return directory

    def __repr__(self) -> str:
        return (f"Compiled(phase={self.phase!r}, "
                f"mesh={self.plan.mesh if self.plan else None})")


def compile(source, *, phase: str = "partition", cluster=None, devices=None,
            mesh=None, parallel_config=None, strategy=None,
            memory_limit=None, explain: bool = False, **optimizer) -> Compiled:
    """Compiles a model graph up to `phase`.

    `source`: a `loom.Graph`, a `loom.models` model, a graph JSON dict or
    text, or a path. `cluster`: a preset (`host`, `dgx-a100-80g`, ...) or a
    cluster spec file, which the strategy search needs; `devices`: the device
    count (the search picks the mesh) or `mesh`: `"dp=2,tp=2"` /
    `{"dp": 2, "tp": 2}`; `parallel_config`: a dict or JSON text
    (MindSpore-style, docs/Search.md); `memory_limit`: GiB per device.
    Further keywords: `pipeline_stages`, `micro_batches`, `schedule`,
    `optimizer` ("adamw" | "sgd"), `lr`, `weight_decay`, `beta1`, `beta2`,
    `eps`, `momentum`, `clip_norm`. Raises `LoomError` with Loom's
    diagnostics.
    """
    known = {"pipeline_stages", "micro_batches", "schedule", "optimizer", "lr",
             "weight_decay", "beta1", "beta2", "eps", "momentum", "clip_norm"}
    unknown = sorted(set(optimizer) - known)
    if unknown:
        raise LoomError(f"loom.compile: unknown option(s) {', '.join(unknown)}")
    flags = options_to_flags(phase, cluster, devices, mesh, parallel_config,
                             strategy, memory_limit, explain=explain,
                             **optimizer)
    text = graph_json_text(source)
    want_plan = phase in _PLAN_PHASES
    ir, plan_text, report = _backend.get().compile(
        text, flags, want_plan, want_report=cluster is not None and
        phase not in ("import", "autodiff"))
    plan = Plan.from_json(plan_text) if plan_text else None
    return Compiled(text, flags, phase, ir, plan, report)
