"""Partitioned training steps equal the single-device one (the proof of the
partition phase).

For tiny f64 builder models, `loomc --compile-to=autodiff` gives the
single-device `@train_step` (AdamW, global-norm clipping); `loomc
--compile-to=partition` with a mesh, a parallel config or a strategy file
gives the per-rank program. Both run one step in `loom-run` (the partitioned
one over simulated ranks) from the same parameters (drawn from the global
initializers, so every rank starts from its slice) and the same batch; the
loss, every updated parameter and every optimizer state must agree to a
relative error (max |partitioned - single| / max |single|) of at most 1e-10
(tensors that are zero up to rounding, below 1e-14, to that absolute error).

The Megatron plans are also checked for their communication: the
collectives per layer must be exactly Megatron's.
"""

import json
import pathlib
import re

import numpy as np
import pytest

import safetensors_io
from steps import assert_same, random_token_batch, run_step, tool

# Tiny models whose dims divide every mesh below (8 ranks included).
MODELS = {
    "gpt2": ["gpt2", "--layers", "2", "--hidden", "16", "--heads", "4",
             "--vocab", "32", "--seq", "8", "--batch", "8"],
    "llama": ["llama", "--layers", "2", "--hidden", "16", "--heads", "4",
              "--kv-heads", "2", "--ffn", "24", "--vocab", "32", "--seq", "8",
              "--batch", "8"],
    "transformer": ["transformer", "--layers", "1", "--hidden", "16",
                    "--heads", "4", "--ffn", "32", "--vocab", "32", "--seq",
                    "8", "--batch", "8"],
}
LAYERS = {"gpt2": 2, "llama": 2, "transformer": 1}


def build(tmp_path, model, clip=True):
    """The model's single-device training step and a batch."""
    path = tmp_path / f"{model}.mlir"
    tool("loom-model", *MODELS[model], "--dtype", "f64", "-o", path)
    # The same model with one layer less, to tell per-layer communication
    # from that of the embedding, the head and the loss.
    if LAYERS[model] > 1:
        flags = list(MODELS[model])
        flags[flags.index("--layers") + 1] = str(LAYERS[model] - 1)
        tool("loom-model", *flags, "--dtype", "f64", "-o",
             tmp_path / f"{model}-shallow.mlir")
    train = tmp_path / "train.mlir"
    tool("loomc", path, "--compile-to=autodiff", *optimizer_flags(clip),
         "-o", train)
    ir = train.read_text()
    rng = np.random.default_rng(7)
    batch = random_token_batch(ir, 32, rng)
    # Some ignored labels (the encoder-decoder ignores its pad id 0),
    # unevenly spread over the batch, so that the loss's mean needs the
    # global count of valid tokens.
    ignore = 0 if model == "transformer" else -100
    if ignore == 0:
        batch["labels"][batch["labels"] == 0] = 1
    batch["labels"][0, :3] = ignore
    batch["labels"][-1, -1] = ignore
    inputs = tmp_path / "batch.safetensors"
    safetensors_io.save(inputs, batch)
    return path, inputs


def optimizer_flags(clip):
    # Clipping adds the gradient norm's reductions; the communication counts
    # of the Megatron plans are checked without it.
    return ["--optimizer", "adamw", "--lr", "0.01",
            *(["--clip-norm", "0.5"] if clip else [])]


def partition(tmp_path, model_path, name, *flags, clip=True):
    out = tmp_path / f"{name}.mlir"
    tool("loomc", model_path, "--compile-to=partition", *optimizer_flags(clip),
         *flags, "-o", out)
    return out


def check(tmp_path, model, ranks, *flags, clip=True):
    model_path, inputs = build(tmp_path, model, clip)
    single = run_step(tmp_path, tmp_path / "train.mlir", inputs, "single")
    program = partition(tmp_path, model_path, "partitioned", *flags,
                        clip=clip)
    parallel = run_step(tmp_path, program, inputs, "parallel", ranks)
    assert_same(single, parallel)
    return program.read_text()


