"""The `loom` Python package: graph builder, compile, plan, interpreter.

Every number is checked: a graph built with `loom.Graph` runs in the
interpreter and must equal the same computation in numpy; a partitioned step
over 4 simulated ranks must equal the single-device step; the plan objects
must agree with the plan JSON and the IR. The tests run on whichever backend
the package picks (the native module when ctest set LOOM_PYTHON_BACKEND).
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import loom

RTOL = 1e-10
ROOT = pathlib.Path(__file__).resolve().parents[2]


def mlp_graph(batch=4, din=8, hidden=16, classes=5):
    """A 2-layer MLP classifier with a cross-entropy loss."""
    g = loom.Graph()
    x = g.input("x", [batch, din], dtype="f64", role="mask")
    labels = g.input("labels", [batch])
    w1 = g.param("w1", [hidden, din], dtype="f64", name="fc1.weight")
    b1 = g.param("b1", [hidden], dtype="f64", name="fc1.bias", init="zeros")
    w2 = g.param("w2", [classes, hidden], dtype="f64", name="fc2.weight")
    h = g.relu(g.linear(x, w1, b1))
    g.loss(g.cross_entropy(g.linear(h, w2), labels))
    return g


def numpy_cross_entropy(logits, labels):
    shifted = logits - logits.max(-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, labels[..., None], -1).mean()


def test_graph_json_document():
    """The builder writes graph JSON with declared, inferred shapes."""
    doc = mlp_graph().to_json()
    assert doc["format"] == "loom-graph" and doc["version"] == 1
    shapes = {t["name"]: t["shape"] for t in doc["tensors"]}
    assert shapes["w1"] == [16, 8]
    ops = [o["op"] for o in doc["ops"]]
    assert ops == ["matmul", "add", "relu", "matmul", "cross_entropy"]
    assert doc["ops"][0]["attributes"] == {"transpose_rhs": True}
    assert shapes[doc["ops"][3]["results"][0]] == [4, 5]
    params = {p["name"]: p for p in doc["parameters"]}
    assert params["fc1.weight"]["decay"] and not params["fc1.bias"]["decay"]
    assert params["fc1.bias"]["init"] == {"kind": "zeros"}
    # The document round-trips through Graph.from_json.
    assert loom.Graph.from_json(json.dumps(doc)).to_json() == doc


def test_builder_rejects_bad_shapes():
    """Shape errors surface at the op that makes them, naming the dims."""
    g = loom.Graph()
    a = g.param("a", [4, 8], dtype="f64")
    b = g.param("b", [4, 8], dtype="f64")
    with pytest.raises(loom.LoomError, match="K = 8.*K = 4"):
        g.matmul(a, b)
    with pytest.raises(loom.LoomError, match="do not broadcast"):
        g.add(a, g.param("c", [3], dtype="f64"))
    with pytest.raises(loom.LoomError, match="`a` is already defined"):
        g.param("a", [1], name="other")
    with pytest.raises(loom.LoomError, match="no loss"):
        g.to_json()


def test_forward_matches_numpy():
    """The MLP's forward loss in the interpreter equals numpy's."""
    g = mlp_graph()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8))
    labels = rng.integers(0, 5, 4)
    w1, b1, w2 = (rng.standard_normal(s) for s in ((16, 8), (16,), (5, 16)))
    out = loom.run(g, {"x": x, "labels": labels, "fc1.weight": w1,
                       "fc1.bias": b1, "fc2.weight": w2})
    logits = np.maximum(x @ w1.T + b1, 0) @ w2.T
    np.testing.assert_allclose(out["loss"], numpy_cross_entropy(logits, labels),
                               rtol=1e-12)


def test_elementwise_and_shape_ops_match_numpy():
    """A chain of elementwise, shape and reduction ops equals numpy."""
    g = loom.Graph()
    x = g.param("x", [2, 3, 4], dtype="f64")
    y = g.transpose(g.tanh(x) * 2.0 + g.sigmoid(x), [0, 2, 1])
    parts = g.split(y, [1, 3], axis=1)
    z = g.concat([parts[1], parts[0]], axis=1)
    s = g.softmax(g.reshape(z, [2, -1]), axis=-1)
    m = g.reduce_mean(g.reduce_sum(g.log(s + 1.0), [1]), [0])
    g.loss(m)
    xv = np.random.default_rng(1).standard_normal((2, 3, 4))
    yv = np.transpose(np.tanh(xv) * 2 + 1 / (1 + np.exp(-xv)), (0, 2, 1))
    zv = np.concatenate([yv[:, 1:], yv[:, :1]], axis=1).reshape(2, -1)
    sv = np.exp(zv - zv.max(-1, keepdims=True))
    sv /= sv.sum(-1, keepdims=True)
    expected = np.log(sv + 1).sum(1).mean()
    np.testing.assert_allclose(loom.run(g, {"x": xv})["loss"], expected,
                               rtol=1e-12)


def test_model_presets_share_loom_models_lookup():
    """`preset` takes loom-model's names: any case, the usual aliases; an
    unknown one is a LoomError listing the valid names."""
    def imported(preset):
        return loom.compile(loom.models.gpt2(preset=preset, layers=1),
                            phase="import").ir
    medium = imported("gpt2-medium")
    assert '%arg0: tensor<50257x1024xf32> {loom.param = #loom.param<' \
        '"transformer.wte.weight"' in medium
    assert imported("350M") == medium == imported("GPT2-Medium")
    with pytest.raises(loom.LoomError,
                       match=r"unknown gpt2 preset '125M'; expected one of "
                             r"124m \(gpt2, gpt2-small\), 350m"):
        imported("125M")


def test_compile_plan_and_partitioned_step():
    """Search on 4 host devices gives a plan whose objects match its JSON,
    and the partitioned step equals the single-device one."""
    model = loom.models.gpt2(layers=1, hidden=16, heads=4, vocab=32, seq=8,
                             batch=4, dtype="f64")
    opts = dict(optimizer="adamw", lr=0.01)
    c = loom.compile(model, cluster="host", devices=4, **opts)
    plan = c.plan
    assert plan.mesh.devices == 4
    assert np.prod(plan.mesh.shape) == 4
    assert plan.raw["mesh"]["devices"] == 4
    assert "dist.mesh" in c.ir and "func.func @train_step" in c.ir
    assert c.report.startswith("Plan: 4 devices")
    assert plan.predicted.step_time_s > 0
    assert plan.predicted.memory_bytes_per_device > 0
    assert sum(x.bytes for x in plan.collectives) == \
        plan.raw["totals"]["collective_bytes"]
    # Per-value layouts: each parameter's layout equals its JSON entry, and
    # a split dim's local size divides as the layout says.
    wte = plan.layout("transformer.wte.weight")
    raw = next(a for a in plan.raw["arguments"]
               if a["name"] == "transformer.wte.weight")
    assert [list(d) for d in wte.dims] == raw["layout"]["dims"]
    assert wte.local_shape((32, 16), plan.mesh)[0] * np.prod(
        [plan.mesh.axes[a] for a in wte.dims[0]]) == 32

    rng = np.random.default_rng(2)
    batch = {"input_ids": rng.integers(0, 32, (4, 8)),
             "labels": rng.integers(0, 32, (4, 8))}
    single = loom.run(loom.compile(model, phase="autodiff", **opts), batch,
                      seed=3)
    parallel = loom.run(c, batch, seed=3)
    assert set(single) == set(parallel)
    for name, expected in single.items():
        scale = max(float(np.max(np.abs(expected))), 1e-14)
        err = float(np.max(np.abs(parallel[name] - expected)))
        assert err <= RTOL * scale, f"{name}: {err / scale:.2e}"


def test_explicit_mesh_and_parallel_config():
    """A given mesh is the plan's mesh; a dict parallel config is honoured."""
    model = loom.models.gpt2(layers=1, hidden=16, heads=4, vocab=32, seq=8,
                             batch=4)
    c = loom.compile(model, mesh={"dp": 2, "tp": 2})
    assert c.plan.mesh.axes == {"dp": 2, "tp": 2}
    assert c.plan.layout("input_ids").dims[0] == ("dp",)
    c = loom.compile(model, cluster="host", devices=4,
                     parallel_config={"data_parallel": 4,
                                      "model_parallel": 1})
    assert c.plan.mesh.axes.get("dp") == 4


