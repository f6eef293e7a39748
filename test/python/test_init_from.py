"""Training starts from pretrained weights: `launch.sh --init-from FILE
--init-format loom|nanogpt|hf`.

The weights come from independent PyTorch models written here from the
public definitions, not from Loom's builders or converters:

- GPT-2 in Hugging Face's file layout (the hub's `model.safetensors`):
  names without the `transformer.` prefix, `Conv1D` weights stored
  [in, out] (`y = x @ W + b`), the causal-mask buffers `h.{i}.attn.bias` and
  `h.{i}.attn.masked_bias` in the file, the head tied to `wte`;
- Llama in Hugging Face's layout (test_loom_run_torch's `llama_reference`:
  RMSNorm, rotate-half RoPE, grouped-query attention, SwiGLU, untied head),
  written as two shards and `model.safetensors.index.json`.

Each file starts a Loom training run of the emitted host program on 1 rank
and on a 4-rank MPI plan (dp=2 x tp=2: every rank reads only its block of
each parameter, HF's Conv1D weights read transposed into the [3, 1, H, H]
view of c_attn split over heads). The first step's loss, which the step
computes on the loaded weights before its update, equals the PyTorch
model's loss on the same batch in f64 to 1e-10. Bad files are errors naming
the tensor. Skipped without mpirun or PyTorch.
"""

import json
import math
import re
import shutil
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="the reference models are written in PyTorch")
F = torch.nn.functional

from loom.tools import find_tool  # noqa: E402
import safetensors_io  # noqa: E402
import test_loom_run_torch as ref  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None,
                                reason="the emitted trainer runs under mpirun")

RTOL = 1e-10
BATCH, SEQ, VOCAB = 4, 8, 64
GPT_LAYERS, GPT_HIDDEN, GPT_HEADS = 2, 32, 4
LLAMA = dict(layers=2, hidden=32, heads=4, kv_heads=2, ffn=48,
             theta=10000.0, eps=1e-5)
PLANS = {"one": ["--mesh", "dp=1"],
         "dptp": ["--parallel-config",
                  '{"data_parallel": 2, "model_parallel": 2}'],
         # 2 1F1B stages: a rank reads only its stage's parameters.
         "pp": ["--devices", "2", "--pipeline-stages", "2",
                "--micro-batches", "2", "--schedule", "1f1b"]}


def run(args, check=True):
    result = subprocess.run([str(a) for a in args], capture_output=True,
                            text=True)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


# --- Hugging Face's GPT-2, from its public definition ----------------------

