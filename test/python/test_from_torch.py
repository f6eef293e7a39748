"""`loom.from_torch` brings a PyTorch model in: nanoGPT's GPT, traced.

The model is written here the ordinary PyTorch way, after karpathy/nanoGPT's
`model.py` (LayerNorm with optional bias, CausalSelfAttention with the fused
`c_attn` split into q, k, v, the `tril` mask buffer, `masked_fill` and
`softmax`, a GELU MLP, `lm_head` tied to `wte`, `F.cross_entropy(...,
ignore_index=-1)`; forward(idx, targets=None) -> (logits, loss) with
`b, t = idx.size()`, `assert t <= block_size` and `if targets is not None`),
not from Loom's builders. For each configuration (bias on/off, tied/untied,
exact/tanh GELU), in f64:

- the graph declares the parameters `named_parameters()` lists (a tied one
  once) and the inputs `idx` / `targets` (roles input_ids / labels), and its
  attention is one causal `loom.attention` per layer, no softmax left;
- its forward loss equals PyTorch's to 1e-10 (relative);
- one AdamW step (`loom.compile(..., optimizer="adamw")`, torch.optim's
  defaults, nanoGPT's decay groups) gives the loss and the weights
  `torch.optim.AdamW` gives, to 1e-9, on one device and on a searched
  4-device plan.

Unsupported input is a `LoomError` listing every unsupported op with its
source line, and nothing is returned. Skipped without PyTorch.
"""

import inspect
import math
import re
from dataclasses import dataclass

import numpy as np
import pytest

import loom

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python; the "
    "frontend traces PyTorch modules")
nn = torch.nn
F = torch.nn.functional

#===----------------------------------------------------------------------===#
# nanoGPT's model.py (dropout 0; the manual attention path)
#===----------------------------------------------------------------------===#


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 37
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 16
    dropout: float = 0.0
    bias: bool = True
    tie: bool = True            # nanoGPT always ties
    gelu: str = "none"          # nn.GELU(); "tanh" is GPT-2's gelu_new


class LayerNorm(nn.Module):
    """LayerNorm but with an optional bias."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias,
                            1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd,
                                bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd,
                                bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.register_buffer("bias", torch.tril(
            torch.ones(config.block_size, config.block_size)).view(
                1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd,
                              bias=config.bias)
        self.gelu = nn.GELU(approximate=config.gelu)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd,
                                bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        if config.tie:
            self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, \
            f"Cannot forward sequence of length {t}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)),
                                   targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss


#===----------------------------------------------------------------------===#
# Helpers
#===----------------------------------------------------------------------===#

FWD_RTOL = 1e-10
STEP_RTOL = 1e-9
LR = 0.01

CONFIGS = {
    "bias-tied": dict(bias=True, tie=True, gelu="none"),
    "nobias-tied": dict(bias=False, tie=True, gelu="none"),
    "bias-untied-tanh": dict(bias=True, tie=False, gelu="tanh"),
    "nobias-untied": dict(bias=False, tie=False, gelu="none"),
}


def gpt(seed=0, seq=8, **overrides):
    """A tiny f64 GPT with random weights (std 0.2, norm weights around 1,
    so that every term matters), and a batch whose labels ignore a few
    positions with nanoGPT's -1."""
    config = GPTConfig(**overrides)
    model = GPT(config).double()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64)
                    * 0.2)
            if re.search(r"\bln_(1|2|f)\.weight$", name):
                p.add_(1.0)
    idx = torch.randint(0, config.vocab_size, (4, seq), generator=g)
    targets = torch.randint(0, config.vocab_size, (4, seq), generator=g)
    targets[0, :3] = -1
    targets[-1, -1] = -1
    return model, idx, targets


def close(actual, expected, rtol):
    expected = expected.detach().numpy() if isinstance(
        expected, torch.Tensor) else np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    err = float(np.max(np.abs(actual - expected)))
    assert err <= rtol * scale, f"relative error {err / scale:.3e}"
    return err / scale


def weights(model):
    return {n: p.detach().numpy().copy() for n, p in model.named_parameters()}


def ops(graph, name):
    return [o for o in graph.to_json()["ops"] if o["op"] == name]


def torch_adamw_step(model, idx, targets):
    """nanoGPT's configure_optimizers groups (decay on the tensors of rank
    >= 2), everything else at torch.optim.AdamW's defaults."""
    defaults = {k: p.default for k, p in inspect.signature(
        torch.optim.AdamW).parameters.items()
        if p.default is not inspect.Parameter.empty}
    params = dict(model.named_parameters())
    opt = torch.optim.AdamW(
        [{"params": [p for p in params.values() if p.dim() >= 2],
          "weight_decay": defaults["weight_decay"]},
         {"params": [p for p in params.values() if p.dim() < 2],
          "weight_decay": 0.0}], lr=LR)
    _, loss = model(idx, targets)
    loss.backward()
    opt.step()
    return float(loss), {n: p.detach() for n, p in params.items()}


#===----------------------------------------------------------------------===#
# nanoGPT
#===----------------------------------------------------------------------===#


