"""The type of a mixed-precision step's gradient reduction
(`loomc --grad-reduce-dtype`, docs/MixedPrecision.md).

With f32 (the default, Megatron's), `loom-widen-param-grads` keeps every
sum of a parameter's gradient in f32: the weight-gradient GEMMs multiply
their bf16 operands, widened exactly, into an f32 result, the embedding
scatter-add and the bias sums run in f32. A data-parallel plan's per-rank partial sums are then never
rounded to bf16, so in `bf16-mixed` the partitioned step equals the
single-device step to the 1e-10 of every f64 equivalence test (steps.py):
every bf16 value of the step is the same, only the order of f64 additions
differs. This holds for data parallelism, ZeRO-1 and ZeRO-3 and pipelines
of one micro-batch. With micro-batches the accumulation is f32 too, but the
loss gradient's normalization is computed per micro-batch, a few f64 ulps
away, so the gradients agree to about one bf16 rounding. With bf16 the same plans differ far beyond that, since each rank
rounds its partial sum to bf16 before the sum, and the reductions move half
the bytes.

Tensor parallelism rounds its own partial sums (a row-parallel linear's
output, a column-parallel linear's input gradient) to bf16 before its
all-reduce, as Megatron does, and so does DeepSpeed-Ulysses where the
attention output projection contracts the heads split over sp: those plans
are not the single-device step bit for bit. The test shows instead that
adding data parallelism to them changes nothing (dp x tp equals tp to
1e-10).
"""

import re

import numpy as np
import pytest

import safetensors_io
from steps import assert_same, run_step, tool

MODELS = {
    "gpt2": ["gpt2", "--layers", "2", "--hidden", "16", "--heads", "4",
             "--vocab", "32", "--seq", "8", "--batch", "8"],
    "llama": ["llama", "--layers", "2", "--hidden", "16", "--heads", "4",
              "--kv-heads", "2", "--ffn", "24", "--vocab", "32", "--seq", "8",
              "--batch", "8"],
}
OPTIMIZER = ["--optimizer", "adamw", "--lr", "0.01"]

# (name, devices, flags): plans whose only sums over split dims are the
# gradients' (over the batch, the sequence or the micro-batches).
PLANS = [
    ("dp4", 4, ["--mesh", "dp=4"]),
    ("zero1", 4, ["--parallel-config",
                  '{"data_parallel": 4, "optimizer_shard": true}']),
    ("zero3", 2, ["--parallel-config",
                  '{"data_parallel": 2, "optimizer_shard": 3}']),
    ("pp2", 2, ["--devices", 2, "--pipeline-stages", 2, "--micro-batches", 1,
                "--schedule", "1f1b"]),
    ("pp2-dp2", 4, ["--devices", 4, "--pipeline-stages", 2,
                    "--micro-batches", 1, "--schedule", "gpipe"]),
]


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, tmp_path_factory):
    """An f32 model, a batch and its single-device bf16-mixed steps (f32
    and bf16 gradient reduction)."""
    name = request.param
    tmp = tmp_path_factory.mktemp(name)
    path = tmp / f"{name}.mlir"
    tool("loom-model", *MODELS[name], "-o", path)
    rng = np.random.default_rng(5)
    batch = {role: rng.integers(0, 32, size=(8, 8)).astype(np.int64)
             for role in ("input_ids", "labels")}
    inputs = tmp / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    single = {}
    for dtype in ("f32", "bf16"):
        train = tmp / f"single-{dtype}.mlir"
        tool("loomc", path, "--compile-to=autodiff", "--precision",
             "bf16-mixed", "--grad-reduce-dtype", dtype, *OPTIMIZER,
             "-o", train)
        single[dtype] = run_step(tmp, train, inputs, f"single-{dtype}")
    return name, tmp, path, inputs, single


def compile_plan(tmp, path, name, dtype, flags):
    out = tmp / f"{name}-{dtype}.mlir"
    tool("loomc", path, "--compile-to=partition", "--precision", "bf16-mixed",
         "--grad-reduce-dtype", dtype, *OPTIMIZER, *flags, "-o", out)
    return out


def max_relative_error(single, parallel):
    worst = 0.0
    for key, expected in single.items():
        scale = float(np.max(np.abs(expected)))
        if scale > 0:
            worst = max(worst, float(np.max(np.abs(parallel[key] - expected)))
                        / scale)
    return worst


SUMMING = re.compile(r"= dist\.(?:all_reduce|reduce_scatter)\b")
TENSOR = re.compile(r"tensor<(?:([0-9x]+)x)?(bf16|f32|f64)>")


def reduction_bytes(program):
    """Bytes each rank's summing collectives produce per step, by type."""
    total = {"bf16": 0, "f32": 0, "f64": 0}
    for line in program.read_text().splitlines():
        if not SUMMING.search(line):
            continue
        dims, element = TENSOR.findall(line)[-1]
        count = int(np.prod([int(d) for d in dims.split("x")])) if dims else 1
        total[element] += count * (2 if element == "bf16" else 4)
    return total


