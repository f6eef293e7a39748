#!/usr/bin/env bash
#===- tools/install-deps.sh - Install Loom's build and test dependencies --===#
#
# Installs, with apt, every Debian package Loom needs to build and test, and
# only the ones that are missing, so running it twice is cheap. Called by
# tools/check.sh and tools/quickstart.sh; safe to run by hand.
#
# Needs root (or sudo) on Debian 12. Set LOOM_SKIP_APT=1 to skip it entirely
# on a machine whose packages are managed some other way.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

LOOM_APT_PACKAGES=(
  # Toolchain: MLIR/LLVM 22 from Debian, built with clang-22 + lld-22.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  cmake ninja-build ccache
  # Libraries the compiler and runtimes use.
  nlohmann-json3-dev libopenblas-dev libopenmpi-dev openmpi-bin
  # ONNX import (lib/Target/ONNX): the generated ONNX protobuf classes.
  libonnx-dev libprotobuf-dev
  # The CUDA emulator's fibers (CUDA programs checked without a GPU).
  libboost-context-dev
  # Tests. PyTorch (CPU) is the reference the interpreter and the model
  # builders are checked against; clang's runtime provides libFuzzer.
  libgtest-dev libgmock-dev python3-pytest python3-numpy pybind11-dev
  python3-torch libclang-rt-22-dev
)

if [[ "${LOOM_SKIP_APT:-0}" == "1" ]]; then
  echo "install-deps: LOOM_SKIP_APT=1, not installing packages"
  exit 0
fi

missing=()
for pkg in "${LOOM_APT_PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#LOOM_APT_PACKAGES[@]} packages present"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "install-deps: error: missing packages (${missing[*]}) and not root;" \
         "run as root or install them by hand" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
