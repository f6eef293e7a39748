"""Whole-model training steps agree with PyTorch in f64.

For tiny `loom-model gpt2` and `loom-model llama` (grouped-query attention)
on weights and a batch written from PyTorch, `@train_step` run through
`loom-run` against the plain-PyTorch models of test_loom_run_torch.py:

- `optimizer=none`: every `<param>.grad` equals `torch.autograd`'s gradient
  of the same loss;
- one SGD step (lr 1) equals `torch.optim.SGD`;
- one AdamW step with global-norm clipping equals
  `torch.nn.utils.clip_grad_norm_` then `torch.optim.AdamW` (and its
  `grad_norm` result equals the norm clip_grad_norm_ returns), weight decay on
  the parameters whose `#loom.param` says `decay = true` (nanoGPT's grouping:
  the matrices, not the biases and norm weights), clipping triggered.

Every comparison asks for a relative error (max |loom - torch| over
max |torch|) of at most 1e-9. Skipped when PyTorch is not installed.
"""

import re
import subprocess

import pytest

from loom.tools import find_tool

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python; the "
    "cross-checks against PyTorch need `import torch`")

import test_loom_run_torch as ref  # noqa: E402  (after the torch check)

RTOL = 1e-9

GPT2 = dict(layers=2, hidden=32, heads=4, vocab=53, seq=8, batch=2)
LLAMA = dict(layers=2, hidden=32, heads=4, kv_heads=2, ffn=48, vocab=53,
             seq=8, batch=2, theta=10000.0, eps=1e-5)


def gpt2_model(tmp_path):
    c = GPT2
    ir = ref.model_ir(tmp_path, "gpt2", "--layers", str(c["layers"]),
                      "--hidden", str(c["hidden"]), "--heads", str(c["heads"]),
                      "--vocab", str(c["vocab"]), "--seq", str(c["seq"]),
                      "--batch", str(c["batch"]))
    w = ref.weights(ref.gpt2_shapes(c["layers"], c["hidden"], c["vocab"],
                                    c["seq"]), seed=50)

    def loss(params, ids, labels):
        return ref.gpt2_reference(params, ids, labels, c["layers"], c["heads"])
    return ir, w, loss


def llama_model(tmp_path):
    c = LLAMA
    ir = ref.model_ir(tmp_path, "llama", "--layers", str(c["layers"]),
                      "--hidden", str(c["hidden"]), "--heads", str(c["heads"]),
                      "--kv-heads", str(c["kv_heads"]), "--ffn", str(c["ffn"]),
                      "--vocab", str(c["vocab"]), "--seq", str(c["seq"]),
                      "--batch", str(c["batch"]), "--rope-theta",
                      str(c["theta"]), "--norm-eps", str(c["eps"]))
    w = ref.weights(ref.llama_shapes(c["layers"], c["hidden"], c["heads"],
                                     c["kv_heads"], c["ffn"], c["vocab"]),
                    seed=52)

    def loss(params, ids, labels):
        return ref.llama_reference(params, ids, labels, c["layers"], c["heads"],
                                   c["kv_heads"], c["theta"], c["eps"])
    return ir, w, loss


MODELS = {"gpt2": (gpt2_model, GPT2), "llama": (llama_model, LLAMA)}


def decayed(ir):
    """The names of the parameters whose `#loom.param` sets `decay = true`."""
    return {m.group(1) for m in re.finditer(
        r'#loom\.param<"([^"]+)"[^>]*decay = true', ir)}


def train_step(tmp_path, ir, options, inputs):
    """`loom-autodiff{options}` on `ir`, then @train_step through loom-run
    (states and `step` start at zero)."""
    (tmp_path / "forward.mlir").write_text(ir)
    result = subprocess.run(
        [str(find_tool("loom-opt")), str(tmp_path / "forward.mlir"),
         f"-loom-autodiff={options}", "-loom-verify-train-step"],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return ref.run(tmp_path, result.stdout, inputs, entry="train_step")


def prepare(tmp_path, model):
    build, config = MODELS[model]
    ir, w, loss = build(tmp_path)
    ids, labels = ref.batch(config["vocab"], config["batch"], config["seq"],
                            seed=51)
    params = {k: torch.nn.Parameter(v.clone()) for k, v in w.items()}
    return ir, w, ids, labels, params, loss(params, ids, labels)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_gradients(tmp_path, model):
    ir, w, ids, labels, params, loss = prepare(tmp_path, model)
    loss.backward()
    out = train_step(tmp_path, ir, "optimizer=none",
                     {**w, "input_ids": ids, "labels": labels})
    ref.close(out["loss"], loss, RTOL)
    assert {k[:-len(".grad")] for k in out if k.endswith(".grad")} == set(w)
    for name, p in params.items():
        ref.close(out[name + ".grad"], p.grad, RTOL)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_sgd_step(tmp_path, model):
    ir, w, ids, labels, params, loss = prepare(tmp_path, model)
    loss.backward()
    torch.optim.SGD(params.values(), lr=1.0).step()
    out = train_step(tmp_path, ir, "optimizer=sgd lr=1.0 weight-decay=0.0",
                     {**w, "input_ids": ids, "labels": labels})
    ref.close(out["loss"], loss, RTOL)
    assert int(out["step"]) == 1
    for name, p in params.items():
        ref.close(out[name], p.detach(), RTOL)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_adamw_clipped_step(tmp_path, model):
    ir, w, ids, labels, params, loss = prepare(tmp_path, model)
    lr, betas, eps, wd, clip = 1e-3, (0.9, 0.95), 1e-8, 0.1, 1.0
    # nanoGPT's groups: the matrices (embeddings included) decay, biases
    # and norm weights do not; loom-model marks them so.
    decay = decayed(ir)
    assert decay == {k for k, v in w.items() if v.dim() >= 2}
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(params.values(), clip)
    assert norm > 2 * clip, f"clipping does not trigger (norm {norm})"
    opt = torch.optim.AdamW(
        [{"params": [p for k, p in params.items() if k in decay],
          "weight_decay": wd},
         {"params": [p for k, p in params.items() if k not in decay],
          "weight_decay": 0.0}], lr=lr, betas=betas, eps=eps)
    opt.step()
    out = train_step(
        tmp_path, ir,
        f"optimizer=adamw lr={lr} beta1={betas[0]} beta2={betas[1]} eps={eps} "
        f"weight-decay={wd} clip-norm={clip}",
        {**w, "input_ids": ids, "labels": labels})
    ref.close(out["loss"], loss, RTOL)
    # The step returns the norm clip_grad_norm_ returns (before clipping).
    ref.close(out["grad_norm"], norm, RTOL)
    assert int(out["step"]) == 1
    for name, p in params.items():
        ref.close(out[name], p.detach(), RTOL)
        ref.close(out[name + ".exp_avg"], opt.state[p]["exp_avg"], RTOL)
        ref.close(out[name + ".exp_avg_sq"], opt.state[p]["exp_avg_sq"], RTOL)
