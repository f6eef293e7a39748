"""The trainer's learning-rate schedules equal PyTorch's and nanoGPT's.

The emitted training executable (`launch.sh`) of a tiny GPT-2, compiled once
with SGD and `--lr 0.01` on 2 host ranks (mesh dp=2) in f64, trains with
each `--lr-schedule` and writes the rate its updates used at every step to
`--metrics` (docs/Runtime.md, "Learning-rate schedules"). Those rates equal,
step by step to a relative 1e-12 (the factor fed to `lr_scale` is rounded
once to f64), the rates of:

- `torch.optim.lr_scheduler.StepLR`, `CosineAnnealingLR` (up to its period)
  and `LinearLR`, driven as a training loop drives them (read the rate, step
  the optimizer, step the scheduler);
- nanoGPT's `get_lr` (linear warmup, then cosine to `min_lr`), written out
  here from nanoGPT's train.py;
- a `LambdaLR` of nanoGPT's warmup followed by StepLR's decay.

The schedules are computed here from the public definitions, never from
Loom's code. The metrics file's `mfu` is checked against the plan's FLOPs
and the peak of a cluster file this test writes, and is absent for a plan
without a cluster. Skipped without PyTorch or mpirun.
"""

import json
import math
import os
import pathlib
import shutil
import subprocess

import pytest

from loom.tools import find_tool
import safetensors_io

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python; the "
    "schedules are compared with torch.optim.lr_scheduler")

BASE_LR = 0.01
STEPS = 24
RTOL = 1e-12

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None,
                                reason="the emitted trainer runs under mpirun")


