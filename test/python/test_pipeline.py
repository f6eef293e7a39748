"""Pipelined training steps equal the single-device one (the proof of the
pipeline phase, docs/Pipeline.md).

A 4-layer f64 GPT-2 (and Llama) is compiled by `loomc --compile-to=partition
--pipeline-stages S --micro-batches M --schedule gpipe|1f1b`, alone or with
data or tensor parallelism inside each stage, and runs one AdamW step
(global-norm clipping included) in `loom-run` over the simulated ranks of the
pipeline mesh. Loss, every updated parameter and every optimizer state must
equal the single-device full-batch step to a relative error of 1e-10 — with
labels ignored unevenly across micro-batches, so the loss's normalization
over the whole batch is checked too. The runtime's measurement of
micro-batches in flight shows 1F1B's memory bound.
"""

import re

import numpy as np
import pytest

import safetensors_io
from steps import assert_same, random_token_batch, run_step, tool

MODELS = {
    "gpt2": ["gpt2", "--layers", "4", "--hidden", "16", "--heads", "4",
             "--vocab", "32", "--seq", "8", "--batch", "8"],
    "llama": ["llama", "--layers", "4", "--hidden", "16", "--heads", "4",
              "--kv-heads", "2", "--ffn", "24", "--vocab", "32", "--seq", "8",
              "--batch", "8"],
}
OPTIMIZER = ["--optimizer", "adamw", "--lr", "0.01", "--clip-norm", "0.5"]


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, tmp_path_factory):
    """The model, its single-device step's results and a batch."""
    name = request.param
    tmp = tmp_path_factory.mktemp(name)
    path = tmp / f"{name}.mlir"
    tool("loom-model", *MODELS[name], "--dtype", "f64", "-o", path)
    train = tmp / "train.mlir"
    tool("loomc", path, "--compile-to=autodiff", *OPTIMIZER, "-o", train)
    batch = random_token_batch(train.read_text(), 32,
                               np.random.default_rng(11))
    # Ignored labels spread unevenly over the micro-batches.
    batch["labels"][0, :5] = -100
    batch["labels"][3, 2] = -100
    batch["labels"][-1, -1] = -100
    inputs = tmp / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    single = run_step(tmp, train, inputs, "single")
    return name, tmp, path, inputs, single


def pipeline(tmp, path, name, *flags):
    out = tmp / f"{name}.mlir"
    tool("loomc", path, "--compile-to=partition", *OPTIMIZER, *flags,
         "-o", out)
    return out


# (devices, stages, micro-batches, schedule, extra flags)
CASES = [
    (2, 2, 1, "gpipe", []),
    (2, 2, 4, "1f1b", []),
    (2, 2, 8, "gpipe", []),
    (4, 4, 4, "1f1b", []),
    (4, 4, 8, "gpipe", []),
    (4, 2, 4, "1f1b", []),  # pp 2 x dp 2
    (4, 2, 2, "1f1b", ["--mesh", "tp=2"]),  # pp 2 x tp 2
    (8, 2, 4, "gpipe", ["--parallel-config",
                        '{"data_parallel": 2, "model_parallel": 2}']),
]


@pytest.mark.parametrize("devices,stages,micro,schedule,extra", CASES,
                         ids=lambda v: str(v).replace(" ", ""))
def test_pipelined_step_equals_single_device(model, devices, stages, micro,
                                             schedule, extra):
    name, tmp, path, inputs, single = model
    flags = ["--pipeline-stages", stages, "--micro-batches", micro,
             "--schedule", schedule, *extra]
    if "--parallel-config" not in extra and "--mesh" not in extra:
        flags += ["--devices", devices]
    program = pipeline(tmp, path, f"pp{stages}-{micro}-{schedule}", *flags)
    ir = program.read_text()
    assert f'axes ["pp"' in ir
    assert "dist.send" in ir and "dist.recv" in ir
    assert_same(single, run_step(tmp, program, inputs, "pp", ranks=devices))


def test_parallel_config_pipeline_keys(model):
    """MindSpore's `pipeline_stage` / `micro_batch_num` mean the same."""
    name, tmp, path, inputs, single = model
    program = pipeline(tmp, path, "config", "--parallel-config",
                       '{"data_parallel": 1, "pipeline_stage": 2, '
                       '"micro_batch_num": 4}')
    assert 'stages = 2' in program.read_text()
    assert_same(single, run_step(tmp, program, inputs, "config", ranks=2))


def test_one_f_one_b_bounds_activations(model):
    """Under 1F1B stage s holds at most S - s micro-batches at once (the
    first stage S), under GPipe every one; measured by the interpreter."""
    name, tmp, path, inputs, single = model
    peaks = {}
    for schedule in ("1f1b", "gpipe"):
        program = pipeline(tmp, path, f"mem-{schedule}", "--devices", 4,
                           "--pipeline-stages", 4, "--micro-batches", 8,
                           "--schedule", schedule)
        results, report = run_step(tmp, program, inputs, f"mem-{schedule}",
                                   ranks=4, report=True)
        assert_same(single, results)
        inflight = [int(v) for v in re.findall(
            r"peak micro-batches in flight: (\d+)", report)]
        live = [int(v) for v in re.findall(r"peak live bytes: (\d+)", report)]
        assert len(inflight) == 4 and len(live) == 4
        # The liveness analysis of each stage's ranks equals the measured
        # peak to the byte (the rules of dist::analyzeMemory).
        for stage in range(4):
            printed = tool("loom-opt", program,
                           f"-test-print-memory=stage={stage}").stdout
            predicted = int(re.search(r"@train_step peak=(\d+)",
                                      printed).group(1))
            assert predicted == live[stage], (schedule, stage)
        peaks[schedule] = (inflight, live)
    assert peaks["1f1b"][0] == [4, 3, 2, 1]
    assert peaks["gpipe"][0] == [8, 8, 8, 8]
    # Fewer activations alive: less memory on the first stage.
    assert peaks["1f1b"][1][0] < peaks["gpipe"][1][0]


