"""`loom-ckpt convert` and `merge --format`: GPT-2's weights between Loom's,
nanoGPT's and Hugging Face's file layouts.

The reference is an independent PyTorch GPT-2 in Hugging Face's layout,
written from `transformers`' public GPT2 definition (not from Loom's
builder or converter): `Conv1D` layers whose weight is stored [in, out]
(`y = x @ W + b`), the fused `c_attn` split into q, k, v, the causal-mask
buffers `attn.bias` / `attn.masked_bias` in the state dict, the head tied to
`wte`, tensor names as the hub's files give them (no `transformer.` prefix).

- its file, converted `--from hf --to loom`, gives `loom-run` the loss the
  reference computes, in f64 to 1e-10 (with and without the prefix, with
  and without biases);
- loom -> hf -> loom and loom -> nanogpt -> loom give back the same bytes;
  the hf file loads into the reference unchanged (`load_state_dict`);
- `merge --format hf` of a Loom checkpoint loads into the reference and
  gives the loss Loom computes from the checkpoint;
- missing, extra, mis-shaped and wrongly typed tensors are errors naming the
  tensor.
Skipped when PyTorch is not installed.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python; the "
    "cross-checks against PyTorch need `import torch`")
nn = torch.nn
F = torch.nn.functional

import safetensors_io  # noqa: E402
import test_loom_run_torch as ref  # noqa: E402
from steps import tool  # noqa: E402

RTOL = 1e-10
LAYERS, HIDDEN, HEADS, VOCAB, SEQ, BATCH = 2, 32, 4, 53, 8, 3


class Conv1D(nn.Module):
    """Hugging Face's Conv1D: a linear layer with the weight [in, out]."""

    def __init__(self, nf, nx, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf)) if bias else None

    def forward(self, x):
        y = x @ self.weight
        return y + self.bias if self.bias is not None else y


class Attention(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.c_attn = Conv1D(3 * HIDDEN, HIDDEN, bias)
        self.c_proj = Conv1D(HIDDEN, HIDDEN, bias)
        self.register_buffer("bias", torch.tril(
            torch.ones(SEQ, SEQ, dtype=torch.bool)).view(1, 1, SEQ, SEQ))
        self.register_buffer("masked_bias", torch.tensor(-1e4))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(HIDDEN, dim=2)
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2)
                   for z in (q, k, v))
        w = q @ k.transpose(-1, -2) / math.sqrt(c // HEADS)
        w = w.masked_fill(~self.bias[:, :, :t, :t], float("-inf"))
        y = F.softmax(w, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.ln_1 = nn.LayerNorm(HIDDEN, elementwise_affine=True)
        self.attn = Attention(bias)
        self.ln_2 = nn.LayerNorm(HIDDEN)
        self.mlp = nn.Module()
        self.mlp.c_fc = Conv1D(4 * HIDDEN, HIDDEN, bias)
        self.mlp.c_proj = Conv1D(HIDDEN, 4 * HIDDEN, bias)
        if not bias:
            for ln in (self.ln_1, self.ln_2):
                ln.bias = None

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        h = F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp.c_proj(h)


class GPT2(nn.Module):
    """GPT2Model + the tied LM head; state dict names as the hub's files."""

    def __init__(self, bias=True):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.wpe = nn.Embedding(SEQ, HIDDEN)
        self.h = nn.ModuleList([Block(bias) for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(HIDDEN)
        if not bias:
            self.ln_f.bias = None

    def forward(self, ids, labels):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.h:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.T
        return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1),
                               ignore_index=-100)


def hf_model(seed, bias=True):
    model = GPT2(bias).double()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.2)
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") \
                    or name == "ln_f.weight":
                p.add_(1.0)
    return model


def hf_file(path, model, prefix=""):
    """The model's state dict as a safetensors file, buffers included."""
    safetensors_io.save(path, {prefix + k: v.detach().numpy()
                               for k, v in model.state_dict().items()})


def loom_ir(tmp_path, bias=True):
    """`loom-model gpt2` in f64, tanh GELU (GPT-2's `gelu_new`): its path."""
    ref.model_ir(
        tmp_path, "gpt2", "--layers", str(LAYERS), "--hidden", str(HIDDEN),
        "--heads", str(HEADS), "--vocab", str(VOCAB), "--seq", str(SEQ),
        "--batch", str(BATCH), "--bias", str(bias).lower())
    return tmp_path / "gpt2.mlir"


def convert(src, dst, frm, to, check=True):
    return tool("loom-ckpt", "convert", "--from", frm, "--to", to, src,
                "-o", dst, check=check)


def loom_loss(tmp_path, ir, weights_path, ids, labels):
    batch = tmp_path / "batch.safetensors"
    safetensors_io.save(batch, {"input_ids": ids.numpy(),
                                "labels": labels.numpy()})
    out = tmp_path / "out.safetensors"
    tool("loom-run", ir, "--entry", "forward", "--dtype", "f64", "--inputs",
         weights_path, "--inputs", batch, "--outputs", out)
    return float(safetensors_io.load(out)["loss"])


@pytest.mark.parametrize("prefix", ["", "transformer."])
@pytest.mark.parametrize("bias", [True, False])
def test_hf_file_gives_the_reference_loss(tmp_path, prefix, bias):
    model = hf_model(seed=5 + bias, bias=bias)
    hf_file(tmp_path / "hf.safetensors", model, prefix)
    result = convert(tmp_path / "hf.safetensors", tmp_path / "loom.safetensors",
                     "hf", "loom")
    # The mask buffers (2 per layer) are left out.
    assert f"({2 * LAYERS} other tensors left out)" in result.stdout
    ids, labels = ref.batch(VOCAB, BATCH, SEQ, seed=9)
    with torch.no_grad():
        expected = float(model(ids, labels))
    actual = loom_loss(tmp_path, loom_ir(tmp_path, bias),
                       tmp_path / "loom.safetensors", ids, labels)
    assert abs(actual - expected) <= RTOL * abs(expected), (actual, expected)


def test_round_trips_are_bit_identical(tmp_path):
    model = hf_model(seed=11)
    hf_file(tmp_path / "hf.safetensors", model)
    convert(tmp_path / "hf.safetensors", tmp_path / "a.safetensors", "hf",
            "loom")
    a = safetensors_io.load(tmp_path / "a.safetensors")
    for via in ("hf", "nanogpt"):
        convert(tmp_path / "a.safetensors", tmp_path / f"{via}.out", "loom",
                via)
        convert(tmp_path / f"{via}.out", tmp_path / "b.safetensors", via,
                "loom")
        b = safetensors_io.load(tmp_path / "b.safetensors")
        assert sorted(a) == sorted(b)
        for k in a:
            assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
            assert a[k].tobytes() == b[k].tobytes(), k
    # The hf file is Hugging Face's layout: it loads into the reference as
    # is (the buffers are the model's own), and nanoGPT's names the head.
    hf = safetensors_io.load(tmp_path / "hf.out")
    fresh = hf_model(seed=12)
    missing, unexpected = fresh.load_state_dict(
        {k: torch.from_numpy(v.copy()) for k, v in hf.items()}, strict=False)
    assert unexpected == [] and all(
        k.endswith(("attn.bias", "attn.masked_bias")) for k in missing)
    for k, v in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[k], v), k
    nano = safetensors_io.load(tmp_path / "nanogpt.out")
    assert np.array_equal(nano["lm_head.weight"],
                          nano["transformer.wte.weight"])
    assert nano["transformer.h.0.attn.c_attn.weight"].shape == \
        (3 * HIDDEN, HIDDEN)


