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
# A model whose RoPE tables are float32 (Hugging Face's) against loom.rope,
# which computes them exactly: the tables differ by up to about 1e-6 here
# (8 positions), the loss by far less (docs/Frontends.md, "RoPE tables").
F32_TABLES_RTOL = 1e-6
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
    # Every device is used: the mesh times the pipeline stages, when the
    # search (the whole plan space) chose a pipeline.
    assert compiled.plan.devices == 4
    parallel = loom.run(compiled, inputs)
    close(parallel["loss"], loss, STEP_RTOL)
    for name, w in expected.items():
        close(parallel[name], w, STEP_RTOL)


def test_gpt_pipelined_step():
    """2 pipeline stages x 2 micro-batches (the split of c_attn is one
    `loom.split`, so micro-batching the batch dim keeps it valid)."""
    model, idx, targets = gpt(seed=13, n_layer=2)
    graph = loom.from_torch(model, (idx, targets), loss=1)
    assert len([o for o in ops(graph, "split")
                if o["attributes"]["axis"] == 2]) == 2
    inputs = {**weights(model), "input_ids": idx.numpy(),
              "labels": targets.numpy()}
    compiled = loom.compile(graph, cluster="host", devices=4,
                            pipeline_stages=2, micro_batches=2,
                            optimizer="adamw", lr=LR)
    out = loom.run(compiled, inputs)
    loss, expected = torch_adamw_step(model, idx, targets)
    close(out["loss"], loss, STEP_RTOL)
    for name, w in expected.items():
        close(out[name], w, STEP_RTOL)


class ShiftedGPT(GPT):
    """Labels shifted from the ids inside the model (`logits[:, :-1]`
    against `idx[:, 1:]`): one input, slices over the sequence."""

    def forward(self, idx):
        logits, _ = super().forward(idx, idx)
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)),
                               idx[:, 1:].reshape(-1))


def test_shifted_labels_pipelined():
    model = ShiftedGPT(GPTConfig()).double()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(5.0)
    idx = torch.randint(0, 37, (4, 8), generator=torch.Generator()
                        .manual_seed(3))
    graph = loom.from_torch(model, (idx,))
    assert graph.input_roles() == {"idx": "input_ids"}
    inputs = {**weights(model), "input_ids": idx.numpy()}
    with torch.no_grad():
        expected = model(idx)
    single = loom.run(loom.compile(graph, phase="autodiff",
                                   optimizer="adamw", lr=LR), inputs)
    close(single["loss"], expected, FWD_RTOL)
    piped = loom.run(loom.compile(graph, cluster="host", devices=2,
                                  pipeline_stages=2, micro_batches=2,
                                  optimizer="adamw", lr=LR), inputs)
    for name, value in single.items():
        close(piped[name], value, STEP_RTOL)


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


def test_mapped_ops_in_unsupported_forms_are_listed():
    class Odd(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(11, 8)
            self.w = nn.Parameter(torch.randn(8, 11))
            self.b = nn.Parameter(torch.randn(11))

        def forward(self, idx, targets):
            x = self.wte(idx).view(-1, 8)
            logits = torch.addmm(self.b, x, self.w, beta=0.5)
            return F.cross_entropy(logits, targets.view(-1), reduction="sum")
    idx = torch.randint(0, 11, (2, 4))
    with pytest.raises(loom.LoomError) as info:
        loom.from_torch(Odd().double(), (idx, idx))
    message = str(info.value)
    assert "aten.addmm.default (addmm with beta or alpha other than 1) at " \
        in message
    # Downstream of a failed op, a mapped op is not reported again.
    assert message.count("aten.") == 1, message


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
    with pytest.raises(loom.LoomError, match=r"rank-0 floating-point "
                       r"tensor; got shape \[4, 8, 37\]"):
        loom.from_torch(model, (idx, targets), loss=0)
    with pytest.raises(loom.LoomError, match="do not fit GPT.forward"):
        loom.from_torch(model, (idx, targets, targets))
    with pytest.raises(loom.LoomError, match="tracing GPT on the example "
                       "inputs failed: AssertionError: Cannot forward"):
        long = torch.zeros(1, 17, dtype=torch.long)
        loom.from_torch(model, (long, long), loss=1)


#===----------------------------------------------------------------------===#
# A Hugging Face-style Llama (modeling_llama.py of transformers 4.3x:
# RMSNorm, rotate_half RoPE from cos/sin buffers, repeat_kv for GQA, an
# additive causal mask of finfo.min, SwiGLU). The softmax runs in the
# model's dtype (HF upcasts half models to f32 there; in f64 it is a no-op).
#===----------------------------------------------------------------------===#


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(
            variance + self.variance_epsilon)
        return self.weight * hidden_states


class LlamaRotaryEmbedding(nn.Module):
    """`scale` > 1: Hugging Face's linear RoPE scaling (positions divided by
    it); `persistent`: the tables in the state dict (older transformers)."""

    def __init__(self, dim, max_position_embeddings=2048, base=10000,
                 dtype=torch.float32, scale=1.0, persistent=False):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).to(dtype) / dim))
        self.register_buffer("inv_freq", inv_freq)
        t = torch.arange(max_position_embeddings, dtype=self.inv_freq.dtype)
        t = t / scale
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos()[None, None, :, :],
                             persistent=persistent)
        self.register_buffer("sin_cached", emb.sin()[None, None, :, :],
                             persistent=persistent)

    def forward(self, x, seq_len=None):
        return (self.cos_cached[:, :, :seq_len, ...].to(dtype=x.dtype),
                self.sin_cached[:, :, :seq_len, ...].to(dtype=x.dtype))


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids):
    cos = cos.squeeze(1).squeeze(0)
    sin = sin.squeeze(1).squeeze(0)
    cos = cos[position_ids].unsqueeze(1)
    sin = sin[position_ids].unsqueeze(1)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(
        batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen,
                                 head_dim)


