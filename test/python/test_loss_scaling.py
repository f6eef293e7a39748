"""fp16 dynamic loss scaling (`loomc --precision fp16-mixed`, GradScaler's
semantics; docs/MixedPrecision.md, "fp16 loss scaling").

Checked through the interpreter (`loom-run`, f64 storage, the fp16 values
rounded exactly as the emitted programs round them):

- one fp16-mixed step of a tiny GPT-2 and Llama, partitioned over dp=4,
  ZeRO-1 over dp=4 and ZeRO-3 over dp=2, equals the single-device step to
  the 1e-10 of every equivalence test (steps.py), the loss-scaling state
  included; with tensor parallelism (whose fp16 partial sums are rounded
  before the all-reduce, as for bf16) the finiteness count is still the
  global one;
- the unscale: the step's Adam moments are those of the f32 step up to
  fp16 rounding (they would be 2^16 times larger without it), and an SGD
  step's parameters likewise;
- the skip: with the test hook's inf on a partitioned plan every gradient
  is non-finite, every parameter, AdamW state and the step counter come back
  bit for bit, the scale halves and the growth tracker restarts; the same
  state after a clean step grows the tracker;
- the state machine against a reference written from
  torch.cuda.amp.GradScaler's documented update rule (`GradScalerReference`
  below; torch 1.13's own GradScaler disables itself without CUDA), fed
  the per-step found-inf sequence of a real run: the scale and tracker each
  step, through growth after `growth_interval` clean steps;
- the constants (2^16, x2, x0.5, 2000) against GradScaler's defaults read
  from torch.
"""

import json
import math
import re
import shutil
import subprocess

import numpy as np
import pytest

import safetensors_io
from loom.tools import find_tool
from steps import NOT_CARRIED, assert_same, poisoned_inputs, run_step, tool

MODELS = {
    "gpt2": ["gpt2", "--layers", "2", "--hidden", "16", "--heads", "4",
             "--vocab", "32", "--seq", "8", "--batch", "8"],
    "llama": ["llama", "--layers", "2", "--hidden", "16", "--heads", "4",
              "--kv-heads", "2", "--ffn", "24", "--vocab", "32", "--seq", "8",
              "--batch", "8"],
}
OPTIMIZER = ["--optimizer", "adamw", "--lr", "0.01"]
PLANS = [
    ("dp4", 4, ["--mesh", "dp=4"]),
    ("zero1", 4, ["--parallel-config",
                  '{"data_parallel": 4, "optimizer_shard": true}']),
    ("zero3", 2, ["--parallel-config",
                  '{"data_parallel": 2, "optimizer_shard": 3}']),
]


