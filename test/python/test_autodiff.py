"""loom-autodiff's gradients agree with central finite differences in f64.

Each case builds `@forward = reduce_sum(op(params...) * r)` with a random `r`,
runs `loom-opt -loom-autodiff='optimizer=none'` (which returns the gradient
of every parameter as `<param>.grad`), runs `@train_step` through `loom-run`
and compares each gradient with central differences of `@forward`, also run
through `loom-run`. Integer operands (ids, labels, positions) and masks are
plain (non-parameter) arguments; every op with a VJP is covered.
"""

import pathlib
import re
import subprocess

import numpy as np
import pytest

import safetensors_io
from loom.tools import find_tool

REL_TOL = 1e-6
STEP = 1e-5


def ty(shape, element="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def array_ty(value):
    return ty(value.shape, "i64" if value.dtype.kind in "iu" else "f64")


def forward_ir(param_shapes, body, out_shape, data=None):
    """`@forward(p0.., data.., r) = reduce_sum(body's %y * r)`; `data` maps
    the names of non-parameter arguments to their values (for the types);
    the body names their types `{d_<name>}`."""
    data = data or {}
    args = [f'%p{i}: {ty(s)} {{loom.param = #loom.param<"p{i}", init = zeros, '
            f'decay = false>}}' for i, s in enumerate(param_shapes)]
    args += [f'%{n}: {array_ty(v)} {{loom.name = "{n}"}}' for n, v in data.items()]
    args.append(f'%r: {ty(out_shape)} {{loom.name = "r"}}')
    subs = {f"t{i}": ty(s) for i, s in enumerate(param_shapes)}
    subs.update({f"d_{n}": array_ty(v) for n, v in data.items()})
    subs["ty"] = ty(out_shape)
    axes = ", ".join(str(d) for d in range(len(out_shape)))
    if out_shape == ():
        total = "%l = loom.mul %y, %r : (tensor<f64>, tensor<f64>) -> tensor<f64>"
    else:
        total = (f"%m = loom.mul %y, %r : ({ty(out_shape)}, {ty(out_shape)}) -> {ty(out_shape)}\n"
                 f"  %l = loom.reduce_sum %m {{axes = array<i64: {axes}>}}"
                 f" : ({ty(out_shape)}) -> tensor<f64>")
    return f"""
func.func @forward({", ".join(args)}) -> tensor<f64> {{
  {body.format(**subs)}
  {total}
  return %l : tensor<f64>
}}"""


def run(tmp_path, mlir, entry, inputs):
    safetensors_io.save(tmp_path / "in.safetensors", inputs)
    result = subprocess.run(
        [str(find_tool("loom-run")), str(mlir), "--entry", entry,
         "--inputs", str(tmp_path / "in.safetensors"),
         "--outputs", str(tmp_path / "out.safetensors")],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return safetensors_io.load(tmp_path / "out.safetensors")


def check_gradients(tmp_path, param_shapes, body, out_shape, data=None,
                    positive=False, seed=0):
    rng = np.random.default_rng(seed)
    params = {f"p{i}": rng.standard_normal(s) for i, s in enumerate(param_shapes)}
    if positive:
        params = {k: np.abs(v) + 0.5 for k, v in params.items()}
    r = np.asarray(rng.standard_normal(out_shape))
    data = data or {}
    fwd = tmp_path / "forward.mlir"
    fwd.write_text(forward_ir(param_shapes, body, out_shape, data))
    train = tmp_path / "train.mlir"
    opt = subprocess.run(
        [str(find_tool("loom-opt")), str(fwd),
         "-loom-autodiff=optimizer=none", "-loom-verify-train-step",
         "-o", str(train)], capture_output=True, text=True, check=False)
    assert opt.returncode == 0, opt.stderr
    grads = run(tmp_path, train, "train_step",
                {**params, **data, "r": r})  # `step` starts at zero
    for name, value in params.items():
        fd = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            losses = []
            for sign in (1, -1):
                shifted = value.copy()
                shifted[index] += sign * STEP
                out = run(tmp_path, fwd, "forward",
                          {**params, **data, name: shifted, "r": r})
                losses.append(float(out["loss"]))
            fd[index] = (losses[0] - losses[1]) / (2 * STEP)
        grad = grads[name + ".grad"]
        error = np.linalg.norm(grad - fd) / max(np.linalg.norm(fd), 1e-12)
        assert error < REL_TOL, f"{name}: relative error {error}\n{grad}\n{fd}"


CASES = {
    # Matrix products: plain, transposed, broadcast batch dims.
    "matmul": ([(3, 4), (4, 2)],
               "%y = loom.matmul %p0, %p1 : ({t0}, {t1}) -> {ty}", (3, 2)),
    "matmul_tt": ([(2, 4, 3), (2, 4)],
                  "%y = loom.matmul %p0, %p1 {{transpose_lhs, transpose_rhs}}"
                  " : ({t0}, {t1}) -> {ty}", (2, 3, 2)),
    "matmul_batch_broadcast": ([(2, 1, 2, 3), (3, 3, 2)],
                               "%y = loom.matmul %p0, %p1 : ({t0}, {t1}) -> {ty}",
                               (2, 3, 2, 2)),
    # Linear layers: a rank-2 weight on a batch (the batch folds into M).
    "matmul_linear": ([(2, 3, 4), (4, 2)],
                      "%y = loom.matmul %p0, %p1 : ({t0}, {t1}) -> {ty}", (2, 3, 2)),
    "matmul_linear_t": ([(2, 3, 4), (2, 4)],
                        "%y = loom.matmul %p0, %p1 {{transpose_rhs}} : ({t0}, {t1}) -> {ty}",
                        (2, 3, 2)),
    # Broadcasting binary ops.
    "add": ([(2, 3), (3,)], "%y = loom.add %p0, %p1 : ({t0}, {t1}) -> {ty}", (2, 3)),
    "sub": ([(2, 1), (1, 3)], "%y = loom.sub %p0, %p1 : ({t0}, {t1}) -> {ty}", (2, 3)),
    "mul": ([(2, 3), (2, 1)], "%y = loom.mul %p0, %p1 : ({t0}, {t1}) -> {ty}", (2, 3)),
    "div": ([(3,), (2, 3)], "%y = loom.div %p0, %p1 : ({t0}, {t1}) -> {ty}", (2, 3)),
    # Unary math.
    "neg": ([(2, 3)], "%y = loom.neg %p0 : {ty}", (2, 3)),
    "exp": ([(2, 3)], "%y = loom.exp %p0 : {ty}", (2, 3)),
    "tanh": ([(2, 3)], "%y = loom.tanh %p0 : {ty}", (2, 3)),
    "sigmoid": ([(2, 3)], "%y = loom.sigmoid %p0 : {ty}", (2, 3)),
    "scale": ([(2, 3)], "%y = loom.scale %p0 {{factor = -1.5 : f64}} : {ty}", (2, 3)),
    "cast": ([(2, 3)], "%c = loom.cast %p0 : {t0} to tensor<2x3xf32>\n"
             "  %y = loom.cast %c : tensor<2x3xf32> to {ty}", (2, 3)),
    # Reductions.
    "reduce_sum": ([(2, 3, 2)], "%y = loom.reduce_sum %p0 {{axes = array<i64: 0, 2>}}"
                   " : ({t0}) -> {ty}", (3,)),
    "reduce_sum_keepdims": ([(2, 3)], "%y = loom.reduce_sum %p0 {{axes = array<i64: 1>,"
                            " keepdims}} : ({t0}) -> {ty}", (2, 1)),
    "reduce_mean": ([(2, 3, 2)], "%y = loom.reduce_mean %p0 {{axes = array<i64: 1>}}"
                    " : ({t0}) -> {ty}", (2, 2)),
    # Shape ops.
    "reshape": ([(2, 6)], "%y = loom.reshape %p0 : {t0} to {ty}", (3, 2, 2)),
    "transpose": ([(2, 3, 4)], "%y = loom.transpose %p0 {{permutation = array<i64: 2, 0, 1>}}"
                  " : ({t0}) -> {ty}", (4, 2, 3)),
    "slice": ([(5, 4)], "%y = loom.slice %p0 {{starts = array<i64: 1, 0>, limits = "
              "array<i64: 5, 3>, strides = array<i64: 2, 2>}} : ({t0}) -> {ty}", (2, 2)),
    "pad": ([(2, 3)], "%y = loom.pad %p0 {{low = array<i64: 1, 0>, high = array<i64: 0, 2>,"
            " interior = array<i64: 1, 1>}} : ({t0}) -> {ty}", (4, 7)),
    "concat": ([(2, 1), (2, 2)], "%y = loom.concat %p0, %p1 {{axis = 1 : i64}}"
               " : ({t0}, {t1}) -> {ty}", (2, 3)),
    "split": ([(2, 5)], "%a, %b = loom.split %p0 {{axis = 1 : i64, sizes = array<i64: 2, 3>}}"
              " : ({t0}) -> (tensor<2x2xf64>, tensor<2x3xf64>)\n"
              "  %s = loom.slice %b {{starts = array<i64: 0, 0>, limits = array<i64: 2, 2>,"
              " strides = array<i64: 1, 1>}} : (tensor<2x3xf64>) -> tensor<2x2xf64>\n"
              "  %y = loom.mul %a, %s : (tensor<2x2xf64>, tensor<2x2xf64>) -> {ty}", (2, 2)),
    # A tied weight used three times: products accumulate every use.
    "tied": ([(3, 3)], "%a = loom.matmul %p0, %p0 {{transpose_rhs}} : ({t0}, {t0}) -> {ty}\n"
             "  %y = loom.mul %a, %p0 : ({ty}, {t0}) -> {ty}", (3, 3)),
}

POSITIVE = {
    "log": ([(2, 3)], "%y = loom.log %p0 : {ty}", (2, 3)),
    "sqrt": ([(2, 3)], "%y = loom.sqrt %p0 : {ty}", (2, 3)),
    "rsqrt": ([(2, 3)], "%y = loom.rsqrt %p0 : {ty}", (2, 3)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_vjp(tmp_path, case):
    check_gradients(tmp_path, *CASES[case])


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_vjp_positive(tmp_path, case):
    check_gradients(tmp_path, *POSITIVE[case], positive=True)


# Transformer ops. Integer operands and masks are data arguments (fourth
# element); ops whose forward has kinks (relu, reduce_max, dropout's mask)
# are evaluated at random points, which sit far from the kinks.
IDS = np.array([[1, 4, 4], [0, 6, 1]], dtype=np.int64)  # repeats accumulate
LABELS = np.array([[2, -100, 4], [0, 1, -100]], dtype=np.int64)
LABELS_IGNORE_0 = np.array([[2, 0, 4], [0, 1, 3]], dtype=np.int64)
MASK = np.random.default_rng(7).standard_normal((2, 4))
POSITIONS = np.array([[5, 0, 2]], dtype=np.int64)

TRANSFORMER = {
    "layer_norm": ([(2, 3, 5)], "%y = loom.layer_norm %p0 {{eps = 1.0e-5 : f64}}"
                   " : ({t0}) -> {ty}", (2, 3, 5)),
    "layer_norm_affine": ([(2, 3, 5), (5,), (5,)],
                          "%y = loom.layer_norm %p0, %p1, %p2 {{eps = 1.0e-5 : f64}}"
                          " : ({t0}, {t1}, {t2}) -> {ty}", (2, 3, 5)),
    "rms_norm": ([(2, 3, 5)], "%y = loom.rms_norm %p0 {{eps = 1.0e-6 : f64}}"
                 " : ({t0}) -> {ty}", (2, 3, 5)),
    "rms_norm_gamma": ([(2, 3, 5), (5,)], "%y = loom.rms_norm %p0, %p1"
                       " : ({t0}, {t1}) -> {ty}", (2, 3, 5)),
    "softmax": ([(3, 4, 2)], "%y = loom.softmax %p0 {{axis = 1 : i64}}"
                " : ({t0}) -> {ty}", (3, 4, 2)),
    "log_softmax": ([(3, 4, 2)], "%y = loom.log_softmax %p0 {{axis = 0 : i64}}"
                    " : ({t0}) -> {ty}", (3, 4, 2)),
    # Plain multi-head attention over a batch of two.
    "attention": ([(2, 2, 2, 2), (2, 2, 3, 2), (2, 2, 3, 2)],
                  "%y = loom.attention %p0, %p1, %p2 : ({t0}, {t1}, {t2}) -> {ty}",
                  (2, 2, 2, 2)),
    # Grouped-query (4 query heads over 2 key/value heads), causal.
    "attention_gqa_causal": ([(1, 4, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2)],
                             "%y = loom.attention %p0, %p1, %p2 {{causal}}"
                             " : ({t0}, {t1}, {t2}) -> {ty}", (1, 4, 3, 2)),
    # Two queries over four keys (bottom-right causal), an additive mask,
    # multi-query (one key/value head) and an explicit scale.
    "attention_cross_mask": ([(1, 2, 2, 4), (1, 1, 4, 4), (1, 1, 4, 3)],
                             "%y = loom.attention %p0, %p1, %p2, %mask"
                             " {{causal, scale = 3.0e-01 : f64}}"
                             " : ({t0}, {t1}, {t2}, {d_mask}) -> {ty}",
                             (1, 2, 2, 3), {"mask": MASK}),
    "rope": ([(1, 2, 3, 4)], "%y = loom.rope %p0 : ({t0}) -> {ty}", (1, 2, 3, 4)),
    "rope_positions": ([(1, 2, 3, 4)], "%y = loom.rope %p0, %pos {{theta = 1.0e+02 : f64}}"
                       " : ({t0}, {d_pos}) -> {ty}", (1, 2, 3, 4),
                       {"pos": POSITIONS}),
    "embedding": ([(7, 3)], "%y = loom.embedding %p0, %ids : ({t0}, {d_ids}) -> {ty}",
                  (2, 3, 3), {"ids": IDS}),
    "cross_entropy": ([(2, 3, 5)], "%y = loom.cross_entropy %p0, %labels"
                      " : ({t0}, {d_labels}) -> tensor<f64>", (), {"labels": LABELS}),
    "cross_entropy_ignore_0": ([(2, 3, 5)], "%y = loom.cross_entropy %p0, %labels"
                               " {{ignore_index = 0 : i64}}"
                               " : ({t0}, {d_labels}) -> tensor<f64>", (),
                               {"labels": LABELS_IGNORE_0}),
    "gelu": ([(2, 3)], "%y = loom.gelu %p0 : {ty}", (2, 3)),
    "gelu_tanh": ([(2, 3)], "%y = loom.gelu %p0 approximate = tanh : {ty}", (2, 3)),
    "silu": ([(2, 3)], "%y = loom.silu %p0 : {ty}", (2, 3)),
    "relu": ([(2, 3)], "%y = loom.relu %p0 : {ty}", (2, 3)),
    "reduce_max": ([(2, 4, 3)], "%y = loom.reduce_max %p0 {{axes = array<i64: 1>}}"
                   " : ({t0}) -> {ty}", (2, 3)),
    "reduce_max_all": ([(2, 3)], "%y = loom.reduce_max %p0 {{axes = array<i64: 0, 1>,"
                       " keepdims}} : ({t0}) -> {ty}", (1, 1)),
    # The gradient is the forward's mask (same seed) times 1 / (1 - rate).
    "dropout": ([(4, 5)], "%y = loom.dropout %p0 {{rate = 3.0e-01 : f64, seed = 7 : i64}}"
                " : {ty}", (4, 5)),
}


@pytest.mark.parametrize("case", sorted(TRANSFORMER))
def test_vjp_transformer(tmp_path, case):
    check_gradients(tmp_path, *TRANSFORMER[case])


#===----------------------------------------------------------------------===#
# Whole models: a few random parameter entries against finite differences
#===----------------------------------------------------------------------===#

PARAM_RE = re.compile(r'%\w+: tensor<([0-9x]*)f64> \{loom\.param = #loom\.param<"([^"]+)"')


@pytest.mark.parametrize("family", ["transformer", "tfm-lm"])
def test_model_gradients(tmp_path, family):
    """The encoder-decoder Transformer (with its dropout sites) and the
    TransformerEncoder LM: `<param>.grad` at 12 random entries equals
    central differences of `@forward`."""
    fwd = tmp_path / "forward.mlir"
    built = subprocess.run(
        [str(find_tool("loom-model")), family, "--layers", "1", "--hidden", "8",
         "--heads", "2", "--vocab", "11", "--seq", "4", "--batch", "2",
         "--dtype", "f64", "-o", str(fwd)], capture_output=True, text=True,
        check=False)
    assert built.returncode == 0, built.stderr
    ir = fwd.read_text()
    rng = np.random.default_rng(3)
    params = {name: 0.5 * rng.standard_normal(
        tuple(int(d) for d in dims.split("x") if d))
        for dims, name in PARAM_RE.findall(ir.split("func.func")[1])}
    assert len(params) == ir.count("#loom.param<"), "a parameter was not parsed"
    data = {name: rng.integers(0, 11, (2, 4), dtype=np.int64)
            for name in re.findall(r"#loom\.input<(\w+)>", ir)}
    train = tmp_path / "train.mlir"
    opt = subprocess.run(
        [str(find_tool("loom-opt")), str(fwd), "-loom-autodiff=optimizer=none",
         "-loom-verify-train-step", "-o", str(train)],
        capture_output=True, text=True, check=False)
    assert opt.returncode == 0, opt.stderr
    grads = run(tmp_path, train, "train_step", {**params, **data})
    names = sorted(params)
    picked, fd = [], []
    for _ in range(12):
        name = names[rng.integers(len(names))]
        index = tuple(int(rng.integers(d)) for d in params[name].shape)
        losses = []
        for sign in (1, -1):
            shifted = params[name].copy()
            shifted[index] += sign * STEP
            out = run(tmp_path, fwd, "forward", {**params, **data, name: shifted})
            losses.append(float(out["loss"]))
        fd.append((losses[0] - losses[1]) / (2 * STEP))
        picked.append(grads[name + ".grad"][index])
    picked, fd = np.array(picked), np.array(fd)
    error = np.linalg.norm(picked - fd) / np.linalg.norm(fd)
    assert error < REL_TOL, f"relative error {error}\n{picked}\n{fd}"