def hf_gpt2_weights(seed):
    """A state dict as the hub's GPT-2 files hold it (no prefix, Conv1D
    [in, out], mask buffers, no lm_head: it is wte)."""
    g = torch.Generator().manual_seed(seed)
    h = GPT_HIDDEN

    def rnd(*shape, around=0.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * 0.2 \
            + around

    w = {"wte.weight": rnd(VOCAB, h), "wpe.weight": rnd(SEQ, h),
         "ln_f.weight": rnd(h, around=1.0), "ln_f.bias": rnd(h)}
    for i in range(GPT_LAYERS):
        p = f"h.{i}."
        for ln in ("ln_1", "ln_2"):
            w[p + ln + ".weight"] = rnd(h, around=1.0)
            w[p + ln + ".bias"] = rnd(h)
        for name, (nx, nf) in {"attn.c_attn": (h, 3 * h),
                               "attn.c_proj": (h, h),
                               "mlp.c_fc": (h, 4 * h),
                               "mlp.c_proj": (4 * h, h)}.items():
            w[p + name + ".weight"] = rnd(nx, nf)   # Conv1D: [in, out]
            w[p + name + ".bias"] = rnd(nf)
        w[p + "attn.bias"] = torch.tril(torch.ones(SEQ, SEQ)).view(
            1, 1, SEQ, SEQ)
        w[p + "attn.masked_bias"] = torch.tensor(-1e4)
    return w


def hf_gpt2_loss(w, ids, labels):
    """GPT2LMHeadModel's loss on next-token labels (already shifted)."""
    b, t = ids.shape
    h, heads = GPT_HIDDEN, GPT_HEADS
    x = w["wte.weight"][ids] + w["wpe.weight"][:t]

    def ln(v, p):
        return F.layer_norm(v, (h,), w[p + ".weight"], w[p + ".bias"], 1e-5)

    def conv1d(v, p):
        return v @ w[p + ".weight"] + w[p + ".bias"]

    for i in range(GPT_LAYERS):
        p = f"h.{i}."
        q, k, v = conv1d(ln(x, p + "ln_1"), p + "attn.c_attn").split(h, dim=2)
        q, k, v = (z.view(b, t, heads, h // heads).transpose(1, 2)
                   for z in (q, k, v))
        s = q @ k.transpose(-1, -2) / math.sqrt(h // heads)
        mask = w[p + "attn.bias"][:, :, :t, :t].bool()
        s = s.masked_fill(~mask, float("-inf"))
        a = (F.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, t, h)
        x = x + conv1d(a, p + "attn.c_proj")
        m = F.gelu(conv1d(ln(x, p + "ln_2"), p + "mlp.c_fc"),
                   approximate="tanh")
        x = x + conv1d(m, p + "mlp.c_proj")
    logits = ln(x, "ln_f") @ w["wte.weight"].T
    return float(F.cross_entropy(logits.reshape(-1, VOCAB),
                                 labels.reshape(-1)))


# --- Hugging Face's Llama, sharded ----------------------------------------

def llama_weights(seed):
    return ref.weights(ref.llama_shapes(
        LLAMA["layers"], LLAMA["hidden"], LLAMA["heads"], LLAMA["kv_heads"],
        LLAMA["ffn"], VOCAB), seed=seed)


def llama_loss(w, ids, labels):
    return float(ref.llama_reference(
        w, ids, labels, LLAMA["layers"], LLAMA["heads"], LLAMA["kv_heads"],
        LLAMA["theta"], LLAMA["eps"]))


def save_sharded(directory, tensors):
    """Hugging Face's sharded form: two shards and the index."""
    directory.mkdir()
    names = sorted(tensors)
    shards = {"model-00001-of-00002.safetensors": names[::2],
              "model-00002-of-00002.safetensors": names[1::2]}
    weight_map = {}
    for shard, members in shards.items():
        safetensors_io.save(directory / shard,
                            {n: tensors[n].numpy() for n in members})
        weight_map.update({n: shard for n in members})
    (directory / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 0}, "weight_map": weight_map}))


# --- Loom's programs -------------------------------------------------------

@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """Token ids below the vocabulary, the first batch of them in file
    order, the two models, and the emitted programs of each plan."""
    root = tmp_path_factory.mktemp("init_from")
    rng = np.random.default_rng(3)
    rng.integers(0, VOCAB, 4000).astype(np.uint16).tofile(root / "train.bin")
    run([find_tool("loom-data"), "batch", root / "train.bin", "--format",
         "uint16", "--batch", BATCH, "--seq", SEQ, "--step", 0,
         "--sequential", "-o", root / "batch.safetensors"])
    run([find_tool("loom-model"), "gpt2", "--layers", GPT_LAYERS, "--hidden",
         GPT_HIDDEN, "--heads", GPT_HEADS, "--vocab", VOCAB, "--seq", SEQ,
         "--batch", BATCH, "-o", root / "gpt2.mlir"])
    run([find_tool("loom-model"), "llama", "--layers", LLAMA["layers"],
         "--hidden", LLAMA["hidden"], "--heads", LLAMA["heads"],
         "--kv-heads", LLAMA["kv_heads"], "--ffn", LLAMA["ffn"], "--vocab",
         VOCAB, "--seq", SEQ, "--batch", BATCH, "--rope-theta",
         LLAMA["theta"], "--norm-eps", LLAMA["eps"], "-o",
         root / "llama.mlir"])
    return root


def program(root, family, plan):
    prog = root / f"{family}-{plan}"
    if not prog.exists():
        run([find_tool("loomc"), root / f"{family}.mlir", *PLANS[plan],
             "--optimizer", "sgd", "--lr", "0.1", "--emit", "host",
             "--emit-dtypes", "f64", "-o", prog])
    return prog