@dataclass
class LlamaConfig:
    vocab_size: int = 41
    hidden_size: int = 16
    intermediate_size: int = 24
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    max_position_embeddings: int = 16
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    # How keys and values are repeated for GQA: Hugging Face's repeat_kv
    # (expand + reshape) or torch.repeat_interleave.
    repeat: str = "repeat_kv"
    # The precision of the RoPE tables (Hugging Face: float32).
    rope_dtype: torch.dtype = torch.float32
    # Linear RoPE scaling (positions / rope_scale) and whether the tables
    # are persistent buffers.
    rope_scale: float = 1.0
    rope_persistent: bool = False


class LlamaAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.num_key_value_heads = config.num_key_value_heads
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.repeat = config.repeat
        self.q_proj = nn.Linear(self.hidden_size,
                                self.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(self.hidden_size, self.num_key_value_heads
                                * self.head_dim, bias=False)
        self.v_proj = nn.Linear(self.hidden_size, self.num_key_value_heads
                                * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim,
                                self.hidden_size, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(
            self.head_dim, config.max_position_embeddings, config.rope_theta,
            config.rope_dtype, config.rope_scale, config.rope_persistent)

    def forward(self, hidden_states, attention_mask, position_ids):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(
            bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(
            bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(
                1, 2)
        value_states = self.v_proj(hidden_states).view(
            bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(
                1, 2)
        cos, sin = self.rotary_emb(value_states, seq_len=q_len)
        query_states, key_states = apply_rotary_pos_emb(
            query_states, key_states, cos, sin, position_ids)
        if self.repeat == "repeat_kv":
            key_states = repeat_kv(key_states, self.num_key_value_groups)
            value_states = repeat_kv(value_states,
                                     self.num_key_value_groups)
        else:
            key_states = key_states.repeat_interleave(
                self.num_key_value_groups, dim=1)
            value_states = value_states.repeat_interleave(
                self.num_key_value_groups, dim=1)
        attn_weights = torch.matmul(query_states, key_states.transpose(
            2, 3)) / math.sqrt(self.head_dim)
        attn_weights = attn_weights + attention_mask
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
        return self.o_proj(attn_output)


class LlamaMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size,
                                   config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size,
                                 bias=False)
        self.down_proj = nn.Linear(config.intermediate_size,
                                   config.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self_attn = LlamaAttention(config)
        self.mlp = LlamaMLP(config)
        self.input_layernorm = LlamaRMSNorm(config.hidden_size,
                                            config.rms_norm_eps)
        self.post_attention_layernorm = LlamaRMSNorm(config.hidden_size,
                                                     config.rms_norm_eps)

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, attention_mask,
                                       position_ids)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


class LlamaForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size,
                                         config.hidden_size)
        self.layers = nn.ModuleList([LlamaDecoderLayer(config) for _ in
                                     range(config.num_hidden_layers)])
        self.norm = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size,
                                 bias=False)

    def forward(self, input_ids, labels=None):
        bsz, seq_length = input_ids.shape
        position_ids = torch.arange(0, seq_length, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0).view(-1, seq_length)
        hidden_states = self.embed_tokens(input_ids)
        dtype = hidden_states.dtype
        # _make_causal_mask
        mask = torch.full((seq_length, seq_length), torch.finfo(dtype).min,
                          dtype=dtype)
        mask_cond = torch.arange(mask.size(-1))
        mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1),
                          0)
        attention_mask = mask.to(dtype)[None, None, :, :].expand(
            bsz, 1, seq_length, seq_length)
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask, position_ids)
        logits = self.lm_head(self.norm(hidden_states))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)),
                                   labels.view(-1))
        return {"logits": logits, "loss": loss}


