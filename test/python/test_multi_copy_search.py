"""Multi-copy interleave as the search's choice (docs/Search.md, "Multi-copy
interleave in the search").

Where the parallel config turns sequence parallelism on over a tensor-
parallel axis and the step has no copies yet, dist-search-strategy prices
the chosen plan's layers with 1, 2 and 4 copies of each rank's rows (the
counts that divide them): compute at the copies' shapes (smaller GEMMs are
less efficient) plus the tensor/sequence-parallel communication the copies
cannot hide. The plan JSON's `predicted.multi_copy_choice` and the report
name the cheapest count.

GPT-2 shapes in bf16-mixed on dgx-h100 (the search only; nothing runs):
- hidden 1024 over tp = 8: each rank's GEMMs are small and the collectives
  as long as them, so two copies win although they compute more;
- hidden 4096 over tp = 2: compute dominates, and the efficiency the halved
  GEMMs lose outweighs the half of the communication they hide, so one copy
  stays.
"""

import json

import pytest

from steps import tool


def searched(tmp_path, hidden, heads, tp, config_extra=None, batch=2):
    model = tmp_path / f"gpt2-{hidden}.mlir"
    tool("loom-model", "gpt2", "--layers", "2", "--hidden", hidden, "--heads",
         heads, "--vocab", "1024", "--seq", 1024 if hidden < 4096 else 2048,
         "--batch", batch, "-o", model)
    config = {"model_parallel": tp, "use_seq_parallel": True}
    config.update(config_extra or {})
    plan = tmp_path / "plan.json"
    report = tool("loomc", model, "--compile-to=sharding", "--cluster",
                  "dgx-h100", "--precision", "bf16-mixed", "--parallel-config",
                  json.dumps(config), "--report", "--plan-json", plan, "-o",
                  tmp_path / "out.mlir").stdout
    return json.loads(plan.read_text())["predicted"], report


def layer_seconds(price):
    return price["compute_s"] + price["exposed_comm_s"]


def test_search_picks_two_copies_when_tp_collectives_dominate(tmp_path):
    predicted, report = searched(tmp_path, 1024, 16, 8)
    choice = predicted["multi_copy_choice"]
    # Batch 2 on one data-parallel rank: 4 copies do not divide 2 rows.
    priced = {p["copies"]: p for p in choice["priced"]}
    assert sorted(priced) == [1, 2]
    assert choice["copies"] == 2
    # The copies compute more (smaller GEMMs) and expose less.
    assert priced[2]["compute_s"] > priced[1]["compute_s"]
    assert priced[2]["exposed_comm_s"] < priced[1]["exposed_comm_s"]
    assert layer_seconds(priced[2]) < layer_seconds(priced[1])
    # The predicted step is the searched one with the layers repriced.
    assert choice["step_time_s"] == pytest.approx(
        predicted["step_time_s"] - layer_seconds(priced[1]) +
        layer_seconds(priced[2]), rel=1e-9)
    assert '"fine_grain_interleave": 2' in report


def test_search_keeps_one_copy_when_compute_dominates(tmp_path):
    predicted, report = searched(tmp_path, 4096, 32, 2)
    choice = predicted["multi_copy_choice"]
    priced = {p["copies"]: p for p in choice["priced"]}
    assert choice["copies"] == 1
    assert layer_seconds(priced[2]) > layer_seconds(priced[1])
    assert choice["step_time_s"] == pytest.approx(predicted["step_time_s"],
                                                  rel=1e-12)
    assert "Multi-copy interleave (searched): no gain; 1 copy" in report


def test_four_copies_priced_when_they_divide_the_rows(tmp_path):
    predicted, _ = searched(tmp_path, 1024, 16, 8, batch=8)
    priced = [p["copies"] for p in predicted["multi_copy_choice"]["priced"]]
    assert priced == [1, 2, 4]


# Multi-copy interleave needs sequence parallelism (MindFormers' rule, and
# loom-interleave-copies'): without it the search offers no copies.
def test_no_choice_without_sequence_parallelism(tmp_path):
    predicted, report = searched(tmp_path, 1024, 16, 8,
                                 {"use_seq_parallel": False})
    assert "multi_copy_choice" not in predicted
    assert "Multi-copy interleave (searched)" not in report