def test_single_device_steps_differ(model):
    """Summing the gradients in bf16 or f32 is a real difference even on
    one device (the tied embedding's two parts, the bias sums)."""
    name, tmp, path, inputs, single = model
    assert max_relative_error(single["f32"], single["bf16"]) > 1e-6


@pytest.mark.parametrize("plan,devices,flags", PLANS,
                         ids=[p[0] for p in PLANS])
def test_f32_reduction_equals_single_device(model, plan, devices, flags):
    name, tmp, path, inputs, single = model
    program = compile_plan(tmp, path, plan, "f32", flags)
    # Every summing collective runs in f32.
    assert reduction_bytes(program)["bf16"] == 0
    assert_same(single["f32"],
                run_step(tmp, program, inputs, f"{plan}-f32", ranks=devices),
                plan)


def test_micro_batches_agree_to_a_bf16_rounding(model):
    """With micro-batches each backward is seeded with 1 / M of its own
    loss normalization (loom-slice-micro-batches), a value a few f64 ulps
    from the single-device seed, so a loss gradient that lands next to a
    bf16 rounding boundary is rounded the other way: the forward is the
    same, the gradients (Adam's first moment, 0.1 g) agree to about one bf16
    rounding of an element."""
    name, tmp, path, inputs, single = model
    program = compile_plan(tmp, path, "pp2-m4", "f32", [
        "--devices", 2, "--pipeline-stages", 2, "--micro-batches", 4,
        "--schedule", "1f1b"])
    assert reduction_bytes(program)["bf16"] == 0
    parallel = run_step(tmp, program, inputs, "pp2-m4", ranks=2)
    expected = single["f32"]
    assert abs(parallel["loss"] - expected["loss"]) <= 1e-10 * abs(
        expected["loss"])
    moments = [key for key in expected if key.endswith(".exp_avg")]
    assert moments
    assert max_relative_error({k: expected[k] for k in moments},
                              parallel) <= 2 ** -7


@pytest.mark.parametrize("plan,devices,flags", PLANS[:2],
                         ids=[p[0] for p in PLANS[:2]])
def test_bf16_reduction_rounds_per_rank(model, plan, devices, flags):
    """In bf16 each rank rounds its partial sum: far from the single-device
    step (which the test above would catch), with bf16 reductions."""
    name, tmp, path, inputs, single = model
    program = compile_plan(tmp, path, plan, "bf16", flags)
    parallel = run_step(tmp, program, inputs, f"{plan}-bf16", ranks=devices)
    assert max_relative_error(single["bf16"], parallel) > 1e-6
    assert reduction_bytes(program)["bf16"] > 0


def test_bf16_reduction_halves_the_bytes(model):
    """Data parallel: each bf16 all-reduce of n elements is one of 4n
    bytes in f32."""
    name, tmp, path, inputs, single = model
    narrow = reduction_bytes(compile_plan(tmp, path, "dp4", "bf16",
                                          ["--mesh", "dp=4"]))
    wide = reduction_bytes(compile_plan(tmp, path, "dp4", "f32",
                                        ["--mesh", "dp=4"]))
    assert wide["bf16"] == 0 and narrow["bf16"] > 0
    assert wide["f32"] == narrow["f32"] + 2 * narrow["bf16"]


# (name, config without dp, ranks): plans that split a forward contraction.
SPLIT_FORWARD = [
    ("tp2", '"model_parallel": 2', 2),
    ("ulysses2", '"context_parallel": 2, "context_parallel_algo": '
                 '"ulysses_cp"', 2),
]


@pytest.mark.parametrize("plan,config,ranks", SPLIT_FORWARD,
                         ids=[p[0] for p in SPLIT_FORWARD])
def test_data_parallelism_adds_nothing_to_split_forward_sums(model, plan,
                                                             config, ranks):
    """Tensor parallelism, and Ulysses where the attention output
    projection contracts the heads split over sp, round each rank's partial
    sum of the forward to bf16 before the all-reduce (as Megatron does):
    close to the single-device step, not equal. Data parallelism on top of
    them changes nothing: its gradient sums are f32."""
    name, tmp, path, inputs, single = model
    alone = compile_plan(tmp, path, plan, "f32", [
        "--parallel-config", '{"data_parallel": 1, ' + config + '}'])
    with_dp = compile_plan(tmp, path, f"dp2-{plan}", "f32", [
        "--parallel-config", '{"data_parallel": 2, ' + config + '}'])
    results = run_step(tmp, alone, inputs, plan, ranks=ranks)
    assert_same(results,
                run_step(tmp, with_dp, inputs, f"dp2-{plan}",
                         ranks=2 * ranks), f"dp x {plan}")
    # Close to the single-device step: the losses agree to a few bf16
    # roundings of the logits (2^-8 relative each).
    assert abs(results["loss"] - single["f32"]["loss"]) <= \
        2 ** -6 * abs(single["f32"]["loss"])
