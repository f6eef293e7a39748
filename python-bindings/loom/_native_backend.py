#===- _native_backend.py - Runs compilations through the C API -----------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""The native backend: one `loom._loom.Session` (the C API's LoomSession)
per call. Same functions and results as `_tools_backend`; importing this
module fails when the native module was not built, which is how
`_backend` picks."""

from __future__ import annotations

import pathlib

import numpy as np

from loom import _loom  # noqa: F401  (ImportError: no native module)
from loom.errors import LoomError

NAME = "native"


def options() -> list:
    """The C API's options as (name, kind, description)."""
    return [tuple(option) for option in _loom.options()]


def _model_options(options: dict) -> str:
    """The `key=value,...` list loomSessionLoadModel takes."""
    for name, value in options.items():
        if "," in str(value) or "=" in str(value):
            raise LoomError(f"model option `{name}`: value `{value}` may not "
                            "contain `,` or `=`")
    return ",".join(f"{k}={v}" for k, v in options.items())


def _session(source: tuple, options: dict) -> "_loom.Session":
    session = _loom.Session()
    kind = source[0]
    # The ONNX import options act when the file is loaded: set first.
    load_options = ("onnx-constants", "onnx-parameters")
    for name in load_options:
        if name in options:
            session.set_option(name, options[name])
    if kind == "model":
        session.load_model(source[1], _model_options(source[2]))
    elif kind == "json":
        session.load_graph_json(source[1], "graph.json")
    elif kind == "onnx":
        session.load_file(source[1])
    else:
        session.load_mlir(source[1], "input.mlir")
    for name, value in options.items():
        if name not in load_options:
            session.set_option(name, value)
    return session


def model_graph_json(family: str, options: dict) -> str:
    # The C API builds models into IR and has no graph JSON export.
    raise LoomError("the C API has no graph JSON export: Model.graph needs "
                    "the Loom tools (LOOM_PYTHON_BACKEND=tools)")


def compile(source: tuple, options: dict, phase: str, want_plan: bool,
            want_report: bool) -> tuple:
    session = _session(source, options)
    session.run_to(phase)
    plan = session.plan_json() if want_plan else None
    return session.ir(), plan, session.report() if want_report else ""


def emit(source: tuple, options: dict, target: str,
         directory: pathlib.Path) -> None:
    _session(source, options).emit(target, str(directory))


def interpret(ir: str, inputs: dict, entry: str, dtype: str, ranks,
              seed: int) -> dict:
    session = _loom.Session()
    session.load_mlir(ir, "program.mlir")
    results = session.interpret({k: np.asarray(v) for k, v in
                                 (inputs or {}).items()}, entry,
                                dtype == "f32", int(ranks or 0), int(seed))
    return dict(results)
