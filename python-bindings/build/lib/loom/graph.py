#===- graph.py - A builder for Loom's graph JSON -------------------------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""A small builder for Loom's graph JSON (docs/GraphFormat.md).

A `Graph` records declared tensors, parameters, data inputs and `loom` ops in
program order, exactly the document's structure, and `Graph.to_json()`
returns that document. Each op method infers its result's shape the way the
op's verifier does, so a mistake (contracting a 16 with an 8) raises
`LoomError` at the line that made it, not later inside the compiler; the
compiler still verifies everything on import.

    g = loom.Graph()
    ids = g.input("input_ids", [2, 4])
    labels = g.input("labels", [2, 4])
    wte = g.param("wte", [16, 8], name="transformer.wte.weight")
    h = g.embedding(wte, ids)
    logits = g.matmul(h, wte, transpose_rhs=True)
    g.loss(g.cross_entropy(logits, labels))
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Sequence

from loom.errors import LoomError

FLOAT_DTYPES = ("f64", "f32", "bf16", "f16")
INT_DTYPES = ("i64", "i32")
DTYPES = FLOAT_DTYPES + INT_DTYPES + ("i1",)
ROLES = ("input_ids", "labels", "positions", "decoder_input_ids", "mask")


class Tensor:
    """A tensor of a `Graph`: its graph-local name, shape and dtype.

    Arithmetic operators build ops on the owning graph (`a + b` is
    `g.add(a, b)`, `a @ b` is `g.matmul(a, b)`); Python numbers become
    rank-0 constants of the tensor's dtype.
    """

    def __init__(self, graph: "Graph", name: str, shape: Sequence[int],
                 dtype: str):
        self.graph = graph
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Tensor({self.name!r}, shape={list(self.shape)}, {self.dtype})"

    def __add__(self, other):
        return self.graph.add(self, other)

    def __radd__(self, other):
        return self.graph.add(other, self)

    def __sub__(self, other):
        return self.graph.sub(self, other)

    def __rsub__(self, other):
        return self.graph.sub(other, self)

    def __mul__(self, other):
        return self.graph.mul(self, other)

    def __rmul__(self, other):
        return self.graph.mul(other, self)

    def __truediv__(self, other):
        return self.graph.div(self, other)

    def __rtruediv__(self, other):
        return self.graph.div(other, self)

    def __neg__(self):
        return self.graph.neg(self)

    def __matmul__(self, other):
        return self.graph.matmul(self, other)


def _broadcast(a: Sequence[int], b: Sequence[int], what: str) -> tuple:
    """numpy broadcasting of two shapes, or LoomError naming `what`."""
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x != y and x != 1 and y != 1:
            raise LoomError(f"{what}: shapes {list(a)} and {list(b)} do not "
                            "broadcast")
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def _axis(axis: int, rank: int, what: str) -> int:
    """`axis` normalized to [0, rank), negative counting from the end."""
    if not -rank <= axis < rank:
        raise LoomError(f"{what}: axis {axis} is out of range for rank {rank}")
    return axis % rank


