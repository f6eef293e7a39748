"""Runs Loom's command-line tools and turns their output into Python values."""

import json
import os
import pathlib
import subprocess

from loom.errors import LoomError


def find_tool(name: str) -> pathlib.Path:
    """Returns the path of Loom tool `name` (e.g. "loom-opt").

    Looks in $LOOM_TOOLS_DIR, then in build/bin of the checkout this package
    sits in. Raises LoomError naming the places it looked.
    """
    candidates = []
    if os.environ.get("LOOM_TOOLS_DIR"):
        candidates.append(pathlib.Path(os.environ["LOOM_TOOLS_DIR"]) / name)
    checkout = pathlib.Path(__file__).resolve().parents[2]
    candidates.append(checkout / "build" / "bin" / name)
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    looked = ", ".join(str(p) for p in candidates)
    raise LoomError(f"cannot find the Loom tool `{name}`; looked in: {looked} "
                    "(build Loom or set LOOM_TOOLS_DIR)")


def find_library(name: str = "libLoomCAPI.so") -> pathlib.Path:
    """Returns the path of Loom's shared library `name`: in the `lib` next to
    $LOOM_TOOLS_DIR, then in build/lib of the checkout this package sits in.
    Raises LoomError naming the places it looked."""
    candidates = []
    if os.environ.get("LOOM_TOOLS_DIR"):
        candidates.append(pathlib.Path(os.environ["LOOM_TOOLS_DIR"]).parent /
                          "lib" / name)
    checkout = pathlib.Path(__file__).resolve().parents[2]
    candidates.append(checkout / "build" / "lib" / name)
    for path in candidates:
        if path.is_file():
            return path
    looked = ", ".join(str(p) for p in candidates)
    raise LoomError(f"cannot find the Loom library `{name}`; looked in: "
                    f"{looked} (build Loom or set LOOM_TOOLS_DIR)")


def _run(tool: str, args: list[str], ir: str) -> str:
    """Runs `tool args...` with `ir` on stdin and returns its stdout."""
    result = subprocess.run([str(find_tool(tool)), *args, "-"], input=ir,
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise LoomError(f"{tool} failed (exit {result.returncode}):\n"
                        f"{result.stderr.strip()}")
    return result.stdout


def run_pipeline(ir: str, pipeline: str) -> str:
    """Runs a pass pipeline over IR text and returns the resulting IR text.

    `pipeline` is a textual pass pipeline as loom-opt takes it, e.g.
    "loom-import-pipeline" or "loom-verify-import{entry=loss}".
    """
    return _run("loom-opt", [f"--pass-pipeline=builtin.module({pipeline})"],
                ir)


def op_census(ir: str) -> dict:
    """Returns the op census of IR text (see loom-translate --op-census)."""
    return json.loads(_run("loom-translate", ["--op-census"], ir))