def batch(root):
    b = safetensors_io.load(root / "batch.safetensors")
    return (torch.from_numpy(b["input_ids"].astype(np.int64)),
            torch.from_numpy(b["labels"].astype(np.int64)))


def first_loss(root, prog, weights, fmt, *extra):
    """The loss of the first step of `launch.sh --init-from weights`."""
    metrics = prog / "metrics.jsonl"
    if metrics.exists():
        metrics.unlink()
    log = run([prog / "launch.sh", "--data", root / "train.bin",
               "--data-format", "uint16", "--data-order", "sequential",
               "--dtype", "f64", "--steps", 2, "--init-from", weights,
               "--init-format", fmt, "--metrics", metrics, *extra]).stdout
    assert "initialized " in log, log
    lines = [json.loads(l) for l in metrics.read_text().splitlines()]
    return [r for r in lines if r["step"] == 1][0]["loss"], log


@pytest.mark.parametrize("plan", ["one", "dptp", "pp"])
def test_hf_gpt2_file_gives_the_reference_first_loss(root, plan):
    w = hf_gpt2_weights(seed=11)
    path = root / "gpt2-hf.safetensors"
    safetensors_io.save(path, {k: v.numpy() for k, v in w.items()})
    ids, labels = batch(root)
    expected = hf_gpt2_loss(w, ids, labels)
    actual, log = first_loss(root, program(root, "gpt2", plan), path, "hf")
    # The 2 buffers per layer are left out.
    assert f"left out {2 * GPT_LAYERS} tensors that are not weights" in log
    assert abs(actual - expected) <= RTOL * abs(expected), (actual, expected)
    # Training went on from there: the second step's loss is another.
    assert re.search(r"^step 2 \| loss ", log, re.MULTILINE)


def test_init_only_checkpoint_merges_back_to_the_file(root):
    """`--init-only` writes the step-0 checkpoint of the pretrained weights
    in the plan (each rank its blocks); merged as hf it is the input file,
    byte for byte, less the buffers."""
    w = hf_gpt2_weights(seed=13)
    path = root / "gpt2-hf-13.safetensors"
    safetensors_io.save(path, {k: v.numpy() for k, v in w.items()})
    prog = program(root, "gpt2", "dptp")
    ckpt = root / "init-ckpt"
    run([prog / "launch.sh", "--init-only", "--ckpt-dir", ckpt, "--dtype",
         "f64", "--init-from", path, "--init-format", "hf"])
    run([find_tool("loom-ckpt"), "merge", ckpt / "step-00000000", "--format",
         "hf", "-o", root / "merged.safetensors"])
    merged = safetensors_io.load(root / "merged.safetensors")
    weights = {k: v.numpy() for k, v in w.items()
               if not re.fullmatch(r"h\.\d+\.attn\.(bias|masked_bias)", k)}
    assert sorted(merged) == sorted(weights)
    for k, v in weights.items():
        assert merged[k].shape == v.shape and \
            merged[k].tobytes() == v.tobytes(), k


def test_nanogpt_and_loom_files_load_alike(root):
    """The same weights as nanoGPT names them (prefix, [out, in] Linear,
    the tied head listed as `lm_head.weight`) and as Loom does (no head)."""
    w = hf_gpt2_weights(seed=12)
    nano = {}
    for k, v in w.items():
        if re.fullmatch(r"h\.\d+\.attn\.(bias|masked_bias)", k):
            continue
        conv = k.endswith(".weight") and v.dim() == 2 and k.startswith("h.")
        nano["transformer." + k] = v.T.contiguous() if conv else v
    nano_path = root / "gpt2-nano.safetensors"
    safetensors_io.save(nano_path, {**{k: v.numpy() for k, v in nano.items()},
                                    "lm_head.weight": w["wte.weight"].numpy()})
    loom_path = root / "gpt2-loom.safetensors"
    safetensors_io.save(loom_path, {k: v.numpy() for k, v in nano.items()})
    ids, labels = batch(root)
    expected = hf_gpt2_loss(w, ids, labels)
    prog = program(root, "gpt2", "dptp")
    for path, fmt in ((nano_path, "nanogpt"), (loom_path, "loom")):
        actual, _ = first_loss(root, prog, path, fmt)
        assert abs(actual - expected) <= RTOL * abs(expected), (fmt, actual)