def test_uneven_layers_and_manual_split(tmp_path):
    """3 layers on 2 stages: the first stage takes two; nothing dropped."""
    path = tmp_path / "g3.mlir"
    tool("loom-model", "gpt2", "--layers", "3", "--hidden", "16", "--heads",
         "4", "--vocab", "32", "--seq", "8", "--batch", "4", "--dtype", "f64",
         "-o", path)
    out = tmp_path / "p.mlir"
    tool("loomc", path, "--compile-to=partition", "--devices", 2,
         "--pipeline-stages", 2, "--micro-batches", 2, "-o", out)
    assert "stage_layers = [[0, 2], [2, 3]]" in out.read_text()
    # Per-layer stage ids from a strategy file (seed 000's pipeline_func).
    strategy = tmp_path / "stages.json"
    strategy.write_text('{"mesh": "dp=1", "layer_stages": [0, 1, 1]}')
    manual = tmp_path / "m.mlir"
    tool("loomc", path, "--compile-to=partition", "--devices", 2,
         "--strategy", strategy, "--micro-batches", 2, "-o", manual)
    assert "stage_layers = [[0, 1], [1, 3]]" in manual.read_text()
    # Every parameter is updated by exactly one stage.
    text = out.read_text()
    params = len(re.findall(r"loom.param = ", text))
    assert text.count("= loom.adamw_update") == params


@pytest.mark.parametrize("flags,message", [
    (["--devices", 3, "--pipeline-stages", 2],
     "--devices 3 does not split into 2 pipeline stages"),
    (["--devices", 8, "--pipeline-stages", 8],
     "cannot split 4 transformer layer(s) into 8 pipeline stages"),
    (["--devices", 2, "--pipeline-stages", 2, "--schedule", "zigzag"],
     "--schedule: expected gpipe, 1f1b or interleaved-1f1b, found 'zigzag'"),
    (["--pipeline-stages", 4, "--parallel-config",
      '{"pipeline_stage": 2}'],
     "--pipeline-stages 4 disagrees with the parallel config's "
     "pipeline_stage = 2"),
    (["--devices", 2, "--pipeline-stages", 2, "--micro-batches", 3],
     "does not split into 3 micro-batches"),
    (["--devices", 2, "--strategy", "STAGES"],
     "layer_stages[1]: expected stage 0 or 1"),
])
def test_bad_pipeline_options(tmp_path, flags, message):
    tmp = tmp_path
    path = tmp / "gpt2.mlir"
    tool("loom-model", *MODELS["gpt2"], "-o", path)
    if "STAGES" in flags:
        bad = tmp / "bad-stages.json"
        bad.write_text('{"mesh": "dp=1", "layer_stages": [0, 2, 2, 2]}')
        flags = [bad if flag == "STAGES" else flag for flag in flags]
    result = tool("loomc", path, "--compile-to=partition", *flags, "-o",
                  tmp / "bad.mlir", check=False)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert not (tmp / "bad.mlir").exists()


@pytest.mark.parametrize("stages", ["0", "2"])
def test_searched_pipeline_equals_single_device(model, stages):
    """`--pipeline-stages 0` lets the search choose the stages and the
    micro-batches (the search splits the step into the chosen count with
    loom-slice-micro-batches); a fixed count
    lets it choose the layers per stage. Either way the step is the
    single-device step, and `--timeline` draws the predicted schedule."""
    import json
    name, tmp, path, inputs, single = model
    timeline = tmp / f"timeline-{stages}.json"
    program = pipeline(tmp, path, f"searched-{stages}", "--cluster", "host",
                       "--devices", 4, "--pipeline-stages", stages,
                       "--timeline", timeline)
    text = program.read_text()
    # `#dist.pipeline<stages = S, micro_batches = M, ...>`; a count of one
    # micro-batch is the default and not printed.
    match = re.search(r"#dist\.pipeline<stages = (\d+)"
                      r"(?:, micro_batches = (\d+))?", text)
    assert match, "no pipeline was planned"
    chosen, micro = int(match.group(1)), int(match.group(2) or 1)
    assert chosen > 1 and (stages == "0" or chosen == int(stages))
    assert_same(single, run_step(tmp, program, inputs, f"searched-{stages}",
                                 ranks=4))
    events = [e for e in json.loads(timeline.read_text())["traceEvents"]
              if e.get("ph") == "X"]
    # A process per stage, a thread per rank in it; F(m) and B(m) per rank.
    ranks = {(e["pid"], e["tid"]) for e in events}
    assert len(ranks) == 4 and len(events) == 4 * 2 * micro