def llama(seed=0, seq=8, **config):
    model = LlamaForCausalLM(LlamaConfig(**config)).double()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64)
                    * 0.2)
            if name.endswith("norm.weight"):
                p.add_(1.0)
    ids = torch.randint(0, 41, (4, seq), generator=g)
    labels = torch.randint(0, 41, (4, seq), generator=g)
    labels[1, :2] = -100
    return model, ids, labels


@pytest.mark.parametrize("repeat", ["repeat_kv", "repeat_interleave"])
def test_llama_forward_loss_and_adamw_step(repeat):
    model, ids, labels = llama(seed=21, repeat=repeat)
    graph = loom.from_torch(model, (ids, labels), loss="loss")
    assert [p["name"] for p in graph.parameters] == \
        [n for n, _ in model.named_parameters()]
    assert graph.input_roles() == {"input_ids": "input_ids",
                                   "labels": "labels"}
    # RMSNorm is one op (2 per layer + the final one); attention is one
    # causal op per layer over the 2 key/value heads (repeat_kv undone).
    assert len(ops(graph, "rms_norm")) == 5
    attention = ops(graph, "attention")
    assert len(attention) == 2 and all(
        o["attributes"] == {"causal": True} for o in attention)
    for o in attention:
        k = graph.tensor(o["operands"][1])
        assert k.shape == (4, 2, 8, 4)
    assert not ops(graph, "softmax")
    # Hugging Face's float32 RoPE tables are loom.rope's to the error of
    # float32 tables: one loom.rope per q and k of each layer.
    assert len(ops(graph, "rope")) == 4 and not ops(graph, "concat")

    # loom.rope computes its tables exactly, so the numbers to equal are
    # the model's with f64 tables (the same weights, `exact`); the float32
    # tables' rounding moves the loss by far less than F32_TABLES_RTOL.
    exact, _, _ = llama(seed=21, repeat=repeat, rope_dtype=torch.float64)
    start = weights(model)
    with torch.no_grad():
        expected_loss = exact(ids, labels)["loss"]
        f32_tables_loss = model(ids, labels)["loss"]
    got = loom.run(graph, {**start, "input_ids": ids.numpy(),
                           "labels": labels.numpy()})["loss"]
    close(got, expected_loss, FWD_RTOL)
    close(got, f32_tables_loss, F32_TABLES_RTOL)
    assert abs(float(f32_tables_loss) - float(expected_loss)) > \
        1e-14 * abs(float(expected_loss))  # the two references differ
    model = exact

    # One AdamW step (decay on the matrices) on one device.
    single = loom.run(loom.compile(graph, phase="autodiff",
                                   optimizer="adamw", lr=LR),
                      {**start, "input_ids": ids.numpy(),
                       "labels": labels.numpy()})
    params = dict(model.named_parameters())
    opt = torch.optim.AdamW(
        [{"params": [p for p in params.values() if p.dim() >= 2]},
         {"params": [p for p in params.values() if p.dim() < 2],
          "weight_decay": 0.0}], lr=LR)
    loss = model(ids, labels)["loss"]
    loss.backward()
    opt.step()
    close(single["loss"], loss, STEP_RTOL)
    for name, p in params.items():
        close(single[name], p, STEP_RTOL)

    # The same step on a plan the search picks for 4 host devices.
    compiled = loom.compile(graph, cluster="host", devices=4,
                            optimizer="adamw", lr=LR)
    parallel = loom.run(compiled, {**start, "input_ids": ids.numpy(),
                                   "labels": labels.numpy()})
    close(parallel["loss"], loss, STEP_RTOL)
    for name, p in params.items():
        close(parallel[name], p, STEP_RTOL)


