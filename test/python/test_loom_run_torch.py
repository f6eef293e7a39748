"""loom-run's Transformer kernels and model graphs agree with PyTorch in f64.

Part (a): every op the interpreter runs beyond plain tensor arithmetic
(embedding, attention, rope, cross_entropy, softmax, norms, activations,
optimizer updates, and their gradients) on random inputs, through a tiny
MLIR function per case, against the PyTorch function (gradient ops against
`torch.autograd` of the forward). Dropout's mask is Loom's own Philox
stream, so it is checked against a Python Philox 4x32-10 instead.

Part (b): the forward loss of `loom-model gpt2` and `loom-model llama`
(tiny configurations) on weights and a batch written from PyTorch, against
a plain-PyTorch nanoGPT-style GPT and Hugging Face-style Llama.

Every comparison asks for a relative error (max |loom - torch| over
max |torch|) of at most 1e-10. Skipped when PyTorch is not installed.
"""

import math
import pathlib
import subprocess

import numpy as np
import pytest

import safetensors_io
from loom.tools import find_tool

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python; the "
    "cross-checks against PyTorch need `import torch`")
F = torch.nn.functional

RTOL = 1e-10


def run(tmp_path: pathlib.Path, ir: str, inputs: dict, *extra,
        entry="f") -> dict:
    """Runs @entry of `ir` on `inputs` (numpy or torch) and returns the
    results by name."""
    (tmp_path / "f.mlir").write_text(ir)
    arrays = {k: (v.detach().numpy() if isinstance(v, torch.Tensor) else v)
              for k, v in inputs.items()}
    safetensors_io.save(tmp_path / "in.safetensors", arrays)
    result = subprocess.run(
        [str(find_tool("loom-run")), str(tmp_path / "f.mlir"), "--entry", entry,
         "--inputs", str(tmp_path / "in.safetensors"),
         "--outputs", str(tmp_path / "out.safetensors"), *extra],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return safetensors_io.load(tmp_path / "out.safetensors")


def close(actual, expected, rtol=RTOL):
    expected = expected.detach().numpy() if isinstance(
        expected, torch.Tensor) else np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    scale = max(float(np.max(np.abs(expected))), 1e-300) if expected.size else 1
    err = float(np.max(np.abs(actual - expected))) if expected.size else 0.0
    assert err <= rtol * scale, f"relative error {err / scale:.3e}"


def ty(shape, element="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def func(args, results, body):
    """An MLIR function @f: `args` are (name, shape, element) triples named
    by loom.name, `results` (name, value, shape) triples, `body` the ops."""
    params = ", ".join(f'%{n}: {ty(s, e)} {{loom.name = "{n}"}}'
                       for n, s, e in args)
    rtypes = ", ".join(f'{ty(s)} {{loom.name = "{n}"}}' for n, _, s in results)
    values = ", ".join(f"%{v}" for _, v, _ in results)
    types = ", ".join(ty(s) for _, _, s in results)
    return (f"func.func @f({params}) -> ({rtypes}) {{\n{body}\n"
            f"  return {values} : {types}\n}}\n")


def rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def vjp(fn, inputs, dout):
    """The gradients of sum(fn(*inputs) * dout) for the inputs."""
    leaves = [x.clone().requires_grad_(True) for x in inputs]
    out = fn(*leaves)
    return torch.autograd.grad(out, leaves, dout)


#===----------------------------------------------------------------------===#
# (a) ops
#===----------------------------------------------------------------------===#


@pytest.mark.parametrize("name,ref", [
    ("relu", F.relu), ("silu", F.silu),
    ("gelu", lambda x: F.gelu(x)),
    ("gelu approximate = tanh", lambda x: F.gelu(x, approximate="tanh"))])
def test_activations(tmp_path, name, ref):
    shape = (3, 5, 7)
    x, dy = rand(*shape, seed=1), rand(*shape, seed=2)
    op = name.split()[0]
    attrs = name[len(op):]
    body = (f"  %y = loom.{op} %x{attrs} : {ty(shape)}\n"
            f"  %dx = loom.{op}_grad %dy, %x{attrs} : {ty(shape)}")
    ir = func([("x", shape, "f64"), ("dy", shape, "f64")],
              [("y", "y", shape), ("dx", "dx", shape)], body)
    out = run(tmp_path, ir, {"x": x, "dy": dy})
    close(out["y"], ref(x))
    close(out["dx"], vjp(ref, [x], dy)[0])


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmaxes(tmp_path, axis):
    shape = (3, 4, 5)
    x, dy = rand(*shape, seed=3) * 3, rand(*shape, seed=4)
    t = ty(shape)
    body = "\n".join([
        f"  %s = loom.softmax %x {{axis = {axis} : i64}} : ({t}) -> {t}",
        f"  %l = loom.log_softmax %x {{axis = {axis} : i64}} : ({t}) -> {t}",
        f"  %ds = loom.softmax_grad %s, %dy {{axis = {axis} : i64}} : ({t}, {t}) -> {t}",
        f"  %dl = loom.log_softmax_grad %l, %dy {{axis = {axis} : i64}} : ({t}, {t}) -> {t}"])
    ir = func([("x", shape, "f64"), ("dy", shape, "f64")],
              [("s", "s", shape), ("l", "l", shape), ("ds", "ds", shape),
               ("dl", "dl", shape)], body)
    out = run(tmp_path, ir, {"x": x, "dy": dy})
    close(out["s"], torch.softmax(x, axis))
    close(out["l"], torch.log_softmax(x, axis))
    close(out["ds"], vjp(lambda v: torch.softmax(v, axis), [x], dy)[0])
    close(out["dl"], vjp(lambda v: torch.log_softmax(v, axis), [x], dy)[0])


@pytest.mark.parametrize("affine", ["none", "gamma_beta"])
def test_layer_norm(tmp_path, affine):
    shape, d, eps = (2, 3, 8), 8, 1e-5
    x, dy = rand(*shape, seed=5), rand(*shape, seed=6)
    gamma, beta = rand(d, seed=7), rand(d, seed=8)
    t, tg = ty(shape), ty((d,))
    # gamma and beta come together (the verifier refuses gamma alone).
    operands = {"none": "", "gamma_beta": ", %gamma, %beta"}[affine]
    types = {"none": t, "gamma_beta": f"{t}, {tg}, {tg}"}[affine]
    grad_operands = "" if affine == "none" else ", %gamma"
    grad_types = t + ", " + t + ("" if affine == "none" else ", " + tg)
    grad_results = t + ("" if affine == "none" else f", {tg}, {tg}")
    names = "%dx" + ("" if affine == "none" else ", %dgamma, %dbeta")
    body = "\n".join([
        f"  %y = loom.layer_norm %x{operands} {{eps = {eps:e} : f64}} : ({types}) -> {t}",
        f"  {names} = loom.layer_norm_grad %dy, %x{grad_operands} {{eps = {eps:e} : f64}}"
        f" : ({grad_types}) -> ({grad_results})"])
    results = [("y", "y", shape), ("dx", "dx", shape)]
    if affine != "none":
        results += [("dgamma", "dgamma", (d,)), ("dbeta", "dbeta", (d,))]
    ir = func([("x", shape, "f64"), ("dy", shape, "f64"),
               ("gamma", (d,), "f64"), ("beta", (d,), "f64")], results, body)
    out = run(tmp_path, ir, {"x": x, "dy": dy, "gamma": gamma, "beta": beta})
    g = gamma if affine != "none" else None
    b = beta if affine != "none" else None
    close(out["y"], F.layer_norm(x, (d,), g, b, eps))
    if affine == "none":
        close(out["dx"], vjp(lambda v: F.layer_norm(v, (d,), None, None, eps),
                             [x], dy)[0])
    else:
        dx, dg, db = vjp(lambda v, gg, bb: F.layer_norm(v, (d,), gg, bb, eps),
                         [x, gamma, beta], dy)
        close(out["dx"], dx)
        close(out["dgamma"], dg)
        close(out["dbeta"], db)


def rms_norm_ref(x, gamma, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if gamma is None else y * gamma


@pytest.mark.parametrize("with_gamma", [False, True])
def test_rms_norm(tmp_path, with_gamma):
    shape, d, eps = (2, 3, 8), 8, 1e-6
    x, dy, gamma = rand(*shape, seed=9), rand(*shape, seed=10), rand(d, seed=11)
    t, tg = ty(shape), ty((d,))
    g_op, g_ty = (", %gamma", f", {tg}") if with_gamma else ("", "")
    names = "%dx, %dgamma" if with_gamma else "%dx"
    body = "\n".join([
        f"  %y = loom.rms_norm %x{g_op} {{eps = {eps:e} : f64}} : ({t}{g_ty}) -> {t}",
        f"  {names} = loom.rms_norm_grad %dy, %x{g_op} {{eps = {eps:e} : f64}}"
        f" : ({t}, {t}{g_ty}) -> ({t}{g_ty})"])
    results = [("y", "y", shape), ("dx", "dx", shape)]
    if with_gamma:
        results.append(("dgamma", "dgamma", (d,)))
    ir = func([("x", shape, "f64"), ("dy", shape, "f64"),
               ("gamma", (d,), "f64")], results, body)
    out = run(tmp_path, ir, {"x": x, "dy": dy, "gamma": gamma})
    if with_gamma:
        close(out["y"], rms_norm_ref(x, gamma, eps))
        dx, dg = vjp(lambda v, gg: rms_norm_ref(v, gg, eps), [x, gamma], dy)
        close(out["dx"], dx)
        close(out["dgamma"], dg)
    else:
        close(out["y"], rms_norm_ref(x, None, eps))
        close(out["dx"], vjp(lambda v: rms_norm_ref(v, None, eps), [x], dy)[0])


def test_embedding(tmp_path):
    vocab, hidden, ids_shape = 11, 6, (2, 5)
    table = rand(vocab, hidden, seed=12)
    g = torch.Generator().manual_seed(13)
    ids = torch.randint(0, vocab, ids_shape, generator=g)
    ids[0, 0] = ids[1, 1] = 4  # a repeated id accumulates in the gradient
    dy = rand(*ids_shape, hidden, seed=14)
    ts, ti, tr = ty((vocab, hidden)), ty(ids_shape, "i64"), ty(ids_shape + (hidden,))
    body = "\n".join([
        f"  %y = loom.embedding %table, %ids : ({ts}, {ti}) -> {tr}",
        f"  %dt = loom.embedding_grad %dy, %ids {{vocab_size = {vocab} : i64}}"
        f" : ({tr}, {ti}) -> {ts}"])
    ir = func([("table", (vocab, hidden), "f64"), ("ids", ids_shape, "i64"),
               ("dy", ids_shape + (hidden,), "f64")],
              [("y", "y", ids_shape + (hidden,)), ("dt", "dt", (vocab, hidden))],
              body)
    out = run(tmp_path, ir, {"table": table, "ids": ids, "dy": dy})
    close(out["y"], F.embedding(ids, table))
    close(out["dt"], vjp(lambda tb: F.embedding(ids, tb), [table], dy)[0])


def test_cross_entropy(tmp_path):
    shape, vocab = (3, 4), 9
    logits = rand(*shape, vocab, seed=15) * 2
    g = torch.Generator().manual_seed(16)
    labels = torch.randint(0, vocab, shape, generator=g)
    labels[0, 1] = labels[2, 3] = -100
    dloss = torch.tensor(0.7, dtype=torch.float64)
    tl, tb = ty(shape + (vocab,)), ty(shape, "i64")
    body = "\n".join([
        f"  %l = loom.cross_entropy %logits, %labels : ({tl}, {tb}) -> tensor<f64>",
        f"  %dl = loom.cross_entropy_grad %logits, %labels, %dloss"
        f" : ({tl}, {tb}, tensor<f64>) -> {tl}"])
    ir = func([("logits", shape + (vocab,), "f64"), ("labels", shape, "i64"),
               ("dloss", (), "f64")],
              [("loss", "l", ()), ("dlogits", "dl", shape + (vocab,))], body)
    out = run(tmp_path, ir, {"logits": logits, "labels": labels,
                             "dloss": dloss.numpy()})

    def ref(lg):
        return F.cross_entropy(lg.reshape(-1, vocab), labels.reshape(-1),
                               ignore_index=-100)
    close(out["loss"], ref(logits))
    close(out["dlogits"], vjp(ref, [logits], dloss)[0])


def attention_ref(q, k, v, mask, causal, scale):
    rep = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    s = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    scores = q @ k.transpose(-1, -2) * s
    if mask is not None:
        scores = scores + mask
    if causal:
        sq, skv = q.shape[2], k.shape[2]
        keep = torch.ones(sq, skv, dtype=torch.bool).tril(skv - sq)
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, -1) @ v


@pytest.mark.parametrize("hq,hkv,sq,skv,causal,with_mask,scale", [
    (4, 4, 6, 6, False, False, None),
    (4, 2, 6, 6, True, False, None),       # GQA, causal
    (4, 1, 3, 7, True, True, 0.3),         # MQA, bottom-right causal, mask
    (2, 2, 5, 5, False, True, None),
])
def test_attention(tmp_path, hq, hkv, sq, skv, causal, with_mask, scale):
    b, d, dv = 2, 8, 6
    q, k = rand(b, hq, sq, d, seed=17), rand(b, hkv, skv, d, seed=18)
    v, dout = rand(b, hkv, skv, dv, seed=19), rand(b, hq, sq, dv, seed=20)
    mask_shape = (1, hq, sq, skv)
    mask = rand(*mask_shape, seed=21) if with_mask else None
    attrs = []
    if causal:
        attrs.append("causal")
    if scale is not None:
        attrs.append(f"scale = {scale:e} : f64")
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    shapes = [(b, hq, sq, d), (b, hkv, skv, d), (b, hkv, skv, dv)]
    operands = "%q, %k, %v" + (", %mask" if with_mask else "")
    types = ", ".join(ty(s) for s in shapes) + (
        ", " + ty(mask_shape) if with_mask else "")
    to = ty((b, hq, sq, dv))
    gtypes = ", ".join(ty(s) for s in shapes) + f", {to}, {to}" + (
        ", " + ty(mask_shape) if with_mask else "")
    gres = ", ".join(ty(s) for s in shapes)
    gops = "%q, %k, %v, %o, %dout" + (", %mask" if with_mask else "")
    body = "\n".join([
        f"  %o = loom.attention {operands}{attr} : ({types}) -> {to}",
        f"  %dq, %dk, %dv = loom.attention_grad {gops}{attr} : ({gtypes}) -> ({gres})"])
    ir = func([("q", shapes[0], "f64"), ("k", shapes[1], "f64"),
               ("v", shapes[2], "f64"), ("dout", (b, hq, sq, dv), "f64"),
               ("mask", mask_shape, "f64")],
              [("o", "o", (b, hq, sq, dv)), ("dq", "dq", shapes[0]),
               ("dk", "dk", shapes[1]), ("dv", "dv", shapes[2])], body)
    out = run(tmp_path, ir, {"q": q, "k": k, "v": v, "dout": dout,
                             "mask": mask if with_mask else rand(*mask_shape)})

    def ref(qq, kk, vv):
        return attention_ref(qq, kk, vv, mask, causal, scale)
    close(out["o"], ref(q, k, v))
    dq, dk, dvv = vjp(ref, [q, k, v], dout)
    close(out["dq"], dq)
    close(out["dk"], dk)
    close(out["dv"], dvv)


def rope_ref(x, positions, theta):
    d = x.shape[-1]
    inv_freq = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    if positions is None:
        positions = torch.arange(x.shape[2])
    angle = positions.to(torch.float64)[..., None] * inv_freq
    emb = torch.cat([angle, angle], -1)
    if emb.dim() == 3:  # [B, S, D] -> [B, 1, S, D]
        emb = emb[:, None]
    half = d // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * emb.cos() + rotated * emb.sin()


@pytest.mark.parametrize("positions", [None, "bs", "s"])
def test_rope(tmp_path, positions):
    shape, theta = (2, 3, 5, 8), 500.0
    x, dy = rand(*shape, seed=22), rand(*shape, seed=23)
    g = torch.Generator().manual_seed(24)
    pos = {None: None, "bs": torch.randint(0, 50, (2, 5), generator=g),
           "s": torch.randint(0, 50, (5,), generator=g)}[positions]
    t = ty(shape)
    p_op = "" if pos is None else ", %pos"
    p_ty = "" if pos is None else ", " + ty(tuple(pos.shape), "i64")
    body = "\n".join([
        f"  %y = loom.rope %x{p_op} {{theta = {theta:e} : f64}} : ({t}{p_ty}) -> {t}",
        f"  %dx = loom.rope %dy{p_op} {{theta = {theta:e} : f64, inverse}} : ({t}{p_ty}) -> {t}"])
    args = [("x", shape, "f64"), ("dy", shape, "f64")]
    inputs = {"x": x, "dy": dy}
    if pos is not None:
        args.append(("pos", tuple(pos.shape), "i64"))
        inputs["pos"] = pos
    ir = func(args, [("y", "y", shape), ("dx", "dx", shape)], body)
    out = run(tmp_path, ir, inputs)
    close(out["y"], rope_ref(x, pos, theta))
    close(out["dx"], vjp(lambda v: rope_ref(v, pos, theta), [x], dy)[0])


@pytest.mark.parametrize("momentum,dampening,weight_decay,nesterov", [
    (0.0, 0.0, 0.0, False), (0.9, 0.0, 0.01, False), (0.9, 0.0, 0.01, True),
    (0.8, 0.3, 0.0, False)])
def test_sgd_update(tmp_path, momentum, dampening, weight_decay, nesterov):
    shape, lr = (4, 5), 0.1
    p, g, buf = rand(*shape, seed=25), rand(*shape, seed=26), rand(*shape, seed=27)
    t = ty(shape)
    has_buf = momentum != 0
    attrs = (f"lr = {lr:e} : f64, momentum = {momentum:e} : f64, "
             f"weight_decay = {weight_decay:e} : f64, dampening = {dampening:e} : f64"
             + (", nesterov" if nesterov else ""))
    if has_buf:
        body = (f"  %p2, %b2 = loom.sgd_update %p, %g, %b {{{attrs}}}"
                f" : ({t}, {t}, {t}) -> ({t}, {t})")
        results = [("p", "p2", shape), ("b", "b2", shape)]
    else:
        body = f"  %p2 = loom.sgd_update %p, %g {{{attrs}}} : ({t}, {t}) -> {t}"
        results = [("p", "p2", shape)]
    ir = func([("p", shape, "f64"), ("g", shape, "f64"), ("b", shape, "f64")],
              results, body)
    out = run(tmp_path, ir, {"p": p, "g": g, "b": buf})
    param = torch.nn.Parameter(p.clone())
    param.grad = g.clone()
    opt = torch.optim.SGD([param], lr=lr, momentum=momentum,
                          dampening=dampening, weight_decay=weight_decay,
                          nesterov=nesterov)
    if has_buf:
        opt.state[param]["momentum_buffer"] = buf.clone()
    opt.step()
    close(out["p"], param.detach())
    if has_buf:
        close(out["b"], opt.state[param]["momentum_buffer"])


@pytest.mark.parametrize("step", [0, 7])
def test_adamw_update(tmp_path, step):
    shape = (4, 5)
    lr, beta1, beta2, eps, wd = 1e-2, 0.9, 0.95, 1e-8, 0.1
    p, g = rand(*shape, seed=28), rand(*shape, seed=29)
    m = rand(*shape, seed=30) * 0.1 if step else torch.zeros(*shape, dtype=torch.float64)
    v = rand(*shape, seed=31).abs() * 0.01 if step else torch.zeros(*shape, dtype=torch.float64)
    t = ty(shape)
    attrs = (f"lr = {lr:e} : f64, beta1 = {beta1:e} : f64, beta2 = {beta2:e} : f64, "
             f"eps = {eps:e} : f64, weight_decay = {wd:e} : f64")
    body = (f"  %p2, %m2, %v2 = loom.adamw_update %p, %g, %m, %v, %step {{{attrs}}}"
            f" : ({t}, {t}, {t}, {t}, tensor<i64>) -> ({t}, {t}, {t})")
    ir = func([("p", shape, "f64"), ("g", shape, "f64"), ("m", shape, "f64"),
               ("v", shape, "f64"), ("step", (), "i64")],
              [("p", "p2", shape), ("m", "m2", shape), ("v", "v2", shape)], body)
    out = run(tmp_path, ir, {"p": p, "g": g, "m": m, "v": v,
                             "step": np.array(step, dtype=np.int64)})
    param = torch.nn.Parameter(p.clone())
    param.grad = g.clone()
    opt = torch.optim.AdamW([param], lr=lr, betas=(beta1, beta2), eps=eps,
                            weight_decay=wd)
    opt.state[param]["step"] = torch.tensor(float(step))
    opt.state[param]["exp_avg"] = m.clone()
    opt.state[param]["exp_avg_sq"] = v.clone()
    opt.step()
    close(out["p"], param.detach())
    close(out["m"], opt.state[param]["exp_avg"])
    close(out["v"], opt.state[param]["exp_avg_sq"])


# Philox 4x32-10 (Random123), for loom.dropout's mask.
_M0, _M1, _W0, _W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
_MASK = 0xFFFFFFFF


def philox4x32(counter, key):
    c, k = list(counter), list(key)
    for rnd in range(10):
        if rnd:
            k = [(k[0] + _W0) & _MASK, (k[1] + _W1) & _MASK]
        p0, p1 = _M0 * c[0], _M1 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & _MASK,
             (p0 >> 32) ^ c[3] ^ k[1], p0 & _MASK]
    return c


def test_philox_known_answer():
    # Random123's kat_vectors: philox4x32_10, counter and key all zero.
    assert philox4x32([0, 0, 0, 0], [0, 0]) == [
        0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


@pytest.mark.parametrize("rate", [0.0, 0.25])
def test_dropout(tmp_path, rate):
    shape, seed = (3, 7), 2**33 + 5
    x = rand(*shape, seed=32)
    t = ty(shape)
    body = f"  %y = loom.dropout %x {{rate = {rate:e} : f64, seed = {seed} : i64}} : {t}"
    ir = func([("x", shape, "f64")], [("y", "y", shape)], body)
    out = run(tmp_path, ir, {"x": x})
    flat = x.numpy().reshape(-1)
    threshold = math.floor(rate * 2**32)
    key = [seed & _MASK, seed >> 32]
    expected = np.empty_like(flat)
    for i, value in enumerate(flat):
        r = philox4x32([(i // 4) & _MASK, (i // 4) >> 32, 0, 0], key)[i % 4]
        expected[i] = value * (1.0 / (1.0 - rate)) if r >= threshold else 0.0
    close(out["y"], expected.reshape(shape))


#===----------------------------------------------------------------------===#
# (b) models
#===----------------------------------------------------------------------===#


def model_ir(tmp_path, family, *flags):
    path = tmp_path / f"{family}.mlir"
    result = subprocess.run(
        [str(find_tool("loom-model")), family, *flags, "--dtype", "f64",
         "-o", str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return path.read_text()


def batch(vocab, b, s, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (b, s), generator=g)
    labels = torch.randint(0, vocab, (b, s), generator=g)
    labels[0, :3] = -100  # ignored positions
    return ids, labels


def weights(shapes, seed):
    """Random weights (std 0.2, so that the blocks do something), norm
    weights around 1."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in shapes.items():
        w = torch.randn(*shape, generator=g, dtype=torch.float64) * 0.2
        if "ln" in name or "norm" in name:
            w = w + (1.0 if name.endswith("weight") else 0.0)
        out[name] = w
    return out


def gpt2_reference(w, ids, labels, layers, heads):
    b, s = ids.shape
    x = F.embedding(ids, w["transformer.wte.weight"]) + w["transformer.wpe.weight"][:s]
    hidden = x.shape[-1]

    def ln(v, p):
        return F.layer_norm(v, (hidden,), w[p + ".weight"], w[p + ".bias"], 1e-5)

    def linear(v, p):
        return F.linear(v, w[p + ".weight"], w[p + ".bias"])

    for i in range(layers):
        p = f"transformer.h.{i}"
        # nanoGPT's c_attn: rows of q, then k, then v.
        qkv = linear(ln(x, p + ".ln_1"), p + ".attn.c_attn")
        q, k, v = (t.reshape(b, s, heads, hidden // heads).transpose(1, 2)
                   for t in qkv.split(hidden, -1))
        a = attention_ref(q, k, v, None, True, None)
        a = a.transpose(1, 2).reshape(b, s, hidden)
        x = x + linear(a, p + ".attn.c_proj")
        h = F.gelu(linear(ln(x, p + ".ln_2"), p + ".mlp.c_fc"), approximate="tanh")
        x = x + linear(h, p + ".mlp.c_proj")
    logits = ln(x, "transformer.ln_f") @ w["transformer.wte.weight"].T
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           labels.reshape(-1), ignore_index=-100)


def gpt2_shapes(layers, hidden, vocab, seq):
    """The parameters of `loom-model gpt2` by name (nanoGPT's names and
    `[out, in]` linear weights)."""
    shapes = {"transformer.wte.weight": (vocab, hidden),
              "transformer.wpe.weight": (seq, hidden),
              "transformer.ln_f.weight": (hidden,),
              "transformer.ln_f.bias": (hidden,)}
    for i in range(layers):
        p = f"transformer.h.{i}"
        for n in ("ln_1", "ln_2"):
            shapes[f"{p}.{n}.weight"] = shapes[f"{p}.{n}.bias"] = (hidden,)
        for n, (o, inp) in {"attn.c_attn": (3 * hidden, hidden),
                            "attn.c_proj": (hidden, hidden),
                            "mlp.c_fc": (4 * hidden, hidden),
                            "mlp.c_proj": (hidden, 4 * hidden)}.items():
            shapes[f"{p}.{n}.weight"] = (o, inp)
            shapes[f"{p}.{n}.bias"] = (o,)
    return shapes


def test_gpt2_forward_loss(tmp_path):
    layers, hidden, heads, vocab, seq, b = 2, 64, 4, 101, 16, 2
    ir = model_ir(tmp_path, "gpt2", "--layers", str(layers), "--hidden",
                  str(hidden), "--heads", str(heads), "--vocab", str(vocab),
                  "--seq", str(seq), "--batch", str(b))
    w = weights(gpt2_shapes(layers, hidden, vocab, seq), seed=40)
    ids, labels = batch(vocab, b, seq, seed=41)
    out = run(tmp_path, ir, {**w, "input_ids": ids, "labels": labels},
              entry="forward")
    expected = gpt2_reference(w, ids, labels, layers, heads)
    close(out["loss"], expected)


def llama_reference(w, ids, labels, layers, heads, kv_heads, theta, eps):
    b, s = ids.shape
    x = F.embedding(ids, w["model.embed_tokens.weight"])
    hidden = x.shape[-1]
    d = hidden // heads

    def lin(v, name):
        return F.linear(v, w[name])

    for i in range(layers):
        p = f"model.layers.{i}"
        n = rms_norm_ref(x, w[p + ".input_layernorm.weight"], eps)
        q = lin(n, p + ".self_attn.q_proj.weight").view(b, s, heads, d).transpose(1, 2)
        k = lin(n, p + ".self_attn.k_proj.weight").view(b, s, kv_heads, d).transpose(1, 2)
        v = lin(n, p + ".self_attn.v_proj.weight").view(b, s, kv_heads, d).transpose(1, 2)
        q, k = rope_ref(q, None, theta), rope_ref(k, None, theta)
        a = attention_ref(q, k, v, None, True, None)
        x = x + lin(a.transpose(1, 2).reshape(b, s, hidden), p + ".self_attn.o_proj.weight")
        n = rms_norm_ref(x, w[p + ".post_attention_layernorm.weight"], eps)
        h = F.silu(lin(n, p + ".mlp.gate_proj.weight")) * lin(n, p + ".mlp.up_proj.weight")
        x = x + lin(h, p + ".mlp.down_proj.weight")
    logits = lin(rms_norm_ref(x, w["model.norm.weight"], eps), "lm_head.weight")
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           labels.reshape(-1), ignore_index=-100)


def llama_shapes(layers, hidden, heads, kv_heads, ffn, vocab):
    """The parameters of `loom-model llama` by name (Hugging Face's)."""
    d = hidden // heads
    shapes = {"model.embed_tokens.weight": (vocab, hidden),
              "model.norm.weight": (hidden,), "lm_head.weight": (vocab, hidden)}
    for i in range(layers):
        p = f"model.layers.{i}"
        shapes[p + ".input_layernorm.weight"] = (hidden,)
        shapes[p + ".post_attention_layernorm.weight"] = (hidden,)
        shapes[p + ".self_attn.q_proj.weight"] = (heads * d, hidden)
        shapes[p + ".self_attn.k_proj.weight"] = (kv_heads * d, hidden)
        shapes[p + ".self_attn.v_proj.weight"] = (kv_heads * d, hidden)
        shapes[p + ".self_attn.o_proj.weight"] = (hidden, heads * d)
        shapes[p + ".mlp.gate_proj.weight"] = (ffn, hidden)
        shapes[p + ".mlp.up_proj.weight"] = (ffn, hidden)
        shapes[p + ".mlp.down_proj.weight"] = (hidden, ffn)
    return shapes


def test_llama_forward_loss(tmp_path):
    layers, hidden, heads, kv_heads, ffn = 2, 64, 4, 2, 96
    vocab, seq, b, theta, eps = 101, 16, 2, 10000.0, 1e-5
    ir = model_ir(tmp_path, "llama", "--layers", str(layers), "--hidden",
                  str(hidden), "--heads", str(heads), "--kv-heads",
                  str(kv_heads), "--ffn", str(ffn), "--vocab", str(vocab),
                  "--seq", str(seq), "--batch", str(b), "--rope-theta",
                  str(theta), "--norm-eps", str(eps))
    w = weights(llama_shapes(layers, hidden, heads, kv_heads, ffn, vocab), seed=42)
    ids, labels = batch(vocab, b, seq, seed=43)
    out = run(tmp_path, ir, {**w, "input_ids": ids, "labels": labels},
              entry="forward")
    expected = llama_reference(w, ids, labels, layers, heads, kv_heads, theta, eps)
    close(out["loss"], expected)
