#!/usr/bin/env bash
#===- tools/quickstart.sh - Set up, build and run Loom's main job ---------===#
#
# Usage: tools/quickstart.sh
#
# Installs what is missing, builds Loom, and runs the main job as far as the
# compiler reaches today: it takes an embedded model graph (a linear layer
# with a bias and a summed output as its loss), runs the import phase on it
# (loom-import-pipeline, which checks the graph contract), prints the IR, and
# prints the graph's op census.
#
# As the later phases land, this grows into: compile the default GPT for a
# simulated cluster, print the plan, train a few steps on host ranks under
# MPI, and compare with one device.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${LOOM_BUILD_DIR:-$root/build}
export LOOM_BUILD_DIR=$build_dir

bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh" loom-opt loom-translate

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The embedded default graph: y = x W^T + b over a batch of 8 vectors of 64
# features into 32 outputs, with sum(y) standing in for the loss until the
# dialect has a loss op.
cat > "$work/forward.mlir" <<'MLIR'
func.func @forward(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>,
                   %b: tensor<32xf32>) -> tensor<f32> {
  %y = loom.matmul %x, %w {transpose_rhs}
      : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  %z = loom.add %y, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %loss = loom.reduce_sum %z {axes = array<i64: 0, 1>}
      : (tensor<8x32xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
MLIR

echo
echo "== import: loom-opt -loom-import-pipeline (graph contract checked) =="
"$build_dir/bin/loom-opt" -loom-import-pipeline "$work/forward.mlir" \
  -o "$work/imported.mlir"
cat "$work/imported.mlir"

echo
echo "== op census: loom-translate --op-census =="
"$build_dir/bin/loom-translate" --op-census "$work/imported.mlir"

echo
echo "quickstart: the import phase works; autodiff, the strategy search," \
     "partitioning and code generation arrive in later milestones" \
     "(see README.md)."
