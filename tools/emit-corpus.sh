#!/usr/bin/env bash
#===- tools/emit-corpus.sh - Emit host and CUDA sources of many plans ----===#
#
# Usage:
#   tools/emit-corpus.sh ir   BIN_DIR IR_DIR    # partitioned steps, once
#   tools/emit-corpus.sh emit BIN_DIR IR_DIR OUT_DIR
#
# A refactoring of the emitters (lib/Target/Host, lib/Target/CUDA,
# lib/Target/Common) must not change what they print. `ir` compiles a fixed
# set of models and plans with BIN_DIR's loom-model and loomc to the IR the
# emitters read (--compile-to=partition, then loom-opt's
# --loom-codegen-pipeline, which adds the evaluation step: dp, tp, sp, ZeRO-1/2/3, 1F1B, GPipe
# and interleaved pipelines, recompute, bf16-mixed, fp16-mixed with its
# loss-scaling ops, ring attention, dropout, SGD, gradient accumulation,
# GPT-2 and Llama; every training step with its evaluation step), a graph
# of every loom op, plus the emitter lit tests' own inputs. `emit` runs BIN_DIR's loom-translate
# --emit-host and --emit-cuda on each and writes the generated files and
# any diagnostics under OUT_DIR. Emit with the old and the new tools from
# the same IR_DIR, then `diff -r OLD_OUT NEW_OUT`: the refactoring is
# byte-identical when diff prints nothing (docs/Codegen.md, "The emission
# table").
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:?usage: emit-corpus.sh ir|emit BIN_DIR IR_DIR [OUT_DIR]}
bin=${2:?BIN_DIR}
ir=${3:?IR_DIR}

if [[ $mode == ir ]]; then
  mkdir -p "$ir/models"
  model() { "$bin/loom-model" "$@" > /dev/null; }
  model gpt2 --layers 2 --hidden 64 --heads 4 --vocab 256 --seq 32 --batch 8 \
    -o "$ir/models/gpt.mlir"
  model gpt2 --layers 1 --hidden 64 --heads 4 --vocab 256 --seq 32 --batch 8 \
    --dropout 0.1 -o "$ir/models/gpt-dropout.mlir"
  model gpt2 --layers 4 --hidden 32 --heads 2 --vocab 64 --seq 8 --batch 4 \
    -o "$ir/models/gpt4.mlir"
  model llama --layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 96 \
    --vocab 256 --seq 32 --batch 8 -o "$ir/models/llama.mlir"
  # NAME MODEL loomc-flags...
  plan() {
    local name=$1 model=$2
    shift 2
    "$bin/loomc" "$ir/models/$model.mlir" --compile-to=partition "$@" \
      -o "$ir/$name.partitioned" 2> "$ir/$name.log"
    "$bin/loom-opt" --loom-codegen-pipeline "$ir/$name.partitioned" \
      -o "$ir/$name.mlir"
  }
  plan one gpt --devices 1
  plan dp gpt --mesh dp=4
  plan tp gpt --parallel-config '{"data_parallel": 2, "model_parallel": 2}'
  plan sp gpt --parallel-config \
    '{"data_parallel": 1, "model_parallel": 4, "use_seq_parallel": true}'
  plan zero1 gpt --parallel-config \
    '{"data_parallel": 2, "model_parallel": 2, "optimizer_shard": true}'
  plan zero2 gpt --parallel-config \
    '{"data_parallel": 4, "zero_stage": 2, "micro_batch_num": 4}'
  plan zero3 gpt --parallel-config \
    '{"data_parallel": 4, "zero_stage": 3, "micro_batch_num": 4}'
  plan recompute gpt --parallel-config \
    '{"data_parallel": 2, "model_parallel": 2, "recompute": true}'
  plan accum gpt --mesh dp=2 --micro-batches 2
  plan pp-1f1b gpt --devices 2 --pipeline-stages 2 --micro-batches 4 \
    --schedule 1f1b
  plan pp-gpipe gpt --devices 4 --pipeline-stages 2 --micro-batches 4 \
    --schedule gpipe
  plan pp-interleaved gpt4 --devices 2 --pipeline-stages 2 --virtual-stages 2 \
    --schedule interleaved-1f1b --micro-batches 4
  plan bf16 gpt --devices 1 --precision bf16-mixed
  plan bf16-tp gpt --precision bf16-mixed --parallel-config \
    '{"data_parallel": 2, "model_parallel": 2}'
  plan fp16 gpt --devices 1 --precision fp16-mixed
  plan fp16-dp gpt --mesh dp=2 --micro-batches 2 --precision fp16-mixed
  plan fp16-pp gpt --devices 2 --pipeline-stages 2 --micro-batches 4 \
    --schedule 1f1b --precision fp16-mixed
  plan ring-cp gpt --parallel-config '{"context_parallel": 4}'
  plan dropout gpt-dropout --parallel-config \
    '{"data_parallel": 2, "model_parallel": 2}'
  plan sgd gpt --mesh dp=2 --optimizer sgd
  plan llama llama --devices 1
  plan llama-tp llama --parallel-config \
    '{"data_parallel": 2, "model_parallel": 2}'
  plan llama-bf16-pp llama --devices 2 --pipeline-stages 2 --micro-batches 2 \
    --schedule 1f1b --precision bf16-mixed
  # The emitter lit tests' inputs (some hold cases the emitters reject:
  # their diagnostics are compared too).
  for f in "$root"/test/Target/Host/Inputs/*.mlir \
    "$root"/test/Target/CUDA/Inputs/*.mlir \
    "$root"/test/Integration/Host/Inputs/*.mlir; do
    cp "$f" "$ir/input-$(basename "$f")"
  done
  # Every loom op, each optional operand present and absent (the i1
  # constant left out: no emitter holds i1).
  grep -v "arith.constant dense<\[true" \
    "$root/test/Target/GraphJSON/Inputs/every-op.mlir" > "$ir/every-op.mlir"
  for f in "$root"/test/Target/Host/*.mlir "$root"/test/Target/CUDA/*.mlir; do
    cp "$f" "$ir/split-$(basename "$f")"
  done
  exit 0
fi

[[ $mode == emit ]] || { echo "unknown mode '$mode'" >&2; exit 1; }
out=${4:?OUT_DIR}
mkdir -p "$out"
for f in "$ir"/*.mlir; do
  name=$(basename "$f" .mlir)
  for target in host cuda; do
    dest="$out/$target/$name"
    mkdir -p "$dest"
    if [[ $name == split-* ]]; then
      # Many cases in one file, printed to stdout with their diagnostics.
      "$bin/loom-translate" --emit-$target "$f" --split-input-file \
        > "$dest/stdout" 2> "$dest/stderr" || echo "exit $?" >> "$dest/stderr"
    else
      "$bin/loom-translate" --emit-$target "$f" -o "$dest/" \
        > /dev/null 2> "$dest/stderr" || echo "exit $?" >> "$dest/stderr"
    fi
  done
done
# Diagnostics name the input file: keep them independent of IR_DIR.
find "$out" -name stderr -exec sed -i "s|$ir/||g" {} +
