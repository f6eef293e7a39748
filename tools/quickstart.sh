#!/usr/bin/env bash
#===- tools/quickstart.sh - Set up, build and run Loom's main job ---------===#
#
# Usage: tools/quickstart.sh
#
# Installs what is missing, builds Loom, and runs the main job as far as the
# compiler reaches today:
#   1. build the default GPT (a small nanoGPT-style model) with loom-model;
#   2. import it with the driver (loomc --compile-to=import), count its ops and
#      write it back as graph JSON;
#   3. run its forward pass in the reference interpreter (loom-run) from a
#      seeded initialization: an untrained model's loss is about ln(vocab);
#   4. build its training step (loomc --compile-to=autodiff: backward pass,
#      clipping, AdamW) and train a few steps in loom-run;
#   5. run a Megatron-style tensor-parallel MLP on 4 simulated ranks and
#      compare it with the single-device program.
#
# As the later phases land this becomes: compile the default GPT for a
# simulated cluster, print the plan, train a few steps on host ranks under
# MPI, and compare with one device.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${LOOM_BUILD_DIR:-$root/build}
export LOOM_BUILD_DIR=$build_dir
bin=$build_dir/bin

bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh" loom-opt loom-translate loom-model loom-run loomc

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { printf '\n== %s\n' "$*"; }

step "1. build the default GPT: loom-model gpt2 (2 layers, hidden 128, 4 heads, vocab 512, seq 64, batch 4)"
"$bin/loom-model" gpt2 --layers 2 --hidden 128 --heads 4 --vocab 512 \
  --seq 64 --batch 4 -o "$work/gpt.mlir"

step "2. import it (loomc --compile-to=import), count its ops, export graph JSON"
"$bin/loomc" "$work/gpt.mlir" --compile-to=import -o "$work/imported.mlir"
"$bin/loom-translate" --op-census "$work/imported.mlir" |
  /usr/bin/python3 -c 'import json, sys
f = json.load(sys.stdin)["functions"][0]
print("op census of @" + f["name"] + ": " + ", ".join(f"{k} x{v}" for k, v in f["ops"].items()))'
"$bin/loom-translate" --export-graph-json "$work/imported.mlir" -o "$work/gpt.json"
echo "graph JSON: $(wc -c < "$work/gpt.json") bytes ($work/gpt.json)"

step "3. run the forward pass in the reference interpreter (f64, seed 0)"
/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(0)
ids = rng.integers(0, 512, size=(4, 64), dtype=np.int64)
np.save(f"{sys.argv[1]}/input_ids.npy", ids)
np.save(f"{sys.argv[1]}/labels.npy", np.roll(ids, -1, axis=1))
PY
"$bin/loom-run" "$work/imported.mlir" --entry forward --seed 0 \
  --inputs "$work/input_ids.npy" --inputs "$work/labels.npy"
echo "(an untrained model predicts uniformly: ln(512) = 6.238)"

step "4. train it: loomc --compile-to=autodiff (AdamW, lr 3e-3, clip 1.0), 4 steps in loom-run on one batch"
"$bin/loomc" "$work/imported.mlir" --compile-to=autodiff --optimizer adamw \
  --lr 3e-3 --clip-norm 1.0 -o "$work/train.mlir"
state=()
for i in 1 2 3 4; do
  "$bin/loom-run" "$work/train.mlir" --entry train_step --seed 0 "${state[@]}" \
    --inputs "$work/input_ids.npy" --inputs "$work/labels.npy" \
    --outputs "$work/step.safetensors" |
    awk -v step="$i" '$1 == "loss:" { print "step " step ": loss " $7 }'
  # The updated parameters, AdamW states and step feed the next step; the
  # loss is an output only.
  /usr/bin/python3 - "$root/test/python" "$work" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import safetensors_io
tensors = safetensors_io.load(f"{sys.argv[2]}/step.safetensors")
tensors.pop("loss")
safetensors_io.save(f"{sys.argv[2]}/state.safetensors", tensors)
PY
  state=(--inputs "$work/state.safetensors")
done
echo "(the loss falls as the model fits the batch)"

step "5. a tensor-parallel MLP on 4 simulated ranks vs. one device"
cat > "$work/mlp.mlir" <<'MLIR'
dist.mesh @m shape [4] axes ["tp"]

// y = gelu(x W1) W2 on one device.
func.func @mlp(%x: tensor<8x64xf64> {loom.name = "x"},
               %w1: tensor<64x256xf64> {loom.param = #loom.param<"fc1.weight", init = normal(0.02), decay = true>},
               %w2: tensor<256x64xf64> {loom.param = #loom.param<"fc2.weight", init = normal(0.02), decay = true>})
    -> (tensor<8x64xf64> {loom.name = "y"}) {
  %h = loom.matmul %x, %w1 : (tensor<8x64xf64>, tensor<64x256xf64>) -> tensor<8x256xf64>
  %g = loom.gelu %h : tensor<8x256xf64>
  %y = loom.matmul %g, %w2 : (tensor<8x256xf64>, tensor<256x64xf64>) -> tensor<8x64xf64>
  return %y : tensor<8x64xf64>
}

// The same on each of 4 ranks: W1 split by columns, W2 by rows (Megatron),
// one all-reduce. Each rank initializes only its slice of the weights.
func.func @mlp_tp(%x: tensor<8x64xf64> {loom.name = "x"},
                  %w1: tensor<64x64xf64> {loom.param = #loom.param<"fc1.weight", init = normal(0.02), decay = true>,
                                          dist.layout = #dist.layout<@m, [[], ["tp"]]>},
                  %w2: tensor<64x64xf64> {loom.param = #loom.param<"fc2.weight", init = normal(0.02), decay = true>,
                                          dist.layout = #dist.layout<@m, [["tp"], []]>})
    -> (tensor<8x64xf64> {loom.name = "y"}) {
  %h = loom.matmul %x, %w1 : (tensor<8x64xf64>, tensor<64x64xf64>) -> tensor<8x64xf64>
  %g = loom.gelu %h : tensor<8x64xf64>
  %p = loom.matmul %g, %w2 : (tensor<8x64xf64>, tensor<64x64xf64>) -> tensor<8x64xf64>
  %y = dist.all_reduce sum %p on @m axes ["tp"] : tensor<8x64xf64>
  return %y : tensor<8x64xf64>
}
MLIR
/usr/bin/python3 -c "import numpy as np; np.save('$work/x.npy', np.random.default_rng(1).standard_normal((8, 64)))"
"$bin/loom-run" "$work/mlp.mlir" --entry mlp --seed 7 --inputs "$work/x.npy" \
  --outputs "$work/one.safetensors"
"$bin/loom-run" "$work/mlp.mlir" --entry mlp_tp --ranks 4 --seed 7 \
  --inputs "$work/x.npy" --outputs "$work/four.safetensors"
"$bin/loom-run" --compare "$work/one.safetensors" "$work/four.safetensors" \
  --rtol 1e-12 --atol 1e-12

printf '\nquickstart: done. The strategy search, partitioning and code generation\n'
printf 'arrive in later milestones (README.md, docs/Overview.md).\n'
