"""The trainer's held-out evaluation equals the model's forward.

`launch.sh --eval-data VAL.bin --eval-every K --eval-steps M` runs the
forward-only `@eval_step` that `loomc --emit` derives from the partitioned
training step (dist-derive-eval-step) on the first M batches of VAL.bin in
file order, before the first step, every K steps and after the last, and
prints `step N | val loss X | val ppl Y` on rank 0 (docs/Codegen.md,
"Evaluation"). Checked here, in f64 on host MPI ranks, for a dp=2 x tp=2
plan (Megatron tensor parallelism inside data parallelism), the same with
ZeRO (optimizer states and parameters sharded over dp), a 2-stage 1F1B
pipeline with 2 micro-batches, and 2 GPipe stages x dp=2:

- each logged validation loss equals the mean, over the same M batches
  (`loom-data batch --sequential`), of the single-device interpreter's
  forward (`loom-run` on `@forward`) with the parameters the trainer held at
  that step (its checkpoint, merged): relative 1e-12 (the partitioned sums
  run in another order);
- the model is built with dropout 0.1 and the reference without: the
  evaluation draws no masks (a forward with dropout gives another loss,
  which the test checks);
- the emitted evaluation equals the interpreter running the partitioned
  `@eval_step` over the same ranks bit for bit;
- the perplexity is exp(loss), and `--metrics` gets `val_loss`/`val_ppl`;
- the flags are refused by name when they cannot work.

Skipped without mpirun.
"""

import json
import math
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest

from loom.tools import find_tool
import safetensors_io

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None,
                                reason="the emitted trainer runs under mpirun")

BATCH, SEQ = 4, 8
EVAL_STEPS = 2
STEPS = 4
EVAL_EVERY = 2
VAL_LINE = re.compile(r"^step (\d+) \| val loss (\S+) \| val ppl (\S+)$",
                      re.MULTILINE)


def run(args, **kwargs):
    return subprocess.run([str(a) for a in args], check=True,
                          capture_output=True, text=True, **kwargs)


def model(path, dropout):
    run([find_tool("loom-model"), "gpt2", "--layers", "2", "--hidden", "16",
         "--heads", "2", "--vocab", "64", "--seq", str(SEQ), "--batch",
         str(BATCH), "--dropout", str(dropout), "-o", path])


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Training and held-out token files (ids below 64), the model with
    dropout and the reference model without, and the held-out batches."""
    root = tmp_path_factory.mktemp("eval")
    rng = np.random.default_rng(7)
    # A repeated pattern the model can learn a little of in 4 steps.
    text = (np.arange(2000) * 7 % 61).astype(np.uint16)
    text[rng.integers(0, 2000, 200)] = rng.integers(0, 64, 200)
    text[:1600].tofile(root / "train.bin")
    text[1600:].tofile(root / "val.bin")
    model(root / "gpt.mlir", 0.1)
    model(root / "ref.mlir", 0.0)
    for i in range(EVAL_STEPS):
        run([find_tool("loom-data"), "batch", root / "val.bin", "--format",
             "uint16", "--batch", BATCH, "--seq", SEQ, "--step", i,
             "--sequential", "-o", root / f"val{i}.safetensors"])
    return root


def forward_loss(root, mlir, params, batch, extra=("--entry", "forward")):
    """The interpreter's `loss` of `@forward` (one device) or of another
    entry (`extra` names it and the ranks)."""
    out = root / "out.safetensors"
    args = [find_tool("loom-run"), mlir, "--dtype", "f64", "--inputs", batch,
            "--outputs", out, *extra]
    if params is not None:
        args += ["--inputs", params]
    run(args)
    return float(safetensors_io.load(out)["loss"])


def forward_params(root, ckpt, step):
    """The parameters of the checkpoint at `step`, merged, without the
    optimizer states (`@forward` takes the parameters only)."""
    merged = root / f"state{step}.safetensors"
    run([find_tool("loom-ckpt"), "merge", ckpt / f"step-{step:08d}", "-o",
         merged])
    state = safetensors_io.load(merged)
    params = {k: v for k, v in state.items()
              if k != "step" and not k.endswith((".exp_avg", ".exp_avg_sq"))}
    path = root / f"params{step}.safetensors"
    safetensors_io.save(path, params)
    return merged, path


def check_plan(data, name, compile_flags, ranks):
    root = data / name
    root.mkdir()
    run([find_tool("loomc"), data / "gpt.mlir", *compile_flags, "--emit",
         "host", "--emit-dtypes", "f64", "-o", root / "prog"])
    step_ir = (root / "prog" / "step.mlir").read_text()
    assert "func.func @eval_step" in step_ir
    metrics = root / "m.jsonl"
    log = run([root / "prog" / "launch.sh", "--data", data / "train.bin",
               "--data-format", "uint16", "--dtype", "f64", "--steps", STEPS,
               "--eval-data", data / "val.bin", "--eval-every", EVAL_EVERY,
               "--eval-steps", EVAL_STEPS, "--ckpt-dir", root / "ckpt",
               "--ckpt-every", EVAL_EVERY, "--metrics", metrics]).stdout
    evals = {int(m[0]): (float(m[1]), float(m[2]))
             for m in VAL_LINE.findall(log)}
    assert sorted(evals) == [0, 2, 4], log
    lines = [json.loads(l) for l in metrics.read_text().splitlines()]
    logged = {r["step"]: r for r in lines if "val_loss" in r}
    assert sorted(logged) == [0, 2, 4]
    batches = [data / f"val{i}.safetensors" for i in range(EVAL_STEPS)]
    for step, (loss, ppl) in evals.items():
        assert ppl == pytest.approx(math.exp(loss), rel=1e-6)
        assert logged[step]["val_ppl"] == pytest.approx(
            math.exp(logged[step]["val_loss"]), rel=1e-12)
        if step == 0:
            # The initial parameters: loom-run draws the same (seed 0).
            merged, params = None, None
        else:
            merged, params = forward_params(root, root / "ckpt", step)
        # The log prints 9 digits, the metrics file every bit.
        assert loss == pytest.approx(logged[step]["val_loss"], rel=1e-8)
        want = np.mean([forward_loss(root, data / "ref.mlir", params, b)
                        for b in batches])
        assert logged[step]["val_loss"] == pytest.approx(want, rel=1e-12,
                                                         abs=0), (step, want)
        # The partitioned eval step in the interpreter, over the ranks.
        if merged is not None:
            got = [forward_loss(root, root / "prog" / "step.mlir", merged, b,
                                ["--entry", "eval_step", "--ranks", ranks])
                   for b in batches]
            assert logged[step]["val_loss"] == (got[0] + got[1]) / 2
    # With dropout (the model the trainer trains) the forward differs.
    _, params = forward_params(root, root / "ckpt", STEPS)
    dropped = np.mean([forward_loss(root, data / "gpt.mlir", params, b)
                       for b in batches])
    assert abs(dropped - evals[STEPS][0]) > 1e-6


def test_eval_on_dp_tp_equals_the_forward(data):
    check_plan(data, "dptp",
               ["--parallel-config",
                '{"data_parallel": 2, "model_parallel": 2}'], 4)


def test_eval_on_a_pipeline_equals_the_forward(data):
    check_plan(data, "pp",
               ["--devices", "2", "--pipeline-stages", "2",
                "--micro-batches", "2", "--schedule", "1f1b"], 2)


def test_eval_with_zero_equals_the_forward(data):
    """Optimizer states and parameters sharded over dp (ZeRO): the
    evaluation gathers the parameters as the step's forward does."""
    check_plan(data, "zero",
               ["--parallel-config",
                '{"data_parallel": 2, "model_parallel": 2, '
                '"optimizer_shard": true}'], 4)


