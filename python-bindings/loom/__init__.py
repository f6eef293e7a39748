"""Loom: an MLIR compiler that auto-parallelizes Transformer training.

This package drives a Loom build from Python; see python-bindings/README.md.
"""

from loom.tools import LoomError, find_tool, op_census, run_pipeline

__all__ = ["LoomError", "find_tool", "op_census", "run_pipeline"]
__version__ = "0.1.0"
