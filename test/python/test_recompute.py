"""Activation recompute (`loom-recompute`) changes memory, never results.

For tiny f64 builder models (GPT-2 and the encoder-decoder with dropout
inside their layers, Llama), the training step before and after
`loom-opt -loom-recompute` runs in `loom-run`: every result (loss, updated
parameters, optimizer states) must be bit for bit the same, the
interpreter's measured peak (`--report-memory`) must equal the peak
`dist::analyzeMemory` predicts (`-test-print-memory`) for both programs, and
recompute must lower it. The batch and sequence are large next to the
width so that activations, not parameters, set the peak, as in real
training. The same holds per rank for a partitioned dp x tp step whose
parallel config sets `recompute: true`.
"""

import re
import subprocess

import numpy as np
import pytest

import safetensors_io
from loom.tools import find_tool
from steps import random_token_batch

MODELS = {
    "gpt2": ["gpt2", "--layers", "2", "--hidden", "16", "--heads", "4",
             "--vocab", "32", "--seq", "32", "--batch", "4",
             "--dropout", "0.1"],
    "llama": ["llama", "--layers", "2", "--hidden", "16", "--heads", "4",
              "--kv-heads", "2", "--ffn", "24", "--vocab", "32", "--seq",
              "32", "--batch", "4"],
    "transformer": ["transformer", "--layers", "2", "--hidden", "16",
                    "--heads", "4", "--ffn", "32", "--vocab", "32", "--seq",
                    "32", "--batch", "4", "--dropout", "0.1"],
}
OPTIMIZER = ["--optimizer", "adamw", "--lr", "0.01", "--clip-norm", "0.5"]


def tool(name, *args):
    result = subprocess.run([str(find_tool(name)), *map(str, args)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{name} {args}: {result.stderr}"
    return result.stdout


def build(tmp_path, model):
    """The model's single-device training step and a batch for it."""
    path = tmp_path / f"{model}.mlir"
    tool("loom-model", *MODELS[model], "--dtype", "f64", "-o", path)
    step = tmp_path / "step.mlir"
    tool("loomc", path, "--compile-to=autodiff", *OPTIMIZER, "-o", step)
    ir = step.read_text()
    rng = np.random.default_rng(11)
    # From 1: the encoder-decoder ignores label 0 (its pad id).
    batch = random_token_batch(ir, 32, rng, low=1)
    inputs = tmp_path / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    return path, step, inputs


def predicted(program):
    """analyzeMemory's breakdown of @train_step, as a dict of ints."""
    out = tool("loom-opt", program, "-test-print-memory", "-o", "/dev/null")
    line = next(l for l in out.splitlines() if l.startswith("@train_step "))
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def run(tmp_path, program, inputs, name):
    """The results of one step and each rank's measured peak."""
    out = tmp_path / f"{name}.safetensors"
    text = tool("loom-run", program, "--entry", "train_step", "--dtype",
                "f64", "--seed", "5", "--inputs", inputs, "--outputs", out,
                "--report-memory")
    peaks = [int(n) for n in
             re.findall(r"^peak live bytes: (\d+) \(rank \d+\)$", text, re.M)]
    assert peaks, text
    return safetensors_io.load(out), peaks


def assert_identical(before, after):
    assert set(before) == set(after)
    for key, value in before.items():
        assert after[key].dtype == value.dtype, key
        assert np.array_equal(after[key], value), f"{key} differs"


@pytest.mark.parametrize("model", sorted(MODELS))
def test_recompute_is_exact_and_lowers_the_peak(tmp_path, model):
    _, step, inputs = build(tmp_path, model)
    recomputed = tmp_path / "recomputed.mlir"
    tool("loom-opt", step, "-loom-recompute", "-o", recomputed)
    assert "loom.recompute" in recomputed.read_text()

    before, [measured_before] = run(tmp_path, step, inputs, "before")
    after, [measured_after] = run(tmp_path, recomputed, inputs, "after")
    assert_identical(before, after)

    memory_before, memory_after = predicted(step), predicted(recomputed)
    assert measured_before == memory_before["peak"]
    assert measured_after == memory_after["peak"]
    assert measured_after < measured_before
    # What went: the layers' activations, kept across the forward.
    assert memory_after["activations"] < memory_before["activations"] / 4


def test_partitioned_recompute_lowers_every_ranks_peak(tmp_path):
    model_path, _, inputs = build(tmp_path, "gpt2")
    programs = {}
    for recompute in (False, True):
        program = tmp_path / f"partitioned-{recompute}.mlir"
        tool("loomc", model_path, "--compile-to=partition", *OPTIMIZER,
             "--parallel-config",
             '{"data_parallel": 2, "model_parallel": 2, "recompute": %s}'
             % str(recompute).lower(), "-o", program)
        programs[recompute] = program
    plain, plain_peaks = run(tmp_path, programs[False], inputs, "plain")
    recomputed, peaks = run(tmp_path, programs[True], inputs, "recomputed")
    assert_identical(plain, recomputed)
    assert len(peaks) == len(plain_peaks) == 4
    # Every rank runs the same local program: measured == predicted on each.
    assert set(plain_peaks) == {predicted(programs[False])["peak"]}
    assert set(peaks) == {predicted(programs[True])["peak"]}
    assert peaks[0] < plain_peaks[0]
