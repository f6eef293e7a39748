"""Makes the `loom` package importable without installing it: the package
the build assembled (with the native module) when $LOOM_PYTHON_PACKAGE_DIR
names it, as ctest does, else the sources in python-bindings/."""

import os
import pathlib
import sys

sys.path.insert(0, os.environ.get("LOOM_PYTHON_PACKAGE_DIR") or str(
    pathlib.Path(__file__).resolve().parents[2] / "python-bindings"))
