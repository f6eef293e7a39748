#===- _backend.py - Picks how the package reaches Loom -------------------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""Chooses the backend once: the native module `loom._loom` (pybind11 over
the C API, built with Loom) when it imports, else the Loom tools
(`_tools_backend`). `LOOM_PYTHON_BACKEND=native|tools` forces one; forcing
`native` without the module is an error rather than a silent fallback."""

import os

from loom.errors import LoomError

_chosen = None


def get():
    """The backend module: `compile`, `build_model`, `emit` and `NAME`."""
    global _chosen
    if _chosen is not None:
        return _chosen
    wanted = os.environ.get("LOOM_PYTHON_BACKEND", "")
    if wanted not in ("", "native", "tools"):
        raise LoomError(f"LOOM_PYTHON_BACKEND must be `native` or `tools`, "
                        f"got `{wanted}`")
    if wanted != "tools":
        try:
            from loom import _native_backend
            _chosen = _native_backend
            return _chosen
        except ImportError as e:
            if wanted == "native":
                raise LoomError(f"the native module loom._loom is not "
                                f"available: {e}") from e
    from loom import _tools_backend
    _chosen = _tools_backend
    return _chosen


def name() -> str:
    """`native` or `tools`: which backend runs compilations."""
    return get().NAME
