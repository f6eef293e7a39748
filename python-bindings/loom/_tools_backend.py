#===- _tools_backend.py - Runs compilations through the Loom tools -------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""The fallback backend: when the native module (`loom._loom`, over the C
API) is not built, `loom.compile` and `loom.models` run `loomc` and
`loom-model` of a Loom build ($LOOM_TOOLS_DIR) in a temporary directory.
Both backends take the same `CompileOptions` flags and return the same
texts, so the Python layer above does not know which one ran."""

from __future__ import annotations

import pathlib
import subprocess
import tempfile

from loom.errors import LoomError
from loom.tools import find_tool

NAME = "tools"


def _run(tool: str, args: list, cwd=None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(find_tool(tool)), *map(str, args)],
                            capture_output=True, text=True, check=False,
                            cwd=cwd)
    if result.returncode != 0:
        raise LoomError(result.stderr.strip() or
                        f"{tool} failed (exit {result.returncode})")
    return result


def build_model(family: str, flags: list) -> str:
    """The graph JSON text of a `loom-model` family with its flags."""
    with tempfile.TemporaryDirectory(prefix="loom-") as tmp:
        out = pathlib.Path(tmp) / "model.json"
        _run("loom-model", [family, *flags, "-o", out])
        return out.read_text()


def compile(graph_json: str, flags: list, want_plan: bool,
            want_report: bool) -> tuple:
    """Runs `loomc` on a graph JSON text; returns (ir, plan text or None,
    report text)."""
    with tempfile.TemporaryDirectory(prefix="loom-") as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "graph.json").write_text(graph_json)
        args = ["graph.json", *flags, "-o", "out.mlir"]
        if want_plan:
            args += ["--plan-json", "plan.json"]
        if want_report:
            args += ["--report"]
        result = _run("loomc", args, cwd=tmp)
        plan = (tmp / "plan.json").read_text() if want_plan else None
        return (tmp / "out.mlir").read_text(), plan, result.stdout


def emit(graph_json: str, flags: list, directory: pathlib.Path) -> None:
    """Runs `loomc --emit` into `directory` (sources, build, launch.sh)."""
    with tempfile.TemporaryDirectory(prefix="loom-") as tmp:
        path = pathlib.Path(tmp) / "graph.json"
        path.write_text(graph_json)
        _run("loomc", [path, *flags, "-o", directory])