@pytest.mark.parametrize("rope_dtype", [torch.float32, torch.float64])
def test_llama_scaled_rope_tables_stay_primitive_and_exact(rope_dtype):
    """Tables that are not loom.rope's (linear scaling: positions / 2) stay
    the model's own ops, in float32 or f64, and the loss is the model's to
    1e-10; the same tables unscaled are one loom.rope per q and k."""
    for scale, fused in ((2.0, False), (1.0, True)):
        model, ids, labels = llama(seed=22, rope_dtype=rope_dtype,
                                   rope_scale=scale)
        graph = loom.from_torch(model, (ids, labels), loss="loss")
        assert len(ops(graph, "rope")) == (4 if fused else 0)
        assert bool(ops(graph, "concat")) == (not fused)
        if fused:
            continue
        with torch.no_grad():
            expected = model(ids, labels)["loss"]
        close(loom.run(graph, {**weights(model), "input_ids": ids.numpy(),
                               "labels": labels.numpy()})["loss"],
              expected, FWD_RTOL)


def collectives(graph):
    compiled = loom.compile(graph, optimizer="adamw", lr=LR,
                            parallel_config={"data_parallel": 1,
                                             "model_parallel": 2})
    found = {}
    for kind in re.findall(r"dist\.(all_reduce|all_gather|reduce_scatter|"
                           r"all_to_all|collective_permute)\b", compiled.ir):
        found[kind] = found.get(kind, 0) + 1
    return found


def test_llama_megatron_tensor_parallel():
    """Megatron on the imported Llama: per layer two all-reduces forward
    and two backward, nothing else, as on `loom-model llama`
    (test_partition.py)."""
    per_depth = []
    for layers in (1, 2):
        model = LlamaForCausalLM(LlamaConfig(
            num_hidden_layers=layers)).double()
        ids = torch.randint(0, 41, (4, 8))
        per_depth.append(collectives(loom.from_torch(model, (ids, ids),
                                                     loss="loss")))
    deep, shallow = per_depth[1], per_depth[0]
    assert {k: deep.get(k, 0) - shallow.get(k, 0) for k in deep} == \
        {"all_reduce": 4}


def test_tuple_output_needs_a_selector():
    model, idx, targets = gpt(seed=5, n_layer=1)
    with pytest.raises(loom.LoomError, match="the loss is a tuple, not a "
                       "tensor; pick it .* with loss="):
        loom.from_torch(model, (idx, targets))


#===----------------------------------------------------------------------===#
# The PyTorch seed's TransformerEncoder LM (the DDP + pipeline tutorial's
# Encoder, nn.TransformerEncoderLayer itself: post-LN, ReLU, sinusoidal
# positions; (S, N, E) layout; dropout 0)
#===----------------------------------------------------------------------===#

class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() *
                             (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class Encoder(nn.Module):
    def __init__(self, ntoken, ninp, dropout=0.5):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.ninp = ninp

    def forward(self, src):
        src = src.t()
        src = self.encoder(src) * math.sqrt(self.ninp)
        return self.pos_encoder(src)


class Decoder(nn.Module):
    def __init__(self, ntoken, ninp):
        super().__init__()
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, inp):
        return self.decoder(inp).permute(1, 0, 2)


class LM(nn.Module):
    """The tutorial's pipeline stages as one module: Encoder, the
    TransformerEncoderLayers, Decoder, then its nn.CrossEntropyLoss
    (`causal`: a square subsequent mask, as the seq2seq tutorial passes)."""

    def __init__(self, ntokens=29, emsize=16, nhead=4, nhid=32, nlayers=2,
                 dropout=0.0, causal=False):
        super().__init__()
        self.encoder = Encoder(ntokens, emsize, dropout)
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(
            emsize, nhead, nhid, dropout) for _ in range(nlayers)])
        self.decoder = Decoder(ntokens, emsize)
        self.ntokens = ntokens
        self.causal = causal
        self.criterion = nn.CrossEntropyLoss()

    def forward(self, data, targets):
        x = self.encoder(data)
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(0)) \
            .to(x.dtype) if self.causal else None
        for layer in self.layers:
            x = layer(x, src_mask=mask)
        output = self.decoder(x)
        return self.criterion(output.reshape(-1, self.ntokens), targets)


