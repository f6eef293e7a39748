"""Interleaved 1F1B (virtual stages) equals the single-device step, and runs
in Megatron's order (docs/Pipeline.md, "Interleaved 1F1B").

An f64 GPT-2 and Llama are compiled by `loomc --compile-to=partition
--pipeline-stages S --virtual-stages V --schedule interleaved-1f1b`: the
layers are cut into S * V chunks and stage s holds chunks s, s + S, ...; one
AdamW step (global-norm clipping, unevenly ignored labels) over the simulated
ranks must equal the single-device full-batch step to a relative 1e-10 for
pp=2 x V=2 and pp=4 x V=2, alone and with data parallelism inside the stages.

The interpreter measures, per rank, the most (chunk, micro-batch) units whose
forward has run and whose backward has not. The expected counts come from
Megatron-LM's interleaved schedule as its paper and
`forward_backward_pipelining_with_interleaving` define it, written out here
(not read from Loom): warm-up 2 (S - 1 - s) + (V - 1) S forward units, then
one forward and one backward, then the remaining backwards. Plain 1F1B's
order over the same chunks keeps fewer units in flight on the first stage,
so the test fails if the program runs the plain order. The liveness
analysis of each stage predicts the measured per-rank peak to the byte.
"""

import json
import re

import numpy as np
import pytest

import safetensors_io
from steps import assert_same, random_token_batch, run_step, tool

MODELS = {
    "gpt2": ["gpt2", "--hidden", "16", "--heads", "4", "--vocab", "32",
             "--seq", "8", "--batch", "8"],
    "llama": ["llama", "--hidden", "16", "--heads", "4", "--kv-heads", "2",
              "--ffn", "24", "--vocab", "32", "--seq", "8", "--batch", "8"],
}
OPTIMIZER = ["--optimizer", "adamw", "--lr", "0.01", "--clip-norm", "0.5"]


def megatron_in_flight(stages, stage, micro, chunks):
    """Most (chunk, micro-batch) units in flight on `stage` under Megatron's
    interleaved schedule: warm-up forwards, then 1F1B, then cool-down."""
    total = micro * chunks
    warmup = min(2 * (stages - stage - 1) + (chunks - 1) * stages, total)
    live = most = 0
    for _ in range(warmup):
        live += 1
        most = max(most, live)
    for _ in range(total - warmup):
        live += 1  # one forward ...
        most = max(most, live)
        live -= 1  # ... then one backward
    return most


def plain_one_f_one_b_in_flight(stages, stage, micro, chunks):
    """The same units run in plain 1F1B's order (warm-up S - 1 - s): what a
    program that ignored the interleaving would measure."""
    return min(stages - stage, micro * chunks)


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, tmp_path_factory):
    """Per layer count: the model, its single-device step and a batch."""
    name = request.param
    tmp = tmp_path_factory.mktemp(f"interleaved-{name}")
    cache = {}

    def get(layers):
        if layers in cache:
            return cache[layers]
        path = tmp / f"{name}{layers}.mlir"
        tool("loom-model", *MODELS[name], "--layers", layers, "--dtype",
             "f64", "-o", path)
        train = tmp / f"train{layers}.mlir"
        tool("loomc", path, "--compile-to=autodiff", *OPTIMIZER, "-o", train)
        rng = np.random.default_rng(5)
        batch = random_token_batch(train.read_text(), 32, rng)
        batch["labels"][0, :5] = -100
        batch["labels"][3, 2] = -100
        batch["labels"][-1, -1] = -100
        inputs = tmp / f"batch{layers}.safetensors"
        safetensors_io.save(inputs, batch)
        single = run_step(tmp, train, inputs, f"single{layers}")
        cache[layers] = (path, inputs, single)
        return cache[layers]

    return name, tmp, get


# (layers, devices, stages, chunks, micro-batches, extra flags)
CASES = [
    (4, 2, 2, 2, 4, []),                       # pp 2 x V 2
    (4, 4, 2, 2, 2, []),                       # pp 2 x V 2 x dp 2
    (8, 4, 4, 2, 4, []),                       # pp 4 x V 2
    (8, 8, 4, 2, 8, []),                       # pp 4 x V 2 x dp 2
    (6, 2, 2, 3, 2, []),                       # V = 3
]


@pytest.mark.parametrize("layers,devices,stages,chunks,micro,extra", CASES,
                         ids=lambda v: str(v).replace(" ", ""))
