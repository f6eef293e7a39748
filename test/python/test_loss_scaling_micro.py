"""fp16 dynamic loss scaling with micro-batches and pipeline stages
(docs/MixedPrecision.md, "Micro-batches and pipelines").

`loom-slice-micro-batches` seeds each micro-batch's backward with
`loss_scale` times its normalization (1 / the whole batch's labelled
positions), accumulates the scaled f32 gradient parts, and unscales and
counts the accumulated gradients once; under a pipeline each stage counts
its own parameters' gradients, the partial count travels to the next stage
with the pipeline's point-to-point transfers (as the clipping norm does) and
the total comes back to every stage that selects, so every stage takes the
same decision. Checked through the interpreter (`loom-run`, f64 storage,
fp16 rounded exactly):

- the reference is the single-device step of the same 4 micro-batches
  (the micro-batched step is not the one-micro-batch step bit for bit: the
  per-micro-batch normalization moves a few gradients across an fp16
  rounding, docs/MixedPrecision.md); against it, dp=2, dp=2 x ZeRO-2 and 2
  pipeline stages under 1F1B and GPipe agree to the 1e-10 of every
  equivalence test (steps.py), loss-scaling state included;
- the scale is applied once and taken off once: the micro-batched fp16
  step's Adam moments follow the micro-batched f32 step's to fp16 rounding
  (a forgotten unscale is 2^16 off, a seed without the normalization 4x);
- the skip: with the test hook's inf, every plan returns every parameter,
  AdamW moment and the step counter bit for bit, whichever stage owns
  them, and every plan counts every gradient element as non-finite; the
  scale halves and the growth tracker restarts.
"""

import re

import numpy as np
import pytest

import safetensors_io
from steps import NOT_CARRIED, assert_same, poisoned_inputs, run_step, tool

MODELS = {
    "gpt2": ["gpt2", "--layers", "2", "--hidden", "16", "--heads", "4",
             "--vocab", "32", "--seq", "8", "--batch", "8"],
    "llama": ["llama", "--layers", "2", "--hidden", "16", "--heads", "4",
              "--kv-heads", "2", "--ffn", "24", "--vocab", "32", "--seq", "8",
              "--batch", "8"],
}
OPTIMIZER = ["--optimizer", "adamw", "--lr", "0.01"]
MICRO = ["--micro-batches", "4"]
DP2 = ["--mesh", "dp=2", *MICRO]
DP2_ZERO2 = ["--parallel-config", '{"data_parallel": 2, "zero_stage": 2}',
             *MICRO]
PIPELINES = [
    ("pp2-1f1b", 2, ["--devices", "2", "--pipeline-stages", "2",
                     "--schedule", "1f1b", *MICRO]),
    ("pp2-gpipe", 2, ["--devices", "2", "--pipeline-stages", "2",
                      "--schedule", "gpipe", *MICRO]),
]
PLANS = [("dp2", 2, DP2), ("dp2-zero2", 2, DP2_ZERO2), *PIPELINES]


def compile_step(tmp, path, name, precision, flags, phase="partition"):
    out = tmp / f"{name}-{precision}.mlir"
    tool("loomc", path, f"--compile-to={phase}", "--precision", precision,
         *OPTIMIZER, *flags, "-o", out)
    return out


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, tmp_path_factory):
    """A model, a batch with ignored labels spread unevenly over the
    micro-batches, and its single-device 4-micro-batch steps in fp16-mixed
    and f32."""
    name = request.param
    tmp = tmp_path_factory.mktemp(name)
    path = tmp / f"{name}.mlir"
    tool("loom-model", *MODELS[name], "-o", path)
    rng = np.random.default_rng(13)
    batch = {role: rng.integers(0, 32, size=(8, 8)).astype(np.int64)
             for role in ("input_ids", "labels")}
    batch["labels"][0, :5] = -100
    batch["labels"][3, 2] = -100
    batch["labels"][-1, -1] = -100
    inputs = tmp / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    steps = {}
    for precision in ("fp16-mixed", "f32"):
        program = compile_step(tmp, path, "single-m4", precision,
                               ["--devices", "1", *MICRO])
        assert "loom.micro_batch = 3" in program.read_text()
        steps[precision] = run_step(tmp, program, inputs,
                                    f"single-m4-{precision}")
    return tmp, path, batch, inputs, steps


def test_micro_batched_step_is_unscaled_once(model):
    """A clean step applies the update (step 1, tracker 1, scale kept), and
    Adam's first moment (0.1 g) is the f32 micro-batched step's up to fp16
    rounding of the activations (2^-5 of the largest moment, as
    test_loss_scaling.py): 2^16 times larger without the unscale, 4 times
    without each micro-batch's normalization in its seed."""
    tmp, path, batch, inputs, steps = model
    out = steps["fp16-mixed"]
    assert float(out["found_inf"]) == 0
    assert float(out["loss_scale"]) == 65536.0
    assert int(out["loss_scale.growth_tracker"]) == 1
    assert int(out["step"]) == 1
    moments = [k for k in steps["f32"] if k.endswith(".exp_avg")]
    assert moments
    for key in moments:
        expected = steps["f32"][key]
        scale = float(np.max(np.abs(expected)))
        err = float(np.max(np.abs(out[key] - expected)))
        assert err <= 2.0 ** -5 * scale, f"{key}: {err / scale:.3e}"