def test_merged_checkpoint_in_hf_format_loads_in_the_reference(tmp_path):
    model = hf_model(seed=21)
    hf_file(tmp_path / "hf.safetensors", model)
    convert(tmp_path / "hf.safetensors", tmp_path / "loom.safetensors", "hf",
            "loom")
    # A Loom checkpoint of those weights on 2 ranks, merged as hf.
    tool("loom-ckpt", "split", tmp_path / "loom.safetensors", "--mesh",
         "dp=2", "-o", tmp_path / "ckpt")
    tool("loom-ckpt", "merge", tmp_path / "ckpt", "--format", "hf", "-o",
         tmp_path / "merged.safetensors")
    merged = safetensors_io.load(tmp_path / "merged.safetensors")
    fresh = hf_model(seed=22)
    missing, unexpected = fresh.load_state_dict(
        {k: torch.from_numpy(v.copy()) for k, v in merged.items()},
        strict=False)
    assert unexpected == [] and all(
        k.endswith(("attn.bias", "attn.masked_bias")) for k in missing)
    ids, labels = ref.batch(VOCAB, BATCH, SEQ, seed=23)
    with torch.no_grad():
        expected = float(fresh(ids, labels))
    actual = loom_loss(tmp_path, loom_ir(tmp_path),
                       tmp_path / "loom.safetensors", ids, labels)
    assert abs(actual - expected) <= RTOL * abs(expected), (actual, expected)


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.pop("h.1.mlp.c_fc.bias"),
     "missing tensor `h.1.mlp.c_fc.bias`"),
    (lambda t: t.update({"h.0.attn.c_attn.scale": np.zeros(1)}),
     "unexpected tensor `h.0.attn.c_attn.scale`: not a parameter of GPT-2"),
    (lambda t: t.update({"h.0.attn.c_attn.weight":
                         t["h.0.attn.c_attn.weight"].T.copy()}),
     "tensor `h.0.attn.c_attn.weight` has shape [96, 32], expected "
     "[32, 96] (Conv1D: [in, out])"),
    (lambda t: t.update({"ln_f.weight": np.ones(HIDDEN, np.int64)}),
     "tensor `ln_f.weight` is I64, expected a floating-point dtype"),
    (lambda t: t.update({"wpe.weight": t["wpe.weight"].astype(np.float32)}),
     "tensor `wpe.weight` is F32, but `wte.weight` is F64"),
])
def test_bad_files_are_errors_naming_the_tensor(tmp_path, edit, message):
    model = hf_model(seed=31)
    tensors = {k: v.detach().numpy().copy()
               for k, v in model.state_dict().items()}
    edit(tensors)
    safetensors_io.save(tmp_path / "bad.safetensors", tensors)
    result = convert(tmp_path / "bad.safetensors", tmp_path / "out", "hf",
                     "loom", check=False)
    assert result.returncode == 1
    assert message in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()
