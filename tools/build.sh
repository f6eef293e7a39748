#!/usr/bin/env bash
#===- tools/build.sh - Configure (once) and build Loom --------------------===#
#
# Usage: tools/build.sh [ninja targets...]
#
# Configures $LOOM_BUILD_DIR (default: build/ in the checkout) with Ninja
# against Debian's LLVM/MLIR 22 the first time, then builds the given targets
# (default: everything). Extra CMake flags go in $LOOM_CMAKE_ARGS, e.g.
#   LOOM_CMAKE_ARGS="-DLOOM_ENABLE_CUDA=OFF" tools/build.sh
# Used by tools/check.sh and tools/quickstart.sh; assumes install-deps.sh ran.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${LOOM_BUILD_DIR:-$root/build}
llvm_prefix=/usr/lib/llvm-22

if [[ ! -f "$build_dir/build.ninja" ]]; then
  # shellcheck disable=SC2086  # LOOM_CMAKE_ARGS is a list of flags.
  cmake -G Ninja -S "$root" -B "$build_dir" \
    -DMLIR_DIR="$llvm_prefix/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm_prefix/bin/lit" \
    ${LOOM_CMAKE_ARGS:-}
fi
cmake --build "$build_dir" ${1:+--target "$@"}
