#===- setup.py - Puts the native module into the installed package -------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""setuptools build step of `pip install ./python-bindings`.

The native module `loom._loom` is built by Loom's own CMake build (it links
the C API library of that build). With LOOM_BUILD_DIR naming a configured
Loom build, this step runs `cmake --build $LOOM_BUILD_DIR --target
LoomPythonModule` and ships the module in the package; without it, the
package installs as pure Python and drives the Loom tools
($LOOM_TOOLS_DIR). Metadata lives in pyproject.toml.
"""

import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithNativeModule(build_py):
    def run(self):
        super().run()
        build_dir = os.environ.get("LOOM_BUILD_DIR")
        if not build_dir:
            return
        subprocess.run(["cmake", "--build", build_dir, "--target",
                        "LoomPythonModule"], check=True)
        modules = glob.glob(os.path.join(build_dir, "python", "loom",
                                         "_loom*.so"))
        if not modules:
            raise RuntimeError(f"{build_dir} built no loom._loom (is pybind11 "
                               "installed and the C API part of that build?)")
        target = os.path.join(self.build_lib, "loom")
        os.makedirs(target, exist_ok=True)
        for module in modules:
            shutil.copy2(module, target)


setup(cmdclass={"build_py": BuildWithNativeModule})