def assign_layouts(tmp_path, parallel_config):
    """The step of the last `check` after layout assignment alone (the
    strategies and reshards, before any lowering)."""
    path = tmp_path / "config.json"
    path.write_text(parallel_config)
    return tool("loom-opt", tmp_path / "train.mlir",
                f"-dist-insert-reshards=parallel-config={path}").stdout


def per_layer_collectives(tmp_path, model, ir, *flags):
    """The collectives one layer adds, by (kind, axes): those of `ir` minus
    those of the same model with one layer less, partitioned alike. all_slice
    moves nothing and is left out."""
    shallow = partition(tmp_path, tmp_path / f"{model}-shallow.mlir",
                        "shallow", *flags, clip=False).read_text()
    deep, base = collectives(ir), collectives(shallow)
    return {key: deep.get(key, 0) - base.get(key, 0)
            for key in set(deep) | set(base)
            if key[0] != "all_slice" and deep.get(key, 0) != base.get(key, 0)}


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("ranks", [2, 4, 8])
def test_data_parallel(tmp_path, model, ranks):
    check(tmp_path, model, ranks, "--devices", ranks)


def config(**keys):
    return json.dumps(keys)


@pytest.mark.parametrize("model", ["gpt2", "llama"])
def test_megatron_tensor_parallel(tmp_path, model):
    flags = ("--parallel-config", config(data_parallel=1, model_parallel=2))
    ir = check(tmp_path, model, 2, *flags, clip=False)
    # Two all-reduces forward (after the attention and MLP row-parallel
    # linears) and two backward (the column-parallel linears' input
    # gradients) per layer, and nothing else. Llama's separate q/k/v (and
    # gate/up) input gradients are each partial over tp: they are added as
    # partial sums and reduced once (7 all-reduces per layer otherwise).
    assert per_layer_collectives(tmp_path, model, ir, *flags) == {
        ("all_reduce", '"tp"'): 4}
    if model == "llama":
        # The adds that keep the pending sums: per layer, dq + dk, + dv and
        # dgate + dup.
        adds = len(re.findall(r'loom\.add [^\n]*partial = \["tp"\]',
                              assign_layouts(tmp_path, flags[1])))
        assert adds == 3 * LAYERS[model]


@pytest.mark.parametrize("model", ["gpt2", "llama"])
def test_megatron_sequence_parallel(tmp_path, model):
    flags = ("--parallel-config", config(data_parallel=1, model_parallel=2,
                                         use_seq_parallel=True))
    ir = check(tmp_path, model, 2, *flags, clip=False)
    # Each all-reduce becomes an all-gather / reduce-scatter pair: forward,
    # the column-parallel inputs are gathered and the row-parallel outputs
    # reduce-scattered; backward, the reverse. The parameters applied on the
    # sequence-split activations (two layer norms' weights and biases, the
    # two row-parallel biases) get partial gradients, all-reduced over tp as
    # Megatron does for its `sequence_parallel` parameters (Llama: its two
    # RMS norms' weights; its q/k/v and gate/up input gradients are summed as
    # partial sums and reduce-scattered once each).
    assert per_layer_collectives(tmp_path, model, ir, *flags) == {
        ("all_gather", '"tp"'): 4, ("reduce_scatter", '"tp"'): 4,
        ("all_reduce", '"tp"'): 6 if model == "gpt2" else 2}


@pytest.mark.parametrize("model", ["gpt2", "llama"])
def test_vocab_parallel(tmp_path, model):
    ir = check(tmp_path, model, 2, "--parallel-config",
               config(data_parallel=1, model_parallel=2, vocab_emb_dp=False))
    # The loss's softmax over the split vocabulary takes a global max.
    assert re.search(r'dist\.all_reduce max [^\n]* axes \["tp"\]', ir)


@pytest.mark.parametrize("model", ["gpt2", "llama"])
def test_2d_data_and_tensor_parallel(tmp_path, model):
    check(tmp_path, model, 4, "--parallel-config",
          config(data_parallel=2, model_parallel=2))


@pytest.mark.parametrize("model", ["gpt2", "llama"])
def test_2d_with_recompute(tmp_path, model):
    # `recompute: true` runs loom-recompute before the layouts are assigned;
    # the partitioned step with recomputed layers equals the single-device
    # step without them.
    ir = check(tmp_path, model, 4, "--parallel-config",
               config(data_parallel=2, model_parallel=2, recompute=True))
    # Every layer's forward runs again in the backward, partitioned alike.
    assert ir.count("loom.recompute") >= LAYERS[model] * 10