def test_eval_on_a_gpipe_pipeline_with_dp_equals_the_forward(data):
    """2 GPipe stages x dp=2 on 4 ranks."""
    check_plan(data, "gpipe",
               ["--devices", "4", "--pipeline-stages", "2",
                "--micro-batches", "2", "--schedule", "gpipe"], 4)


def test_eval_flags_are_checked(data):
    prog = data / "dptp" / "prog"
    if not prog.exists():  # run alone: compile the dp x tp program here
        run([find_tool("loomc"), data / "gpt.mlir", "--parallel-config",
             '{"data_parallel": 2, "model_parallel": 2}', "--emit", "host",
             "--emit-dtypes", "f64", "-o", prog])
    base = [prog / "launch.sh", "--data", data / "train.bin", "--data-format",
            "uint16", "--dtype", "f64", "--steps", "1"]
    bad = subprocess.run([str(a) for a in base + ["--eval-every", "2"]],
                         capture_output=True, text=True)
    assert bad.returncode != 0
    assert ("--eval-every shapes the evaluation: give the held-out tokens "
            "with --eval-data") in bad.stderr
    bad = subprocess.run(
        [str(a) for a in base + ["--eval-data", data / "missing.bin"]],
        capture_output=True, text=True)
    assert bad.returncode != 0
    assert "missing.bin" in bad.stderr
    bad = subprocess.run(
        [str(a) for a in base + ["--eval-data", data / "val.bin",
                                 "--eval-steps", "0"]],
        capture_output=True, text=True)
    assert bad.returncode != 0
    assert "--eval-steps expects an integer >= 1, got `0`" in bad.stderr


def test_token_ids_beyond_the_vocabulary_are_refused(data):
    """The trainer checks every id it reads, training and held-out, against
    the model's vocabulary (64 here): a file tokenized for a larger one
    stops the run with the id, its position and the vocabulary."""
    prog = data / "dptp" / "prog"
    if not prog.exists():  # run alone: compile the dp x tp program here
        run([find_tool("loomc"), data / "gpt.mlir", "--parallel-config",
             '{"data_parallel": 2, "model_parallel": 2}', "--emit", "host",
             "--emit-dtypes", "f64", "-o", prog])
    ids = np.fromfile(data / "train.bin", np.uint16)
    ids[5] = 100
    ids.tofile(data / "bad.bin")
    base = [prog / "launch.sh", "--data-format", "uint16", "--dtype", "f64",
            "--steps", "1", "--data-order", "sequential"]
    for flags in (["--data", data / "bad.bin"],
                  ["--data", data / "train.bin", "--eval-data",
                   data / "bad.bin"]):
        bad = subprocess.run([str(a) for a in base + flags],
                             capture_output=True, text=True)
        assert bad.returncode != 0
        assert ("bad.bin`: token id 100 at position 5 is outside the "
                "vocabulary [0, 64)") in bad.stderr, bad.stderr
