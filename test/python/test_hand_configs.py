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
