"""The `loom` Python package drives a Loom build and reports its errors."""

import pytest

import loom

FORWARD = """
func.func @forward(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>,
                   %b: tensor<32xf32>) -> tensor<f32> {
  %y = loom.matmul %x, %w {transpose_rhs}
      : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  %z = loom.add %y, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %l = loom.reduce_sum %z {axes = array<i64: 0, 1>}
      : (tensor<8x32xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
"""


def test_import_pipeline_returns_checked_ir():
    out = loom.run_pipeline(FORWARD, "loom-import-pipeline")
    assert "func.func @forward" in out
    assert "loom.matmul" in out and "{transpose_rhs}" in out


def test_op_census_counts_ops():
    census = loom.op_census(FORWARD)
    (forward,) = census["functions"]
    assert forward["name"] == "forward"
    assert forward["arguments"] == 3
    assert forward["ops"] == {"func.return": 1, "loom.add": 1,
                              "loom.matmul": 1, "loom.reduce_sum": 1}


def test_contract_violation_raises_with_diagnostic():
    bad = FORWARD.replace("@forward", "@loss")
    with pytest.raises(loom.LoomError, match="expected a `func.func @forward`"):
        loom.run_pipeline(bad, "loom-import-pipeline")


def test_pass_options_pass_through():
    bad = FORWARD.replace("@forward", "@loss")
    out = loom.run_pipeline(bad, "loom-verify-import{entry=loss}")
    assert "func.func @loss" in out


def test_parse_error_raises_with_location():
    with pytest.raises(loom.LoomError, match="<stdin>:1:"):
        loom.op_census("func.func @f( {")


def test_missing_tool_names_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("LOOM_TOOLS_DIR", str(tmp_path))
    with pytest.raises(loom.LoomError, match=str(tmp_path)):
        loom.find_tool("loom-no-such-tool")