class GradScalerReference:
    """torch.cuda.amp.GradScaler's scale update, from its documentation:
    "if inf/NaN gradients occur in an iteration, the scale is multiplied by
    backoff_factor [and] the optimizer.step() is skipped ... if
    growth_interval unskipped iterations occur consecutively, the scale is
    multiplied by growth_factor"."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000):
        self.scale = np.float32(init_scale)
        self.growth_tracker = 0
        self.growth_factor = np.float32(growth_factor)
        self.backoff_factor = np.float32(backoff_factor)
        self.growth_interval = growth_interval

    def update(self, found_inf):
        if found_inf:
            self.scale = np.float32(self.scale * self.backoff_factor)
            self.growth_tracker = 0
        else:
            self.growth_tracker += 1
            if self.growth_tracker == self.growth_interval:
                self.scale = np.float32(self.scale * self.growth_factor)
                self.growth_tracker = 0


def test_reference_follows_the_documented_rule():
    """The reference itself: backoff on inf, growth after exactly
    growth_interval consecutive clean steps, an inf restarting the count."""
    ref = GradScalerReference(growth_interval=3)
    scales = []
    for found in [False, False, True, False, False, False, False]:
        ref.update(found)
        scales.append(float(ref.scale))
    assert scales == [65536, 65536, 32768, 32768, 32768, 65536, 65536]


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, tmp_path_factory):
    """A model, a batch and its single-device fp16-mixed and f32 steps."""
    name = request.param
    tmp = tmp_path_factory.mktemp(name)
    path = tmp / f"{name}.mlir"
    tool("loom-model", *MODELS[name], "-o", path)
    rng = np.random.default_rng(5)
    batch = {role: rng.integers(0, 32, size=(8, 8)).astype(np.int64)
             for role in ("input_ids", "labels")}
    inputs = tmp / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    steps = {}
    for precision in ("fp16-mixed", "f32"):
        train = tmp / f"single-{precision}.mlir"
        tool("loomc", path, "--compile-to=autodiff", "--precision", precision,
             *OPTIMIZER, "-o", train)
        steps[precision] = run_step(tmp, train, inputs, f"single-{precision}")
    return name, tmp, path, batch, inputs, steps


def compile_plan(tmp, path, name, flags, extra=()):
    out = tmp / f"{name}.mlir"
    tool("loomc", path, "--compile-to=partition", "--precision", "fp16-mixed",
         *OPTIMIZER, *extra, *flags, "-o", out)
    return out


def test_clean_step_state(model):
    """A clean first step: nothing non-finite, the update applied (step 1),
    the scale kept at 2^16 and the tracker at 1."""
    name, tmp, path, batch, inputs, steps = model
    out = steps["fp16-mixed"]
    assert float(out["found_inf"]) == 0
    assert float(out["loss_scale"]) == 65536.0
    assert int(out["loss_scale.growth_tracker"]) == 1
    assert int(out["step"]) == 1


@pytest.mark.parametrize("plan,devices,flags", PLANS,
                         ids=[p[0] for p in PLANS])
def test_partitioned_equals_single_device(model, plan, devices, flags):
    name, tmp, path, batch, inputs, steps = model
    program = compile_plan(tmp, path, plan, flags)
    assert_same(steps["fp16-mixed"],
                run_step(tmp, program, inputs, plan, ranks=devices), plan)


def test_tensor_parallel_counts_every_shard(model):
    """dp=2 x tp=2: the gradients split over tp give partial counts, which
    the partitioned program all-reduces (the count's rule is a reduction):
    every rank agrees on the clean step, and on the poisoned one every
    element of every shard is counted."""
    name, tmp, path, batch, inputs, steps = model
    program = compile_plan(tmp, path, "dp2tp2", ["--mesh", "dp=2,tp=2"])
    text = program.read_text()
    assert "loom.nonfinite_count" in text and "dist.all_reduce" in text
    clean = run_step(tmp, program, inputs, "dp2tp2", ranks=4)
    assert float(clean["found_inf"]) == 0
    poisoned = poisoned_inputs(tmp, "dp2tp2-inf", batch, clean)
    out = run_step(tmp, program, poisoned, "dp2tp2-skip", ranks=4)
    params = sum(v.size for k, v in clean.items()
                 if k not in NOT_CARRIED and "." in k and
                 not k.startswith("loss_scale") and "exp_avg" not in k)
    assert float(out["found_inf"]) == params


def test_unscaled_gradients_are_the_f32_ones(model):
    """Adam's first moment after one step is 0.1 g: in fp16-mixed it is the
    f32 step's up to fp16 rounding of the activations (2^-11 relative per
    rounding, a few accumulate: 2^-5 of the largest moment bounds it), and
    far from 2^16 times it, which a step that forgot to unscale would
    give."""
    name, tmp, path, batch, inputs, steps = model
    for key, expected in steps["f32"].items():
        if not key.endswith(".exp_avg"):
            continue
        actual = steps["fp16-mixed"][key]
        scale = float(np.max(np.abs(expected)))
        err = float(np.max(np.abs(actual - expected)))
        assert err <= 2.0 ** -5 * scale, f"{key}: {err / scale:.3e}"


def test_sgd_step_is_unscaled(tmp_path):
    """SGD is not scale-invariant (Adam nearly is): the fp16-mixed SGD
    step's parameters follow the f32 step's to fp16 rounding."""
    path = tmp_path / "gpt.mlir"
    tool("loom-model", *MODELS["gpt2"], "-o", path)
    rng = np.random.default_rng(7)
    batch = {role: rng.integers(0, 32, size=(8, 8)).astype(np.int64)
             for role in ("input_ids", "labels")}
    inputs = tmp_path / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    out = {}
    for precision in ("fp16-mixed", "f32"):
        train = tmp_path / f"{precision}.mlir"
        tool("loomc", path, "--compile-to=autodiff", "--precision", precision,
             "--optimizer", "sgd", "--lr", "1.0", "-o", train)
        out[precision] = run_step(tmp_path, train, inputs, precision)
    for key, expected in out["f32"].items():
        if key in NOT_CARRIED or key == "step" or key.startswith("loss_scale"):
            continue
        moved = float(np.max(np.abs(expected)))
        err = float(np.max(np.abs(out["fp16-mixed"][key] - expected)))
        assert err <= 2.0 ** -5 * moved, f"{key}: {err / moved:.3e}"


@pytest.mark.parametrize("plan,devices,flags", PLANS[:2] + [
    ("single", None, [])], ids=["dp4", "zero1", "single"])
def test_non_finite_step_is_skipped(model, plan, devices, flags):
    """From the state after a clean step, a step whose gradients are all
    inf/NaN returns every parameter, AdamW moment and the step counter bit
    for bit; the scale halves (GradScaler's backoff) and the tracker
    restarts."""
    name, tmp, path, batch, inputs, steps = model
    state = steps["fp16-mixed"]
    program = (tmp / "single-fp16-mixed.mlir" if plan == "single"
               else compile_plan(tmp, path, plan, flags))
    poisoned = poisoned_inputs(tmp, f"{plan}-inf", batch, state)
    out = run_step(tmp, program, poisoned, f"{plan}-skip", ranks=devices)
    assert float(out["found_inf"]) > 0
    assert float(out["loss_scale"]) == 32768.0
    assert int(out["loss_scale.growth_tracker"]) == 0
    kept = 0
    for key, value in state.items():
        if key in NOT_CARRIED or key.startswith("loss_scale"):
            continue
        np.testing.assert_array_equal(out[key], value, err_msg=key)
        kept += 1
    assert kept > 3


# The emitted trainer's scale, step by step: injected non-finite steps and
# a stretch of clean ones long enough for a growth (2000 clean steps).
INJECT = [3, 4, 10]
# Segments of one run, each resumed from the last one's checkpoint.
SEGMENTS = [4, 10, 2009, 2010, 2012]


def run(args):
    return subprocess.run([str(a) for a in args], check=True,
                          capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("mpirun") is None,
                    reason="the emitted trainer runs under mpirun")
def test_trainer_follows_grad_scaler(tmp_path):
    """The emitted host trainer (1 rank, f32) of a tiny fp16-mixed GPT-2,
    with inf injected at steps 3, 4 and 10 (`--inject-nonfinite-at-step`),
    trained to step 2012 in resumed segments: its per-step skips (metrics)
    and the scale and growth tracker in each segment's checkpoint are the
    reference GradScaler's fed the same found-inf sequence (halved at 3, 4
    and 10, doubled at 2010, the 2000th clean step after 10), the trainer
    reports 3 skipped steps, and the step counter counts only the applied
    updates."""
    run([find_tool("loom-model"), "gpt2", "--layers", "1", "--hidden", "16",
         "--heads", "2", "--vocab", "256", "--seq", "8", "--batch", "2",
         "-o", tmp_path / "gpt.mlir"])
    text = tmp_path / "text.txt"
    text.write_text("To be, or not to be, that is the question:\n" * 40)
    run([find_tool("loom-data"), "encode", "--input", text, "--output",
         tmp_path / "tokens.bin"])
    run([find_tool("loomc"), tmp_path / "gpt.mlir", "--devices", "1",
         "--precision", "fp16-mixed", "--emit", "host", "--emit-dtypes",
         "f32", "-o", tmp_path / "prog"])
    ref = GradScalerReference()
    metrics = tmp_path / "metrics.jsonl"
    skipped_lines = 0
    done = 0
    for end in SEGMENTS:
        log = run([tmp_path / "prog" / "launch.sh", "--data",
                   tmp_path / "tokens.bin", "--steps", end, "--ckpt-dir",
                   tmp_path / "ckpt", "--metrics", metrics,
                   "--inject-nonfinite-at-step",
                   ",".join(map(str, INJECT)),
                   *(["--resume"] if done else [])]).stdout
        skipped_lines += sum(
            1 for line in log.splitlines() if line.startswith("step ") and
            line.endswith("| skipped (inf/nan gradients)"))
        summary = [line for line in log.splitlines()
                   if line.startswith("loss scaling:")]
        ran = end - done
        skipped_here = sum(1 for s in INJECT if done < s <= end)
        assert summary == [f"loss scaling: {skipped_here} of {ran} steps "
                           "skipped (inf/nan gradients)"], summary
        for step in range(done + 1, end + 1):
            ref.update(step in INJECT)
        done = end
        merged = tmp_path / f"step-{end}.safetensors"
        run([find_tool("loom-ckpt"), "merge",
             tmp_path / "ckpt" / f"step-{end:08d}", "-o", merged])
        state = safetensors_io.load(merged)
        assert float(state["loss_scale"]) == float(ref.scale), end
        assert int(state["loss_scale.growth_tracker"]) == \
            ref.growth_tracker, end
        applied = end - sum(1 for s in INJECT if s <= end)
        assert int(state["step"]) == applied, end
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [r["step"] for r in records] == list(range(1, SEGMENTS[-1] + 1))
    assert [r["step"] for r in records if r["skipped"]] == INJECT
    assert skipped_lines == len(INJECT)
    assert all(math.isfinite(r["loss"]) for r in records)


def test_defaults_are_grad_scalers(tmp_path):
    """The step's initial scale, factors and interval are the defaults of
    torch.cuda.amp.GradScaler, read from torch itself (its constructor's
    signature; the scaler disables itself without CUDA, so only its
    defaults are taken)."""
    torch = pytest.importorskip("torch")
    import inspect
    defaults = {name: p.default for name, p in inspect.signature(
        torch.cuda.amp.GradScaler.__init__).parameters.items()}
    path = tmp_path / "gpt.mlir"
    tool("loom-model", *MODELS["gpt2"], "-o", path)
    train = tmp_path / "train.mlir"
    tool("loomc", path, "--compile-to=autodiff", "--precision", "fp16-mixed",
         "-o", train)
    text = train.read_text()
    initial = re.search(r"loom\.initial_value = ([0-9.e+-]+) : f64", text)
    update = re.search(r"loom\.update_loss_scale .*\{backoff_factor = "
                       r"([0-9.e+-]+) : f64, growth_factor = ([0-9.e+-]+) : "
                       r"f64, growth_interval = (\d+) : i64", text)
    assert float(initial.group(1)) == defaults["init_scale"]
    assert float(update.group(1)) == defaults["backoff_factor"]
    assert float(update.group(2)) == defaults["growth_factor"]
    assert int(update.group(3)) == defaults["growth_interval"]
