"""Ring attention (context parallelism, `context_parallel_algo:
colossalai_cp`): the partitioned training step equals the single-device one.

For tiny f64 GPT-2 and Llama (grouped-query heads) with a causal mask,
`loomc --compile-to=partition` with `context_parallel` C = 2 or 4, alone and
with data and tensor parallelism, recompute and ZeRO-2, turns every attention into
`dist.ring_attention` and its gradient into `dist.ring_attention_grad` over
the mesh axis `cp`. One AdamW step (with global-norm clipping) of that
program over simulated ranks in `loom-run` must give the single-device
loss, updated parameters and optimizer states to 1e-10 (steps.assert_same).

The sequence (16) is cut into 2C chunks and ranks exchange them into the
zigzag order (rank r: chunks r and 2C-1-r); RoPE positions and the causal
mask must use each chunk's global positions, and the ring's blocks are merged
by their log-sum-exp, so a wrong chunk order, wrong positions or a wrong
merge all change the loss and every gradient.
"""

import json

import numpy as np
import pytest

import safetensors_io
from steps import assert_same, random_token_batch, run_step, tool

MODELS = {
    "gpt2": ["gpt2", "--layers", "2", "--hidden", "16", "--heads", "4",
             "--vocab", "32", "--seq", "16", "--batch", "4"],
    "llama": ["llama", "--layers", "2", "--hidden", "16", "--heads", "4",
              "--kv-heads", "2", "--ffn", "24", "--vocab", "32", "--seq",
              "16", "--batch", "4"],
}
OPTIMIZER = ["--optimizer", "adamw", "--lr", "0.01", "--clip-norm", "0.5"]

CONFIGS = {
    "cp2": dict(context_parallel=2),
    "cp4": dict(context_parallel=4),
    "dp2-cp2": dict(data_parallel=2, context_parallel=2),
    "cp2-tp2": dict(context_parallel=2, model_parallel=2),
    "dp2-cp2-tp2": dict(data_parallel=2, context_parallel=2,
                        model_parallel=2),
    # Each layer's forward again before its backward: the recomputed ring's
    # log-sum-exp feeds the gradient.
    "cp2-recompute": dict(context_parallel=2, recompute=True),
    "dp2-cp2-zero2": dict(data_parallel=2, context_parallel=2, zero_stage=2),
}


def ranks_of(config):
    return (config.get("data_parallel", 1) * config["context_parallel"] *
            config.get("model_parallel", 1))


def check_partitioned_step(tmp_path, model, config, label, seed, ignored,
                           check_ir):
    """One AdamW step of MODELS[model] partitioned by the parallel `config`
    equals the single-device step (steps.assert_same); `ignored` indexes the
    labels set to -100 (unevenly spread, so the mean needs the global
    count), and `check_ir` asserts on the partitioned program's IR."""
    path = tmp_path / "model.mlir"
    tool("loom-model", *MODELS[model], "--dtype", "f64", "-o", path)
    train = tmp_path / "train.mlir"
    tool("loomc", path, "--compile-to=autodiff", *OPTIMIZER, "-o", train)
    batch = random_token_batch(train.read_text(), 32,
                               np.random.default_rng(seed))
    batch["labels"][ignored] = -100
    inputs = tmp_path / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    single = run_step(tmp_path, train, inputs, "single")

    program = tmp_path / "partitioned.mlir"
    tool("loomc", path, "--compile-to=partition", *OPTIMIZER,
         "--parallel-config", json.dumps(config), "-o", program)
    check_ir(program.read_text())
    parallel = run_step(tmp_path, program, inputs, "parallel",
                        ranks_of(config))
    assert_same(single, parallel, label)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_ring_attention_step_equals_single_device(tmp_path, model, name):
    config = CONFIGS[name]

    def check_ir(ir):
        # Both layers' attention is the ring, over cp, and the backward
        # reuses the forward's log-sum-exp (no second forward ring but
        # recompute's).
        forwards = 4 if config.get("recompute") else 2
        assert ir.count("dist.ring_attention %") == forwards
        assert ir.count("dist.ring_attention_grad") == 2
        assert 'axes ["cp"]' in ir
        assert "loom.attention" not in ir

    check_partitioned_step(tmp_path, model, config, f"{model} {name}", 11,
                           (0, slice(None, 5)), check_ir)


def test_odd_sequence_block_is_an_error(tmp_path):
    # Sequence 8 over cp = 8 leaves one row per rank: no two zigzag chunks.
    flags = list(MODELS["llama"])
    flags[flags.index("--seq") + 1] = "8"
    path = tmp_path / "model.mlir"
    tool("loom-model", *flags, "--dtype", "f64", "-o", path)
    result = tool("loomc", path, "--compile-to=partition",
                  "--parallel-config", '{"context_parallel": 8}',
                  check=False)
    assert result.returncode != 0
    assert "expects an even sequence block" in result.stderr, result.stderr