def test_errors_carry_loom_messages():
    """Bad options and bad graphs raise LoomError with Loom's diagnostics."""
    model = loom.models.gpt2(layers=1, hidden=16, heads=4, vocab=32, seq=8,
                             batch=4)
    with pytest.raises(loom.LoomError, match="does not divide dim 0"):
        loom.compile(model, mesh="dp=3")
    with pytest.raises(loom.LoomError, match="unknown option"):
        loom.compile(model, mesh_shape="dp=2")
    with pytest.raises(loom.LoomError, match="heads"):
        loom.compile(loom.models.gpt2(layers=1, hidden=10, heads=4),
                     phase="import")
    bad = mlp_graph().to_json()
    bad["ops"][0]["operands"] = ["x", "w2"]
    with pytest.raises(loom.LoomError, match="matmul"):
        loom.compile(bad, phase="import")


def test_names_that_are_not_utf8_are_errors():
    """A name that is not UTF-8 (an escaped byte in IR text) is a LoomError
    at its line and column; it used to reach the plan JSON writer, which
    aborted the process, and no Python message can hold its bytes."""
    text = ('func.func @forward(%x: tensor<f32> {loom.name = "x\\FF"}) '
            '-> tensor<f32> {\n  return %x : tensor<f32>\n}\n')
    with pytest.raises(loom.LoomError,
                       match=r"1:49.*string literal is not UTF-8: byte 0xFF"):
        loom.compile(text, devices=1)


