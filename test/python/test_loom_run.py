"""loom-run's kernels agree with numpy to 1e-12 in f64.

Each test writes random inputs with numpy into a safetensors file (through
the independent writer in safetensors_io.py), runs one function through
`loom-run`, and compares every result with the same computation in numpy.
"""

import pathlib
import subprocess

import numpy as np
import pytest

import safetensors_io
from loom.tools import find_tool

TOL = 1e-12


def run(tmp_path: pathlib.Path, ir: str, inputs: dict, *extra) -> dict:
    """Runs @f of `ir` on `inputs` and returns the outputs by name."""
    (tmp_path / "f.mlir").write_text(ir)
    safetensors_io.save(tmp_path / "in.safetensors", inputs)
    result = subprocess.run(
        [str(find_tool("loom-run")), str(tmp_path / "f.mlir"), "--entry", "f",
         "--inputs", str(tmp_path / "in.safetensors"),
         "--outputs", str(tmp_path / "out.safetensors"), *extra],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return safetensors_io.load(tmp_path / "out.safetensors")


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=TOL, atol=TOL)


def ty(shape, element="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


@pytest.mark.parametrize("lhs,rhs,flags", [
    ((5, 7), (7, 3), ""),
    ((2, 5, 7), (7, 3), ""),                      # folded batch
    ((2, 7, 5), (3, 7), "{transpose_lhs, transpose_rhs}"),
    ((2, 1, 5, 7), (3, 7, 4), ""),                # broadcast batch dims
    ((4, 5, 7), (4, 3, 7), "{transpose_rhs}"),
])
def test_matmul(tmp_path, lhs, rhs, flags):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(lhs), rng.standard_normal(rhs)
    ta = "transpose_lhs" in flags
    tb = "transpose_rhs" in flags
    expected = np.matmul(np.swapaxes(a, -1, -2) if ta else a,
                         np.swapaxes(b, -1, -2) if tb else b)
    ir = f"""
func.func @f(%a: {ty(lhs)} {{loom.name = "a"}}, %b: {ty(rhs)} {{loom.name = "b"}})
    -> {ty(expected.shape)} {{
  %y = loom.matmul %a, %b {flags} : ({ty(lhs)}, {ty(rhs)}) -> {ty(expected.shape)}
  return %y : {ty(expected.shape)}
}}"""
    out = run(tmp_path, ir, {"a": a, "b": b})
    close(out["result0"], expected)


@pytest.mark.parametrize("op,fn", [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
    ("div", np.divide)])
def test_binary_broadcasting(tmp_path, op, fn):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 1, 4))
    b = rng.standard_normal((5, 1)) + 3.0
    expected = fn(a, b)
    ir = f"""
func.func @f(%a: {ty(a.shape)} {{loom.name = "a"}}, %b: {ty(b.shape)} {{loom.name = "b"}})
    -> {ty(expected.shape)} {{
  %y = loom.{op} %a, %b : ({ty(a.shape)}, {ty(b.shape)}) -> {ty(expected.shape)}
  return %y : {ty(expected.shape)}
}}"""
    close(run(tmp_path, ir, {"a": a, "b": b})["result0"], expected)


def test_unary_and_scale(tmp_path):
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 2.0, (4, 6))
    fns = {"neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
           "rsqrt": lambda v: 1 / np.sqrt(v), "tanh": np.tanh,
           "sigmoid": lambda v: 1 / (1 + np.exp(-v))}
    t = ty(x.shape)
    body = "\n".join(f"  %{n} = loom.{n} %x : {t}" for n in fns)
    body += f"\n  %scale = loom.scale %x {{factor = 0.125 : f64}} : {t}"
    names = list(fns) + ["scale"]
    ir = f"""
func.func @f(%x: {t} {{loom.name = "x"}}) -> ({", ".join(f'{t} {{loom.name = "{n}"}}' for n in names)}) {{
{body}
  return {", ".join("%" + n for n in names)} : {", ".join([t] * len(names))}
}}"""
    out = run(tmp_path, ir, {"x": x})
    for n, fn in fns.items():
        close(out[n], fn(x))
    close(out["scale"], x * 0.125)


