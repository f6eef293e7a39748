"""Loom's optimizer defaults are `torch.optim`'s, read from torch.optim.

An optimizer called SGD or AdamW promises `torch.optim.SGD`'s and
`torch.optim.AdamW`'s defaults (docs/Autodiff.md, "Optimizer defaults"):

- the defaults are read from the signatures of `torch.optim.SGD` and
  `torch.optim.AdamW` themselves (never written down here), and compared
  with the attributes of the `loom.sgd_update` / `loom.adamw_update` ops
  that `loomc --compile-to=autodiff` and `loom.compile(phase="autodiff")`
  write when only the optimizer and the learning rate are given, so the two
  cannot drift apart;
- one SGD step and one AdamW step of a tiny GPT-2 and Llama, built by
  Loom with nothing but `optimizer` and `lr`, equal
  `torch.optim.SGD(params, lr)` and `torch.optim.AdamW(groups, lr)` with
  every other argument at PyTorch's default (relative error <= 1e-9 in
  f64), against the plain-PyTorch models of test_loom_run_torch.py.
  AdamW's groups are nanoGPT's (decay on the matrices, none on biases and
  norm weights: Loom's `decay` flags); the decay group takes
  `torch.optim.AdamW`'s default weight decay.

Skipped when PyTorch is not installed.
"""

import inspect
import re
import subprocess

import pytest

import loom
from loom.tools import find_tool

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python; the "
    "cross-checks against PyTorch need `import torch`")

import test_autodiff_torch as steps  # noqa: E402  (after the torch check)
import test_loom_run_torch as ref  # noqa: E402

RTOL = 1e-9
LR = 0.25
# AdamW's first update is lr * g / (|g| + eps) per element: where a gradient
# element is within a few eps of zero, an absolute difference e between two
# correct gradients (summed in another order: OpenBLAS picks its GEMM kernels
# by CPU, torch its own) moves the parameter by up to lr * e / eps. On the
# GPT-2 of these tests that reaches 1.4e-9 of the largest parameter on an AMD
# EPYC (1e-9 held on the machines before it); the gradients themselves agree
# to 1e-9 (test_autodiff_torch.py).
ADAMW_RTOL = 1e-8


def torch_defaults(optimizer):
    """The keyword defaults of `torch.optim.<optimizer>`'s constructor."""
    return {name: p.default for name, p in
            inspect.signature(optimizer).parameters.items()
            if p.default is not inspect.Parameter.empty}


def update_attrs(ir, op):
    """The attributes of every `loom.<op>` in `ir`, as dicts of text."""
    found = []
    for match in re.finditer(r"loom\." + op + r" [^{]*\{([^}]*)\}", ir):
        attrs = {}
        for item in match.group(1).split(", "):
            key, _, value = item.partition(" = ")
            attrs[key.strip()] = value.split(" : ")[0].strip() if value else True
        found.append(attrs)
    assert found, f"no loom.{op} in the IR"
    return found


def decay_flags(ir):
    """Whether each parameter decays, in the order of @train_step's updates
    (the order of @forward's `#loom.param` arguments)."""
    return [m.group(1) == "true" for m in re.finditer(
        r'#loom\.param<"[^"]+"[^>]*decay = (true|false)>', ir.split(
            "func.func @train_step")[0])]


def gpt2_ir(tmp_path):
    path = tmp_path / "gpt2.mlir"
    subprocess.run([str(find_tool("loom-model")), "gpt2", "--layers", "1",
                    "--hidden", "8", "--heads", "2", "--vocab", "11", "--seq",
                    "4", "--batch", "2", "--dtype", "f64", "-o", str(path)],
                   check=True, capture_output=True)
    return path