@pytest.mark.parametrize("causal", [False, True])
def test_transformer_encoder_lm_forward_loss_and_sgd_step(causal):
    """nn.TransformerEncoderLayer traces through (its training path); its
    attention, heads folded into the batch dim and the scale on q, is one
    loom.attention per layer (causal with the subsequent mask); the loss
    and one SGD step equal PyTorch's."""
    torch.manual_seed(31)
    model = LM(causal=causal).double()
    data = torch.randint(0, 29, (4, 8))
    targets = torch.randint(0, 29, (32,))
    graph = loom.from_torch(model, (data, targets))
    assert graph.input_roles() == {"data": "input_ids", "targets": "labels"}
    # The sinusoidal table is a persistent float buffer (in the state dict,
    # added to the activations): a constant, not a parameter to train.
    assert "encoder.pos_encoder.pe" in model.state_dict()
    assert [p["name"] for p in graph.parameters] == \
        [n for n, _ in model.named_parameters()]
    assert len(ops(graph, "layer_norm")) == 4 and len(ops(graph, "relu")) == 2
    attention = ops(graph, "attention")
    assert len(attention) == 2 and not ops(graph, "softmax")
    assert all(o.get("attributes", {}) == ({"causal": True} if causal else
                                           {}) for o in attention)
    start = weights(model)
    with torch.no_grad():
        expected = model(data, targets)
    close(loom.run(graph, {**start, "data": data.numpy(),
                           "targets": targets.numpy()})["loss"], expected,
          FWD_RTOL)
    out = loom.run(loom.compile(graph, phase="autodiff", optimizer="sgd",
                                lr=0.5), {**start, "input_ids": data.numpy(),
                                          "labels": targets.numpy()})
    loss = model(data, targets)
    loss.backward()
    torch.optim.SGD(model.parameters(), lr=0.5).step()
    close(out["loss"], loss, STEP_RTOL)
    for name, p in model.named_parameters():
        close(out[name], p, STEP_RTOL)


#===----------------------------------------------------------------------===#
# Op coverage beyond the three models
#===----------------------------------------------------------------------===#


