#===- torch.py - loom.from_torch: PyTorch modules as loom.Graph -----------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""`loom.from_torch(module, example_args, ...)`: a PyTorch module's training
loss as a `loom.Graph` (docs/Frontends.md).

How it works:

1. **Trace.** The module runs once on its example inputs under
   `torch.export.export` (non-strict, PyTorch >= 2.6, decomposed to core
   ATen except the ops Loom maps) or, in older PyTorch (Debian's 1.13),
   `torch.fx.experimental.proxy_tensor.make_fx` with fake tensors (no
   compute), so every shape is specialized and plain Python (`b, t =
   idx.size()`, `assert`, `if targets is not None:`) simply runs; what is
   recorded is the ATen ops the forward dispatched, in order. Parameters, buffers and the forward's
   tensor arguments are the traced function's inputs, so each is known by
   name (a tied parameter is one tensor, hence one input).
2. **Translate.** Each ATen node becomes Loom ops through a table
   (`_ATEN`, one function per ATen op). Values computed from buffers and
   constants alone (the causal mask, `arange` positions, RoPE tables) are
   folded into concrete tensors by running the ATen op itself.
   Construction folds what the ATen graph spells out and Loom's ops say
   directly: transposes into `matmul`'s transpose flags, the reshapes
   around `addmm`/`mm`/`bmm` into batched matmuls, chains of reshapes,
   `log_softmax` + `nll_loss` into `cross_entropy`, and the explicit
   attention pattern `softmax(q @ k^T * scale + mask) @ v` into one
   `loom.attention` (causal when the mask is the causal triangle).
3. **Emit.** What the loss depends on is written into a `loom.Graph`:
   parameters under their `named_parameters()` names with PyTorch's default
   initializers, data inputs under the forward's argument names (role
   `input_ids` where they feed an embedding, `labels` where they feed the
   loss, ...), constants as `constant` ops.

