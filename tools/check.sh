#!/usr/bin/env bash
#===- tools/check.sh - Set up, build and run every Loom test --------------===#
#
# Usage: tools/check.sh
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
#===----------------------------------------------------------------------===#
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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