def run(args, **kwargs):
    return subprocess.run([str(a) for a in args], check=True,
                          capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """The emitted 2-rank trainer of a tiny GPT-2, and a token file."""
    root = tmp_path_factory.mktemp("schedules")
    run([find_tool("loom-model"), "gpt2", "--layers", "1", "--hidden", "16",
         "--heads", "2", "--vocab", "256", "--seq", "8", "--batch", "4",
         "-o", root / "gpt.mlir"])
    text = root / "text.txt"
    text.write_text("To be, or not to be, that is the question:\n" * 40)
    run([find_tool("loom-data"), "encode", "--input", text, "--output",
         root / "tokens.bin"])
    run([find_tool("loomc"), root / "gpt.mlir", "--mesh", "dp=2",
         "--optimizer", "sgd", "--lr", str(BASE_LR), "--emit", "host",
         "--emit-dtypes", "f64", "-o", root / "prog"])
    return root


def trainer_rates(program, name, flags):
    """The `lr` of every step of `launch.sh ... FLAGS --metrics`."""
    metrics = program / f"{name}.jsonl"
    run([program / "prog" / "launch.sh", "--data", program / "tokens.bin",
         "--steps", str(STEPS), "--dtype", "f64", "--metrics", metrics,
         *flags])
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [r["step"] for r in records] == list(range(1, STEPS + 1))
    for r in records:
        assert set(r) >= {"step", "loss", "lr", "step_ms", "tokens_per_s"}
        assert math.isfinite(r["loss"])
    return [r["lr"] for r in records]


def torch_rates(make_scheduler):
    """The rate of each step of a loop that steps the scheduler after the
    optimizer, as PyTorch's documentation drives schedulers."""
    param = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([param], lr=BASE_LR)
    scheduler = make_scheduler(optimizer)
    rates = []
    for _ in range(STEPS):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return rates


def nanogpt_get_lr(it, learning_rate, warmup_iters, lr_decay_iters, min_lr):
    """nanoGPT's train.py get_lr: linear warmup, cosine decay to min_lr."""
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def assert_rates(got, want):
    assert len(got) == len(want)
    for step, (g, w) in enumerate(zip(got, want)):
        assert g == pytest.approx(w, rel=RTOL, abs=0), f"step {step}"


def test_constant_is_the_compiled_rate(program):
    assert trainer_rates(program, "constant", []) == [BASE_LR] * STEPS


def test_step_equals_steplr(program):
    got = trainer_rates(program, "step", ["--lr-schedule", "step",
                                          "--step-every", "5",
                                          "--step-gamma", "0.7"])
    assert_rates(got, torch_rates(lambda o: torch.optim.lr_scheduler.StepLR(
        o, step_size=5, gamma=0.7)))


def test_cosine_equals_cosineannealinglr(program):
    got = trainer_rates(program, "cosine", ["--lr-schedule", "cosine",
                                            "--min-lr", "0.001"])
    assert_rates(got, torch_rates(
        lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(
            o, T_max=STEPS, eta_min=0.001)))


def test_linear_equals_linearlr(program):
    got = trainer_rates(program, "linear", ["--lr-schedule", "linear",
                                            "--min-lr", "0.002",
                                            "--decay-steps", "16"])
    assert_rates(got, torch_rates(
        lambda o: torch.optim.lr_scheduler.LinearLR(
            o, start_factor=1.0, end_factor=0.2, total_iters=16)))


def test_warmup_and_cosine_equal_nanogpt(program):
    got = trainer_rates(program, "nanogpt", ["--lr-schedule", "cosine",
                                             "--warmup-steps", "4",
                                             "--min-lr", "0.001",
                                             "--decay-steps", "20"])
    assert_rates(got, [nanogpt_get_lr(it, BASE_LR, 4, 20, 0.001)
                       for it in range(STEPS)])


def test_warmup_and_step_equal_lambdalr(program):
    got = trainer_rates(program, "warmstep", ["--lr-schedule", "step",
                                              "--warmup-steps", "3",
                                              "--step-every", "4",
                                              "--step-gamma", "0.5"])

    def factor(t):
        return (t + 1) / 4 if t < 3 else 0.5 ** ((t - 3) // 4)
    assert_rates(got, torch_rates(
        lambda o: torch.optim.lr_scheduler.LambdaLR(o, factor)))


def test_bad_schedule_is_refused_by_its_flag(program):
    result = subprocess.run(
        [str(program / "prog" / "launch.sh"), "--data",
         str(program / "tokens.bin"), "--steps", "4", "--dtype", "f64",
         "--lr-schedule", "cosine", "--min-lr", "0.5"],
        capture_output=True, text=True)
    assert result.returncode != 0
    assert ("--min-lr 0.5 exceeds the compiled learning rate 0.01 (loomc "
            "--lr)") in result.stderr


def test_metrics_mfu_and_grad_norm(tmp_path):
    """`mfu` = the plan's model FLOPs per step / step time / (devices x the
    cluster's f32 peak), for a plan the search made for a cluster file
    written here (its peak chosen by the test); `grad_norm` of a step
    compiled with clipping is the interpreter's on the same batch."""
    peak = 1.0e9
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps({
        "name": "test", "devices_per_node": 2,
        "device": {"name": "test core",
                   "peak_flops": {"f64": peak / 2, "f32": peak},
                   "memory_bandwidth": 5e9, "memory_bytes": 12 << 30},
        "intra_node": {"bandwidth": 3.5e9, "latency": 1e-6},
        "inter_node": {"bandwidth": 6.25e8, "latency": 5e-5}}))
    run([find_tool("loom-model"), "gpt2", "--layers", "1", "--hidden", "16",
         "--heads", "2", "--vocab", "256", "--seq", "8", "--batch", "4",
         "-o", tmp_path / "gpt.mlir"])
    text = tmp_path / "text.txt"
    text.write_text("Now is the winter of our discontent\n" * 40)
    run([find_tool("loom-data"), "encode", "--input", text, "--output",
         tmp_path / "tokens.bin"])
    run([find_tool("loomc"), tmp_path / "gpt.mlir", "--cluster", cluster,
         "--devices", "2", "--clip-norm", "1.0", "--emit", "host",
         "--emit-dtypes", "f32", "--plan-json", tmp_path / "plan.json",
         "-o", tmp_path / "prog"])
    flops = json.loads((tmp_path / "plan.json").read_text())[
        "predicted"]["model_flops_per_step"]
    assert flops > 0
    metrics = tmp_path / "m.jsonl"
    run([tmp_path / "prog" / "launch.sh", "--data", tmp_path / "tokens.bin",
         "--steps", "3", "--metrics", metrics])
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert len(records) == 3
    for r in records:
        want = flops / (r["step_ms"] / 1e3) / (2 * peak)
        assert r["mfu"] == pytest.approx(want, rel=1e-12)
        assert r["tokens_per_s"] == pytest.approx(4 * 8 / (r["step_ms"] / 1e3),
                                                  rel=1e-12)
    # Step 1's batch and state are loom-run's (seed 0, RNG step 0).
    run([find_tool("loom-data"), "batch", tmp_path / "tokens.bin", "--batch",
         "4", "--seq", "8", "--step", "0", "--seed", "0", "-o",
         tmp_path / "batch0.safetensors"])
    run([find_tool("loom-run"), tmp_path / "prog" / "step.mlir", "--entry",
         "train_step", "--ranks", "2", "--dtype", "f32", "--inputs",
         tmp_path / "batch0.safetensors", "--outputs",
         tmp_path / "out.safetensors"])
    out = safetensors_io.load(tmp_path / "out.safetensors")
    assert float(out["grad_norm"]) > 0
    assert records[0]["grad_norm"] == pytest.approx(float(out["grad_norm"]),
                                                    rel=1e-6)
    assert records[0]["loss"] == pytest.approx(float(out["loss"]), rel=1e-6)


def test_metrics_omit_mfu_without_a_cluster(program):
    """The schedules' program has a mesh but no searched cluster plan, and
    no clipping."""
    metrics = program / "nocluster.jsonl"
    log = run([program / "prog" / "launch.sh", "--data",
               program / "tokens.bin", "--steps", "2", "--dtype", "f64",
               "--metrics", metrics]).stdout
    for line in metrics.read_text().splitlines():
        assert "mfu" not in json.loads(line)
        assert "grad_norm" not in json.loads(line)  # no clipping
    # The trainer says why the norm is missing, and how to get it.
    assert ("note: --metrics: no grad_norm: @train_step does not compute the "
            "gradient norm (compile it with loomc --grad-norm, or "
            "--clip-norm)") in log


def test_metrics_grad_norm_without_clipping(program):
    """`loomc --grad-norm` returns the global gradient norm without
    clipping: the metrics report the interpreter's norm on the same batch,
    and the training follows the program compiled without it bit for bit
    (nothing is clipped)."""
    run([find_tool("loomc"), program / "gpt.mlir", "--mesh", "dp=2",
         "--optimizer", "sgd", "--lr", str(BASE_LR), "--grad-norm", "--emit",
         "host", "--emit-dtypes", "f64", "-o", program / "norm"])
    with_norm = program / "norm.jsonl"
    without = program / "without-norm.jsonl"
    for prog, metrics in ((program / "norm", with_norm),
                          (program / "prog", without)):
        run([prog / "launch.sh", "--data", program / "tokens.bin", "--steps",
             "3", "--dtype", "f64", "--metrics", metrics])
    records = [json.loads(l) for l in with_norm.read_text().splitlines()]
    plain = [json.loads(l) for l in without.read_text().splitlines()]
    assert [r["loss"] for r in records] == [r["loss"] for r in plain]
    assert all(r["grad_norm"] > 0 for r in records)
    run([find_tool("loom-data"), "batch", program / "tokens.bin", "--batch",
         "4", "--seq", "8", "--step", "0", "--seed", "0", "-o",
         program / "norm-batch0.safetensors"])
    run([find_tool("loom-run"), program / "norm" / "step.mlir", "--entry",
         "train_step", "--ranks", "2", "--dtype", "f64", "--inputs",
         program / "norm-batch0.safetensors", "--outputs",
         program / "norm-out.safetensors"])
    out = safetensors_io.load(program / "norm-out.safetensors")
    assert records[0]["grad_norm"] == pytest.approx(float(out["grad_norm"]),
                                                    rel=1e-12)