ATen ops without a mapping are all reported at once, each with its source
line (`LoomError`); nothing is returned then.
"""

from __future__ import annotations

import inspect
import math
import operator
import os
import traceback
from typing import Any, Callable

import torch  # noqa: F401  (absolute: the PyTorch package)
from torch.fx.experimental import proxy_tensor

from loom.errors import LoomError
from loom.graph import Graph

_DTYPES = {torch.float64: "f64", torch.float32: "f32",
           torch.bfloat16: "bf16", torch.float16: "f16",
           torch.int64: "i64", torch.int32: "i32", torch.bool: "i1"}

# Frames in these directories are PyTorch's or Loom's, not the model's.
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_LOOM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + \
    os.sep

# A fill value at or below this masks a score out exactly as -inf does
# (exp underflows to 0 in every float type Loom runs).
_MASK_VALUE = -1e30


#===----------------------------------------------------------------------===#
# The values of the translation
#===----------------------------------------------------------------------===#


class _Value:
    """One Loom value being built: a parameter, a data input, a constant or
    a `loom` op. Values are created in program order (`id`), so emitting
    the live ones by id is a valid op order."""

    _next_id = 0

    def __init__(self, kind: str, shape, dtype: str, op: str | None = None,
                 args=(), attrs=None, name: str | None = None,
                 value=None, where: str | None = None):
        self.kind = kind          # "param", "input", "const" or "op"
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.op = op
        self.args = list(args)
        self.attrs = dict(attrs or {})
        self.name = name
        self.value = value        # the torch tensor of a constant
        self.where = where
        self.id = _Value._next_id
        _Value._next_id += 1

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"_Value({self.kind} {self.op or self.name} {list(self.shape)})"


def _dtype(t) -> str:
    if t not in _DTYPES:
        raise LoomError(f"dtype {t} has no Loom counterpart")
    return _DTYPES[t]


class _Unsupported(Exception):
    """An ATen node the translation cannot map (collected, then reported
    together)."""


class _Translator:
    """Builds `_Value`s from the traced ATen graph (see the module doc)."""

    def __init__(self):
        self.consts: dict[int, tuple] = {}
        self.where: str | None = None

    # -- Operands ------------------------------------------------------------

    def const(self, tensor, dtype: str | None = None) -> _Value:
        """A constant value from a torch tensor or Python number."""
        if not isinstance(tensor, torch.Tensor):
            tensor = torch.tensor(tensor)
        if dtype is not None:
            tensor = tensor.to(_torch_dtype(dtype))
        # One value per tensor object (the entry keeps the object alive,
        # so its id is not reused).
        entry = self.consts.get(id(tensor))
        if entry is not None and entry[0] is tensor:
            return entry[1]
        v = _Value("const", tensor.shape, _dtype(tensor.dtype),
                   value=tensor.detach(), where=self.where)
        self.consts[id(tensor)] = (tensor, v)
        return v

    def own(self, x, like: _Value | None = None, dtype: str | None = None):
        """`x` as a value of `dtype` (Python numbers and torch tensors become
        constants; other values are cast)."""
        if isinstance(x, _Value):
            return x if dtype is None or x.dtype == dtype else self.cast(
                x, dtype)
        if isinstance(x, torch.Tensor):
            return self.const(x, dtype)
        if isinstance(x, (bool, int, float)):
            return self.const(torch.tensor(
                x, dtype=_torch_dtype(dtype or like.dtype)))
        raise _Unsupported(f"an operand of type {type(x).__name__}")

    def op(self, mnemonic, args, shape, dtype, **attrs) -> _Value:
        return _Value("op", shape, dtype, op=mnemonic, args=args,
                      attrs=attrs, where=self.where)

    # -- Shapes (folding chains) ---------------------------------------------

    def reshape(self, x: _Value, shape) -> _Value:
        shape = _infer_shape(list(shape), x.shape)
        while x.op == "reshape":
            x = x.args[0]
        if tuple(shape) == x.shape:
            return x
        if x.kind == "const":
            return self.const(x.value.reshape(shape))
        return self.op("reshape", [x], shape, x.dtype)

    def transpose(self, x: _Value, perm) -> _Value:
        perm = [p % x.rank for p in perm] if x.rank else []
        if x.op == "transpose":
            inner = x.attrs["permutation"]
            perm = [inner[p] for p in perm]
            x = x.args[0]
        if perm == list(range(x.rank)):
            return x
        shape = [x.shape[p] for p in perm]
        if x.kind == "const":
            return self.const(x.value.permute(perm))
        return self.op("transpose", [x], shape, x.dtype, permutation=perm)

    def cast(self, x: _Value, dtype: str) -> _Value:
        if x.dtype == dtype:
            return x
        if x.kind == "const":
            return self.const(x.value.to(_torch_dtype(dtype)))
        return self.op("cast", [x], x.shape, dtype)

    def expand(self, x: _Value, shape) -> _Value:
        shape = [x.shape[i - (len(shape) - x.rank)] if d == -1 else d
                 for i, d in enumerate(shape)]
        if tuple(shape) == x.shape:
            return x
        if x.kind == "const":
            return self.const(x.value.expand(shape))
        # A real broadcast: adding zeros is exact. The zeros have size 1
        # wherever x already has the target's size, so the constant never
        # holds an activation's batch dim (micro-batch slicing slices x's).
        lead = len(shape) - x.rank
        zeros_shape = [1 if i >= lead and x.shape[i - lead] == d else d
                       for i, d in enumerate(shape)]
        zeros = self.const(torch.zeros(zeros_shape,
                                       dtype=_torch_dtype(x.dtype)))
        return self.op("add", [x, zeros], shape, x.dtype)

    # -- Arithmetic ----------------------------------------------------------

    def binary(self, mnemonic, a, b, dtype: str) -> _Value:
        a = self.own(a, dtype=dtype)
        b = self.own(b, dtype=dtype)
        if a.kind == "const" and b.kind == "const":
            fn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
                  "div": torch.div}[mnemonic]
            return self.const(fn(a.value, b.value))
        # An elementwise op on a reshape whose trailing dims it keeps, with
        # an operand that only touches those dims, is done before the
        # reshape (the bias of `addmm` on the flattened rows).
        for x, y, swap in ((a, b, False), (b, a, True)):
            if x.op == "reshape" and y.op != "reshape":
                src = x.args[0]
                keep = _common_suffix(src.shape, x.shape)
                if y.rank <= keep and _broadcast(x.shape, y.shape) == x.shape:
                    inner = self.binary(mnemonic, *((y, src) if swap
                                                    else (src, y)), dtype)
                    return self.reshape(inner, x.shape)
        if mnemonic == "add":
            fused = self.rope(a, b)
            if fused is not None:
                return fused
        if mnemonic == "mul":
            for x, n in ((a, b), (b, a)):
                if n.op == "noise" and n.attrs["scaled"]:
                    rate = float(f"{1.0 - n.attrs['keep']:.15g}")
                    return self.unary("dropout", x, rate=rate, seed=0)
            fused = self.rms_norm(a, b)
            if fused is not None:
                return fused
        shape = _broadcast(a.shape, b.shape)
        return self.op(mnemonic, [a, b], shape, dtype)

    def rms_norm(self, a: _Value, b: _Value) -> _Value | None:
        """`x * rsqrt(mean(x * x, -1, keepdim) + eps)` as `loom.rms_norm`,
        and a 1-D weight times that as its gamma; None otherwise."""
        for x, r in ((a, b), (b, a)):
            if r.op == "rms_norm" and len(r.args) == 1 and \
                    x.kind == "param" and x.shape == (r.shape[-1],):
                return self.op("rms_norm", [r.args[0], x], r.shape, r.dtype,
                               eps=r.attrs["eps"])
            if r.op != "rsqrt" or x.rank == 0:
                continue
            s = r.args[0]
            if s.op != "add" or s.args[1].kind != "const" or \
                    s.args[1].value.numel() != 1:
                continue
            m = s.args[0]
            if m.op != "reduce_mean" or m.attrs["axes"] != [x.rank - 1] or \
                    not m.attrs["keepdims"]:
                continue
            sq = m.args[0]
            if sq.op == "mul" and sq.args[0] is x and sq.args[1] is x:
                return self.op("rms_norm", [x], x.shape, x.dtype,
                               eps=float(s.args[1].value.reshape(())))
        return None

    def rope(self, a: _Value, b: _Value) -> _Value | None:
        """Hugging Face's `q * cos + rotate_half(q) * sin` as `loom.rope`
        when the cos/sin constants are the tables `loom.rope` computes
        (positions 0..S-1, some theta; `_rope_theta`'s tolerance, which
        admits Hugging Face's float32 tables); None otherwise (other tables
        stay the model's own: primitive ops)."""
        for m1, m2 in ((a, b), (b, a)):
            x, cos = _with_const(m1)
            r, sin = _with_const(m2)
            if x is None or r is None or x.rank != 4 or \
                    r.op != "concat" or r.attrs["axis"] != 3 or \
                    len(r.args) != 2 or r.args[0].op != "neg":
                continue
            if not (_half_of(r.args[0].args[0], x, 1) and
                    _half_of(r.args[1], x, 0)):
                continue
            theta = _rope_theta(cos.value, sin.value, x.shape, x.dtype)
            if theta is not None:
                return self.op("rope", [x], x.shape, x.dtype, theta=theta)
        return None

    def unary(self, mnemonic, x, **attrs) -> _Value:
        return self.op(mnemonic, [x], x.shape, x.dtype, **attrs)

    # -- Matmul and attention ------------------------------------------------

    def matmul(self, a: _Value, b: _Value, ta=False, tb=False) -> _Value:
        # Reshapes that flatten batch dims around a 2-D/3-D product.
        if a.op == "reshape" and not ta and b.rank == 2 and a.rank == 2:
            # [M, K] rows flattened from [..., K] (the leading dims of the
            # reshape's source that multiply to M).
            src = a.args[0]
            for j in range(src.rank - 1, 0, -1):
                if math.prod(src.shape[:j]) == a.shape[0] and \
                        math.prod(src.shape[j:]) == a.shape[1]:
                    rows = self.reshape(src, src.shape[:j] + (a.shape[1],))
                    out = self.matmul(rows, b, False, tb)
                    return self.reshape(out, (a.shape[0], out.shape[-1]))
        if a.rank == 3 and b.rank == 3 and a.op == "reshape" and \
                b.op == "reshape":
            # bmm of [N, ...] flattened from [B, H, ...]: the batched
            # product over [B, H] (batch dims from whichever source keeps
            # its last two dims; the other is reshaped alike).
            for src, mat in ((a.args[0], a), (b.args[0], b)):
                # Size-1 batch dims (an unbind's leftovers) are dropped.
                lead = tuple(d for d in src.shape[:-2] if d != 1)
                if len(lead) > 1 and src.shape[-2:] == mat.shape[-2:] and \
                        math.prod(lead) == a.shape[0]:
                    sa = self.reshape(a, lead + a.shape[-2:])
                    sb = self.reshape(b, lead + b.shape[-2:])
                    out = self.matmul(sa, sb, ta, tb)
                    return self.reshape(out, (a.shape[0],) + out.shape[-2:])
        # A transpose that reverses the last two dims is a transpose flag
        # (what remains of it, such as moving heads, stays an op).
        if _reverses_last_two(a):
            a, ta = self.transpose(a, _swap_perm(a.rank)), not ta
        if _reverses_last_two(b):
            b, tb = self.transpose(b, _swap_perm(b.rank)), not tb
        if not ta:
            fused = self.attention(a, b)
            if fused is not None:
                return fused
        m = a.shape[-1] if ta else a.shape[-2]
        n = b.shape[-2] if tb else b.shape[-1]
        batch = _broadcast(a.shape[:-2], b.shape[:-2])
        return self.op("matmul", [a, b], batch + (m, n), a.dtype,
                       transpose_lhs=ta, transpose_rhs=tb)

    def attention(self, p: _Value, v: _Value) -> _Value | None:
        """`softmax(q @ k^T * scale (+ mask)) @ v` as one `loom.attention`,
        or None when `p @ v` is not that pattern. Rank-4 operands are
        `[B, H, S, D]`; rank-3 ones `[B * H, S, D]` with the heads folded
        into the batch dim, as `nn.MultiheadAttention` has them."""
        rank = p.rank
        if rank not in (3, 4) or v.rank != rank or p.op != "softmax" or \
                p.attrs["axis"] != rank - 1:
            return None
        s = p.args[0]
        masked = additive = None
        fill = float("-inf")
        if s.op == "masked_fill":
            if s.attrs["value"] > _MASK_VALUE:
                return None
            masked, fill, s = s.attrs["mask"], s.attrs["value"], s.args[0]
        elif s.op == "add" and any(x.kind == "const" for x in s.args):
            c, s = (s.args[0], s.args[1]) if s.args[0].kind == "const" \
                else (s.args[1], s.args[0])
            if not c.value.dtype.is_floating_point:
                return None
            # Kept as it is (a padding mask, ALiBi's biases) unless it is
            # the causal triangle of -inf / finfo.min.
            additive = c.value
            if bool(((c.value == 0) | (c.value <= _MASK_VALUE)).all()):
                masked = c.value <= _MASK_VALUE
        scale, s = _scaled(s)
        if s.op != "matmul" or s.rank != rank or \
                s.attrs["transpose_lhs"] or not s.attrs["transpose_rhs"]:
            return None
        q, k = s.args
        if scale is None:
            # The scale applied to the queries instead (q / sqrt(D)).
            scale, q = _scaled(q)
        if rank == 3:
            n = q.shape[0]
            q, k, v = (_unfold_heads(self, x, n) for x in (q, k, v))
            if q is None or k is None or v is None:
                return None
            for m in ("masked", "additive"):
                t = masked if m == "masked" else additive
                if t is not None and t.dim() == 3 and t.shape[0] == n:
                    t = t.reshape(q.shape[:2] + t.shape[1:])
                    masked, additive = (t, additive) if m == "masked" \
                        else (masked, t)
        out = self.fused_attention(q, k, v, scale, masked, additive, fill)
        if out is None or rank == 4:
            return out
        return self.reshape(out, (out.shape[0] * out.shape[1],) +
                            out.shape[2:])

    def fused_attention(self, q, k, v, scale=None, masked=None,
                        additive=None, fill=float("-inf")) -> _Value | None:
        """One `loom.attention` of `[B, H, S, D]` operands, or None when
        they do not fit it. `masked`: a constant boolean tensor, True where
        a score is masked out: the causal triangle is `causal`, another
        mask adds `fill` where it masks, unless `additive` (a constant
        added to the scaled scores) is given, which then already holds
        it."""
        k, v = _unrepeat(k), _unrepeat(v)
        if q.rank != 4 or k.rank != 4 or v.rank != 4 or \
                q.shape[0] != k.shape[0] or q.shape[1] % k.shape[1] or \
                k.shape[:3] != v.shape[:3] or q.shape[3] != k.shape[3]:
            return None
        b, h, sq, d = q.shape
        skv = k.shape[2]
        dtype = _torch_dtype(q.dtype)
        causal = False
        if masked is not None:
            try:
                full = masked.expand(b, h, sq, skv)
            except RuntimeError:
                return None
            tri = torch.ones(sq, skv, dtype=torch.bool).triu(1 + skv - sq)
            if bool((full == tri).all()):
                causal, additive = True, None
            elif additive is None:
                additive = torch.zeros(masked.shape, dtype=dtype) \
                    .masked_fill(masked, fill)
        mask_value = None
        if additive is not None:
            try:
                torch.broadcast_shapes(additive.shape, (b, h, sq, skv))
            except RuntimeError:
                return None
            if additive.dim() > 4:
                return None
            mask_value = self.const(additive.to(dtype))
        scale = 1.0 / math.sqrt(d) if scale is None else scale
        args = [q, k, v] + ([mask_value] if mask_value is not None else [])
        return self.op("attention", args, (b, h, sq, v.shape[3]), q.dtype,
                       causal=causal,
                       scale=None if scale == 1.0 / math.sqrt(d) else scale)


def _with_const(x: _Value):
    """(y, c) when `x` is `y * c` or `c * y` for a constant `c`."""
    if x.op == "mul":
        y, c = x.args
        if c.kind == "const" and y.kind != "const":
            return y, c
        if y.kind == "const" and c.kind != "const":
            return c, y
    return None, None


def _half_of(v: _Value, x: _Value, index: int) -> bool:
    """Whether `v` is the first (0) or second (1) half of `x`'s last dim."""
    if v.op != "split_result" or v.attrs["index"] != index:
        return False
    whole = v.args[0]
    half = x.shape[-1] // 2
    return whole.args[0] is x and whole.attrs["axis"] == x.rank - 1 and \
        whole.attrs["sizes"] == [half, half]


def _rope_theta(cos, sin, shape, dtype: str) -> float | None:
    """The theta whose rotary tables (loom.rope's definition, positions
    0..S-1) `cos` and `sin` are, to `_rope_table_tolerance`; else None."""
    b, h, s, d = shape
    if s < 2 or d < 4 or d % 2 or dtype not in ("f32", "f64"):
        return None
    try:
        cos = cos.expand(b, h, s, d).double()
        sin = sin.expand(b, h, s, d).double()
    except RuntimeError:
        return None
    if not (bool((cos == cos[:1, :1]).all()) and
            bool((sin == sin[:1, :1]).all())):
        return None
    cos, sin = cos[0, 0], sin[0, 0]
    # Tables whose every value is a float32 (Hugging Face computes them in
    # float32, then casts them to the model's dtype).
    float32_tables = all(bool((t.float().double() == t).all())
                         for t in (cos, sin))
    # Theta from the lowest frequency at position 1, theta^(-(d-2)/d): its
    # error grows least when raised to -d/(d-2).
    last = d // 2 - 1
    angle = math.atan2(float(sin[1, last]), float(cos[1, last]))
    if angle <= 0:
        return None
    theta = angle ** (-d / (d - 2))
    if abs(theta - round(theta)) <= 1e-5 * theta:
        theta = float(round(theta))
    if not (1 < theta < math.inf):
        return None
    inv = theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = torch.arange(s, dtype=torch.float64)[:, None] * inv[None, :]
    ang = torch.cat([ang, ang], dim=-1)
    tol = _rope_table_tolerance(ang, theta, dtype, float32_tables)
    if not (bool(((cos - ang.cos()).abs() <= tol).all()) and
            bool(((sin - ang.sin()).abs() <= tol).all())):
        return None
    return theta


def _rope_table_tolerance(angle, theta: float, dtype: str,
                          float32_tables: bool):
    """How far table entries at `angle` may be from the exact cos / sin:
    8 ulps of the model's dtype; for tables of float32 values, the error of
    computing them in float32 as Hugging Face does (the exponent 2i/d, the
    product t * inv_freq and cos/sin each rounded: about eps32 * (1 + a *
    (1 + ln theta)), measured at most 0.47 of that for theta 1e4 to 1e6, d
    4 to 128, 8192 positions), twice over. The ONNX importer uses the same
    rule (lib/Target/ONNX/Fusions.cpp, ropeTableTolerance)."""
    own = 8 * torch.finfo(_torch_dtype(dtype)).eps
    if not float32_tables:
        return torch.full_like(angle, own)
    eps32 = torch.finfo(torch.float32).eps
    return torch.clamp(2 * eps32 * (1 + angle.abs() * (1 + math.log(theta))),
                       min=own)


def _scaled(x: _Value):
    """(c, y) when `x` is `y * c`, `c * y` or `y / c` for a scalar constant
    `c` (c as the factor), else (None, x)."""
    if x.op in ("mul", "div") and x.args[1].kind == "const" and \
            x.args[1].value.numel() == 1:
        c = float(x.args[1].value.reshape(()))
        return (c if x.op == "mul" else 1.0 / c), x.args[0]
    if x.op == "mul" and x.args[0].kind == "const" and \
            x.args[0].value.numel() == 1:
        return float(x.args[0].value.reshape(())), x.args[1]
    return None, x


def _unfold_heads(tr, x: _Value, n: int) -> _Value | None:
    """`[B, H, S, D]` from `nn.MultiheadAttention`'s `[B * H, S, D]`, which
    is `x.view(S, B * H, D).transpose(0, 1)` of an `[S, B, H * D]` tensor;
    None for any other form."""
    if x.op != "transpose" or x.attrs["permutation"] != [1, 0, 2]:
        return None
    r = x.args[0]
    if r.op != "reshape" or r.rank != 3:
        return None
    src = r.args[0]
    seq, nn_, d = r.shape
    if nn_ != n or src.rank != 3 or src.shape[0] != seq or \
            src.shape[2] % d or n != src.shape[1] * (src.shape[2] // d):
        return None
    b, h = src.shape[1], src.shape[2] // d
    return tr.transpose(tr.reshape(src, (seq, b, h, d)), [1, 2, 0, 3])


def _unrepeat(x: _Value) -> _Value:
    """The `[B, Hkv, S, D]` keys or values that Hugging Face's `repeat_kv`
    (`x[:, :, None].expand(B, Hkv, n, S, D).reshape(B, Hkv * n, S, D)`)
    repeated for grouped-query attention, or `x` itself. `loom.attention`
    pairs query head h with key/value head h / n, as repeat_kv does."""
    if x.op != "reshape" or x.rank != 4:
        return x
    e = x.args[0]
    if e.op != "add" or e.rank != 5 or e.args[1].kind != "const" or \
            bool((e.args[1].value != 0).any()):
        return x
    u = e.args[0]
    if u.op != "reshape" or u.shape[2] != 1:
        return x
    k = u.args[0]
    b, hkv, n, s, d = e.shape
    if k.shape == (b, hkv, s, d) and x.shape == (b, hkv * n, s, d):
        return k
    return x


def _torch_dtype(dtype: str):
    for t, d in _DTYPES.items():
        if d == dtype:
            return t
    raise LoomError(f"unknown dtype {dtype}")


def _infer_shape(shape, like):
    total = math.prod(like)
    if shape.count(-1) == 1:
        known = math.prod(d for d in shape if d != -1)
        shape[shape.index(-1)] = total // known if known else 0
    return tuple(shape)


def _broadcast(a, b):
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def _common_suffix(a, b) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _swap_perm(rank):
    return list(range(rank - 2)) + [rank - 1, rank - 2]


def _reverses_last_two(x: _Value) -> bool:
    return x.op == "transpose" and x.rank >= 2 and \
        x.attrs["permutation"][-2] > x.attrs["permutation"][-1]


#===----------------------------------------------------------------------===#
# The ATen table: one function per ATen op, (translator, node, args) -> value
#===----------------------------------------------------------------------===#

_ATEN: dict[str, Callable] = {}


def _aten(*names):
    def register(fn):
        for n in names:
            _ATEN[n] = fn
        return fn
    return register


def _out_dtype(node) -> str:
    meta = node.meta.get("tensor_meta")
    if meta is None or not hasattr(meta, "dtype"):
        raise _Unsupported("an op without a tensor result")
    return _dtype(meta.dtype)


def _out_shape(node):
    return tuple(node.meta["tensor_meta"].shape)


@_aten("clone", "contiguous", "alias", "detach", "lift_fresh_copy",
       "lift_fresh")
def _identity(tr, node, x, *rest, **kw):
    return x


@_aten("view", "_unsafe_view", "reshape", "_reshape_alias")
def _view(tr, node, x, shape, *rest):
    return tr.reshape(x, shape)


@_aten("unsqueeze", "squeeze", "flatten")
def _reshape_like(tr, node, x, *rest):
    return tr.reshape(x, _out_shape(node))


@_aten("t")
def _t(tr, node, x):
    return tr.transpose(x, [1, 0]) if x.rank == 2 else x


@_aten("transpose")
def _transpose(tr, node, x, d0, d1):
    perm = list(range(x.rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return tr.transpose(x, perm)


@_aten("permute")
def _permute(tr, node, x, perm):
    return tr.transpose(x, list(perm))


@_aten("expand")
def _expand(tr, node, x, shape, *rest):
    return tr.expand(x, list(shape))


@_aten("slice")
def _slice(tr, node, x, dim=0, start=None, end=None, step=1):
    dim %= x.rank
    size = x.shape[dim]
    start, end, step = slice(start, end, step).indices(size)
    if start == 0 and end == size and step == 1:
        return x
    if step == 1 and end > start:
        # The piece of a `loom.split`: unlike `slice`, it names no limits
        # on the other dims, so micro-batching (which resizes the batch
        # dim) keeps it valid.
        sizes = [n for n in (start, end - start, size - end) if n]
        return _split(tr, node, x, sizes, dim)[1 if start else 0]
    starts = [0] * x.rank
    limits = list(x.shape)
    strides = [1] * x.rank
    starts[dim], limits[dim], strides[dim] = start, max(end, start), step
    shape = list(x.shape)
    shape[dim] = len(range(start, end, step))
    return tr.op("slice", [x], shape, x.dtype, starts=starts, limits=limits,
                 strides=strides)


@_aten("select")
def _select(tr, node, x, dim, index):
    dim %= x.rank
    index %= x.shape[dim]
    part = _slice(tr, node, x, dim, index, index + 1)
    return tr.reshape(part, _out_shape(node))


@_aten("split", "split_with_sizes")
def _split(tr, node, x, sizes, dim=0):
    # One `loom.split` (sizes along one axis only, so a pass that resizes
    # another dim, such as micro-batching, keeps it valid).
    dim %= x.rank
    if isinstance(sizes, int):
        sizes = [min(sizes, x.shape[dim] - s)
                 for s in range(0, x.shape[dim], sizes)]
    sizes = list(sizes)
    if len(sizes) == 1:
        return [x]
    whole = tr.op("split", [x], x.shape, x.dtype, axis=dim, sizes=sizes)
    return [tr.op("split_result", [whole],
                  x.shape[:dim] + (size,) + x.shape[dim + 1:], x.dtype,
                  index=i) for i, size in enumerate(sizes)]


@_aten("unbind")
def _unbind(tr, node, x, dim=0):
    dim %= x.rank
    shape = x.shape[:dim] + x.shape[dim + 1:]
    return [tr.reshape(part, shape) for part in
            _split(tr, node, x, [1] * x.shape[dim], dim)]


@_aten("chunk")
def _chunk(tr, node, x, chunks, dim=0):
    size = -(-x.shape[dim % x.rank] // chunks)
    return _split(tr, node, x, size, dim)


@_aten("index_select")
def _index_select(tr, node, x, dim, index):
    """Rows picked by constant indices: `repeat_interleave`'s pattern
    (each row r times) is the expand + reshape of `repeat_kv` (so attention
    sees grouped-query heads); others are runs of consecutive rows, sliced
    and concatenated."""
    if not isinstance(index, _Value) or index.kind != "const":
        raise _Unsupported("indices computed from data")
    dim %= x.rank
    idx = [int(i) % x.shape[dim] for i in index.value.reshape(-1).tolist()]
    n, size = len(idx), x.shape[dim]
    out_shape = x.shape[:dim] + (n,) + x.shape[dim + 1:]
    if n > size and n % size == 0 and \
            idx == [i // (n // size) for i in range(n)]:
        r = n // size
        one = tr.reshape(x, x.shape[:dim + 1] + (1,) + x.shape[dim + 1:])
        wide = tr.expand(one, list(x.shape[:dim + 1] + (r,) +
                                   x.shape[dim + 1:]))
        return tr.reshape(wide, out_shape)
    runs = [[idx[0], idx[0] + 1]]
    for i in idx[1:]:
        if i == runs[-1][1]:
            runs[-1][1] += 1
        else:
            runs.append([i, i + 1])
    parts = [_slice(tr, node, x, dim, a, b) for a, b in runs]
    return parts[0] if len(parts) == 1 else tr.op(
        "concat", parts, out_shape, x.dtype, axis=dim)


@_aten("index")
def _index(tr, node, x, indices):
    """`x[:, [i, j]]`-style indexing by one constant index list."""
    picked = [(d, i) for d, i in enumerate(indices) if i is not None]
    if len(picked) != 1 or not isinstance(picked[0][1], _Value) or \
            picked[0][1].kind != "const" or picked[0][1].rank != 1:
        raise _Unsupported("indexing other than by one constant index list")
    return _index_select(tr, node, x, picked[0][0], picked[0][1])


@_aten("cat")
def _cat(tr, node, tensors, dim=0):
    dtype = _out_dtype(node)
    vals = [tr.own(t, dtype=dtype) for t in tensors]
    return tr.op("concat", vals, _out_shape(node), dtype,
                 axis=dim % vals[0].rank)


@_aten("embedding")
def _embedding(tr, node, table, ids, *rest):
    ids = tr.own(ids)
    if ids.kind == "const" and ids.rank == 1 and bool(
            (ids.value == torch.arange(ids.shape[0])).all()):
        # Positions 0..T-1: the table's first T rows.
        return _slice(tr, node, table, 0, 0, ids.shape[0])
    return tr.op("embedding", [table, ids], ids.shape + table.shape[1:],
                 table.dtype)


def _linear_parts(tr, node, a, b):
    dtype = _out_dtype(node)
    return tr.matmul(tr.own(a, dtype=dtype), tr.own(b, dtype=dtype))


@_aten("mm", "bmm", "matmul")
def _mm(tr, node, a, b):
    return _linear_parts(tr, node, a, b)


@_aten("addmm")
def _addmm(tr, node, bias, a, b, beta=1, alpha=1):
    if beta != 1 or alpha != 1:
        raise _Unsupported("addmm with beta or alpha other than 1")
    return tr.binary("add", _linear_parts(tr, node, a, b), bias,
                     _out_dtype(node))


@_aten("baddbmm")
def _baddbmm(tr, node, bias, a, b, beta=1, alpha=1):
    return _addmm(tr, node, bias, a, b, beta, alpha)


@_aten("scaled_dot_product_attention", "_scaled_dot_product_attention",
       "_scaled_dot_product_attention_math",
       "_scaled_dot_product_flash_attention",
       "_scaled_dot_product_flash_attention_for_cpu",
       "_scaled_dot_product_efficient_attention")
def _sdpa(tr, node, *args, **kwargs):
    """`F.scaled_dot_product_attention` and the kernels newer PyTorch
    records for it, bound by the op's own schema (their argument orders
    differ)."""
    names = [a.name for a in node.target._schema.arguments]
    bound = dict(zip(names, args), **kwargs)
    q, k, v = bound["query"], bound["key"], bound["value"]
    mask = bound.get("attn_mask", bound.get("attn_bias"))
    if bound.get("dropout_p", 0.0):
        raise _Unsupported("attention dropout (dropout_p > 0)")
    masked = additive = None
    if isinstance(mask, _Value):
        if mask.kind != "const":
            raise _Unsupported("an attention mask computed from data")
        if bound.get("is_causal"):
            raise _Unsupported("both attn_mask and is_causal")
        if mask.value.dtype == torch.bool:
            masked = ~mask.value    # True: takes part
        else:
            additive = mask.value
            if bool(((additive == 0) | (additive <= _MASK_VALUE)).all()):
                masked = additive <= _MASK_VALUE
    elif bound.get("is_causal"):
        # PyTorch's is_causal is aligned at the top-left corner.
        masked = torch.ones(q.shape[-2], k.shape[-2],
                            dtype=torch.bool).triu(1)
    out = tr.fused_attention(q, k, v, bound.get("scale"), masked, additive)
    if out is None:
        raise _Unsupported("scaled_dot_product_attention on operands that "
                           "are not [B, H, S, D] with a constant mask")
    outputs = len(node.target._schema.returns)
    return out if outputs == 1 else (out,) + (None,) * (outputs - 1)


@_aten("linear")
def _linear(tr, node, x, w, bias=None):
    y = tr.matmul(x, tr.transpose(w, [1, 0]))
    return y if bias is None else tr.binary("add", y, bias, _out_dtype(node))


def _binary(mnemonic):
    def fn(tr, node, a, b, alpha=1):
        if alpha != 1:
            b = tr.binary("mul", b, alpha, _out_dtype(node))
        return tr.binary(mnemonic, a, b, _out_dtype(node))
    return fn


for _name, _mn in (("add", "add"), ("sub", "sub"), ("mul", "mul"),
                   ("div", "div")):
    _ATEN[_name] = _binary(_mn)


@_aten("rsub")
def _rsub(tr, node, a, b, alpha=1):
    return _binary("sub")(tr, node, b, a, alpha)


@_aten("neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu",
       "silu")
def _unary(tr, node, x):
    name = node.target._schema.name.split("::")[1]
    return tr.unary(name, x)


@_aten("gelu")
def _gelu(tr, node, x, approximate="none"):
    return tr.unary("gelu", x, approximate=approximate)


@_aten("pow")
def _pow(tr, node, x, exponent):
    if not isinstance(exponent, (int, float)):
        raise _Unsupported("pow with a tensor exponent")
    if exponent == 2:
        return tr.binary("mul", x, x, x.dtype)
    if exponent == 1:
        return x
    if exponent == 0.5:
        return tr.unary("sqrt", x)
    if exponent == -0.5:
        return tr.unary("rsqrt", x)
    if exponent == -1:
        return tr.binary("div", 1.0, x, x.dtype)
    raise _Unsupported(f"pow with exponent {exponent}")


@_aten("_softmax", "softmax")
def _softmax(tr, node, x, dim, *rest):
    return tr.unary("softmax", x, axis=dim % x.rank)


@_aten("_log_softmax", "log_softmax")
def _log_softmax(tr, node, x, dim, *rest):
    return tr.unary("log_softmax", x, axis=dim % x.rank)


@_aten("native_layer_norm")
def _layer_norm(tr, node, x, normalized_shape, weight, bias, eps):
    if len(normalized_shape) != 1:
        raise _Unsupported("layer_norm over more than the last dim")
    if weight is not None and bias is None:
        # Normalize, then scale (Loom's layer_norm takes gamma and beta
        # together).
        y = tr.op("layer_norm", [x, None, None], x.shape, x.dtype, eps=eps)
        return tr.binary("mul", y, weight, x.dtype), None, None
    if weight is None and bias is not None:
        raise _Unsupported("layer_norm with a bias and no weight")
    args = [x, weight, bias] if weight is not None else [x, None, None]
    return tr.op("layer_norm", args, x.shape, x.dtype, eps=eps), None, None


@_aten("mean", "sum", "amax")
def _reduce(tr, node, x, dims=None, keepdim=False, *rest, **kw):
    name = node.target._schema.name.split("::")[1]
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):
        dims = list(range(x.rank))
    if isinstance(dims, int):
        dims = [dims]
    mn = {"mean": "reduce_mean", "sum": "reduce_sum",
          "amax": "reduce_max"}[name]
    return tr.op(mn, [x], _out_shape(node), x.dtype,
                 axes=sorted(d % x.rank for d in dims), keepdims=keepdim)


@_aten("masked_fill")
def _masked_fill(tr, node, x, mask, value):
    if not isinstance(mask, _Value) or mask.kind != "const":
        raise _Unsupported("masked_fill with a mask computed from data "
                           "(only constant masks, such as a causal buffer)")
    value = float(value.reshape(())) if isinstance(value, torch.Tensor) \
        else float(value)
    return tr.op("masked_fill", [x], x.shape, x.dtype, mask=mask.value,
                 value=value)


@_aten("dropout", "native_dropout")
def _dropout(tr, node, x, p, train=None):
    name = node.target._schema.name
    if p == 0 or train is False:
        return (x, None) if name == "aten::native_dropout" else x
    y = tr.unary("dropout", x, rate=float(p), seed=0)
    return (y, None) if name == "aten::native_dropout" else y


# Dropout with autograd on is recorded as its decomposition:
# `noise = empty_like(x).bernoulli_(1 - p).div_(1 - p); x * noise`. The
# noise is a marker value that only that product may consume.
@_aten("empty_like")
def _empty_like(tr, node, x, *rest, **kw):
    return tr.op("noise", [], x.shape, x.dtype, keep=None, scaled=False)


@_aten("bernoulli_")
def _bernoulli_(tr, node, noise, p=0.5, **kw):
    if noise.op != "noise" or not isinstance(p, float):
        raise _Unsupported("bernoulli_ other than dropout's mask")
    noise.attrs["keep"] = p
    return noise


@_aten("div_")
def _div_(tr, node, noise, c):
    if noise.op != "noise" or noise.attrs["keep"] is None or \
            not math.isclose(float(c), noise.attrs["keep"]):
        raise _Unsupported("in-place division of an activation")
    noise.attrs["scaled"] = True
    return noise


@_aten("_to_copy")
def _to_copy(tr, node, x, dtype=None, **kw):
    return tr.cast(x, _out_dtype(node))


@_aten("nll_loss_forward")
def _nll_loss(tr, node, logp, target, weight, reduction, ignore_index):
    if weight is not None or reduction != 1:
        raise _Unsupported("nll_loss with class weights or a reduction "
                           "other than mean")
    if logp.op != "log_softmax" or logp.attrs["axis"] != logp.rank - 1:
        raise _Unsupported("nll_loss on anything but log_softmax of the "
                           "logits over their last dim (cross_entropy)")
    logits = logp.args[0]
    target = tr.own(target)
    # Flattened [N, V] logits and [N] labels: the unflattened ones.
    if logits.op == "reshape" and target.op == "reshape" and \
            logits.args[0].shape[:-1] == target.args[0].shape and \
            logits.args[0].shape[-1] == logits.shape[-1]:
        logits, target = logits.args[0], target.args[0]
    loss = tr.op("cross_entropy", [logits, target], (), logits.dtype,
                 ignore_index=int(ignore_index))
    return loss, None


def _where_of(node) -> str:
    """`file:line in function: code` of the user frame that made `node`."""
    trace = node.meta.get("stack_trace") or getattr(node, "stack_trace",
                                                    None)
    if not trace:
        return "(no source location)"
    lines = trace.rstrip().split("\n")
    # The trace is innermost first; take the first frame outside torch.
    frames = [i for i, l in enumerate(lines) if l.strip().startswith("File ")]
    for i in frames:
        if f'"{_TORCH_DIR}' not in lines[i] and \
                f'"{_LOOM_DIR}' not in lines[i]:
            head = lines[i].strip()
            code = lines[i + 1].strip() if i + 1 < len(lines) and \
                i + 1 not in frames else ""
            return f"{head}: {code}" if code else head
    return lines[frames[0]].strip() if frames else "(no source location)"


#===----------------------------------------------------------------------===#
# from_torch
#===----------------------------------------------------------------------===#


def _user_frame(tb) -> str:
    """` at File "...", line N, in f: code` of the innermost frame of a
    traceback outside PyTorch and Loom, or ""."""
    found = ""
    for frame in traceback.extract_tb(tb):
        if not frame.filename.startswith((_TORCH_DIR, _LOOM_DIR)):
            found = (f' at File "{frame.filename}", line {frame.lineno}, in '
                     f"{frame.name}: {frame.line}")
    return found


def _aliases(module) -> dict:
    """Every other name of a parameter or buffer that `named_parameters()` /
    `named_buffers()` list under one name: alias -> that name."""
    canonical = {id(t): n for n, t in module.named_parameters()}
    canonical.update({id(t): n for n, t in module.named_buffers()})
    aliases = {}
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for attr, t in list(sub._parameters.items()) + list(
                sub._buffers.items()):
            full = f"{prefix}.{attr}" if prefix else attr
            if t is not None and canonical.get(id(t), full) != full:
                aliases[full] = canonical[id(t)]
    return aliases


def _pick_loss(out, loss):
    if callable(loss):
        return loss(out)
    if loss is None:
        return out
    try:
        return out[loss]
    except (KeyError, IndexError, TypeError) as e:
        raise LoomError(f"from_torch: loss={loss!r} does not select from the "
                        f"forward's output ({type(out).__name__}): {e}")


def _call_for_loss(module, bound, input_names, tensors, loss, call_module):
    """The forward called with the example's arguments, its tensor
    arguments `input_names` replaced by `tensors`, and the loss picked from
    its output (checked to be a rank-0 floating-point tensor)."""
    call = dict(bound.arguments)
    for n, t in zip(input_names, tensors):
        call[n] = t
    args, kwargs = [], {}
    for name, p in bound.signature.parameters.items():
        if name not in call:
            continue
        if p.kind == p.VAR_POSITIONAL:
            args.extend(call[name])
        elif p.kind == p.VAR_KEYWORD:
            kwargs.update(call[name])
        elif p.kind == p.KEYWORD_ONLY:
            kwargs[name] = call[name]
        else:
            args.append(call[name])
    out = call_module(tuple(args), kwargs)
    picked = _pick_loss(out, loss)
    if not isinstance(picked, torch.Tensor):
        raise LoomError(
            f"from_torch: the loss is a {type(picked).__name__}, not a "
            "tensor" + ("; pick it from the forward's output with loss= "
                        "(an index, a key or a callable)"
                        if loss is None else ""))
    if picked.dim() != 0 or not picked.is_floating_point():
        raise LoomError(f"from_torch: the loss must be a rank-0 "
                        f"floating-point tensor; got shape "
                        f"{list(picked.shape)} {picked.dtype}")
    return picked


_DATA_DEPENDENT = (
    "data-dependent control flow: the forward reads a value computed from "
    "its inputs or parameters (`if x.sum() > 0:`, `.item()`, `bool(t)`), "
    "which a trace cannot follow (it would be specialized to the example's "
    "value); express it with tensor ops such as torch.where, or move it "
    "out of the forward")


def _tracing_failed(module, e):
    what = "".join(traceback.format_exception_only(type(e), e)).strip()
    if "get value out of a tracing tensor" in what or \
            "data-dependent" in what or "GuardOnDataDependent" in what:
        what = _DATA_DEPENDENT
    return LoomError(f"from_torch: tracing {type(module).__name__} on the "
                     f"example inputs failed: {what}"
                     f"{_user_frame(e.__traceback__)}")


def _has_torch_export() -> bool:
    """Whether this PyTorch has the torch.export that `_export` uses:
    `export(..., strict=False)` and `default_decompositions()` (PyTorch
    2.6 on; tested with 2.15). Older ones trace with make_fx."""
    export = getattr(torch, "export", None)
    return hasattr(export, "export") and \
        hasattr(export, "default_decompositions")


def _export(module, flat, names, kinds, bound, loss):
    """torch.export of the module's loss (PyTorch >= 2): the ATen graph of
    a wrapper whose inputs are the forward's tensor arguments, decomposed
    to core ATen (`run_decompositions`), with the placeholders re-aligned to
    `flat` (parameters and buffers lifted by the export under their state
    names). Returns (graph module, names, kinds, flat) for `_translate`."""
    n_state = sum(1 for k in kinds if k != "input")
    input_names = names[n_state:]

    class LossOf(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = module

        def forward(self, *tensors):
            return _call_for_loss(
                module, bound, input_names, tensors, loss,
                lambda args, kwargs: self.model(*args, **kwargs))

    try:
        exported = torch.export.export(LossOf(), tuple(flat[n_state:]),
                                       strict=False)
        table = torch.export.default_decompositions()
        for op in _kept_ops():
            table.pop(op, None)
        exported = exported.run_decompositions(table)
    except LoomError:
        raise
    except Exception as e:  # noqa: BLE001 (the user's model raised)
        raise _tracing_failed(module, e) from e
    from torch.export.graph_signature import InputKind
    for node in exported.graph_module.graph.nodes:
        # torch.export records the user's frames outermost first; the
        # messages name the innermost (make_fx's order).
        trace = node.meta.get("stack_trace")
        if trace:
            node.meta["stack_trace"] = _innermost_first(trace)
    state = {**exported.state_dict, **exported.constants}
    # A tied parameter may be lifted under each of its names: all are the
    # `named_parameters()` one (`_translate` gives them one value).
    aliases = _aliases(module)
    out_names, out_kinds, out_flat = [], [], []
    users = iter(zip(input_names, flat[n_state:]))
    for spec in exported.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            name, tensor = next(users)
            out_names.append(name), out_kinds.append("input")
            out_flat.append(tensor)
            continue
        target = spec.target
        if spec.kind not in (InputKind.PARAMETER, InputKind.BUFFER,
                             InputKind.CONSTANT_TENSOR) or \
                not isinstance(state.get(target), torch.Tensor):
            raise LoomError(
                f"from_torch: torch.export lifted an input Loom does not "
                f"take ({spec.kind.name} {target!r}): a script object or an "
                f"effect token; only parameters, buffers, constant tensors "
                f"and the forward's tensor arguments are supported")
        tensor = state[target]
        name = target[len("model."):] if target.startswith("model.") \
            else target
        name = aliases.get(name, name)
        kind = "param" if spec.kind == InputKind.PARAMETER else "buffer"
        out_names.append(name), out_kinds.append(kind)
        out_flat.append(tensor)
    return exported.graph_module, out_names, out_kinds, out_flat


def _innermost_first(trace: str) -> str:
    """A stack trace's frames (a `File ...` line and its code) reversed."""
    frames = []
    for line in trace.rstrip().split("\n"):
        if line.strip().startswith("File ") or not frames:
            frames.append([line])
        else:
            frames[-1].append(line)
    return "\n".join(line for frame in reversed(frames) for line in frame)


def _kept_ops() -> list:
    """The ATen overloads Loom maps, which `run_decompositions` must leave
    whole (core ATen would spell `nll_loss_forward` as `gather` + `where`,
    which Loom has no op for)."""
    kept = []
    for name in _ATEN:
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            continue
        for overload in packet.overloads():
            kept.append(getattr(packet, overload))
    return kept


def _trace(module, flat, names, kinds, bound, loss):
    """make_fx of the module's loss over `flat` (parameters, buffers, data
    inputs), with stack traces recorded."""
    # torch.func's in PyTorch >= 2.0 (stateless's is deprecated there).
    functional_call = getattr(getattr(torch, "func", None),
                              "functional_call", None)
    if functional_call is None:
        from torch.nn.utils.stateless import functional_call
    n_state = sum(1 for k in kinds if k != "input")
    aliases = _aliases(module)

    def fn(*tensors):
        state = {n: t for n, t, k in zip(names, tensors, kinds)
                 if k != "input"}
        # A tied parameter under each of its names (`lm_head.weight` is
        # `transformer.wte.weight`), so every use is the traced input.
        for alias, name in aliases.items():
            if name in state:
                state[alias] = state[name]
        return _call_for_loss(
            module, bound, names[n_state:], tensors[n_state:], loss,
            lambda args, kwargs: functional_call(module, state, args,
                                                 kwargs))

    tracer = proxy_tensor.PythonKeyTracer
    saved = tracer.record_stack_traces
    tracer.record_stack_traces = True
    try:
        # With autograd on, as in training: modules take their training
        # paths (nn.TransformerEncoderLayer's fused inference kernel is
        # taken only without grad). Fake tensors first (no compute); an op
        # whose result shape depends on data (`repeat_interleave` builds
        # its index from a count) needs real ones.
        try:
            return proxy_tensor.make_fx(fn, tracing_mode="fake")(*flat)
        except LoomError:
            raise
        except Exception:  # noqa: BLE001 (retried on real tensors)
            return proxy_tensor.make_fx(fn, tracing_mode="real")(*flat)
    except LoomError:
        raise
    except Exception as e:  # noqa: BLE001 (the user's model raised)
        raise _tracing_failed(module, e) from e
    finally:
        tracer.record_stack_traces = saved


def from_torch(module, example_args=(), example_kwargs=None,
               loss=None) -> Graph:
    """Traces `module` on its example inputs and returns its loss as a
    `loom.Graph` (docs/Frontends.md).

    `example_args` / `example_kwargs`: the forward's arguments (a single
    tensor may be given without a tuple). Tensor arguments become the
    graph's data inputs, named after the forward's parameters; anything else
    is fixed at its example value. `loss` picks the loss from the forward's
    output: None (the output is the loss), a tuple index, a dict key, or a
    callable applied to the output inside the trace. Parameters are named by
    `named_parameters()` (a tied parameter once), buffers become constants.
    Shapes are the examples'. Raises `LoomError` listing every ATen op that
    has no Loom mapping, with its source line.
    """
    if isinstance(example_args, torch.Tensor):
        example_args = (example_args,)
    example_kwargs = dict(example_kwargs or {})
    try:
        bound = inspect.signature(module.forward).bind(*example_args,
                                                       **example_kwargs)
    except TypeError as e:
        raise LoomError(f"from_torch: the example inputs do not fit "
                        f"{type(module).__name__}.forward: {e}")
    names, kinds, flat = [], [], []
    for name, p in module.named_parameters():
        names.append(name), kinds.append("param"), flat.append(p)
    for name, b in module.named_buffers():
        names.append(name), kinds.append("buffer"), flat.append(b)
    for name, value in bound.arguments.items():
        if isinstance(value, torch.Tensor):
            # A copy: the trace knows tensors by identity, and the same
            # tensor may be given for two arguments.
            names.append(name), kinds.append("input")
            flat.append(value.detach().clone())
    if _has_torch_export():
        gm, names, kinds, flat = _export(module, flat, names, kinds, bound,
                                         loss)
    else:
        gm = _trace(module, flat, names, kinds, bound, loss)
    return _translate(gm, names, kinds, flat, _torch_inits(module))


def _torch_inits(module) -> dict:
    """Each parameter's initializer as PyTorch's module defines it by
    default (`reset_parameters`), as graph JSON: Linear (and the out
    projection of MultiheadAttention) kaiming-uniform, i.e. U(+-1/sqrt(
    fan_in)) for the weight and the bias; MultiheadAttention's in_proj
    xavier-uniform with zero biases; Embedding N(0, 1); norms ones and
    zeros. Other parameters: ones or zeros when they hold only that, else
    N(0, 0.02). A model's own init (nanoGPT's `_init_weights`) is not seen;
    its weights are what `loom.run` and checkpoints are given."""
    nn = torch.nn
    inits = {}
    owners = dict(module.named_modules())
    for name, p in module.named_parameters():
        prefix, _, attr = name.rpartition(".")
        owner = owners.get(prefix)
        init = None
        if isinstance(owner, nn.MultiheadAttention):
            if attr == "in_proj_weight":
                bound = math.sqrt(6.0 / (p.shape[0] + p.shape[1]))
                init = {"kind": "uniform", "low": -bound, "high": bound}
            elif attr.endswith("bias"):
                init = {"kind": "zeros"}
        elif isinstance(owner, nn.Linear):
            bound = 1.0 / math.sqrt(owner.in_features) \
                if owner.in_features else 0.0
            init = {"kind": "uniform", "low": -bound, "high": bound}
            if attr == "bias" and isinstance(owners.get(
                    prefix.rpartition(".")[0]), nn.MultiheadAttention):
                # MultiheadAttention zeroes its out projection's bias.
                init = {"kind": "zeros"}
        elif isinstance(owner, nn.Embedding):
            init = {"kind": "normal", "std": 1.0}
        elif isinstance(owner, (nn.LayerNorm, nn.GroupNorm,
                                nn.BatchNorm1d)):
            init = {"kind": "ones" if attr == "weight" else "zeros"}
        if init is None or init.get("low") == init.get("high") == 0.0:
            data = p.detach()
            if data.numel() and bool((data == 1).all()):
                init = {"kind": "ones"}
            elif data.numel() and bool((data == 0).all()):
                init = {"kind": "zeros"}
            else:
                init = {"kind": "normal", "std": 0.02}
        inits[name] = init
    return inits


def _translate(gm, names, kinds, flat, inits) -> Graph:
    tr = _Translator()
    env: dict[Any, Any] = {}
    unsupported: list[str] = []
    failed: set = set()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(flat):
        raise LoomError("from_torch: the trace's inputs do not match the "
                        "module's parameters, buffers and tensor arguments")
    by_name = {}
    for node, name, kind, t in zip(placeholders, names, kinds, flat):
        if kind == "buffer":
            env[node] = tr.const(t.detach().clone())
        elif kind == "param" and name in by_name:
            env[node] = by_name[name]  # a tied parameter's other name
        else:
            env[node] = by_name[name] = _Value(
                kind, t.shape, _dtype(t.dtype), name=name,
                attrs={"init": inits.get(name)})

    def value(a):
        if isinstance(a, torch.fx.Node):
            return env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(value(x) for x in a)
        return a

    def concrete(a):
        if isinstance(a, _Value):
            return a.value
        if isinstance(a, (list, tuple)):
            return type(a)(concrete(x) for x in a)
        return a

    def is_data(a):
        if isinstance(a, _Value):
            return a.kind != "const"
        if isinstance(a, (list, tuple)):
            return any(is_data(x) for x in a)
        return False

    result = None
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            result = value(node.args[0])
            if isinstance(result, (list, tuple)) and len(result) == 1:
                result = result[0]  # torch.export's outputs are a tuple
            break
        if node.op == "get_attr":
            env[node] = tr.const(getattr(gm, node.target))
            continue
        tr.where = _where_of(node)
        if any(n in failed for n in node.all_input_nodes):
            # Downstream of a failure: reported only if it has no mapping
            # either, so that the list is complete.
            failed.add(node)
            env[node] = None
            if hasattr(node.target, "_schema") and \
                    node.target._schema.name.split("::")[1] not in _ATEN:
                unsupported.append(f"{_overload(node)} at {tr.where}")
            continue
        args = value(node.args)
        kwargs = {k: value(v) for k, v in node.kwargs.items()}
        if node.target is operator.getitem:
            src = args[0]
            env[node] = None if src is None else src[args[1]]
            continue
        if node.op != "call_function" or \
                not hasattr(node.target, "_schema"):
            unsupported.append(f"{node.op} {node.target} at {tr.where}")
            failed.add(node)
            env[node] = None
            continue
        aten = node.target._schema.name.split("::")[1]
        overload = _overload(node)
        if not is_data(args) and not is_data(list(kwargs.values())):
            # Constants only (buffers, arange, literals): fold by running
            # the ATen op itself.
            try:
                out = node.target(*concrete(args), **concrete(kwargs))
            except Exception as e:  # noqa: BLE001
                unsupported.append(f"{overload} (folding a constant: {e}) "
                                   f"at {tr.where}")
                failed.add(node)
                env[node] = None
                continue
            env[node] = _wrap_const(tr, out)
            continue
        if aten == "_local_scalar_dense":
            unsupported.append(
                f"{overload} at {tr.where}: the forward reads a value of a "
                "tensor computed from its inputs (`.item()`, `bool()`, "
                "data-dependent control flow); tracing specialized it to "
                "the example's value")
            failed.add(node)
            env[node] = None
            continue
        fn = _ATEN.get(aten)
        if fn is None:
            unsupported.append(f"{overload} at {tr.where}")
            failed.add(node)
            env[node] = None
            continue
        if any(env[n] is None for n in node.all_input_nodes):
            unsupported.append(f"{overload} at {tr.where}: uses an output "
                               "that Loom does not compute (a layer norm's "
                               "statistics, a dropout mask)")
            failed.add(node)
            env[node] = None
            continue
        try:
            env[node] = fn(tr, node, *args, **kwargs)
        except _Unsupported as e:
            unsupported.append(f"{overload} ({e}) at {tr.where}")
            failed.add(node)
            env[node] = None
        except (LoomError, TypeError, ValueError, AttributeError,
                IndexError, KeyError, RuntimeError) as e:
            # A form of the op the mapping does not handle: reported with
            # the rest rather than raised from inside the translation.
            unsupported.append(f"{overload} (unexpected form: "
                               f"{type(e).__name__}: {e}) at {tr.where}")
            failed.add(node)
            env[node] = None
    if unsupported:
        lines = "\n".join(f"  {u}" for u in unsupported)
        raise LoomError(f"from_torch: {len(unsupported)} PyTorch op(s) have "
                        f"no Loom mapping (docs/Frontends.md, \"Adding an "
                        f"op\"):\n{lines}")
    if not isinstance(result, _Value) or result.kind == "const":
        raise LoomError("from_torch: the loss does not depend on the inputs "
                        "or parameters")
    return _emit(result)


def _overload(node) -> str:
    name = node.target._schema.name.replace("::", ".")
    return f"{name}.{node.target._overloadname}"


def _wrap_const(tr, out):
    if isinstance(out, torch.Tensor):
        return tr.const(out)
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap_const(tr, o) for o in out)
    return out


#===----------------------------------------------------------------------===#
# Emission
#===----------------------------------------------------------------------===#


def _emit(loss: _Value) -> Graph:
    live: dict[int, _Value] = {}
    stack = [loss]
    while stack:
        v = stack.pop()
        if v is None or v.id in live:
            continue
        live[v.id] = v
        stack.extend(a for a in v.args if a is not None)
    # Lower what has no Loom op of its own.
    roles = _roles(live.values())
    g = Graph()
    out: dict[int, Any] = {}
    # Parameters first (their `named_parameters()` order), then data
    # inputs, constants, the ops that work on data inputs alone (labels
    # shifted from the ids: with the first pipeline stage, where their
    # inputs are), then the rest in program order.
    prelude: set = set()
    for v in sorted(live.values(), key=lambda v: v.id):
        if v.kind == "op" and all(a is None or a.kind in ("input", "const")
                                  or a.id in prelude for a in v.args):
            prelude.add(v.id)
    order = sorted(live.values(), key=lambda v: (
        {"param": 0, "input": 1, "const": 2}.get(
            v.kind, 3 if v.id in prelude else 4), v.id))
    for v in order:
        if v.kind == "param":
            out[v.id] = g.param(v.name, v.shape, dtype=v.dtype,
                                init=v.attrs["init"], name=v.name)
        elif v.kind == "input":
            out[v.id] = g.input(v.name, v.shape, dtype=v.dtype,
                                role=roles[v.id])
        elif v.kind == "const":
            out[v.id] = _emit_const(g, v)
        else:
            out[v.id] = _emit_op(g, v, [None if a is None else out[a.id]
                                        for a in v.args])
    g.loss(out[loss.id])
    return g


def _roles(values) -> dict:
    """The graph-JSON role of each data input, from its use: ids of an
    embedding are `input_ids` (`positions` when the argument's name says
    so), labels of the loss `labels`, floating-point data `mask`; two
    inputs may not share a role."""
    roles = {}

    def source(v):
        while v.op in ("reshape", "slice", "transpose", "split",
                       "split_result"):
            v = v.args[0]
        return v
    inputs = [v for v in values if v.kind == "input"]
    for v in sorted(values, key=lambda v: v.id):
        if v.op == "embedding":
            s = source(v.args[1])
            if s.kind == "input":
                roles.setdefault(s.id, "positions" if "pos" in s.name.lower()
                                 else "input_ids")
        elif v.op == "cross_entropy":
            s = source(v.args[1])
            if s.kind == "input":
                roles.setdefault(s.id, "labels")
    for v in inputs:
        if v.id not in roles and v.dtype not in ("i64", "i32"):
            roles[v.id] = "mask"
        if v.id not in roles:
            raise LoomError(f"from_torch: cannot tell what the input "
                            f"`{v.name}` is: Loom's integer data inputs are "
                            f"token ids (feeding an embedding), positions "
                            f"and labels (feeding the loss)")
    by_role: dict = {}
    for v in sorted(inputs, key=lambda v: v.id):
        if roles[v.id] in by_role:
            raise LoomError(f"from_torch: the inputs `{by_role[roles[v.id]]}`"
                            f" and `{v.name}` would both have the role "
                            f"`{roles[v.id]}`; Loom knows data inputs by role")
        by_role[roles[v.id]] = v.name
    return roles


def _emit_const(g: Graph, v: _Value):
    t = v.value
    flat = t.reshape(-1)
    if flat.numel() and bool((flat == flat[0]).all()):
        return g.constant(flat[0].item(), v.shape, v.dtype)
    return g.constant(flat.tolist(), v.shape, v.dtype)


def _emit_op(g: Graph, v: _Value, args):
    a = v.attrs
    if v.op == "matmul":
        return g.matmul(args[0], args[1], a["transpose_lhs"],
                        a["transpose_rhs"])
    if v.op in ("add", "sub", "mul", "div"):
        return getattr(g, v.op)(args[0], args[1])
    if v.op in ("neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid",
                "relu", "silu"):
        return getattr(g, v.op)(args[0])
    if v.op == "gelu":
        return g.gelu(args[0], a["approximate"])
    if v.op == "reshape":
        return g.reshape(args[0], v.shape)
    if v.op == "transpose":
        return g.transpose(args[0], a["permutation"])
    if v.op == "slice":
        return g.slice(args[0], a["starts"], a["limits"], a["strides"])
    if v.op == "split":
        return g.split(args[0], a["sizes"], a["axis"])
    if v.op == "split_result":
        return args[0][a["index"]]
    if v.op == "concat":
        return g.concat(args, a["axis"])
    if v.op == "cast":
        return g.cast(args[0], v.dtype)
    if v.op in ("softmax", "log_softmax"):
        return getattr(g, v.op)(args[0], a["axis"])
    if v.op == "layer_norm":
        return g.layer_norm(args[0], args[1], args[2], a["eps"])
    if v.op == "rope":
        return g.rope(args[0], None, theta=a["theta"])
    if v.op == "rms_norm":
        return g.rms_norm(args[0], args[1] if len(args) > 1 else None,
                          a["eps"])
    if v.op == "embedding":
        return g.embedding(args[0], args[1])
    if v.op == "cross_entropy":
        return g.cross_entropy(args[0], args[1], a["ignore_index"])
    if v.op == "attention":
        return g.attention(args[0], args[1], args[2],
                           args[3] if len(args) > 3 else None,
                           causal=a["causal"], scale=a["scale"])
    if v.op == "dropout":
        return g.dropout(args[0], a["rate"], a["seed"])
    if v.op in ("reduce_sum", "reduce_mean", "reduce_max"):
        return getattr(g, v.op)(args[0], a["axes"], a["keepdims"])
    if v.op == "masked_fill":
        # No select op: masked_fill(x, m, -inf) is x + (-inf where m);
        # a finite fill is x * keep + fill.
        mask, fill = a["mask"], a["value"]
        dtype = _torch_dtype(v.dtype)
        if math.isinf(fill) and fill < 0:
            add = torch.zeros(mask.shape, dtype=dtype).masked_fill(mask, fill)
            return g.add(args[0], _emit_const(g, _Value(
                "const", add.shape, v.dtype, value=add)))
        keep = (~mask).to(dtype)
        fills = torch.zeros(mask.shape, dtype=dtype).masked_fill(mask, fill)
        kept = g.mul(args[0], _emit_const(g, _Value(
            "const", keep.shape, v.dtype, value=keep)))
        return g.add(kept, _emit_const(g, _Value(
            "const", fills.shape, v.dtype, value=fills)))
    raise LoomError(f"from_torch: internal: no emission for `{v.op}`")
