"""A step split into micro-batches is partitioned as the search planned it
(docs/Partitioning.md, "Micro-batch copies").

loom-slice-micro-batches copies the forward once per micro-batch, and the
search prices every copy as micro-batch 0's op. Two things keep the
partitioned program the one that was priced; each check below fails when
one of them is undone:

(i)  every later micro-batch's copy of a forward op takes micro-batch 0's
     strategy (`dist-insert-reshards` used to choose the copies afresh, and
     on a tied GPT-2 head it chose the contraction over every axis: the
     logits of each micro-batch all-reduced whole);
(ii) the ops a partition rewrite creates keep the micro-batch they belong
     to, so dist-partition-stages runs a micro-batch's loss in its forward
     instead of at the end of the step, where it held every micro-batch's
     logits live at once: the last stage's liveness peak then grew with
     the micro-batch count.
"""

import re
from collections import defaultdict

import pytest

from steps import tool

GPT = ["gpt2", "--layers", "2", "--hidden", "128", "--heads", "4",
       "--vocab", "4096", "--seq", "64", "--batch", "16"]
PLAN = ["--cluster", "dgx-a100-80g", "--devices", "4",
        "--pipeline-stages", "2", "--mesh", "dp=1,tp=2"]

OP = re.compile(r"=\s*(loom\.\w+)\s.*\{([^{}]*loom\.fwd = (\d+) : i64[^{}]*)\}")


def attrs_of(body, name):
    match = re.search(name + r" = ([^,}]+(?:<[^>]*>)?)", body)
    return match.group(1) if match else None


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("copies")
    path = tmp / "gpt.json"
    tool("loom-model", *GPT, "--format", "json", "-o", path)
    return path


def reshard(model, tmp_path, micro):
    """The step after layout assignment (strategies on every op)."""
    staged = tmp_path / f"staged{micro}.mlir"
    tool("loomc", model, *PLAN, "--micro-batches", str(micro),
         "--compile-to=pipeline", "-o", staged)
    out = tmp_path / f"reshard{micro}.mlir"
    tool("loom-opt", staged, "--pass-pipeline=any("
         "dist-insert-reshards{devices=4 entry=train_step mesh=dp=1,tp=2})",
         "-o", out)
    return out.read_text()


def test_copies_take_micro_batch_zero_strategy(model, tmp_path):
    text = reshard(model, tmp_path, 4)
    strategies = defaultdict(dict)
    for line in text.splitlines():
        match = OP.search(line)
        if not match or "loom.backward" in line or "loom.recompute" in line \
                or "loom.micro_batch_glue" in line:
            continue
        micro = attrs_of(match.group(2), "loom.micro_batch")
        strategy = re.search(r"dist.strategy = (#dist.strategy<[^>]*>)",
                             match.group(2))
        if micro is None or not strategy:
            continue
        key = (match.group(1), match.group(3))
        strategies[key][int(micro.split(" ")[0])] = strategy.group(1)
    assert len(strategies) > 20
    for key, per_micro in strategies.items():
        assert sorted(per_micro) == [0, 1, 2, 3], key
        assert len(set(per_micro.values())) == 1, (key, per_micro)


def stage_peaks(model, tmp_path, micro):
    step = tmp_path / f"part{micro}.mlir"
    tool("loomc", model, *PLAN, "--micro-batches", str(micro),
         "--compile-to=partition", "-o", step)
    text = step.read_text()
    peaks = []
    for stage in (0, 1):
        out = tool("loom-opt", step,
                   f"--pass-pipeline=builtin.module(test-print-memory"
                   f"{{stage={stage}}})", "-o", "/dev/null")
        out = out.stdout + out.stderr
        peaks.append(int(re.search(r"peak=(\d+)", out).group(1)))
    return text, peaks


def test_loss_runs_in_its_micro_batch(model, tmp_path):
    text, peaks4 = stage_peaks(model, tmp_path, 4)
    lines = text.splitlines()
    losses = [i for i, line in enumerate(lines)
              if "loom.cross_entropy " in line]
    grads = [i for i, line in enumerate(lines)
             if "loom.cross_entropy_grad " in line]
    assert len(losses) == 4 and len(grads) == 4
    for loss, grad in zip(losses, grads):
        assert "loom.micro_batch" in lines[loss]
        assert loss < grad
    # More micro-batches of the same batch: each holds fewer logits, and so
    # does the last stage at its peak (it held the whole batch's before).
    _, peaks2 = stage_peaks(model, tmp_path, 2)
    _, peaks8 = stage_peaks(model, tmp_path, 8)
    assert peaks8[1] < 0.75 * peaks2[1], (peaks2, peaks4, peaks8)