class Graph:
    """A single-device forward graph that returns a loss (graph JSON).

    Tensors are named `t0`, `t1`, ... unless a `name=` is given; names are
    graph-local and unique. A parameter also has an ecosystem `name` (its
    PyTorch state-dict key), which checkpoints and the interpreter use.
    """

    def __init__(self):
        self._tensors: dict[str, Tensor] = {}
        self._order: list[str] = []
        self._parameters: list[dict] = []
        self._inputs: list[dict] = []
        self._ops: list[dict] = []
        self._output: str | None = None
        self._counter = 0

    # -- Declarations ------------------------------------------------------

    def _declare(self, name: str | None, shape, dtype: str) -> Tensor:
        if dtype not in DTYPES:
            raise LoomError(f"unknown dtype `{dtype}`; expected one of "
                            f"{', '.join(DTYPES)}")
        if any(int(d) < 0 for d in shape):
            raise LoomError(f"shape {list(shape)} has a negative size")
        if name is None:
            while f"t{self._counter}" in self._tensors:
                self._counter += 1
            name = f"t{self._counter}"
            self._counter += 1
        if not name:
            raise LoomError("a tensor name must not be empty")
        if name in self._tensors:
            raise LoomError(f"tensor `{name}` is already defined")
        tensor = Tensor(self, name, shape, dtype)
        self._tensors[name] = tensor
        self._order.append(name)
        return tensor

    def input(self, name: str, shape: Sequence[int], dtype: str = "i64",
              role: str | None = None) -> Tensor:
        """A data input; its role defaults to its name (`input_ids`,
        `labels`, `positions`, `decoder_input_ids`, `mask`)."""
        role = role or name
        if role not in ROLES:
            raise LoomError(f"input `{name}`: unknown role `{role}`; expected "
                            f"one of {', '.join(ROLES)}")
        if role != "mask" and dtype not in INT_DTYPES:
            raise LoomError(f"input `{name}`: role `{role}` needs an integer "
                            f"dtype (i64 or i32), got {dtype}")
        tensor = self._declare(name, shape, dtype)
        self._inputs.append({"tensor": tensor.name, "role": role})
        return tensor

    def param(self, tensor: str, shape: Sequence[int], dtype: str = "f32",
              init: Any = ("normal", 0.02), name: str | None = None,
              decay: bool | None = None) -> Tensor:
        """A trainable parameter.

        `tensor` is its graph-local name, `name` its ecosystem name (defaults
        to `tensor`). `init` is a graph-JSON initializer dict, "zeros",
        "ones", or a tuple ("normal", std) / ("uniform", low, high) /
        ("scaled_normal", std, factor). `decay` defaults to rank >= 2 (the
        optimizer grouping of docs/Models.md).
        """
        if dtype not in FLOAT_DTYPES:
            raise LoomError(f"parameter `{tensor}`: dtype must be floating "
                            f"point, got {dtype}")
        name = name or tensor
        if any(p["name"] == name for p in self._parameters):
            raise LoomError(f"parameter name `{name}` is already used")
        t = self._declare(tensor, shape, dtype)
        self._parameters.append({
            "tensor": t.name, "name": name, "init": _init_json(init),
            "decay": bool(len(t.shape) >= 2 if decay is None else decay)})
        return t

    def constant(self, value, shape: Sequence[int] = (), dtype: str = "f32",
                 name: str | None = None) -> Tensor:
        """An `arith.constant`: a splat `value`, or a flat row-major list."""
        shape = tuple(shape)
        if isinstance(value, (list, tuple)):
            values = [_scalar_json(v, dtype) for v in value]
            if len(values) != math.prod(shape):
                raise LoomError(f"constant of shape {list(shape)} needs "
                                f"{math.prod(shape)} values, got {len(values)}")
            json_value: Any = values
        else:
            json_value = _scalar_json(value, dtype)
        t = self._declare(name, shape, dtype)
        self._ops.append({"op": "constant", "results": [t.name],
                          "attributes": {"value": json_value}})
        return t

    def loss(self, tensor: Tensor) -> Tensor:
        """Marks the graph's output: a rank-0 floating-point loss."""
        tensor = self._own(tensor)
        if tensor.shape != () or tensor.dtype not in FLOAT_DTYPES:
            raise LoomError(f"the loss must be a rank-0 float tensor; "
                            f"`{tensor.name}` is {list(tensor.shape)} "
                            f"{tensor.dtype}")
        self._output = tensor.name
        return tensor

    # -- Plumbing ------------------------------------------------------------

    def _own(self, value, like: Tensor | None = None) -> Tensor:
        """`value` as a tensor of this graph (numbers become constants)."""
        if isinstance(value, Tensor):
            if value.graph is not self:
                raise LoomError(f"tensor `{value.name}` belongs to another "
                                "graph")
            return value
        if isinstance(value, (int, float)) and like is not None:
            return self.constant(float(value) if like.dtype in FLOAT_DTYPES
                                 else int(value), (), like.dtype)
        raise LoomError(f"expected a loom.Tensor, got {type(value).__name__}")

    def op(self, mnemonic: str, operands: Iterable, result_shapes,
           result_dtype: str, attributes: dict | None = None,
           names: Sequence[str | None] | None = None) -> list[Tensor]:
        """Appends any `loom` op with declared result types (the escape
        hatch for ops without a method); `None` in `operands` is an absent
        optional operand of `layer_norm`."""
        names = list(names or [None] * len(result_shapes))
        operand_names = [None if o is None else self._own(o).name
                         for o in operands]
        results = [self._declare(n, s, result_dtype)
                   for n, s in zip(names, result_shapes)]
        entry: dict = {"op": mnemonic, "operands": operand_names,
                       "results": [r.name for r in results]}
        attributes = {k: v for k, v in (attributes or {}).items()
                      if v is not None and v is not False}
        if attributes:
            entry["attributes"] = attributes
        self._ops.append(entry)
        return results

    def _unary(self, mnemonic, x, name=None, float_only=True, **attrs):
        x = self._own(x)
        if float_only and x.dtype not in FLOAT_DTYPES:
            raise LoomError(f"loom.{mnemonic}: `{x.name}` must be floating "
                            f"point, got {x.dtype}")
        return self.op(mnemonic, [x], [x.shape], x.dtype, attrs, [name])[0]

    def _binary(self, mnemonic, a, b, name=None):
        if not isinstance(a, Tensor):
            b = self._own(b)
            a = self._own(a, like=b)
        else:
            a = self._own(a)
            b = self._own(b, like=a)
        if a.dtype != b.dtype:
            raise LoomError(f"loom.{mnemonic}: dtypes differ: `{a.name}` is "
                            f"{a.dtype}, `{b.name}` is {b.dtype}")
        shape = _broadcast(a.shape, b.shape, f"loom.{mnemonic}")
        return self.op(mnemonic, [a, b], [shape], a.dtype, None, [name])[0]

    # -- Elementwise ---------------------------------------------------------

    def add(self, a, b, name=None) -> Tensor:
        return self._binary("add", a, b, name)

    def sub(self, a, b, name=None) -> Tensor:
        return self._binary("sub", a, b, name)

    def mul(self, a, b, name=None) -> Tensor:
        return self._binary("mul", a, b, name)

    def div(self, a, b, name=None) -> Tensor:
        return self._binary("div", a, b, name)

    def neg(self, x, name=None) -> Tensor:
        return self._unary("neg", x, name)

    def exp(self, x, name=None) -> Tensor:
        return self._unary("exp", x, name)

    def log(self, x, name=None) -> Tensor:
        return self._unary("log", x, name)

    def sqrt(self, x, name=None) -> Tensor:
        return self._unary("sqrt", x, name)

    def rsqrt(self, x, name=None) -> Tensor:
        return self._unary("rsqrt", x, name)

    def tanh(self, x, name=None) -> Tensor:
        return self._unary("tanh", x, name)

    def sigmoid(self, x, name=None) -> Tensor:
        return self._unary("sigmoid", x, name)

    def relu(self, x, name=None) -> Tensor:
        return self._unary("relu", x, name)

    def silu(self, x, name=None) -> Tensor:
        return self._unary("silu", x, name)

    def gelu(self, x, approximate: str = "none", name=None) -> Tensor:
        """GELU; `approximate` is "none" (erf) or "tanh", as in PyTorch."""
        if approximate not in ("none", "tanh"):
            raise LoomError(f"loom.gelu: approximate must be `none` or "
                            f"`tanh`, got `{approximate}`")
        return self._unary("gelu", x, name, approximate=(
            None if approximate == "none" else approximate))

    def scale(self, x, factor: float, name=None) -> Tensor:
        return self._unary("scale", x, name, factor=float(factor))

    def dropout(self, x, rate: float, seed: int = 0, name=None) -> Tensor:
        if not 0.0 <= rate < 1.0:
            raise LoomError(f"loom.dropout: rate must lie in [0, 1), got "
                            f"{rate}")
        return self._unary("dropout", x, name, rate=float(rate),
                           seed=int(seed))

    def cast(self, x, dtype: str, name=None) -> Tensor:
        x = self._own(x)
        if dtype not in DTYPES:
            raise LoomError(f"loom.cast: unknown dtype `{dtype}`")
        return self.op("cast", [x], [x.shape], dtype, None, [name])[0]

    # -- Linear algebra, normalization, attention ----------------------------

    def matmul(self, a, b, transpose_lhs: bool = False,
               transpose_rhs: bool = False, name=None) -> Tensor:
        """Batched `a @ b` (last two dims), batch dims broadcasting; a
        PyTorch Linear weight `[out, in]` is `matmul(x, w,
        transpose_rhs=True)`."""
        a, b = self._own(a), self._own(b)
        if a.rank < 2 or b.rank < 2:
            raise LoomError(f"loom.matmul: operands need rank >= 2, got "
                            f"{list(a.shape)} and {list(b.shape)}")
        if a.dtype != b.dtype:
            raise LoomError(f"loom.matmul: dtypes differ: {a.dtype} and "
                            f"{b.dtype}")
        m, k = (a.shape[-1], a.shape[-2]) if transpose_lhs else a.shape[-2:]
        k2, n = (b.shape[-1], b.shape[-2]) if transpose_rhs else b.shape[-2:]
        if k != k2:
            raise LoomError(f"loom.matmul: contracted dims differ: `{a.name}` "
                            f"{list(a.shape)} has K = {k}, `{b.name}` "
                            f"{list(b.shape)} has K = {k2}")
        batch = _broadcast(a.shape[:-2], b.shape[:-2], "loom.matmul batch")
        return self.op("matmul", [a, b], [batch + (m, n)], a.dtype,
                       {"transpose_lhs": transpose_lhs,
                        "transpose_rhs": transpose_rhs}, [name])[0]

    def linear(self, x, weight, bias=None, name=None) -> Tensor:
        """PyTorch's `F.linear`: `x @ weight^T (+ bias)`."""
        y = self.matmul(x, weight, transpose_rhs=True,
                        name=None if bias is not None else name)
        return y if bias is None else self.add(y, bias, name=name)

    def softmax(self, x, axis: int = -1, name=None) -> Tensor:
        x = self._own(x)
        return self._unary("softmax", x, name,
                           axis=_axis(axis, x.rank, "loom.softmax"))

    def log_softmax(self, x, axis: int = -1, name=None) -> Tensor:
        x = self._own(x)
        return self._unary("log_softmax", x, name,
                           axis=_axis(axis, x.rank, "loom.log_softmax"))

    def _check_norm_param(self, x: Tensor, p, what: str):
        if p is not None and self._own(p).shape != (x.shape[-1],):
            raise LoomError(f"{what}: `{p.name}` must have shape "
                            f"[{x.shape[-1]}], got {list(p.shape)}")

    def layer_norm(self, x, gamma=None, beta=None, eps: float = 1e-5,
                   name=None) -> Tensor:
        """LayerNorm over the last dim; `gamma` and `beta` come together."""
        x = self._own(x)
        if (gamma is None) != (beta is None):
            raise LoomError("loom.layer_norm: gamma and beta are given "
                            "together or not at all")
        self._check_norm_param(x, gamma, "loom.layer_norm")
        self._check_norm_param(x, beta, "loom.layer_norm")
        return self.op("layer_norm", [x, gamma, beta], [x.shape], x.dtype,
                       {"eps": None if eps == 1e-5 else float(eps)},
                       [name])[0]

    def rms_norm(self, x, gamma=None, eps: float = 1e-5, name=None) -> Tensor:
        x = self._own(x)
        self._check_norm_param(x, gamma, "loom.rms_norm")
        operands = [x] if gamma is None else [x, gamma]
        return self.op("rms_norm", operands, [x.shape], x.dtype,
                       {"eps": None if eps == 1e-5 else float(eps)},
                       [name])[0]

    def embedding(self, table, ids, name=None) -> Tensor:
        """Rows of `table` `[V, H]` gathered by integer `ids`."""
        table, ids = self._own(table), self._own(ids)
        if table.rank != 2 or ids.dtype not in INT_DTYPES:
            raise LoomError(f"loom.embedding: needs a [V, H] table and integer "
                            f"ids, got {list(table.shape)} {table.dtype} and "
                            f"{ids.dtype} ids")
        return self.op("embedding", [table, ids], [ids.shape + table.shape[1:]],
                       table.dtype, None, [name])[0]

    def attention(self, q, k, v, mask=None, causal: bool = False,
                  scale: float | None = None, name=None) -> Tensor:
        """Fused scaled-dot-product attention on `[B, H, S, D]` tensors."""
        q, k, v = self._own(q), self._own(k), self._own(v)
        if q.rank != 4 or k.rank != 4 or v.rank != 4:
            raise LoomError("loom.attention: query, key and value must be "
                            "[B, H, S, D]")
        operands = [q, k, v] + ([] if mask is None else [self._own(mask)])
        return self.op("attention", operands,
                       [q.shape[:3] + (v.shape[3],)], q.dtype,
                       {"causal": causal,
                        "scale": None if scale is None else float(scale)},
                       [name])[0]

    def rope(self, x, positions=None, theta: float = 10000.0,
             name=None) -> Tensor:
        x = self._own(x)
        operands = [x] + ([] if positions is None else [self._own(positions)])
        return self.op("rope", operands, [x.shape], x.dtype,
                       {"theta": None if theta == 10000.0 else float(theta)},
                       [name])[0]

    def cross_entropy(self, logits, labels, ignore_index: int = -100,
                      name=None) -> Tensor:
        """Mean cross-entropy of `logits` `[N..., V]` against `labels`."""
        logits, labels = self._own(logits), self._own(labels)
        if labels.shape != logits.shape[:-1]:
            raise LoomError(f"loom.cross_entropy: labels {list(labels.shape)} "
                            f"must be the logits' shape without the last dim, "
                            f"{list(logits.shape[:-1])}")
        return self.op("cross_entropy", [logits, labels], [()], logits.dtype,
                       {"ignore_index": None if ignore_index == -100
                        else int(ignore_index)}, [name])[0]

    # -- Shapes and reductions -----------------------------------------------

    def reshape(self, x, shape: Sequence[int], name=None) -> Tensor:
        """Reshape; one `-1` is inferred."""
        x = self._own(x)
        shape = [int(d) for d in shape]
        total = math.prod(x.shape)
        if shape.count(-1) == 1:
            known = math.prod(d for d in shape if d != -1)
            if known == 0 or total % known:
                raise LoomError(f"loom.reshape: cannot infer -1 in {shape} "
                                f"from {list(x.shape)}")
            shape[shape.index(-1)] = total // known
        if math.prod(shape) != total:
            raise LoomError(f"loom.reshape: {list(x.shape)} ({total} elements) "
                            f"cannot become {shape}")
        return self.op("reshape", [x], [tuple(shape)], x.dtype, None,
                       [name])[0]

    def transpose(self, x, permutation: Sequence[int], name=None) -> Tensor:
        x = self._own(x)
        perm = [int(p) for p in permutation]
        if sorted(perm) != list(range(x.rank)):
            raise LoomError(f"loom.transpose: {perm} is not a permutation of "
                            f"rank {x.rank}")
        return self.op("transpose", [x], [tuple(x.shape[p] for p in perm)],
                       x.dtype, {"permutation": perm}, [name])[0]

    def slice(self, x, starts, limits, strides=None, name=None) -> Tensor:
        x = self._own(x)
        strides = list(strides or [1] * x.rank)
        if not len(starts) == len(limits) == len(strides) == x.rank:
            raise LoomError(f"loom.slice: starts, limits and strides need "
                            f"{x.rank} entries")
        shape = []
        for d, (s, l, st) in enumerate(zip(starts, limits, strides)):
            if not (0 <= s <= l <= x.shape[d] and st >= 1):
                raise LoomError(f"loom.slice: dim {d} (size {x.shape[d]}): "
                                f"bad range [{s}, {l}) step {st}")
            shape.append((l - s + st - 1) // st)
        return self.op("slice", [x], [tuple(shape)], x.dtype,
                       {"starts": list(starts), "limits": list(limits),
                        "strides": strides}, [name])[0]

    def concat(self, inputs: Sequence[Tensor], axis: int,
               name=None) -> Tensor:
        inputs = [self._own(t) for t in inputs]
        axis = _axis(axis, inputs[0].rank, "loom.concat")
        shape = list(inputs[0].shape)
        shape[axis] = sum(t.shape[axis] for t in inputs)
        return self.op("concat", inputs, [tuple(shape)], inputs[0].dtype,
                       {"axis": axis}, [name])[0]

    def split(self, x, sizes: Sequence[int], axis: int,
              names=None) -> list[Tensor]:
        x = self._own(x)
        axis = _axis(axis, x.rank, "loom.split")
        if sum(sizes) != x.shape[axis]:
            raise LoomError(f"loom.split: sizes {list(sizes)} do not add up to "
                            f"dim {axis} (size {x.shape[axis]})")
        shapes = [x.shape[:axis] + (s,) + x.shape[axis + 1:] for s in sizes]
        return self.op("split", [x], shapes, x.dtype,
                       {"axis": axis, "sizes": list(sizes)}, names)

    def _reduce(self, mnemonic, x, axes, keepdims, name):
        x = self._own(x)
        axes = sorted({_axis(a, x.rank, f"loom.{mnemonic}") for a in axes})
        shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape)
                      if keepdims or d not in axes)
        return self.op(mnemonic, [x], [shape], x.dtype,
                       {"axes": axes, "keepdims": keepdims}, [name])[0]

    def reduce_sum(self, x, axes, keepdims=False, name=None) -> Tensor:
        return self._reduce("reduce_sum", x, axes, keepdims, name)

    def reduce_mean(self, x, axes, keepdims=False, name=None) -> Tensor:
        return self._reduce("reduce_mean", x, axes, keepdims, name)

    def reduce_max(self, x, axes, keepdims=False, name=None) -> Tensor:
        return self._reduce("reduce_max", x, axes, keepdims, name)

    # -- The document ----------------------------------------------------------

    @property
    def parameters(self) -> list[dict]:
        """The parameters' entries (tensor, ecosystem name, init, decay)."""
        return [dict(p) for p in self._parameters]

    def input_roles(self) -> dict:
        """Tensor name -> role of each data input (the interpreter and the
        compiled program know data inputs by role)."""
        return {i["tensor"]: i["role"] for i in self._inputs}

    def tensor(self, name: str) -> Tensor:
        """The tensor named `name`."""
        if name not in self._tensors:
            raise LoomError(f"no tensor named `{name}`")
        return self._tensors[name]

    def to_json(self) -> dict:
        """The graph JSON document (format `loom-graph`, version 1)."""
        if self._output is None:
            raise LoomError("the graph has no loss: call Graph.loss(tensor)")
        return {
            "format": "loom-graph", "version": 1,
            "tensors": [{"name": n, "shape": list(self._tensors[n].shape),
                         "dtype": self._tensors[n].dtype}
                        for n in self._order],
            "parameters": [dict(p) for p in self._parameters],
            "inputs": [dict(i) for i in self._inputs],
            "ops": [dict(o) for o in self._ops],
            "outputs": [self._output],
        }

    def dumps(self, indent: int | None = None) -> str:
        """The graph JSON as text."""
        return json.dumps(self.to_json(), indent=indent)

    @classmethod
    def from_json(cls, document) -> "Graph":
        """A graph from a graph JSON document (dict or text), e.g. what
        `loom.models.gpt2()` builds, to inspect or extend."""
        if isinstance(document, str):
            document = json.loads(document)
        if document.get("format") != "loom-graph":
            raise LoomError("not a graph JSON document (format is not "
                            "`loom-graph`)")
        g = cls()
        for t in document["tensors"]:
            tensor = Tensor(g, t["name"], t["shape"], t["dtype"])
            g._tensors[tensor.name] = tensor
            g._order.append(tensor.name)
        g._parameters = [dict(p) for p in document["parameters"]]
        g._inputs = [dict(i) for i in document["inputs"]]
        g._ops = [dict(o) for o in document["ops"]]
        g._output = document["outputs"][0]
        return g


def _init_json(init) -> dict:
    """A graph JSON initializer from the short forms `Graph.param` takes."""
    if isinstance(init, dict):
        return dict(init)
    if init in ("zeros", "ones"):
        return {"kind": init}
    if isinstance(init, (tuple, list)) and init:
        kind, *args = init
        if kind == "normal" and len(args) == 1:
            return {"kind": "normal", "std": float(args[0])}
        if kind == "uniform" and len(args) == 2:
            return {"kind": "uniform", "low": float(args[0]),
                    "high": float(args[1])}
        if kind == "scaled_normal" and len(args) == 2:
            return {"kind": "scaled_normal", "std": float(args[0]),
                    "factor": float(args[1])}
    raise LoomError(f"unknown initializer {init!r}; expected a dict, "
                    "\"zeros\", \"ones\", (\"normal\", std), (\"uniform\", "
                    "low, high) or (\"scaled_normal\", std, factor)")


def _scalar_json(value, dtype: str):
    """One constant element as graph JSON writes it."""
    if dtype == "i1":
        return bool(value)
    if dtype in INT_DTYPES:
        return int(value)
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value