class Mix(nn.Module):
    """chunk, cat, constant indexing, select, permute, tanh, sigmoid, relu,
    exp, sqrt, pow, rsub, mean / amax / sum with keepdim, masked_fill with
    a finite fill, LayerNorm without affine, F.linear, a sliced label."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(23, 16)
        self.a = nn.Linear(16, 32)
        self.ln = nn.LayerNorm(16, elementwise_affine=False)
        self.w = nn.Parameter(torch.randn(16, 16))
        self.head = nn.Linear(16, 23, bias=False)
        self.register_buffer("keep", torch.rand(8, 16) > 0.3)

    def forward(self, ids, labels):
        x = self.ln(self.wte(ids))
        h1, h2 = self.a(x).chunk(2, dim=-1)
        y = torch.tanh(h1) * torch.sigmoid(h2) + F.relu(h1) - h2.exp() / 4
        y = torch.cat([y[..., :5], y[..., 5:]], dim=-1)
        y = y.permute(0, 2, 1).contiguous().permute(0, 2, 1)
        y = y + x.pow(2).sqrt() * 0.5 + F.linear(y, self.w)
        y = y + y.mean(dim=1, keepdim=True) - y.amax(-1, keepdim=True)
        y = 1.0 - y + y.sum(-1, keepdim=True) / 16
        y = y.masked_fill(~self.keep, 0.25)
        first = y[:, 0]                                  # select
        y = y[:, 1:, :] + first.unsqueeze(1)
        logits = self.head(y)
        return F.cross_entropy(logits.reshape(-1, 23),
                               labels[:, 1:].reshape(-1))


def test_op_coverage():
    torch.manual_seed(41)
    model = Mix().double()
    ids = torch.randint(0, 23, (3, 8))
    labels = torch.randint(0, 23, (3, 8))
    graph = loom.from_torch(model, (ids, labels))
    assert graph.input_roles() == {"ids": "input_ids", "labels": "labels"}
    used = {o["op"] for o in graph.to_json()["ops"]}
    expected_ops = {"split", "concat", "transpose", "tanh", "sigmoid", "relu",
                    "exp", "sqrt", "reduce_mean", "reduce_max", "reduce_sum",
                    "layer_norm", "cross_entropy"}
    from loom.frontends.torch import _has_torch_export
    if _has_torch_export():
        # torch.export records no copy for `.contiguous()`, so the two
        # permutes around it compose to the identity.
        expected_ops.discard("transpose")
    assert expected_ops <= used
    start = weights(model)
    with torch.no_grad():
        expected = model(ids, labels)
    close(loom.run(graph, {**start, "ids": ids.numpy(),
                           "labels": labels.numpy()})["loss"], expected,
          FWD_RTOL)
    out = loom.run(loom.compile(graph, phase="autodiff", optimizer="sgd",
                                lr=0.5), {**start, "input_ids": ids.numpy(),
                                          "labels": labels.numpy()})
    loss = model(ids, labels)
    loss.backward()
    torch.optim.SGD(model.parameters(), lr=0.5).step()
    for name, p in model.named_parameters():
        close(out[name], p, STEP_RTOL)


class Windowed(nn.Module):
    """Attention with a banded (non-causal) constant mask, or ALiBi's
    per-head linear bias, and an explicit scale: one loom.attention with
    an additive mask operand."""

    def __init__(self, alibi=False):
        super().__init__()
        self.wte = nn.Embedding(19, 16)
        self.qkv = nn.Linear(16, 48, bias=False)
        self.head = nn.Linear(16, 19, bias=False)
        self.alibi = alibi
        i = torch.arange(8)
        self.register_buffer("band", (i[None, :] - i[:, None]).abs() <= 2)
        slopes = torch.tensor([0.5, 0.25]).view(2, 1, 1)
        self.register_buffer("bias", -slopes * (i[:, None] - i[None, :])
                             .abs().to(torch.float32))

    def forward(self, ids, labels):
        x = self.wte(ids)
        q, k, v = self.qkv(x).view(2, 8, 3, 2, 8).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) * 0.3
        if self.alibi:
            att = att + self.bias
        else:
            att = att.masked_fill(~self.band, float("-inf"))
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(2, 8, 16)
        return F.cross_entropy(self.head(y).view(-1, 19), labels.view(-1))


@pytest.mark.parametrize("alibi", [False, True])
def test_masked_attention_keeps_its_mask(alibi):
    torch.manual_seed(43)
    model = Windowed(alibi).double()
    ids = torch.randint(0, 19, (2, 8))
    labels = torch.randint(0, 19, (2, 8))
    graph = loom.from_torch(model, (ids, labels))
    (attention,) = ops(graph, "attention")
    assert len(attention["operands"]) == 4
    assert attention["attributes"] == {"scale": 0.3}
    with torch.no_grad():
        expected = model(ids, labels)
    close(loom.run(graph, {**weights(model), "ids": ids.numpy(),
                           "labels": labels.numpy()})["loss"], expected,
          FWD_RTOL)


def test_dropout():
    """Dropout with p > 0 in training mode is loom.dropout (Loom's own
    random stream); in eval mode it is nothing."""
    model, idx, targets = gpt(seed=7, n_layer=1, dropout=0.1)
    train = loom.from_torch(model, (idx, targets), loss=1)
    assert len(ops(train, "dropout")) == 4 and not ops(train, "attention")
    assert all(o["attributes"]["rate"] == 0.1 for o in ops(train, "dropout"))
    model.eval()
    evaluated = loom.from_torch(model, (idx, targets), loss=1)
    assert not ops(evaluated, "dropout") and ops(evaluated, "attention")


#===----------------------------------------------------------------------===#
# Initializers, roles, names
#===----------------------------------------------------------------------===#


def test_initializers_are_pytorchs_defaults():
    """Each parameter's initializer is what its module's reset_parameters
    draws, read from the module (Linear: U(+-1/sqrt(in_features)) for
    weight and bias; Embedding: N(0, 1); LayerNorm: ones, zeros;
    MultiheadAttention: xavier-uniform in_proj, zero biases)."""
    torch.manual_seed(0)
    model = LM(nlayers=1).double()
    data = torch.randint(0, 29, (4, 8))
    graph = loom.from_torch(model, (data, torch.randint(0, 29, (32,))))
    init = {p["name"]: p["init"] for p in graph.parameters}
    bound = 1.0 / math.sqrt(16)
    assert init["layers.0.linear1.weight"] == {
        "kind": "uniform", "low": -bound, "high": bound}
    assert init["layers.0.linear1.bias"] == init["layers.0.linear1.weight"]
    assert init["layers.0.linear2.weight"]["high"] == 1.0 / math.sqrt(32)
    assert init["encoder.encoder.weight"] == {"kind": "normal", "std": 1.0}
    assert init["layers.0.norm1.weight"] == {"kind": "ones"}
    assert init["layers.0.norm1.bias"] == {"kind": "zeros"}
    xavier = math.sqrt(6.0 / (48 + 16))
    assert init["layers.0.self_attn.in_proj_weight"] == {
        "kind": "uniform", "low": -xavier, "high": xavier}
    assert init["layers.0.self_attn.in_proj_bias"] == {"kind": "zeros"}
    assert init["layers.0.self_attn.out_proj.bias"] == {"kind": "zeros"}
    # The drawn values are PyTorch's: inside the bounds, the spread of a
    # uniform draw (std bound / sqrt(3)).
    w = dict(model.named_parameters())["layers.0.linear1.weight"]
    assert float(w.abs().max()) <= bound
    assert abs(float(w.std()) - bound / math.sqrt(3)) < 0.1 * bound


def test_input_roles_and_names():
    class Positions(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(13, 8)
            self.wpe = nn.Embedding(6, 8)
            self.head = nn.Linear(8, 13, bias=False)

        def forward(self, tokens, pos, answer):
            x = self.wte(tokens) + self.wpe(pos)
            return F.cross_entropy(self.head(x).view(-1, 13),
                                   answer.view(-1))

    model = Positions().double()
    tokens = torch.randint(0, 13, (2, 6))
    pos = torch.arange(6).expand(2, 6).contiguous()
    answer = torch.randint(0, 13, (2, 6))
    graph = loom.from_torch(model, (tokens, pos, answer))
    assert graph.input_roles() == {"tokens": "input_ids", "pos": "positions",
                                   "answer": "labels"}
    # A compiled program of the graph takes the argument names too.
    compiled = loom.compile(graph, phase="autodiff", optimizer="sgd", lr=0.1)
    out = loom.run(compiled, {**weights(model), "tokens": tokens.numpy(),
                              "pos": pos.numpy(), "answer": answer.numpy()})
    with torch.no_grad():
        close(out["loss"], model(tokens, pos, answer), FWD_RTOL)

    class TwoIds(Positions):
        def forward(self, a, b, answer):
            x = self.wte(a) + self.wte(b)
            return F.cross_entropy(self.head(x).view(-1, 13),
                                   answer.view(-1))
    with pytest.raises(loom.LoomError, match="the inputs `a` and `b` would "
                       "both have the role `input_ids`"):
        loom.from_torch(TwoIds().double(), (tokens, tokens, answer))


def test_scaled_dot_product_attention_mapping():
    """F.scaled_dot_product_attention (PyTorch >= 2.0, so not traceable on
    Debian's 1.13): its ATen ops, bound by their schemas, map to one
    loom.attention. Checked on the mapping itself with the schemas'
    argument names."""
    from types import SimpleNamespace as NS
    from loom.frontends import torch as frontend

    def node(op, arguments, returns=1):
        schema = NS(name=f"aten::{op}", returns=[None] * returns,
                    arguments=[NS(name=a) for a in arguments])
        return NS(target=NS(_schema=schema, _overloadname="default"))

    tr = frontend._Translator()
    q = frontend._Value("input", (2, 4, 6, 8), "f64", name="q")
    k = frontend._Value("input", (2, 2, 6, 8), "f64", name="k")
    v = frontend._Value("input", (2, 2, 6, 8), "f64", name="v")
    sdpa = node("scaled_dot_product_attention", ["query", "key", "value",
                "attn_mask", "dropout_p", "is_causal", "scale"])
    out = frontend._sdpa(tr, sdpa, q, k, v, None, 0.0, True)
    assert out.op == "attention" and out.attrs["causal"]
    assert out.attrs["scale"] is None and out.args == [q, k, v]
    # A boolean mask keeps where True; the causal triangle is `causal`.
    keep = tr.const(torch.ones(6, 6, dtype=torch.bool).tril())
    out = frontend._sdpa(tr, sdpa, q, k, v, keep, scale=0.5)
    assert out.attrs == {"causal": True, "scale": 0.5}
    # The CPU flash kernel of PyTorch 2.x (two results, mask by keyword).
    flash = node("_scaled_dot_product_flash_attention_for_cpu",
                 ["query", "key", "value", "dropout_p", "is_causal",
                  "attn_mask", "scale"], returns=2)
    bias = tr.const(torch.randn(1, 1, 6, 6, dtype=torch.float64))
    out, lse = frontend._sdpa(tr, flash, q, k, v, 0.0, False,
                              attn_mask=bias)
    assert lse is None and not out.attrs["causal"]
    assert torch.equal(out.args[3].value, bias.value)
    with pytest.raises(frontend._Unsupported, match="dropout"):
        frontend._sdpa(tr, sdpa, q, k, v, None, 0.1)
    # is_causal with fewer queries than keys is PyTorch's top-left
    # triangle, which is not Loom's bottom-right `causal`: an additive mask.
    k10 = frontend._Value("input", (2, 2, 10, 8), "f64", name="k10")
    v10 = frontend._Value("input", (2, 2, 10, 8), "f64", name="v10")
    out = frontend._sdpa(tr, sdpa, q, k10, v10, None, 0.0, True)
    assert not out.attrs["causal"]
    expected = torch.zeros(6, 10, dtype=torch.float64).masked_fill(
        torch.ones(6, 10, dtype=torch.bool).triu(1), float("-inf"))
    assert torch.equal(out.args[3].value, expected)


def test_llama_rope_in_model_precision_is_loom_rope():
    """With RoPE tables computed in the model's precision (f64 here), the
    rotate_half rotation of q and k is loom.rope (theta read from the
    tables), and the loss still equals PyTorch's."""
    model, ids, labels = llama(seed=23, rope_dtype=torch.float64,
                               rope_theta=500000.0)
    graph = loom.from_torch(model, (ids, labels), loss="loss")
    ropes = ops(graph, "rope")
    assert len(ropes) == 4 and not ops(graph, "concat")
    assert all(o["attributes"] == {"theta": 500000.0} for o in ropes)
    with torch.no_grad():
        expected = model(ids, labels)["loss"]
    close(loom.run(graph, {**weights(model), "input_ids": ids.numpy(),
                           "labels": labels.numpy()})["loss"], expected,
          FWD_RTOL)
    # And its gradients: one SGD step.
    out = loom.run(loom.compile(graph, phase="autodiff", optimizer="sgd",
                                lr=0.5), {**weights(model),
                                          "input_ids": ids.numpy(),
                                          "labels": labels.numpy()})
    loss = model(ids, labels)["loss"]
    loss.backward()
    torch.optim.SGD(model.parameters(), lr=0.5).step()
    for name, p in model.named_parameters():
        close(out[name], p, STEP_RTOL)


def test_gpt_megatron_tensor_parallel():
    """Megatron on the imported nanoGPT: per layer the collectives of
    `loom-model gpt2` with the same dims (whose c_attn, in the same row
    order, the graph holds as a [3, 1, H, H] view), i.e. two all-reduces
    forward and two backward. The import pipeline views the imported
    `linear` + `split` of c_attn the same way (loom-view-fused-projections);
    without it a layer costs 4 all-to-alls, 4 all-reduces and 2
    reduce-scatters."""
    per_depth, built = [], []
    for layers in (1, 2):
        model, idx, targets = gpt(seed=11, n_layer=layers)
        per_depth.append(collectives(loom.from_torch(model, (idx, targets),
                                                     loss=1)))
        config = model.config
        built.append(collectives(loom.models.build(
            "gpt2", layers=layers, hidden=config.n_embd,
            heads=config.n_head, vocab=config.vocab_size,
            seq=idx.shape[1], batch=idx.shape[0])))
    per_layer = [{k: deep.get(k, 0) - shallow.get(k, 0) for k in deep}
                 for shallow, deep in (per_depth, built)]
    assert per_layer[0] == per_layer[1] == {"all_reduce": 4}


def test_gpt_fused_qkv_is_viewed_by_heads():
    """The imported c_attn weight and bias are held as the views [3, 1, H,
    H] and [3, 1, 1, H] with their file shapes, under their names; given in
    nanoGPT's layout, one AdamW step on a Megatron plan over 4 ranks
    (tp = 2, so each rank holds half the heads of q, k and v) gives
    torch.optim.AdamW's weights, in the file's shapes."""
    model, idx, targets = gpt(seed=17)
    graph = loom.from_torch(model, (idx, targets), loss=1)
    hidden = model.config.n_embd
    imported = loom.compile(graph, phase="import").ir
    for layer in range(model.config.n_layer):
        name = f"transformer.h.{layer}.attn.c_attn"
        assert re.search(
            rf'tensor<3x1x{hidden}x{hidden}xf64> {{loom\.file_shape = '
            rf'array<i64: {3 * hidden}, {hidden}>, loom\.param = '
            rf'#loom\.param<"{name}\.weight"', imported), imported
        assert re.search(
            rf'tensor<3x1x1x{hidden}xf64> {{loom\.file_shape = '
            rf'array<i64: {3 * hidden}>, loom\.param = '
            rf'#loom\.param<"{name}\.bias"', imported), imported
    assert not re.search(r"loom\.split .*axis = 2", imported)

    start = weights(model)
    inputs = {**start, "input_ids": idx.numpy(), "labels": targets.numpy()}
    loss, expected = torch_adamw_step(model, idx, targets)
    compiled = loom.compile(graph, optimizer="adamw", lr=LR,
                            parallel_config={"data_parallel": 2,
                                             "model_parallel": 2})
    # c_attn's weight is split on its output features (dim 2 of the view:
    # the heads of q, k and v alike), nothing else of it.
    assert compiled.plan.devices == 4
    dims = compiled.plan.layout("transformer.h.0.attn.c_attn.weight").dims
    assert [bool(d) for d in dims] == [False, False, True, False], dims
    out = loom.run(compiled, inputs)
    close(out["loss"], loss, STEP_RTOL)
    for name, w in expected.items():
        assert out[name].shape == tuple(w.shape), name
        close(out[name], w, STEP_RTOL)
        assert np.max(np.abs(out[name] - start[name])) > 1e-4