def test_options_are_the_library_table():
    """`loom.compile`'s keywords are the library's option table, the one
    `loomc`'s flags are made from: each option but the C API's `-json` ones
    is a `loomc` flag with the same description, and a `-json` option works
    on either backend."""
    options = loom.compiler.options()
    assert options["clip_norm"][:2] == ("clip-norm", "real")
    assert options["devices"][1] == "integer"
    assert options["explain"][1] == "switch"
    help_text = subprocess.run([str(loom.find_tool("loomc")), "--help"],
                               capture_output=True, text=True,
                               check=True).stdout
    for name, _, description in options.values():
        if not name.endswith("-json"):
            assert re.search(rf"^  --{name}\b.* - {re.escape(description)}$",
                             help_text, re.M), name
    spec = {"name": "lab", "devices_per_node": 8,
            "device": {"name": "A100", "peak_flops": {"f32": 19.5e12},
                       "memory_bandwidth": 2.039e12, "memory_gib": 80},
            "intra_node": {"bandwidth": 300e9, "latency": 3e-6},
            "inter_node": {"bandwidth": 25e9, "latency": 6e-6}}
    model = loom.models.gpt2(layers=1, hidden=16, heads=4, vocab=32, seq=8,
                             batch=4)
    c = loom.compile(model, phase="sharding", cluster_json=json.dumps(spec),
                     devices=2)
    assert "lab" in c.report


def test_plan_before_partition_is_none():
    """Phases before partition have IR but no plan."""
    c = loom.compile(mlp_graph(), phase="autodiff")
    assert c.plan is None and c.entry == "train_step"
    assert "loom.adamw_update" in c.ir or "loom.sgd_update" in c.ir


@pytest.mark.skipif(os.environ.get("LOOM_PYTHON_BACKEND") == "native",
                    reason="the C API builds models into IR, not JSON")
def test_model_graph_json():
    """A model's graph JSON is a Graph with its ecosystem parameter names."""
    g = loom.models.gpt2(layers=1, hidden=16, heads=4, vocab=32, seq=8,
                         batch=4).graph
    names = {p["name"] for p in g.parameters}
    assert "transformer.wte.weight" in names
    assert g.tensor(g.to_json()["outputs"][0]).shape == ()


def test_pip_install(tmp_path):
    """`pip install --no-build-isolation --target` installs an importable
    package, offline."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation",
         "--no-index", "--no-deps", "--target", str(tmp_path / "site"),
         str(ROOT / "python-bindings")],
        capture_output=True, text=True, check=False,
        # Without LOOM_BUILD_DIR the package installs as pure Python (the
        # setup step would otherwise build the native module in that tree).
        env={**{k: v for k, v in os.environ.items() if k != "LOOM_BUILD_DIR"},
             "PIP_NO_CACHE_DIR": "1"}, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    check = subprocess.run(
        [sys.executable, "-c",
         "import loom, json; g = loom.Graph(); "
         "x = g.param('x', [2], dtype='f64'); "
         "g.loss(g.reduce_sum(x * x, [0])); print(loom.__file__, "
         "len(g.to_json()['ops']))"],
        capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "site")},
        cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    path, ops = check.stdout.split()
    assert path.startswith(str(tmp_path / "site")) and ops == "2"


def test_embedding_doc(capsys):
    """The Python example of docs/Embedding.md runs as written."""
    text = (ROOT / "docs" / "Embedding.md").read_text()
    section = text[text.index("## Python"):]
    block = section[section.index("```python\n") + len("```python\n"):]
    block = block[:block.index("```")]
    exec(compile(block, "docs/Embedding.md", "exec"), {})
    out = capsys.readouterr().out
    assert "dp=2,tp=2" in out
    assert "rejected:" in out and "does not divide" in out


def test_plan_names_the_virtual_stages_of_an_interleaved_pipeline():
    """`loom.compile` takes `virtual_stages` (the option table's
    `--virtual-stages`), and `Plan.pipeline` says how many chunks of layers
    each stage holds: 2 under interleaved 1F1B, 1 under plain 1F1B."""
    model = loom.models.gpt2(layers=4, hidden=16, heads=4, vocab=32, seq=8,
                             batch=8)
    interleaved = loom.compile(model, devices=2, pipeline_stages=2,
                               micro_batches=2, schedule="interleaved-1f1b",
                               virtual_stages=2)
    assert interleaved.plan.pipeline.virtual_stages == 2
    assert interleaved.plan.pipeline.schedule == "interleaved-1f1b"
    assert "pipeline of 2 stages x 2 virtual stages" in str(interleaved.plan)
    plain = loom.compile(model, devices=2, pipeline_stages=2,
                         micro_batches=2)
    assert plain.plan.pipeline.virtual_stages == 1
    assert "virtual stages" not in str(plain.plan)