def loomc_autodiff(path, *flags):
    result = subprocess.run(
        [str(find_tool("loomc")), str(path), "--compile-to=autodiff", *flags,
         "-o", "-"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def python_autodiff(**options):
    model = loom.models.gpt2(layers=1, hidden=8, heads=2, vocab=11, seq=4,
                             batch=2, dtype="f64")
    return loom.compile(model, phase="autodiff", **options).ir


def check_sgd(ir, defaults):
    flags = decay_flags(ir)
    updates = update_attrs(ir, "sgd_update")
    assert len(updates) == len(flags) and any(flags)
    for attrs in updates:
        # Every parameter, decaying or not, gets torch.optim.SGD's defaults.
        assert float(attrs["lr"]) == LR
        assert float(attrs["momentum"]) == defaults["momentum"]
        assert float(attrs["weight_decay"]) == defaults["weight_decay"]
        assert float(attrs.get("dampening", 0.0)) == defaults["dampening"]
        assert ("nesterov" in attrs) == defaults["nesterov"]
    assert defaults["maximize"] is False


def check_adamw(ir, defaults, lr):
    flags = decay_flags(ir)
    updates = update_attrs(ir, "adamw_update")
    assert len(updates) == len(flags) and any(flags) and not all(flags)
    for attrs, decay in zip(updates, flags):
        assert float(attrs["lr"]) == lr
        assert (float(attrs["beta1"]), float(attrs["beta2"])) == \
            tuple(defaults["betas"])
        assert float(attrs["eps"]) == defaults["eps"]
        # nanoGPT's groups: the decay group takes AdamW's default.
        assert float(attrs["weight_decay"]) == (
            defaults["weight_decay"] if decay else 0.0)
    assert defaults["amsgrad"] is False and defaults["maximize"] is False


def test_sgd_defaults_equal_torch(tmp_path):
    defaults = torch_defaults(torch.optim.SGD)
    # The lr is the user's (torch.optim.SGD requires it up to PyTorch 2.1).
    path = gpt2_ir(tmp_path)
    check_sgd(loomc_autodiff(path, "--optimizer", "sgd", "--lr", str(LR)),
              defaults)
    check_sgd(python_autodiff(optimizer="sgd", lr=LR), defaults)


def test_adamw_defaults_equal_torch(tmp_path):
    defaults = torch_defaults(torch.optim.AdamW)
    path = gpt2_ir(tmp_path)
    check_adamw(loomc_autodiff(path, "--lr", str(LR)), defaults, LR)
    check_adamw(python_autodiff(lr=LR), defaults, LR)
    # Without --lr, AdamW's default learning rate too.
    check_adamw(loomc_autodiff(path), defaults, defaults["lr"])
    check_adamw(python_autodiff(optimizer="adamw"), defaults, defaults["lr"])


def test_explicit_weight_decay_applies_to_both(tmp_path):
    path = gpt2_ir(tmp_path)
    for optimizer, op in (("sgd", "sgd_update"), ("adamw", "adamw_update")):
        ir = loomc_autodiff(path, "--optimizer", optimizer, "--lr", str(LR),
                            "--weight-decay", "0.125")
        for attrs, decay in zip(update_attrs(ir, op), decay_flags(ir)):
            assert float(attrs["weight_decay"]) == (0.125 if decay else 0.0)


def expect_one_step(out, loss, params, rtol=RTOL):
    """Loom's step gave PyTorch's loss, one step, and PyTorch's parameters."""
    ref.close(out["loss"], loss, RTOL)
    assert int(out["step"]) == 1
    for name, p in params.items():
        ref.close(out[name], p.detach(), rtol)


@pytest.mark.parametrize("model", sorted(steps.MODELS))
def test_default_sgd_step(tmp_path, model):
    ir, w, ids, labels, params, loss = steps.prepare(tmp_path, model)
    loss.backward()
    torch.optim.SGD(params.values(), lr=LR).step()
    out = steps.train_step(tmp_path, ir, f"optimizer=sgd lr={LR}",
                           {**w, "input_ids": ids, "labels": labels})
    expect_one_step(out, loss, params)


@pytest.mark.parametrize("model", sorted(steps.MODELS))
def test_default_adamw_step(tmp_path, model):
    ir, w, ids, labels, params, loss = steps.prepare(tmp_path, model)
    decay = steps.decayed(ir)
    assert decay and decay != set(w)
    loss.backward()
    # The decay group keeps AdamW's default weight decay; betas, eps too.
    torch.optim.AdamW(
        [{"params": [p for k, p in params.items() if k in decay]},
         {"params": [p for k, p in params.items() if k not in decay],
          "weight_decay": 0.0}], lr=LR).step()
    out = steps.train_step(tmp_path, ir, f"optimizer=adamw lr={LR}",
                           {**w, "input_ids": ids, "labels": labels})
    expect_one_step(out, loss, params, ADAMW_RTOL)
