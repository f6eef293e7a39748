#!/usr/bin/env bash
#===- tools/check.sh - Set up, build and run every Loom test --------------===#
#
# Usage: tools/check.sh [--sanitize]
#
# The one command that proves a checkout works, on a fresh Debian 12 machine
# as on a developer's:
#   1. installs missing packages with apt (tools/install-deps.sh),
#   2. configures and builds everything, reference docs included,
#   3. runs every test through one ctest run (lit, gtest, pytest and the
#      MPI runs of test/Runtime/MPI),
#   4. prints `N passed, N failed` as its last line, counting every lit,
#      gtest, pytest and MPI case, and exits non-zero if anything failed.
#
# --sanitize does the same in build-sanitize/ with AddressSanitizer and
# UndefinedBehaviorSanitizer on Loom's code and the programs it emits
# (LOOM_SANITIZE=address,undefined; CUDA, the CUDA emulator and the Python
# extension are off, their runtimes cannot share clang's). Not part of CI;
# docs/Testing.md ("Sanitizers") records a run.
#
#===----------------------------------------------------------------------===#
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ ${1:-} == --sanitize ]]; then
  export LOOM_BUILD_DIR=${LOOM_BUILD_DIR:-$root/build-sanitize}
  export LOOM_CMAKE_ARGS="-DLOOM_SANITIZE=address,undefined \
    -DLOOM_ENABLE_CUDA=OFF -DLOOM_ENABLE_CUDA_EMULATOR=OFF \
    -DLOOM_ENABLE_PYTHON=OFF ${LOOM_CMAKE_ARGS:-}"
  # Loom's instrumented code and Debian's uninstrumented libMLIR share
  # LLVM's allocators (docs/Testing.md, "Fuzzing"); Open MPI keeps its
  # allocations to the end of the process.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_container_overflow=0:detect_leaks=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
elif [[ $# -gt 0 ]]; then
  echo "usage: tools/check.sh [--sanitize]" >&2
  exit 2
fi
build_dir=${LOOM_BUILD_DIR:-$root/build}
export LOOM_BUILD_DIR=$build_dir
# Loom's own code builds warning-free; a first configure here keeps it so.
export LOOM_CMAKE_ARGS="-DLOOM_WERROR=ON ${LOOM_CMAKE_ARGS:-}"
start=$SECONDS

# A set-up or build failure still ends with the summary line CI reads.
die() {
  echo "check: error: $1" >&2
  echo "0 passed, 1 failed"
  exit 1
}

stage() { echo "check: [$((SECONDS - start))s] $1"; }

stage "installing dependencies"
bash "$root/tools/install-deps.sh" || die "installing dependencies failed"

stage "building"
bash "$root/tools/build.sh" all loom-doc || die "the build failed"

stage "testing"
results_dir=$build_dir/test/results
rm -rf "$results_dir" "$build_dir/ctest-results.xml"
mkdir -p "$results_dir"
jobs=$(nproc 2>/dev/null || echo 2)
(cd "$build_dir" &&
  ctest -j "$jobs" --output-on-failure --output-junit ctest-results.xml)
[[ -f "$build_dir/ctest-results.xml" ]] || die "ctest wrote no results"

stage "done"
/usr/bin/python3 "$root/tools/summarize-tests.py" \
  "$build_dir/ctest-results.xml" "$results_dir"
