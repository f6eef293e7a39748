"""Checks GPT-2's fused c_attn in a Megatron (tp=2) checkpoint and its merge.

Usage: check-qkv-blocks.py CKPT_DIR MERGED PARAMS_OUT HIDDEN

- the merged file holds every `c_attn` weight and bias in nanoGPT's shape,
  [3H, H] and [3H];
- rank r's file holds exactly rows j*H + [r*H/2, (r+1)*H/2) of the merged
  tensor for j = 0, 1, 2 (its heads of q, k and v), as a [3, 1, H/2, H]
  block (weights; [3, 1, 1, H/2] for biases):
  each rank wrote only its slices, in nanoGPT's row order;
- PARAMS_OUT gets the merged parameters alone (no optimizer states, no step),
  for `loom-run --entry forward`.
Reads the files with the tests' own safetensors reader, not Loom's.
"""

import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "python"))
import safetensors_io  # noqa: E402

ckpt, merged_path, params_out, hidden = (pathlib.Path(sys.argv[1]),
                                         sys.argv[2], sys.argv[3],
                                         int(sys.argv[4]))
merged = safetensors_io.load(merged_path)
manifest = json.loads((ckpt / "manifest.json").read_text())
ranks = [safetensors_io.load(ckpt / f["name"]) for f in manifest["files"]]
half = hidden // 2
checked = 0
for name, value in sorted(merged.items()):
    if ".attn.c_attn." not in name:
        continue
    is_weight = name.endswith(".weight") or ".weight." in name
    expected = (3 * hidden, hidden) if is_weight else (3 * hidden,)
    assert value.shape == expected, (name, value.shape)
    for rank, blocks in enumerate(ranks):
        rows = np.concatenate([np.arange(j * hidden + rank * half,
                                         j * hidden + (rank + 1) * half)
                               for j in range(3)])
        want = (value[rows].reshape(3, 1, half, hidden) if is_weight
                else value[rows].reshape(3, 1, 1, half))
        got = blocks[name]
        assert got.shape == want.shape, (name, rank, got.shape)
        assert np.array_equal(got, want), (name, rank)
    checked += 1
print(f"c_attn tensors in nanoGPT's shape and row order: {checked}")
safetensors_io.save(params_out, {
    k: v for k, v in merged.items()
    if k.startswith("transformer.") and not k.endswith(
        (".exp_avg", ".exp_avg_sq", ".momentum_buffer"))})
