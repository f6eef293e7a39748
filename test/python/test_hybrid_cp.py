"""Hybrid context parallelism (`context_parallel_algo: hybrid_cp` with
`ulysses_degree_in_cp: U`): the partitioned training step equals the
single-device one.

The context-parallel degree C = U x R becomes two mesh axes, `cp` = R (the
ring) and `sp` = U (Ulysses). Activations split their sequence over
(cp, sp); attention takes Ulysses' part onto its heads by all-to-alls over
sp and keeps the ring's part on the sequence, so it runs as
`dist.ring_attention` over cp with the zigzag split of 2R chunks.

For tiny f64 GPT-2 and Llama (4 query, 2 key/value heads: sp takes the kv
heads alone, the query groups beside tp) with a causal mask, U x R = 2 x 2
alone, with data parallelism (and ZeRO-2), with tensor parallelism and with
recompute, one AdamW step (with global-norm clipping) over simulated ranks
in `loom-run` must give the single-device loss, updated parameters and
optimizer states to 1e-10 (steps.assert_same). The sequence (16) reaches
attention as 8-token ring blocks gathered from two 4-token Ulysses slices:
moving a token to the wrong rank or head, the wrong RoPE position for a
slice, or a ring over the wrong group changes the loss and every gradient.
"""

import json
import re

import pytest

from steps import tool
from test_ring_attention import MODELS, check_partitioned_step

HYBRID = dict(context_parallel=4, context_parallel_algo="hybrid_cp",
              ulysses_degree_in_cp=2, use_attn_mask_compression=True)

CONFIGS = {
    "u2r2": dict(HYBRID),
    "dp2-u2r2": dict(HYBRID, data_parallel=2),
    "u2r2-tp2": dict(HYBRID, model_parallel=2),
    # The recomputed forward's ring feeds the gradient its log-sum-exp.
    "u2r2-recompute": dict(HYBRID, recompute=True),
    # ZeRO-2 shards over dp only; the sequence's gradients stay pending over
    # cp and sp until their reduction.
    "dp2-u2r2-zero2": dict(HYBRID, data_parallel=2, zero_stage=2),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_hybrid_cp_step_equals_single_device(tmp_path, model, name):
    config = CONFIGS[name]

    def check_ir(ir):
        # The mesh has both parts; every attention is the ring over cp
        # alone (the backward reusing the forward's log-sum-exp but under
        # recompute), and Ulysses' all-to-alls over sp feed it.
        axes = [("dp", config.get("data_parallel", 1)), ("cp", 2),
                ("sp", 2), ("tp", config.get("model_parallel", 1))]
        axes = [(axis, size) for axis, size in axes if size > 1]
        mesh = "dist.mesh @mesh shape [{}] axes [{}]".format(
            ", ".join(str(size) for _, size in axes),
            ", ".join(f'"{axis}"' for axis, _ in axes))
        assert mesh in ir, mesh
        forwards = 4 if config.get("recompute") else 2
        assert ir.count("dist.ring_attention %") == forwards
        assert ir.count("dist.ring_attention_grad") == 2
        for line in ir.splitlines():
            if "dist.ring_attention" in line:
                assert 'axes ["cp"]' in line, line
        assert re.search(r'dist\.all_to_all .*axes \["sp"\]', ir)
        assert "loom.attention" not in ir

    check_partitioned_step(tmp_path, model, config, f"{model} {name}", 13,
                           (1, slice(3, 9)), check_ir)


# The search sees hybrid CP as a layout over two axes (docs/Search.md,
# "Hybrid context parallelism"). One 32K sequence of Llama-3 8B on 64 H100s
# (8 nodes) in bf16-mixed: a ring over all 64 ranks has 512-token blocks
# whose k/v transfers across nodes outlast their block compute, while 8
# Ulysses ranks inside each node leave a ring of 8 with 4096-token blocks.
def plan_of(tmp_path, model_path, *flags):
    out = tmp_path / "plan.json"
    if out.exists():
        out.unlink()
    tool("loomc", model_path, "--compile-to=sharding", "--cluster",
         "dgx-h100", "--precision", "bf16-mixed", *flags, "--plan-json", out,
         "-o", tmp_path / "out.mlir")
    return json.loads(out.read_text())


def test_search_finds_hybrid_layout_on_two_axes(tmp_path):
    path = tmp_path / "llama3-8b.json"
    tool("loom-model", "llama", "--preset", "llama3-8b", "--seq", "32768",
         "--batch", "1", "--format", "json", "-o", path)
    searched = plan_of(tmp_path, path, "--mesh", "cp=8,sp=8")
    attentions = [op for op in searched["ops"]
                  if op["op"] == "loom.attention"]
    assert len(attentions) == 32
    for op in attentions:
        # Factors (batch, kv heads, groups, sequence, ...): the heads over
        # sp (Ulysses), the sequence over cp (the ring).
        assert op["strategy"][1] == ["sp"] and op["strategy"][3] == ["cp"], \
            op
    config = plan_of(tmp_path, path, "--parallel-config", json.dumps(
        dict(context_parallel=64, context_parallel_algo="hybrid_cp",
             ulysses_degree_in_cp=8)))
    ring = plan_of(tmp_path, path, "--parallel-config",
                   json.dumps(dict(context_parallel=64)))
    step = searched["predicted"]["step_time_s"]
    assert config["predicted"]["step_time_s"] == pytest.approx(step,
                                                               rel=1e-9)
    assert step < 0.95 * ring["predicted"]["step_time_s"]