def test_interleaved_step_equals_single_device(model, layers, devices, stages,
                                               chunks, micro, extra):
    name, tmp, get = model
    path, inputs, single = get(layers)
    out = tmp / f"il-{layers}-{devices}-{stages}-{chunks}-{micro}.mlir"
    tool("loomc", path, "--compile-to=partition", *OPTIMIZER, "--devices",
         devices, "--pipeline-stages", stages, "--virtual-stages", chunks,
         "--schedule", "interleaved-1f1b", "--micro-batches", micro, *extra,
         "-o", out)
    text = out.read_text()
    assert 'schedule = "interleaved-1f1b"' in text
    assert f"virtual_stages = {chunks}" in text
    # Stage 0 holds chunk 0 and chunk S (non-adjacent layers): the last
    # stage sends chunk S - 1's activations back to stage 0.
    per = layers // (stages * chunks)
    ranges = ", ".join(f"[{c * per}, {(c + 1) * per}]"
                       for c in range(stages * chunks))
    assert f"stage_layers = [{ranges}]" in text
    assert "dist.chunk = 1" in text
    results, report = run_step(tmp, out, inputs, out.stem, ranks=devices,
                               report=True)
    assert_same(single, results, out.stem)
    # In flight per rank, ranks in order (stage-major).
    inflight = [int(v) for v in re.findall(
        r"peak micro-batches in flight: (\d+)", report)]
    per_stage = devices // stages
    expected = [megatron_in_flight(stages, r // per_stage, micro, chunks)
                for r in range(devices)]
    assert inflight == expected, report
    plain = [plain_one_f_one_b_in_flight(stages, r // per_stage, micro,
                                         chunks) for r in range(devices)]
    assert inflight != plain
    # The liveness analysis of each stage's ranks (dist::analyzeMemory)
    # predicts the measured peak to the byte under the interleaved order too.
    live = [int(v) for v in re.findall(r"peak live bytes: (\d+)", report)]
    for stage in range(stages):
        printed = tool("loom-opt", out,
                       f"-test-print-memory=stage={stage}").stdout
        predicted = int(re.search(r"@train_step peak=(\d+)",
                                  printed).group(1))
        assert predicted == live[stage * per_stage], (stage, report)


def test_parallel_config_interleave_keys(model):
    """MindFormers' `pp_interleave_num` (with `pipeline_interleave`) asks for
    the interleaved schedule, as `--virtual-stages` does."""
    name, tmp, get = model
    path, inputs, single = get(4)
    out = tmp / "config.mlir"
    tool("loomc", path, "--compile-to=partition", *OPTIMIZER,
         "--parallel-config",
         '{"data_parallel": 1, "pipeline_stage": 2, "micro_batch_num": 4, '
         '"pipeline_interleave": true, "pp_interleave_num": 2}', "-o", out)
    text = out.read_text()
    assert 'schedule = "interleaved-1f1b", virtual_stages = 2' in text
    assert_same(single, run_step(tmp, out, inputs, "config", ranks=2))


@pytest.mark.parametrize("flags,message", [
    (["--devices", 2, "--pipeline-stages", 2, "--virtual-stages", 2,
      "--micro-batches", 1],
     "the interleaved-1f1b schedule needs the micro-batches (1) to be a "
     "multiple of the pipeline stages (2)"),
    (["--devices", 2, "--pipeline-stages", 2, "--virtual-stages", 4,
      "--micro-batches", 2],
     "cannot split 4 transformer layer(s) into 2 pipeline stages of 4 chunks "
     "each (8 chunks)"),
    (["--devices", 2, "--pipeline-stages", 2, "--virtual-stages", 2,
      "--schedule", "1f1b"],
     "--virtual-stages 2 needs --schedule interleaved-1f1b, found '1f1b'"),
    (["--devices", 2, "--pipeline-stages", 2, "--schedule",
      "interleaved-1f1b"],
     "--schedule interleaved-1f1b needs the chunks per stage: give "
     "--virtual-stages V"),
    (["--devices", 2, "--pipeline-stages", 2, "--schedule", "zigzag"],
     "--schedule: expected gpipe, 1f1b or interleaved-1f1b, found 'zigzag'"),
    (["--devices", 2, "--pipeline-stages", 2, "--virtual-stages", 3,
      "--micro-batches", 2, "--parallel-config",
      '{"pp_interleave_num": 2}'],
     "--virtual-stages 3 disagrees with the parallel config's "
     "pp_interleave_num = 2"),
    (["--devices", 2, "--pipeline-stages", 2, "--parallel-config",
      '{"pipeline_interleave": true}'],
     "pipeline_interleave = true needs pp_interleave_num >= 2"),
    (["--devices", 2, "--pipeline-stages", 2, "--parallel-config",
      '{"pipeline_interleave": false, "pp_interleave_num": 2}'],
     "pp_interleave_num = 2 with pipeline_interleave = false"),
])
def test_bad_interleave_options(tmp_path, flags, message):
    path = tmp_path / "gpt2.mlir"
    tool("loom-model", *MODELS["gpt2"], "--layers", 4, "-o", path)
    result = tool("loomc", path, "--compile-to=partition", *flags, "-o",
                  tmp_path / "bad.mlir", check=False)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert not (tmp_path / "bad.mlir").exists()


def test_search_chooses_virtual_stages(model):
    """`--virtual-stages 0` lets the search price V in {1, 2, ...} (where the
    layers divide); the plan it writes runs and equals the single-device
    step, and the timeline names each unit's chunk."""
    name, tmp, get = model
    path, inputs, single = get(4)
    timeline = tmp / "timeline-il.json"
    out = tmp / "searched-il.mlir"
    tool("loomc", path, "--compile-to=partition", *OPTIMIZER, "--cluster",
         "host", "--devices", 2, "--pipeline-stages", 2, "--virtual-stages",
         0, "--schedule", "interleaved-1f1b", "--timeline", timeline,
         "-o", out)
    text = out.read_text()
    match = re.search(r"virtual_stages = (\d+)", text)
    assert match, "interleaved-1f1b was asked for"
    chunks = int(match.group(1))
    assert chunks in (2,)  # 4 layers over 2 stages: only V = 2 divides
    micro = int(re.search(r"micro_batches = (\d+)", text).group(1))
    assert_same(single, run_step(tmp, out, inputs, "searched-il", ranks=2))
    trace = json.loads(timeline.read_text())
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert len(events) == 2 * 2 * micro * chunks
    assert {e["args"]["chunk"] for e in events} == set(range(chunks))
    assert trace["otherData"]["schedule"] == "interleaved-1f1b"
