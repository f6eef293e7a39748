# -*- Python -*-
#===- lit.cfg.py - Loom's lit configuration --------------------------------===#
#
# Tests run the tools this build made (loom-opt, loom-translate, ...) and the
# FileCheck, not and count of LLVM 22, which Debian ships only under
# /usr/lib/llvm-22/bin; the site config points llvm_tools_dir there.
#
#===----------------------------------------------------------------------===#

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Loom"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.loom_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "Unit", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%loom_src_root", config.loom_src_root))
# Emitted programs build against this build tree's runtime libraries.
config.substitutions.append(("%loom_obj_root", config.loom_obj_root))

# Sanitizer settings reach the tools (tools/check.sh --sanitize).
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "ASAN_OPTIONS", "UBSAN_OPTIONS"])
llvm_config.use_default_substitutions()
# `sanitize`: Loom is built with LOOM_SANITIZE. Its shared C API library
# then takes the sanitizer runtime from the executable that loads it, which
# a consumer built outside Loom's tree does not provide.
# `.onnx` input needs a build with libonnx-dev (lib/Target/ONNX).
if config.loom_have_onnx:
    config.available_features.add("onnx")

if config.loom_sanitize:
    config.available_features.add("sanitize")

# Loom's tools first, then LLVM 22's: never an unversioned FileCheck from PATH.
tool_dirs = [config.loom_tools_dir, config.llvm_tools_dir]
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.loom_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["loom-opt", "loom-translate", "loom-model", "loom-run", "loomc",
     "loom-bench", "loom-data", "loom-ckpt", "loom-calibrate"],
    tool_dirs)

# `mpi`: MPI programs run here. `%mpirun` starts one (flags in
# test/CMakeLists.txt); the programs that test the MPI runtime live in the
# build's test/Runtime/MPI.
if config.loom_mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", config.loom_mpirun))
    llvm_config.add_tool_substitutions(
        ["loom-mpi-collectives-test", "loom-mpi-crosscheck"],
        [config.loom_mpi_test_dir])

# `cuda-build`: the CUDA runtime was compiled. Tests that need a GPU to run
# also require `cuda` (a device is visible), and those that run one rank per
# GPU on a mesh of N devices `cuda-gpus-N` (at least N visible devices).
gpus = 0
if config.loom_enable_cuda:
    config.available_features.add("cuda-build")
    import shutil
    import subprocess

    if shutil.which("nvidia-smi"):
        try:
            listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                     text=True, timeout=30)
            if listing.returncode == 0:
                gpus = sum(1 for line in listing.stdout.splitlines()
                           if line.startswith("GPU "))
        except (OSError, subprocess.SubprocessError):
            gpus = 0
    if gpus > 0:
        config.available_features.add("cuda")
    for n in (2, 4, 8):
        if gpus >= n:
            config.available_features.add("cuda-gpus-%d" % n)

# `cuda-run` / `cuda-ranks-N`: emitted CUDA programs run here, N ranks of
# them — on the visible GPUs, or, without a GPU, on the CUDA emulator (its
# 8 emulated devices; docs/Codegen.md). The same test then builds for what
# is here: `%cuda_cmake_flags` configures an emitted program,
# `%cuda_loomc_env` prefixes `loomc --emit cuda`, `%nccl_crosscheck` is the
# NCCL cross-check built for it. `cuda-emulated` says the emulator is used.
nccl_dir = os.path.join(config.loom_obj_root, "test", "Runtime", "NCCL")
if gpus > 0:
    cuda_ranks = gpus
    config.substitutions.append(("%cuda_cmake_flags", ""))
    config.substitutions.append(("%cuda_loomc_env", "env"))
    config.substitutions.append(
        ("%nccl_crosscheck", os.path.join(nccl_dir, "loom-nccl-crosscheck")))
elif config.loom_enable_cuda_emulator:
    cuda_ranks = 8
    config.available_features.add("cuda-emulated")
    config.substitutions.append(
        ("%cuda_cmake_flags", "-DLOOM_CUDA_EMULATOR=ON"))
    config.substitutions.append(("%cuda_loomc_env", "env LOOM_CUDA_EMULATOR=1"))
    config.substitutions.append(
        ("%nccl_crosscheck",
         os.path.join(nccl_dir, "loom-nccl-crosscheck-emulated")))
else:
    cuda_ranks = 0
if cuda_ranks > 0:
    config.available_features.add("cuda-run")
for n in (2, 4, 8):
    if cuda_ranks >= n:
        config.available_features.add("cuda-ranks-%d" % n)
