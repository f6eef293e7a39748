"""`loom-ckpt convert` of Hugging Face Llama files, sharded ones included.

The reference is test_loom_run_torch's independent Hugging Face Llama
(`llama_reference`, written from `transformers`' public LlamaForCausalLM:
RMSNorm, rotate-half RoPE, grouped-query attention, SwiGLU, untied head).
Its weights are written as Hugging Face shards them: two safetensors files
and `model.safetensors.index.json`, plus an older file's
`rotary_emb.inv_freq` buffers.

- the shards converted `--from hf --to loom` (given as the directory or as
  the index) give `loom-run` the reference's loss in f64 to 1e-10, and the
  converted file loads into the reference by name with the same loss;
- hf -> loom -> hf -> loom is byte-identical, in f64 and in f16;
- a Loom checkpoint of the weights merged with `--format hf` is the file;
- an index that disagrees with its shards, nanoGPT's layout for Llama, and
  a tied head (no `lm_head.weight`) are errors naming the tensor.
Skipped when PyTorch is not installed.
"""

import json

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python; the "
    "cross-checks against PyTorch need `import torch`")

import safetensors_io  # noqa: E402
import test_loom_run_torch as ref  # noqa: E402
from steps import tool  # noqa: E402

RTOL = 1e-10
LAYERS, HIDDEN, HEADS, KV_HEADS, FFN = 2, 32, 4, 2, 48
VOCAB, SEQ, BATCH, THETA, EPS = 61, 8, 2, 10000.0, 1e-5


def llama_weights(seed):
    return ref.weights(ref.llama_shapes(LAYERS, HIDDEN, HEADS, KV_HEADS, FFN,
                                        VOCAB), seed=seed)


def save_sharded(directory, tensors, extra=None):
    """Two shards and Hugging Face's index; `extra` goes in shard 2 too."""
    directory.mkdir()
    names = sorted(tensors)
    shards = {"model-00001-of-00002.safetensors": names[::2],
              "model-00002-of-00002.safetensors": names[1::2]}
    weight_map = {}
    for i, (shard, members) in enumerate(shards.items()):
        arrays = {n: tensors[n].numpy() for n in members}
        if extra and i == 1:
            arrays.update(extra)
        safetensors_io.save(directory / shard, arrays)
        weight_map.update({n: shard for n in arrays})
    (directory / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 0}, "weight_map": weight_map}))
    return directory


def loom_ir(tmp_path):
    ref.model_ir(tmp_path, "llama", "--layers", str(LAYERS), "--hidden",
                 str(HIDDEN), "--heads", str(HEADS), "--kv-heads",
                 str(KV_HEADS), "--ffn", str(FFN), "--vocab", str(VOCAB),
                 "--seq", str(SEQ), "--batch", str(BATCH), "--rope-theta",
                 str(THETA), "--norm-eps", str(EPS))
    return tmp_path / "llama.mlir"


def convert(src, dst, frm, to, check=True):
    return tool("loom-ckpt", "convert", "--from", frm, "--to", to, src,
                "-o", dst, check=check)


def reference_loss(w, ids, labels):
    return float(ref.llama_reference(w, ids, labels, LAYERS, HEADS, KV_HEADS,
                                     THETA, EPS))


