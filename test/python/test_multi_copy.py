"""Fine-grained multi-copy interleave (MindFormers' `fine_grain_interleave`):
the partitioned training step equals the single-device one.

`loom-interleave-copies` splits the batch entering the transformer layers
into N copies of strided rows and interleaves the copies' ops; autodiff then
interleaves the backward and sums each layer parameter's gradient over the
copies. For tiny f64 GPT-2 and Llama (grouped-query heads), N = 2 with
Megatron tensor + sequence parallelism (`model_parallel` 2,
`use_seq_parallel`), alone, with data parallelism, with micro-batches, with
both, with a 2-stage 1F1B pipeline, with recompute and with ZeRO-2, one
AdamW step (with global-norm clipping) over simulated ranks in `loom-run`
must give the loss, updated parameters and optimizer states of the
single-device step *without* copies to 1e-10 (steps.assert_same).

A copy that took the wrong rows, a join that put them back in another order,
or a gradient part of one copy lost would change the loss or the gradients:
the labels of the batch differ row by row and some are ignored, so the loss
normalization must also count the whole batch.
"""

import json
import re

import numpy as np
import pytest

import safetensors_io
from steps import assert_same, random_token_batch, run_step, tool

MODELS = {
    "gpt2": ["gpt2", "--layers", "2", "--hidden", "16", "--heads", "4",
             "--vocab", "32", "--seq", "8", "--batch", "8"],
    "llama": ["llama", "--layers", "2", "--hidden", "16", "--heads", "4",
              "--kv-heads", "2", "--ffn", "24", "--vocab", "32", "--seq",
              "8", "--batch", "8"],
}
OPTIMIZER = ["--optimizer", "adamw", "--lr", "0.01", "--clip-norm", "0.5"]
SP = dict(model_parallel=2, use_seq_parallel=True, fine_grain_interleave=2)

# name: (config, ranks)
CONFIGS = {
    "tp2-sp": (SP, 2),
    "dp2-tp2-sp": (dict(SP, data_parallel=2), 4),
    "tp2-sp-micro2": (dict(SP, micro_batch_num=2), 2),
    "dp2-tp2-sp-micro2": (dict(SP, data_parallel=2, micro_batch_num=2), 4),
    "pp2-tp2-sp-micro2": (dict(SP, pipeline_stage=2, micro_batch_num=2), 4),
    # Each layer's forward again before its backward, copy by copy.
    "tp2-sp-recompute": (dict(SP, recompute=True), 2),
    # The copies' summed gradient parts reduce-scattered into dp shards.
    "dp2-tp2-sp-zero2": (dict(SP, data_parallel=2, zero_stage=2), 4),
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, tmp_path_factory):
    """The model, a batch and its single-device step (no copies)."""
    tmp = tmp_path_factory.mktemp(request.param)
    path = tmp / "model.mlir"
    tool("loom-model", *MODELS[request.param], "--dtype", "f64", "-o", path)
    train = tmp / "train.mlir"
    tool("loomc", path, "--compile-to=autodiff", *OPTIMIZER, "-o", train)
    batch = random_token_batch(train.read_text(), 32,
                               np.random.default_rng(5))
    # Ignored labels unevenly spread over the rows: the copies hold
    # different numbers of them, so the loss needs the whole batch's count.
    batch["labels"][1, :5] = -100
    batch["labels"][6, 2:] = -100
    inputs = tmp / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    single = run_step(tmp, train, inputs, "single")
    return request.param, tmp, path, inputs, single


def partition(tmp, path, name, config):
    program = tmp / f"{name}.mlir"
    tool("loomc", path, "--compile-to=partition", *OPTIMIZER,
         "--parallel-config", json.dumps(config), "-o", program)
    return program.read_text(), program


def count(ir, op):
    return len(re.findall(rf"= {re.escape(op)} ", ir))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_multi_copy_step_equals_single_device(model, name):
    model_name, tmp, path, inputs, single = model
    config, ranks = CONFIGS[name]
    ir, program = partition(tmp, path, name, config)
    # Both copies are there, op by op, through the partitioned program.
    assert "loom.copy = 1" in ir
    # Each copy runs its own sequence-parallel collectives: twice the
    # reduce-scatters over tp of the same plan without copies.
    plain, _ = partition(tmp, path, name + "-plain",
                         {k: v for k, v in config.items()
                          if k != "fine_grain_interleave"})
    assert count(ir, "dist.reduce_scatter") > count(plain, "dist.reduce_scatter")
    parallel = run_step(tmp, program, inputs, name, ranks)
    assert_same(single, parallel, f"{model_name} {name}")


def test_one_copy_changes_nothing(model):
    _, tmp, path, _, _ = model
    config = dict(SP, fine_grain_interleave=1)
    one, _ = partition(tmp, path, "one", config)
    plain, _ = partition(tmp, path, "plain",
                         dict(model_parallel=2, use_seq_parallel=True))
    assert one == plain


@pytest.mark.parametrize("name", ["tp2-sp", "dp2-tp2-sp"])
def test_encoder_decoder_interleaves_both_inputs(tmp_path, name):
    """The MindSpore seed's encoder-decoder: its builder embeds the source
    and the target before the encoder's layers, so the encoder and decoder
    layers are one run of layer ops with two batch inputs (both split), and
    the decoder's cross-attention reads the encoder's copies as they are.
    (Its dropout sits outside the layers, so the copies keep the
    single-device masks; micro-batches would not.)"""
    config, ranks = CONFIGS[name]
    path = tmp_path / "model.mlir"
    tool("loom-model", "transformer", "--layers", "2", "--hidden", "16",
         "--heads", "2", "--vocab", "32", "--seq", "8", "--batch", "8",
         "--dtype", "f64", "-o", path)
    train = tmp_path / "train.mlir"
    tool("loomc", path, "--compile-to=autodiff", *OPTIMIZER, "-o", train)
    batch = random_token_batch(train.read_text(), 32,
                               np.random.default_rng(7))
    inputs = tmp_path / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    single = run_step(tmp_path, train, inputs, "single")
    # Two splits (source and target embeddings), one join (the decoder's
    # output, before the head).
    forward = tool("loom-opt", path, "-loom-interleave-copies=copies=2").stdout
    assert len(re.findall(r"= loom\.split .*axis = 1 ", forward)) == 2
    assert count(forward, "loom.concat") == 1
    ir, program = partition(tmp_path, path, name, config)
    assert "loom.copy = 1" in ir
    assert_same(single, run_step(tmp_path, program, inputs, name, ranks),
                f"transformer {name}")
