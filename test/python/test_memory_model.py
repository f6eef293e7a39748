"""The strategy search's memory model agrees with the liveness analysis of
the per-rank program it produces (docs/Search.md, "Memory").

For GPT-2 and Llama models on `dgx-a100-80g` and `dgx-h100` meshes, with and
without `--memory-limit`:

(i) the searched plan's predicted memory per device (`dist.plan`'s
    `memory_bytes_per_device`, the model the solver enforces) is within
    TOLERANCE of the liveness peak of the partitioned per-rank program
    (`loom-opt -test-print-memory`, dist::analyzeMemory);
(ii) under `--memory-limit`, the per-rank program's liveness peak is at
    most the limit, and the driver's calibration took one search round
    (`--report` says how many).

These are the data x tensor plans the calibration measures, so the search
is held to them (`--pipeline-stages 1`); by default it also weighs
pipelines, whose stages are priced by the stage model (docs/Pipeline.md)
and not calibrated by liveness.
"""

import json
import re

import pytest

from test_partition import tool

# The model may over- or under-estimate the liveness peak by this much
# (measured: 3-7 % on Llama, 18-21 % over on GPT-2; docs/Search.md).
TOLERANCE = 0.25
GIB = 2**30

GPT_MEDIUM = ["gpt2", "--layers", "2", "--hidden", "1024", "--heads", "16",
              "--vocab", "4096", "--seq", "512", "--batch", "64"]
LLAMA_MEDIUM = ["llama", "--layers", "2", "--hidden", "1024", "--heads",
                "16", "--kv-heads", "4", "--vocab", "4096", "--seq", "512",
                "--batch", "64"]
MODELS = {"gpt2": GPT_MEDIUM, "llama": LLAMA_MEDIUM}


def searched(tmp_path, model, *flags):
    """Searches and partitions `model`; returns the predicted bytes, the
    liveness peak of the per-rank program and the report."""
    model_path = tmp_path / f"{model}.json"
    tool("loom-model", *MODELS[model], "--format", "json", "-o", model_path)
    out = tmp_path / "step.mlir"
    plan_path = tmp_path / "plan.json"
    report = tool("loomc", model_path, "--compile-to=partition",
                  "--pipeline-stages", 1, *flags,
                  "--report", "--plan-json", plan_path, "-o", out).stdout
    plan = json.loads(plan_path.read_text())
    predicted = plan["predicted"]["memory_bytes_per_device"]
    printed = tool("loom-opt", out, "-test-print-memory", "-o",
                   "/dev/null").stdout
    peak = int(re.search(r"@train_step peak=(\d+)", printed).group(1))
    return predicted, peak, report


def assert_close(predicted, peak):
    assert abs(predicted - peak) <= TOLERANCE * peak, (
        f"model {predicted / GIB:.3f} GiB vs liveness {peak / GIB:.3f} GiB")


@pytest.mark.parametrize("model,cluster,devices", [
    ("gpt2", "dgx-a100-80g", 16),
    ("gpt2", "dgx-h100", 8),
    ("llama", "dgx-a100-80g", 16),
    ("llama", "dgx-h100", 8),
])
def test_model_matches_liveness(tmp_path, model, cluster, devices):
    predicted, peak, report = searched(tmp_path, model, "--cluster", cluster,
                                       "--devices", devices)
    assert_close(predicted, peak)
    assert "Memory calibration: 1 search round(s)" in report, report


@pytest.mark.parametrize("model,limit_gib,close", [
    ("gpt2", 0.6, True),
    # Recompute on 8-way data parallelism: the model over-estimates by a
    # third (docs/Search.md), so only the limit is checked.
    ("gpt2", 0.5, False),
    ("llama", 1.5, True),
    ("llama", 1.0, True),
])
def test_memory_limit_holds_by_liveness(tmp_path, model, limit_gib, close):
    predicted, peak, report = searched(tmp_path, model, "--cluster",
                                       "dgx-a100-80g", "--devices", 16,
                                       "--memory-limit", limit_gib)
    assert peak <= limit_gib * GIB, report
    assert predicted <= limit_gib * GIB
    if close:
        assert_close(predicted, peak)
    assert "Memory calibration: 1 search round(s)" in report, report


def test_tighter_limit_never_raises_the_peak(tmp_path):
    """The non-monotone case of the old model: on GPT-2 medium over 16 GPUs
    a tighter limit picked plans with far larger liveness peaks."""
    peaks = []
    for limit_gib in (0.7, 0.6, 0.5):
        _, peak, _ = searched(tmp_path, "gpt2", "--cluster", "dgx-a100-80g",
                              "--devices", 16, "--memory-limit", limit_gib)
        assert peak <= limit_gib * GIB
        peaks.append(peak)
    assert peaks == sorted(peaks, reverse=True), peaks