ULYSSES = dict(data_parallel=2, model_parallel=2, context_parallel=2,
               context_parallel_algo="ulysses_cp")
# The collectives one layer adds under ULYSSES, by (kind, axes), as measured
# (docs/Partitioning.md, "3-D: dp x sp x tp"). Megatron's four tp
# all-reduces; all-to-alls over sp between the sequence-split activations
# and the heads-split attention (GPT-2: q, k, v and the output forward, one
# backward; Llama: its kv heads are replicated over sp, so k and v are
# all-gathered instead). The weight gradients contract over the flattened
# tokens (batch x sequence, one dim), whose split can only be the batch's:
# layout assignment moves those activations' sequence split onto the batch
# (an all-to-all over sp, no gathered copy), and the gradients, pending
# over dp and sp, are reduced as reduce-scatter + all-gather pairs.
ULYSSES_PER_LAYER = {
    "gpt2": {("all_gather", '"dp"'): 9, ("all_gather", '"sp"'): 7,
             ("all_reduce", '"dp"'): 3, ("all_reduce", '"sp"'): 7,
             ("all_reduce", '"tp"'): 4, ("all_to_all", '"sp"'): 12,
             ("reduce_scatter", '"dp"'): 9, ("reduce_scatter", '"sp"'): 2},
    "llama": {("all_gather", '"dp"'): 7, ("all_gather", '"sp"'): 6,
              ("all_reduce", '"dp"'): 2, ("all_reduce", '"sp"'): 7,
              ("all_reduce", '"tp"'): 4, ("all_to_all", '"sp"'): 13,
              ("reduce_scatter", '"dp"'): 7, ("reduce_scatter", '"sp"'): 2},
}


@pytest.mark.parametrize("model", ["gpt2", "llama"])
def test_3d_data_sequence_tensor_parallel(tmp_path, model):
    # 8 ranks, mesh dp=2, sp=2, tp=2: Megatron TP over tp and
    # DeepSpeed-Ulysses sequence parallelism over sp (activations split on
    # the sequence, attention on heads over (tp, sp)).
    flags = ("--parallel-config", config(**ULYSSES))
    ir = check(tmp_path, model, 8, *flags, clip=False)
    counts = per_layer_collectives(tmp_path, model, ir, *flags)
    print(f"{model} dp x sp x tp, per layer: {sorted(counts.items())}")
    assert counts == ULYSSES_PER_LAYER[model]


def test_3d_strategy_file(tmp_path):
    # The same plan for GPT-2 from the example strategy file shipped with
    # the lit tests (attention selected by op kind).
    strategy = (pathlib.Path(__file__).resolve().parents[1] / "Transforms" /
                "Inputs" / "gpt2-ulysses.json")
    ir = check(tmp_path, "gpt2", 8, "--strategy", strategy, clip=False)
    assert collectives(ir).get(("all_to_all", '"sp"'), 0) > 0


@pytest.mark.parametrize("level", [1, 3])
def test_zero(tmp_path, level):
    # Without clipping, whose norm needs every gradient whole.
    ir = check(tmp_path, "gpt2", 4, "--parallel-config",
               config(data_parallel=4, model_parallel=1,
                      optimizer_shard=level), clip=False)
    kinds = {kind for kind, axes in collectives(ir) if '"dp"' in axes}
    # Gradients are reduce-scattered to the optimizer's shards and the
    # updated parameters gathered back (ZeRO-1), or gathered before each use
    # (ZeRO-3).
    assert {"reduce_scatter", "all_gather"} <= kinds


def collectives(ir):
    """Counts of every collective by (kind, axes)."""
    counts = {}
    for m in re.finditer(r"dist\.(\w+) (?:sum |max )?%[^\n]*? axes "
                         r"\[([^\]]*)\]", ir):
        key = (m.group(1), m.group(2))
        counts[key] = counts.get(key, 0) + 1
    return counts
