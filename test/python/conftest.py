"""Makes the in-tree `loom` package importable without installing it."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]
                       / "python-bindings"))
