#===- _tools_backend.py - Runs compilations through the Loom tools -------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""The fallback backend: when the native module (`loom._loom`, over the C
API) is not built, the package runs `loomc`, `loom-model` and `loom-run` of
a Loom build ($LOOM_TOOLS_DIR, else build/bin of the checkout) in a
temporary directory. Options carry the C API's names, which are the `loomc`
flags without dashes, so both backends take the same dict and return the
same texts; the layer above does not know which one ran. The names and kinds
come from the C API library itself (`options`, through ctypes), which holds
the table `loomc`'s flags are made from."""

from __future__ import annotations

import ctypes
import functools
import pathlib
import subprocess
import tempfile

import numpy as np

from loom import _safetensors
from loom.errors import LoomError
from loom.tools import find_library, find_tool

NAME = "tools"


def _run(tool: str, args: list, cwd=None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(find_tool(tool)), *map(str, args)],
                            capture_output=True, text=True, check=False,
                            cwd=cwd)
    if result.returncode != 0:
        raise LoomError(result.stderr.strip() or
                        f"{tool} failed (exit {result.returncode})")
    return result


@functools.lru_cache(maxsize=None)
def options() -> list:
    """The C API's options as (name, kind, description), read from
    libLoomCAPI.so (loomOptionGetCount and the getters after it)."""
    lib = ctypes.CDLL(str(find_library()))
    lib.loomOptionGetCount.restype = ctypes.c_size_t
    for getter in ("loomOptionGetName", "loomOptionGetDescription"):
        getattr(lib, getter).restype = ctypes.c_char_p
        getattr(lib, getter).argtypes = [ctypes.c_size_t]
    lib.loomOptionGetKind.restype = ctypes.c_int
    lib.loomOptionGetKind.argtypes = [ctypes.c_size_t]
    lib.loomOptionKindGetName.restype = ctypes.c_char_p
    lib.loomOptionKindGetName.argtypes = [ctypes.c_int]
    return [(lib.loomOptionGetName(i).decode(),
             lib.loomOptionKindGetName(lib.loomOptionGetKind(i)).decode(),
             lib.loomOptionGetDescription(i).decode())
            for i in range(lib.loomOptionGetCount())]


def _flags(options: dict) -> list:
    """`--name=value` for each option (a `loom-model` option or a `loomc`
    flag)."""
    return [f"--{name}={value}" for name, value in options.items()]


def _compile_flags(opts: dict, directory: pathlib.Path) -> list:
    """The `loomc` flags of C API options: a switch is the bare flag when
    set, and an option `X-json` that `loomc` lacks (the text of the file
    that option `X` names) is written into `directory` and given as `--X`."""
    kinds = {name: kind for name, kind, _ in options()}
    flags = []
    for name, value in opts.items():
        if kinds.get(name) == "switch":
            flags += [f"--{name}"] if value in ("1", "true") else []
        elif name.endswith("-json") and name[:-len("-json")] in kinds:
            path = directory / f"{name}.json"
            path.write_text(value)
            flags.append(f"--{name[:-len('-json')]}={path}")
        else:
            flags.append(f"--{name}={value}")
    return flags


def _write_source(source: tuple, directory: pathlib.Path) -> pathlib.Path:
    """Writes a ("json" | "mlir", text) or ("model", family, options)
    source into `directory` (an ("onnx", path) is read where it is);
    returns the file loomc reads."""
    kind = source[0]
    if kind == "model":
        path = directory / "model.json"
        _run("loom-model", [source[1], *_flags(source[2]), "-o", path])
        return path
    if kind == "onnx":
        return pathlib.Path(source[1])
    path = directory / ("graph.json" if kind == "json" else "input.mlir")
    path.write_text(source[1])
    return path


def model_graph_json(family: str, options: dict) -> str:
    """The graph JSON text of a `loom-model` family."""
    with tempfile.TemporaryDirectory(prefix="loom-") as tmp:
        return _write_source(("model", family, options),
                             pathlib.Path(tmp)).read_text()


def compile(source: tuple, options: dict, phase: str, want_plan: bool,
            want_report: bool) -> tuple:
    """Runs `loomc --compile-to=phase`; returns (ir, plan text or None,
    report text)."""
    with tempfile.TemporaryDirectory(prefix="loom-") as tmp:
        tmp = pathlib.Path(tmp)
        args = [_write_source(source, tmp), f"--compile-to={phase}",
                *_compile_flags(options, tmp), "-o", tmp / "out.mlir"]
        if want_plan:
            args += ["--plan-json", tmp / "plan.json"]
        if want_report:
            args += ["--report"]
        result = _run("loomc", args, cwd=tmp)
        plan = (tmp / "plan.json").read_text() if want_plan else None
        return (tmp / "out.mlir").read_text(), plan, result.stdout


def emit(source: tuple, options: dict, target: str,
         directory: pathlib.Path) -> None:
    """Runs `loomc --emit` into `directory` (sources, build, launch.sh)."""
    with tempfile.TemporaryDirectory(prefix="loom-") as tmp:
        tmp = pathlib.Path(tmp)
        path = _write_source(source, tmp)
        _run("loomc", [path, "--compile-to=codegen",
                       *_compile_flags(options, tmp),
                       f"--emit={target}", "-o", directory])


def interpret(ir: str, inputs: dict, entry: str, dtype: str, ranks,
              seed: int) -> dict:
    """Runs `loom-run` on IR text; returns the results by name."""
    with tempfile.TemporaryDirectory(prefix="loom-run-") as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "program.mlir").write_text(ir)
        args = [tmp / "program.mlir", "--entry", entry, "--dtype", dtype,
                "--seed", int(seed), "--outputs", tmp / "out.safetensors"]
        if inputs:
            _safetensors.save(tmp / "in.safetensors",
                              {k: np.asarray(v) for k, v in inputs.items()})
            args += ["--inputs", tmp / "in.safetensors"]
        if ranks is not None:
            args += ["--ranks", int(ranks)]
        _run("loom-run", args)
        return _safetensors.load(tmp / "out.safetensors")
