"""The automatic plan is never worse than Megatron-style hand configs priced
by the same cost model (docs/Performance.md, "Searched plans against hand
configs"; the grid and the pricing are hand_configs.py's).

For a GPT-3 and a Llama-3 preset on `dgx-a100-80g` and `dgx-h100`, every
hand config of the grid (t in {1, 2, 4, 8} inside a node, p stages, d
replicas, one sample per micro-batch, recompute off and on) that has a plan
is priced, and the whole-space search's predicted step is at most the
cheapest of them.
"""

import pytest

from hand_configs import compare


@pytest.mark.parametrize("model,cluster,devices,extra", [
    ("gpt2:gpt3-xl", "dgx-a100-80g", 64, []),
    ("llama:llama3-8b", "dgx-h100", 32, ["--batch", "32", "--seq", "2048"]),
])
def test_search_beats_hand_configs(model, cluster, devices, extra):
    auto, hands = compare(model, cluster, devices, extra, mbs_choices=(1,))
    # The grid is not empty: pipelines and tensor parallelism were priced.
    assert len(hands) >= 8
    assert any(config["pipeline_stage"] > 1 for _, config in hands)
    assert any(config["model_parallel"] > 1 for _, config in hands)
    best_time, best = hands[0]
    assert auto["step_time_s"] <= best_time * (1 + 1e-9), (auto, best)


def test_report_names_the_closest_hand_config(tmp_path):
    """`loomc --report` prices the grid itself and names the closest hand
    config; it is never cheaper than the searched plan."""
    import re
    from test_partition import tool
    model = tmp_path / "gpt.json"
    tool("loom-model", "gpt2", "--layers", 4, "--hidden", 1024, "--heads", 16,
         "--vocab", 4096, "--seq", 256, "--batch", 16, "--format", "json",
         "-o", model)
    report = tool("loomc", model, "--cluster", "dgx-a100-80g", "--devices",
                  16, "--compile-to=partition", "--report", "-o",
                  tmp_path / "out.mlir").stdout
    line = re.search(r"Closest hand config: t=(\d) p=(\d+) d=(\d+) M=(\d+)"
                     r"[^,]*, [0-9.]+ \w+ per step, (-?[0-9.]+)% slower "
                     r"than the searched plan's .* best of (\d+) ", report)
    assert line, report
    t, p, d, m, slower, priced = (float(x) for x in line.groups())
    assert t * p * d == 16 and t <= 8
    assert m == (16 / d if p > 1 else 1)
    assert slower >= 0
    assert priced >= 4