@pytest.mark.parametrize("given", ["directory", "index"])
def test_sharded_hf_llama_gives_the_reference_loss(tmp_path, given):
    w = llama_weights(seed=3)
    inv_freq = {f"model.layers.{i}.self_attn.rotary_emb.inv_freq":
                np.ones(HIDDEN // HEADS // 2) for i in range(LAYERS)}
    shards = save_sharded(tmp_path / "hf", w, inv_freq)
    src = shards if given == "directory" else \
        shards / "model.safetensors.index.json"
    result = convert(src, tmp_path / "loom.safetensors", "hf", "loom")
    assert "from 2 shards" in result.stdout
    assert f"({LAYERS} other tensors left out)" in result.stdout
    ids, labels = ref.batch(VOCAB, BATCH, SEQ, seed=4)
    expected = reference_loss(w, ids, labels)

    batch = tmp_path / "batch.safetensors"
    safetensors_io.save(batch, {"input_ids": ids.numpy(),
                                "labels": labels.numpy()})
    out = tmp_path / "out.safetensors"
    tool("loom-run", loom_ir(tmp_path), "--entry", "forward", "--dtype",
         "f64", "--inputs", tmp_path / "loom.safetensors", "--inputs", batch,
         "--outputs", out)
    actual = float(safetensors_io.load(out)["loss"])
    assert abs(actual - expected) <= RTOL * abs(expected), (actual, expected)

    # The written file, loaded into the reference by name.
    written = {k: torch.from_numpy(v.copy()) for k, v in
               safetensors_io.load(tmp_path / "loom.safetensors").items()}
    assert sorted(written) == sorted(w)
    reloaded = reference_loss(written, ids, labels)
    assert abs(reloaded - expected) <= RTOL * abs(expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_round_trips_are_bit_identical(tmp_path, dtype):
    w = {k: v.numpy().astype(dtype) for k, v in llama_weights(seed=5).items()}
    shards = save_sharded(tmp_path / "hf",
                          {k: torch.from_numpy(v) for k, v in w.items()})
    convert(shards, tmp_path / "a.safetensors", "hf", "loom")
    convert(tmp_path / "a.safetensors", tmp_path / "hf.safetensors", "loom",
            "hf")
    convert(tmp_path / "hf.safetensors", tmp_path / "b.safetensors", "hf",
            "loom")
    a = safetensors_io.load(tmp_path / "a.safetensors")
    b = safetensors_io.load(tmp_path / "b.safetensors")
    assert sorted(a) == sorted(b) == sorted(w)
    for k in a:
        assert a[k].dtype == b[k].dtype == w[k].dtype, k
        assert a[k].tobytes() == b[k].tobytes() == w[k].tobytes(), k


def test_bad_llama_files_are_errors_naming_the_tensor(tmp_path):
    w = llama_weights(seed=7)
    # Tied head: Loom's Llama has its own.
    tied = {k: v.numpy() for k, v in w.items() if k != "lm_head.weight"}
    safetensors_io.save(tmp_path / "tied.safetensors", tied)
    result = convert(tmp_path / "tied.safetensors", tmp_path / "out", "hf",
                     "loom", check=False)
    assert result.returncode == 1
    assert "missing tensor `lm_head.weight`" in result.stderr
    assert "Loom's Llama has an untied head" in result.stderr

    bad = {k: v.numpy() for k, v in w.items()}
    bad["model.layers.1.mlp.up_proj.weight"] = np.zeros((FFN + 1, HIDDEN))
    safetensors_io.save(tmp_path / "shape.safetensors", bad)
    result = convert(tmp_path / "shape.safetensors", tmp_path / "out", "hf",
                     "loom", check=False)
    assert "tensor `model.layers.1.mlp.up_proj.weight` has shape [49, 32], " \
        "expected [48, 32]" in result.stderr, result.stderr

    result = convert(tmp_path / "tied.safetensors", tmp_path / "out",
                     "nanogpt", "loom", check=False)
    assert "holds Llama's weights, which nanoGPT does not name" in \
        result.stderr, result.stderr

    # An index naming a tensor its shard does not hold.
    shards = save_sharded(tmp_path / "hf", w)
    index = json.loads((shards / "model.safetensors.index.json").read_text())
    index["weight_map"]["model.norm.weight"] = \
        "model-00002-of-00002.safetensors" \
        if index["weight_map"]["model.norm.weight"].startswith("model-00001") \
        else "model-00001-of-00002.safetensors"
    (shards / "model.safetensors.index.json").write_text(json.dumps(index))
    result = convert(shards, tmp_path / "out", "hf", "loom", check=False)
    assert result.returncode == 1
    assert "tensor `model.norm.weight`" in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_merge_as_hf_gives_back_the_llama_weights(tmp_path):
    """A Loom checkpoint of Llama's weights (split over 2 ranks), merged
    with `--format hf`, is the Hugging Face file: Loom's Llama names are
    Hugging Face's, so every byte comes back."""
    w = llama_weights(seed=9)
    shards = save_sharded(tmp_path / "hf", w)
    convert(shards, tmp_path / "loom.safetensors", "hf", "loom")
    tool("loom-ckpt", "split", tmp_path / "loom.safetensors", "--mesh",
         "dp=2", "-o", tmp_path / "ckpt")
    tool("loom-ckpt", "merge", tmp_path / "ckpt", "--format", "hf", "-o",
         tmp_path / "merged.safetensors")
    merged = safetensors_io.load(tmp_path / "merged.safetensors")
    assert sorted(merged) == sorted(w)
    for k, v in w.items():
        assert merged[k].tobytes() == v.numpy().tobytes(), k
    ids, labels = ref.batch(VOCAB, BATCH, SEQ, seed=10)
    reloaded = {k: torch.from_numpy(v.copy()) for k, v in merged.items()}
    assert reference_loss(reloaded, ids, labels) == \
        reference_loss(w, ids, labels)
    result = tool("loom-ckpt", "merge", tmp_path / "ckpt", "--format",
                  "nanogpt", "-o", tmp_path / "nano.safetensors", check=False)
    assert result.returncode == 1
    assert "nanoGPT does not name Llama's weights" in result.stderr