@pytest.mark.parametrize("plan,devices,flags", PIPELINES,
                         ids=[p[0] for p in PIPELINES])
def test_pipeline_equals_single_device(model, plan, devices, flags):
    """2 stages, 4 micro-batches: each stage counts its own gradients, the
    count crosses to the other stage, and loss, every parameter and state,
    the scale, the tracker and `found_inf` are the single-device step's."""
    tmp, path, batch, inputs, steps = model
    program = compile_step(tmp, path, plan, "fp16-mixed", flags)
    text = program.read_text()
    assert 'axes ["pp"' in text and "dist.send" in text
    assert "loom.micro_batch = 3" in text
    # Both stages count gradients (their own parameters').
    assert {s for s in re.findall(
        r"loom\.nonfinite_count .*dist\.stage = (\d+)", text)} == {"0", "1"}
    assert_same(steps["fp16-mixed"],
                run_step(tmp, program, inputs, plan, ranks=devices), plan)


def test_zero2_equals_data_parallel(model):
    """dp=2 x ZeRO-2 (each micro-batch's scaled part reduce-scattered into
    the rank's shard, the shard unscaled and counted, the partial counts
    all-reduced) equals dp=2 (one all-reduce of the accumulated gradient,
    counted whole) to 1e-10: the same step, gradient sharding aside."""
    tmp, path, batch, inputs, steps = model
    plain = compile_step(tmp, path, "dp2", "fp16-mixed", DP2)
    sharded = compile_step(tmp, path, "dp2-zero2", "fp16-mixed", DP2_ZERO2)
    assert "dist.reduce_scatter" in sharded.read_text()
    assert_same(run_step(tmp, plain, inputs, "dp2", ranks=2),
                run_step(tmp, sharded, inputs, "dp2-zero2", ranks=2))


def test_data_parallel_agrees_with_single_device(model):
    """dp=2 of 4 micro-batches: each micro-batch (2 rows) is split over the
    sequence, so each rank rounds its partial attention-gradient sums to
    fp16 before they meet (as in bf16-mixed without loss scaling; not the
    single-device step bit for bit). The loss and the loss-scaling state
    are the single-device step's, and Adam's first moments agree to a few
    fp16 roundings (2^-7 of the largest; a missed unscale is 2^16 off)."""
    tmp, path, batch, inputs, steps = model
    program = compile_step(tmp, path, "dp2", "fp16-mixed", DP2)
    out = run_step(tmp, program, inputs, "dp2", ranks=2)
    single = steps["fp16-mixed"]
    assert abs(out["loss"] - single["loss"]) <= 1e-10 * abs(single["loss"])
    for key in ("found_inf", "loss_scale", "loss_scale.growth_tracker",
                "step"):
        assert out[key] == single[key], key
    moments = [k for k in single if k.endswith(".exp_avg")]
    for key in moments:
        scale = float(np.max(np.abs(single[key])))
        err = float(np.max(np.abs(out[key] - single[key])))
        assert err <= 2.0 ** -7 * scale, f"{key}: {err / scale:.3e}"


@pytest.mark.parametrize("plan,devices,flags",
                         PLANS + [("single", None, None)],
                         ids=[p[0] for p in PLANS] + ["single"])
def test_non_finite_step_is_skipped(model, plan, devices, flags):
    """From the state after a clean step, with inf injected into the
    unscale: every parameter, AdamW moment and the step counter come back
    bit for bit (under a pipeline, on the stage that owns each), every
    gradient element is counted once (the accumulated gradients, not each
    micro-batch's part), the scale halves and the tracker restarts."""
    tmp, path, batch, inputs, steps = model
    state = steps["fp16-mixed"]
    program = (tmp / "single-m4-fp16-mixed.mlir" if plan == "single"
               else compile_step(tmp, path, plan, "fp16-mixed", flags))
    poisoned = poisoned_inputs(tmp, f"{plan}-inf", batch, state)
    out = run_step(tmp, program, poisoned, f"{plan}-skip", ranks=devices)
    params = sum(v.size for k, v in state.items()
                 if k not in NOT_CARRIED and "." in k and
                 not k.startswith("loss_scale") and "exp_avg" not in k)
    assert float(out["found_inf"]) == params
    assert float(out["loss_scale"]) == 32768.0
    assert int(out["loss_scale.growth_tracker"]) == 0
    kept = 0
    for key, value in state.items():
        if key in NOT_CARRIED or key.startswith("loss_scale"):
            continue
        np.testing.assert_array_equal(out[key], value, err_msg=key)
        kept += 1
    assert kept > 3