@pytest.mark.parametrize("plan", ["one", "dptp"])
def test_sharded_llama_gives_the_reference_first_loss(root, plan):
    w = llama_weights(seed=21)
    shards = root / f"llama-hf-{plan}"
    save_sharded(shards, w)
    ids, labels = batch(root)
    expected = llama_loss(w, ids, labels)
    # The directory, as `from_pretrained` takes it.
    actual, log = first_loss(root, program(root, "llama", plan), shards, "hf")
    assert "2 shards" in log, log
    assert abs(actual - expected) <= RTOL * abs(expected), (actual, expected)


def hf_file_with(root, edit):
    w = {k: v.numpy().copy() for k, v in hf_gpt2_weights(seed=31).items()}
    edit(w)
    path = root / "bad.safetensors"
    safetensors_io.save(path, w)
    return path


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.pop("h.1.mlp.c_fc.bias"),
     "missing tensor `h.1.mlp.c_fc.bias`: this program trains "
     "`transformer.h.1.mlp.c_fc.bias` [128]"),
    (lambda t: t.update({"h.0.attn.c_attn.scale": np.zeros(1)}),
     "tensor `h.0.attn.c_attn.scale` is not a parameter of this program"),
    (lambda t: t.update({"h.0.attn.c_attn.weight":
                         t["h.0.attn.c_attn.weight"].T.copy()}),
     "tensor `h.0.attn.c_attn.weight` has shape [96, 32], expected [32, 96] "
     "(Conv1D: [in, out])"),
    (lambda t: t.update({"ln_f.weight": np.ones(GPT_HIDDEN, np.int64)}),
     "tensor `ln_f.weight` is I64, expected a floating-point dtype"),
])
def test_bad_files_are_errors_naming_the_tensor(root, edit, message):
    prog = program(root, "gpt2", "dptp")
    result = run([prog / "launch.sh", "--data", root / "train.bin",
                  "--data-format", "uint16", "--dtype", "f64", "--steps", 1,
                  "--init-from", hf_file_with(root, edit), "--init-format",
                  "hf"], check=False)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    # Reported once (by rank 0), not by each of the 4 ranks.
    assert result.stderr.count(message) == 1, result.stderr


def test_untied_head_into_a_tied_program_is_an_error(root):
    w = {k: v.numpy() for k, v in hf_gpt2_weights(seed=41).items()}
    w["lm_head.weight"] = w["wte.weight"] + 1.0
    path = root / "untied.safetensors"
    safetensors_io.save(path, w)
    result = run([program(root, "gpt2", "dptp") / "launch.sh", "--data",
                  root / "train.bin", "--data-format", "uint16", "--dtype",
                  "f64", "--steps", 1, "--init-from", path, "--init-format",
                  "hf"], check=False)
    assert result.returncode != 0
    assert ("tensor `lm_head.weight` differs from `wte.weight`: the file's "
            "head is untied") in result.stderr, result.stderr


@pytest.mark.parametrize("flags,message", [
    (["--init-from", "w.safetensors"],
     "--init-from needs --init-format loom|nanogpt|hf"),
    (["--init-format", "hf"], "--init-format says how the --init-from file"),
    (["--init-from", "w.safetensors", "--init-format", "pytorch"],
     "--init-format expects loom, nanogpt or hf, got `pytorch`"),
    (["--init-from", "w.safetensors", "--init-format", "hf", "--resume",
      "--ckpt-dir", "ck"], "--init-from and --resume exclude each other"),
])
def test_flags_are_checked(root, flags, message):
    result = run([program(root, "gpt2", "one") / "launch.sh", "--data",
                  root / "train.bin", "--steps", 1, *flags], check=False)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


def test_a_missing_file_is_an_error(root):
    result = run([program(root, "gpt2", "one") / "launch.sh", "--data",
                  root / "train.bin", "--steps", 1, "--dtype", "f64",
                  "--init-from", root / "none.safetensors", "--init-format",
                  "hf"],
                 check=False)
    assert result.returncode != 0
    assert "none.safetensors" in result.stderr, result.stderr
