#!/usr/bin/env bash
#===- reproduce-with-loom-opt.sh - loomc's pipeline, replayed -------------===#
#
# Usage: reproduce-with-loom-opt.sh DIR INPUT.mlir [loomc flags...]
#
# Runs `loomc INPUT [flags] --dump-pass-pipeline -o DIR/loomc.mlir`, then
# `loom-opt INPUT --pass-pipeline=<the text loomc printed> -o
# DIR/loom-opt.mlir`, and fails unless the two files are byte for byte the
# same (DESIGN.md §1: loomc runs exactly the registered pipelines). Prints
# the pipeline, so a test can check what it holds.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
dir=$1 input=$2
shift 2
mkdir -p "$dir"
loomc "$input" "$@" --dump-pass-pipeline -o "$dir/loomc.mlir" \
  2> "$dir/pipeline.txt" > /dev/null
# The pipeline is the first line loomc writes to stderr; remarks follow.
pipeline=$(head -n 1 "$dir/pipeline.txt")
loom-opt "$input" --pass-pipeline="$pipeline" -o "$dir/loom-opt.mlir" \
  2> /dev/null
cmp "$dir/loomc.mlir" "$dir/loom-opt.mlir"
echo "$pipeline"