@pytest.mark.parametrize("op,fn", [
    ("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max)])
def test_reductions(tmp_path, op, fn):
    x = np.random.default_rng(3).standard_normal((3, 4, 5))
    expected = fn(x, axis=(0, 2), keepdims=True)
    ir = f"""
func.func @f(%x: {ty(x.shape)} {{loom.name = "x"}}) -> {ty(expected.shape)} {{
  %y = loom.{op} %x {{axes = array<i64: 0, 2>, keepdims}} : ({ty(x.shape)}) -> {ty(expected.shape)}
  return %y : {ty(expected.shape)}
}}"""
    close(run(tmp_path, ir, {"x": x})["result0"], expected)


def test_shape_ops(tmp_path):
    x = np.random.default_rng(4).standard_normal((4, 6, 5))
    tx = ty(x.shape)
    transposed = np.transpose(x, (2, 0, 1))
    sliced = x[1:4:2, 0:6:3, 2:5]
    padded = np.zeros((1 + 4 + 3 * 1 + 2, 6, 5 + 4 * 2))
    padded[1:1 + 7:2, :, 0:13:3] = x
    concat = np.concatenate([x, x[:, :2]], axis=1)
    reshaped = x.reshape(24, 5)
    ir = f"""
func.func @f(%x: {tx} {{loom.name = "x"}}) -> ({ty(transposed.shape)} {{loom.name = "t"}},
    {ty(sliced.shape)} {{loom.name = "s"}}, {ty(padded.shape)} {{loom.name = "p"}},
    {ty(concat.shape)} {{loom.name = "c"}}, {ty((4, 2, 5))} {{loom.name = "a"}},
    {ty((4, 4, 5))} {{loom.name = "b"}}, {ty(reshaped.shape)} {{loom.name = "r"}}) {{
  %t = loom.transpose %x {{permutation = array<i64: 2, 0, 1>}} : ({tx}) -> {ty(transposed.shape)}
  %s = loom.slice %x {{starts = array<i64: 1, 0, 2>, limits = array<i64: 4, 6, 5>, strides = array<i64: 2, 3, 1>}} : ({tx}) -> {ty(sliced.shape)}
  %p = loom.pad %x {{low = array<i64: 1, 0, 0>, high = array<i64: 2, 0, 0>, interior = array<i64: 1, 0, 2>}} : ({tx}) -> {ty(padded.shape)}
  %a, %b = loom.split %x {{axis = 1 : i64, sizes = array<i64: 2, 4>}} : ({tx}) -> ({ty((4, 2, 5))}, {ty((4, 4, 5))})
  %c = loom.concat %x, %a {{axis = 1 : i64}} : ({tx}, {ty((4, 2, 5))}) -> {ty(concat.shape)}
  %r = loom.reshape %x : {tx} to {ty(reshaped.shape)}
  return %t, %s, %p, %c, %a, %b, %r : {ty(transposed.shape)}, {ty(sliced.shape)}, {ty(padded.shape)}, {ty(concat.shape)}, {ty((4, 2, 5))}, {ty((4, 4, 5))}, {ty(reshaped.shape)}
}}"""
    out = run(tmp_path, ir, {"x": x})
    close(out["t"], transposed)
    close(out["s"], sliced)
    close(out["p"], padded)
    close(out["c"], concat)
    close(out["a"], x[:, :2])
    close(out["b"], x[:, 2:])
    close(out["r"], reshaped)


def test_integer_inputs_and_casts(tmp_path):
    ids = np.array([[3, -1], [7, 0]], dtype=np.int64)
    ir = f"""
func.func @f(%ids: tensor<2x2xi64> {{loom.input = #loom.input<input_ids>}})
    -> (tensor<2x2xi64> {{loom.name = "twice"}}, tensor<2x2xf32> {{loom.name = "f"}},
        tensor<2x2xi1> {{loom.name = "nonzero"}}) {{
  %t = loom.add %ids, %ids : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  %f = loom.cast %ids : tensor<2x2xi64> to tensor<2x2xf32>
  %b = loom.cast %ids : tensor<2x2xi64> to tensor<2x2xi1>
  return %t, %f, %b : tensor<2x2xi64>, tensor<2x2xf32>, tensor<2x2xi1>
}}"""
    out = run(tmp_path, ir, {"input_ids": ids})
    np.testing.assert_array_equal(out["twice"], 2 * ids)
    assert out["twice"].dtype == np.int64
    close(out["f"], ids.astype(np.float64))
    np.testing.assert_array_equal(out["nonzero"], ids != 0)


def test_f32_run_matches_numpy_f32(tmp_path):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 8)).astype(np.float32)
    ir = f"""
func.func @f(%a: tensor<16x32xf32> {{loom.name = "a"}}, %b: tensor<32x8xf32> {{loom.name = "b"}})
    -> tensor<16x8xf32> {{
  %y = loom.matmul %a, %b : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}}"""
    out = run(tmp_path, ir, {"a": a, "b": b}, "--dtype", "f32")
    assert out["result0"].dtype == np.float32
    np.testing.assert_allclose(out["result0"], a @ b, rtol=1e-5, atol=1e-5)


def test_npy_input(tmp_path):
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    np.save(tmp_path / "x.npy", x)
    (tmp_path / "f.mlir").write_text("""
func.func @f(%x: tensor<2x3xf64> {loom.name = "x"}) -> tensor<2x3xf64> {
  %y = loom.exp %x : tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""")
    result = subprocess.run(
        [str(find_tool("loom-run")), str(tmp_path / "f.mlir"), "--entry", "f",
         "--inputs", str(tmp_path / "x.npy"),
         "--outputs", str(tmp_path / "out.safetensors")],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    close(safetensors_io.load(tmp_path / "out.safetensors")["result0"],
          np.exp(x))


def test_loss_and_embedding_local_forms(tmp_path):
    """The local forms the partitioner emits (docs/Partitioning.md): the
    summed loss, a block of log-probability columns at an offset, the label
    count, and embedding lookups and gradients at a row offset."""
    rng = np.random.default_rng(7)
    n, vocab, block, offset, hidden = 6, 10, 4, 3, 5
    logits = 2.0 * rng.standard_normal((n, vocab))
    labels = np.array([3, -100, 6, 0, 9, 5], dtype=np.int64)
    dloss = np.array(0.7)
    table = rng.standard_normal((block, hidden))
    ids = np.array([2, 3, 6, 3, 7, 9], dtype=np.int64)
    dy = rng.standard_normal((n, hidden))

    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    z = logp[:, offset:offset + block]
    valid = labels != -100
    rows = np.arange(n)
    losses = np.where(valid, -logp[rows, np.where(valid, labels, 0)], 0.0)
    in_block = valid & (labels >= offset) & (labels < offset + block)
    picked = np.where(in_block, -z[rows, np.clip(labels - offset, 0, block - 1)], 0.0)
    onehot = np.zeros((n, block))
    onehot[rows[in_block], labels[in_block] - offset] = 1.0
    grad_block = (np.exp(z) - onehot) * np.where(valid, 1.0, 0.0)[:, None]
    local = (ids >= offset) & (ids < offset + block)
    lookup = np.where(local[:, None], table[np.clip(ids - offset, 0, block - 1)], 0.0)
    dtable = np.zeros((block, hidden))
    np.add.at(dtable, ids[local] - offset, dy[local])

    ir = f"""
func.func @f(%x: {ty((n, vocab))} {{loom.name = "x"}}, %z: {ty((n, block))} {{loom.name = "z"}},
             %l: tensor<{n}xi64> {{loom.name = "labels"}}, %dy: tensor<f64> {{loom.name = "dloss"}},
             %t: {ty((block, hidden))} {{loom.name = "table"}}, %ids: tensor<{n}xi64> {{loom.name = "ids"}},
             %g: {ty((n, hidden))} {{loom.name = "g"}})
    -> (tensor<f64> {{loom.name = "sum"}}, tensor<f64> {{loom.name = "part"}},
        tensor<f64> {{loom.name = "part_mean"}}, {ty((n, block))} {{loom.name = "grad"}},
        tensor<f64> {{loom.name = "count"}}, {ty((n, hidden))} {{loom.name = "lookup"}},
        {ty((block, hidden))} {{loom.name = "dtable"}}) {{
  %o = arith.constant {offset} : index
  %s = loom.cross_entropy %x, %l {{sum}} : ({ty((n, vocab))}, tensor<{n}xi64>) -> tensor<f64>
  %p = loom.cross_entropy %z, %l offset %o {{sum}} : ({ty((n, block))}, tensor<{n}xi64>, index) -> tensor<f64>
  %pm = loom.cross_entropy %z, %l offset %o : ({ty((n, block))}, tensor<{n}xi64>, index) -> tensor<f64>
  %d = loom.cross_entropy_grad %z, %l, %dy offset %o {{sum}} : ({ty((n, block))}, tensor<{n}xi64>, tensor<f64>, index) -> {ty((n, block))}
  %c = loom.label_count %l : (tensor<{n}xi64>) -> tensor<f64>
  %y = loom.embedding %t, %ids offset %o : ({ty((block, hidden))}, tensor<{n}xi64>, index) -> {ty((n, hidden))}
  %dt = loom.embedding_grad %g, %ids offset %o {{vocab_size = {block} : i64}} : ({ty((n, hidden))}, tensor<{n}xi64>, index) -> {ty((block, hidden))}
  return %s, %p, %pm, %d, %c, %y, %dt : tensor<f64>, tensor<f64>, tensor<f64>, {ty((n, block))}, tensor<f64>, {ty((n, hidden))}, {ty((block, hidden))}
}}"""
    out = run(tmp_path, ir, {"x": logits, "z": z, "labels": labels, "dloss": dloss,
                             "table": table, "ids": ids, "g": dy})
    close(out["sum"], losses.sum())
    close(out["part"], picked.sum())
    close(out["part_mean"], picked.sum() / valid.sum())
    close(out["grad"], grad_block * 0.7)
    close(out["count"], valid.sum())
    close(out["lookup"], lookup)
    close(out["dtable"], dtable)