@pytest.mark.parametrize("variant", sorted(CONFIGS))
def test_gpt_forward_loss(variant):
    model, idx, targets = gpt(seed=len(variant), **CONFIGS[variant])
    graph = loom.from_torch(model, (idx, targets), loss=1)

    # Names: named_parameters() (the tied lm_head once, as wte), the
    # forward's argument names.
    assert [p["name"] for p in graph.parameters] == \
        [n for n, _ in model.named_parameters()]
    assert graph.input_roles() == {"idx": "input_ids", "targets": "labels"}
    # One causal attention per layer; no softmax, mask or score matmul left.
    attention = ops(graph, "attention")
    assert len(attention) == model.config.n_layer
    assert all(o["attributes"] == {"causal": True} for o in attention)
    assert not ops(graph, "softmax") and not ops(graph, "constant")
    assert len(ops(graph, "cross_entropy")) == 1

    out = loom.run(graph, {**weights(model), "idx": idx.numpy(),
                           "targets": targets.numpy()})
    with torch.no_grad():
        _, loss = model(idx, targets)
    close(out["loss"], loss, FWD_RTOL)


def test_gpt_loss_selectors():
    """loss= as a tuple index, a callable, or nothing (the output is the
    loss) select the same loss."""
    model, idx, targets = gpt(seed=3, n_layer=1)
    inputs = {**weights(model), "idx": idx.numpy(),
              "targets": targets.numpy()}
    expected = float(model(idx, targets)[1])
    for loss in (1, -1, lambda out: out[1]):
        graph = loom.from_torch(model, (idx,), {"targets": targets},
                                loss=loss)
        close(loom.run(graph, inputs)["loss"], expected, FWD_RTOL)

    class Dict(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, idx, targets):
            logits, loss = self.inner(idx, targets)
            return {"logits": logits, "loss": loss}
    graph = loom.from_torch(Dict(), (idx, targets), loss="loss")
    close(loom.run(graph, {**{"inner." + k: v for k, v in weights(
        model).items()}, "idx": idx.numpy(), "targets": targets.numpy()})[
              "loss"], expected, FWD_RTOL)


@pytest.mark.parametrize("variant", ["bias-tied", "nobias-untied"])
def test_gpt_adamw_step(variant):
    model, idx, targets = gpt(seed=11, **CONFIGS[variant])
    graph = loom.from_torch(model, (idx, targets), loss=1)
    start = weights(model)
    inputs = {**start, "input_ids": idx.numpy(), "labels": targets.numpy()}
    single = loom.run(loom.compile(graph, phase="autodiff",
                                   optimizer="adamw", lr=LR), inputs)
    loss, expected = torch_adamw_step(model, idx, targets)
    close(single["loss"], loss, STEP_RTOL)
    for name, w in expected.items():
        close(single[name], w, STEP_RTOL)
        # The step moved every weight (the comparison is not vacuous).
        assert np.max(np.abs(single[name] - start[name])) > 1e-4

    # The same step on a plan the search picks for 4 host devices.
    compiled = loom.compile(graph, cluster="host", devices=4,
                            optimizer="adamw", lr=LR)
    assert compiled.plan.mesh.devices == 4
    parallel = loom.run(compiled, inputs)
    close(parallel["loss"], loss, STEP_RTOL)
    for name, w in expected.items():
        close(parallel[name], w, STEP_RTOL)


#===----------------------------------------------------------------------===#
# Unsupported input
#===----------------------------------------------------------------------===#


class Unsupported(nn.Module):
    """Two ops Loom has no mapping for (cumsum, sort) and one it has."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(11, 8)
        self.head = nn.Linear(8, 11)

    def forward(self, idx, targets):
        x = self.wte(idx)
        x = torch.cumsum(x, dim=1)
        x = torch.sort(x, dim=-1).values
        return F.cross_entropy(self.head(x).view(-1, 11), targets.view(-1))


def test_unsupported_ops_are_listed_with_their_source():
    model = Unsupported().double()
    idx = torch.randint(0, 11, (2, 4))
    with pytest.raises(loom.LoomError) as info:
        loom.from_torch(model, (idx, idx))
    message = str(info.value)
    assert "2 PyTorch op(s) have no Loom mapping" in message
    assert "aten.cumsum" in message and "aten.sort" in message
    # Each with the line of the model that called it.
    assert re.search(r"test_from_torch\.py\", line \d+, in forward: "
                     r"x = torch\.cumsum", message), message
    assert re.search(r"line \d+, in forward: x = torch\.sort", message)


def test_data_dependent_control_flow_is_refused():
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(11, 8)
            self.head = nn.Linear(8, 11)

        def forward(self, idx, targets):
            x = self.wte(idx)
            if x.sum() > 0:
                x = x * 2
            return F.cross_entropy(self.head(x).view(-1, 11),
                                   targets.view(-1))
    idx = torch.randint(0, 11, (2, 4))
    with pytest.raises(loom.LoomError, match=r"data-dependent control "
                       r"flow.* line \d+, in forward: if x.sum\(\) > 0:"):
        loom.from_torch(Branchy().double(), (idx, idx))


def test_bad_loss_selectors_and_inputs():
    model, idx, targets = gpt(seed=5, n_layer=1)
    with pytest.raises(loom.LoomError, match="loss=5 does not select"):
        loom.from_torch(model, (idx, targets), loss=5)
    with pytest.raises(loom.LoomError, match="rank-0"):
        loom.from_torch(model, (idx, targets), loss=0)
    with pytest.raises(loom.LoomError, match="do not fit GPT.forward"):
        loom.from_torch(model, (idx, targets, targets))
    with pytest.raises(loom.LoomError, match="tracing GPT on the example "
                       "inputs failed: AssertionError: Cannot forward"):
        long = torch.zeros(1, 17, dtype=torch.long)
        loom.from_torch(model, (long, long), loss=1)
