"""The whole plan space by default (docs/Search.md, "The plan space").

(i) `loomc --cluster C --devices N` with nothing else weighs pipeline
    stages and micro-batches with the data x tensor meshes, ZeRO and
    recompute: on a model where a pipeline pays, the default plan has one,
    and `--pipeline-stages 1` (a constraint) takes it away at a higher
    predicted step time.
(ii) The default search's best predicted step equals the best of an
    exhaustive enumeration: every (stages, dp, tp) candidate priced alone
    (`--pipeline-stages S --mesh dp=..,tp=..`, each searched without the
    bounds that prune the whole-space search), on small models and
    clusters. The micro-batches are fixed (`--micro-batches 4`: the step is
    split before the search, so every candidate is priced on the step that
    runs); when the search chooses them it ranks the counts by its estimate
    of the unsplit step (docs/Search.md, "The plan space").
(iii) Flags keep meaning "constrain to this": `--mesh` and a parallel
    config's mesh give plans without a pipeline over all the devices.
"""

import json

import pytest

from test_partition import tool

# Two nodes of 8 GPUs: the model is too small for tensor parallelism across
# nodes and its gradients too large for cheap data parallelism across them,
# so two pipeline stages of one node each pay.
GPT_PIPELINE = ["gpt2", "--layers", "4", "--hidden", "1024", "--heads", "16",
                "--vocab", "4096", "--seq", "256", "--batch", "16"]


def model(tmp_path, flags, name="model"):
    path = tmp_path / f"{name}.json"
    tool("loom-model", *flags, "--format", "json", "-o", path)
    return path


def plan(tmp_path, model_path, *flags):
    out = tmp_path / "plan.json"
    if out.exists():
        out.unlink()
    tool("loomc", model_path, "--compile-to=pipeline", *flags,
         "--plan-json", out, "-o", tmp_path / "out.mlir")
    return json.loads(out.read_text())


def stages_of(result):
    return result.get("pipeline", {}).get("stages", 1)


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def mesh_spec(dp, tp):
    axes = []
    if dp > 1 or tp == 1:
        axes.append(f"dp={dp}")
    if tp > 1:
        axes.append(f"tp={tp}")
    return ",".join(axes)


def test_default_weighs_pipelines(tmp_path):
    path = model(tmp_path, GPT_PIPELINE)
    default = plan(tmp_path, path, "--cluster", "dgx-a100-80g", "--devices",
                   16)
    flat = plan(tmp_path, path, "--cluster", "dgx-a100-80g", "--devices", 16,
                "--pipeline-stages", 1)
    assert stages_of(default) > 1, default.get("mesh")
    assert stages_of(flat) == 1
    assert (default["predicted"]["step_time_s"]
            < flat["predicted"]["step_time_s"])


@pytest.mark.parametrize("cluster,devices,layers", [
    ("host", 4, 4),
    ("dgx-a100-80g", 16, 4),
    ("dgx-h100", 8, 2),
])
def test_default_equals_exhaustive_enumeration(tmp_path, cluster, devices,
                                               layers):
    flags = list(GPT_PIPELINE)
    flags[flags.index("--layers") + 1] = str(layers)
    path = model(tmp_path, flags)
    default = plan(tmp_path, path, "--cluster", cluster, "--devices",
                   devices, "--micro-batches", 4)
    best = None
    for stages in divisors(devices):
        if stages > layers:
            continue
        for tp in divisors(devices // stages):
            dp = devices // (stages * tp)
            if (16 // 4) % dp:
                continue  # M = 4 needs 4 samples per replica
            try:
                candidate = plan(tmp_path, path, "--cluster", cluster,
                                 "--devices", devices, "--pipeline-stages",
                                 stages, "--mesh", mesh_spec(dp, tp),
                                 "--micro-batches", 4)
            except AssertionError:
                continue  # no plan on this candidate (an axis no op uses)
            step = candidate["predicted"]["step_time_s"]
            if best is None or step < best:
                best = step
    assert best is not None
    assert default["predicted"]["step_time_s"] == pytest.approx(best,
                                                                 rel=1e-9)


def test_mesh_flags_constrain(tmp_path):
    path = model(tmp_path, GPT_PIPELINE)
    with_mesh = plan(tmp_path, path, "--cluster", "host", "--devices", 4,
                     "--mesh", "dp=2,tp=2")
    assert stages_of(with_mesh) == 1
    assert with_mesh["mesh"]["devices"] == 4
    config = json.dumps({"data_parallel": 4, "model_parallel": 1})
    with_config = plan(tmp_path, path, "--cluster", "host",
                       "--parallel-config", config)
    assert stages_of(with_config) == 1
    assert with_config["mesh"]["devices"] == 4


# Context parallelism in the outer loop (docs/Search.md, "Context-parallel
# meshes"): one 16K-token sequence of a small Llama (8 query and 8 key/value
# heads) on two 8-GPU H100 nodes. Batch 1 leaves no data parallelism, so the
# dp x tp candidates are {tp:16} alone, on which every op splits the
# sequence 16 ways (attention a 16-rank ring across both nodes). With a cp
# axis the search may split the sequence over cp and, inside a node, heads
# and features over tp: {cp:8, tp:2} is predicted 5.153 ms against 5.276 ms
# and 176 against 198 MiB per device.
LLAMA_LONG = ["llama", "--layers", "2", "--hidden", "512", "--heads", "8",
              "--kv-heads", "8", "--ffn", "1024", "--vocab", "1024", "--seq",
              "16384", "--batch", "1"]


def axes_of(result):
    return {axis["name"]: axis["size"] for axis in result["mesh"]["axes"]}


def test_long_sequences_get_a_context_axis(tmp_path):
    path = model(tmp_path, LLAMA_LONG)
    default = plan(tmp_path, path, "--cluster", "dgx-h100", "--devices", 16)
    assert axes_of(default).get("cp", 1) > 1, default["mesh"]
    # The best plan without cp, priced alone: strictly slower.
    without = plan(tmp_path, path, "--cluster", "dgx-h100", "--devices", 16,
                   "--mesh", "tp=16")
    assert (default["predicted"]["step_time_s"]
            < without["predicted"]["step_time_s"])
    # And the default is the best of every cp x tp mesh priced alone.
    best = min(plan(tmp_path, path, "--cluster", "dgx-h100", "--mesh",
                    f"cp={cp},tp={16 // cp}" if cp < 16 else "cp=16")
               ["predicted"]["step_time_s"] for cp in (2, 4, 8, 16))
    assert default["predicted"]["step_time_s"] == pytest.approx(best,
                                                                 rel=1e-9)


def test_short_sequences_get_no_context_axis(tmp_path):
    # 512 tokens: no cp mesh is even a candidate (under 2048 tokens a rank).
    short = list(LLAMA_LONG)
    short[short.index("--seq") + 1] = "512"
    short[short.index("--batch") + 1] = "16"
    result = plan(tmp_path, model(tmp_path, short), "--cluster", "dgx-h100",
                  "--devices", 16)
    assert "cp" not in axes_of(result), result["mesh"]
