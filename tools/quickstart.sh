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
#   5. let the strategy search plan it for a simulated cluster of 4 host
#      devices (loomc --cluster host --devices 4 --compile-to=partition),
#      print the plan report, run one training step on 4 simulated ranks
#      and compare it with the single-device step;
#   6. the main job: a small byte-level GPT planned by the search for 4 host
#      ranks, emitted and built as an MPI program (loomc --emit host), trained
#      50 steps on the text shipped in the repository under mpirun
#      (launch.sh), trained again on 1 rank, and the two loss curves printed
#      side by side; the script fails if they differ by more than 1e-4.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${LOOM_BUILD_DIR:-$root/build}
export LOOM_BUILD_DIR=$build_dir
bin=$build_dir/bin

bash "$root/tools/install-deps.sh"
# loomc builds the runtime libraries that `--emit host` links.
bash "$root/tools/build.sh" loom-opt loom-translate loom-model loom-run loomc \
  loom-data loom-ckpt

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
    awk -v step="$i" '$1 == "loss:" { loss = $7 } $1 == "grad_norm:" { norm = $7 }
      END { print "step " step ": loss " loss ", grad norm (before clipping) " norm }'
  # The updated parameters, AdamW states and step feed the next step; the
  # loss and the gradient norm (a step compiled with --clip-norm returns it)
  # are outputs only.
  /usr/bin/python3 - "$root/test/python" "$work" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import safetensors_io
tensors = safetensors_io.load(f"{sys.argv[2]}/step.safetensors")
tensors.pop("loss")
tensors.pop("grad_norm")
safetensors_io.save(f"{sys.argv[2]}/state.safetensors", tensors)
PY
  state=(--inputs "$work/state.safetensors")
done
echo "(the loss falls as the model fits the batch)"

step "5. let the strategy search plan it for 4 host devices (--cluster host), print the report, run one step on 4 simulated ranks vs. one device"
# f64, so that the comparison measures the partitioning, not f32 rounding.
"$bin/loom-model" gpt2 --layers 2 --hidden 128 --heads 4 --vocab 512 \
  --seq 64 --batch 4 --dtype f64 -o "$work/gpt64.mlir" > /dev/null
"$bin/loomc" "$work/gpt64.mlir" --compile-to=autodiff --optimizer adamw \
  --lr 3e-3 -o "$work/train64.mlir"
# The search (DP over the cost model of the `host` cluster preset) picks the
# mesh, every op's strategy, ZeRO and recompute; the partition phase then
# inserts the collectives and writes the per-rank program.
"$bin/loomc" "$work/gpt64.mlir" --compile-to=partition --optimizer adamw \
  --lr 3e-3 --cluster host --devices 4 --report \
  --plan-json "$work/plan.json" -o "$work/rank.mlir"
"$bin/loom-run" "$work/train64.mlir" --entry train_step --seed 0 \
  --inputs "$work/input_ids.npy" --inputs "$work/labels.npy" \
  --outputs "$work/one.safetensors" > /dev/null
"$bin/loom-run" "$work/rank.mlir" --entry train_step --ranks 4 --seed 0 \
  --inputs "$work/input_ids.npy" --inputs "$work/labels.npy" \
  --outputs "$work/four.safetensors" | grep "loss:"
# Element by element: the key bias's gradient is zero up to rounding (softmax
# cancels it) and AdamW scales that noise up, hence the absolute floor.
"$bin/loom-run" --compare "$work/one.safetensors" "$work/four.safetensors" \
  --rtol 1e-8 --atol 1e-12

step "6. train for real: search a plan for 4 host ranks, emit and build it (loomc --emit host), train 50 steps under mpirun, and again on 1 rank"
# A GPT for byte-level text (vocabulary 256), trained in f32.
"$bin/loom-model" gpt2 --layers 2 --hidden 64 --heads 4 --vocab 256 \
  --seq 32 --batch 8 -o "$work/byte-gpt.mlir"
"$bin/loomc" "$work/byte-gpt.mlir" --cluster host --devices 4 --report \
  --emit host --emit-dtypes f32 -o "$work/four"
"$bin/loomc" "$work/byte-gpt.mlir" --devices 1 --emit host --emit-dtypes f32 \
  -o "$work/one"
"$bin/loom-data" encode --input "$root/test/Inputs/data/coriolanus.txt" \
  --output "$work/tokens.bin"
# Rank 0 logs `step N | loss X | T ms | tok/s | lr R`; a checkpoint every 25 steps.
"$work/four/launch.sh" --data "$work/tokens.bin" --steps 50 \
  --ckpt-dir "$work/ckpt" --ckpt-every 25 > "$work/four.log"
grep -E '^step (1|10|20|30|40|50) ' "$work/four.log"
"$work/one/launch.sh" --data "$work/tokens.bin" --steps 50 > "$work/one.log"
/usr/bin/python3 "$root/tools/loss-curves.py" table "$work/four.log" \
  "$work/one.log" --a-name "4 ranks" --b-name "1 rank"
# f32 sums in another order: equal to rounding, never more than 1e-4 apart.
/usr/bin/python3 "$root/tools/loss-curves.py" compare "$work/four.log" \
  "$work/one.log" --rtol 1e-4

"$bin/loom-ckpt" inspect "$work/ckpt/step-00000050" | sed -n 1,4p
printf '\nquickstart: done. The 4-rank program trains like one device\n'
printf '(docs/Codegen.md: training, checkpoints, --resume, loom-ckpt).\n'
