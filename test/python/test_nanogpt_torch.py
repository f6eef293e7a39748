"""`loom-model gpt2` is nanoGPT's GPT, with `bias` and weight tying on or off.

The reference is an independent PyTorch implementation written from
karpathy/nanoGPT's `model.py` (LayerNorm with optional bias,
CausalSelfAttention with the fused `c_attn` split into q, k, v blocks and
the causal-mask buffer `attn.bias`, MLP, Block, GPT with `lm_head` tied to
`wte`), not from Loom's builder. Its `state_dict` is the checkpoint: for
each configuration

- the parameter names and shapes `loom-model` declares are exactly the
  state_dict's (minus the `attn.bias` mask buffers, and minus
  `lm_head.weight` when it is `transformer.wte.weight`);
- the forward loss of `loom-run` on the state_dict's weights equals the
  reference's `F.cross_entropy` in f64 to 1e-10 (relative).

The loader (`loom_inputs`) only drops the mask buffers and the tied
`lm_head.weight` (nanoGPT's state_dict lists both keys for one tensor):
every tensor goes to Loom as the state_dict holds it, `c_attn` in nanoGPT's
q, k, v row order and [3H, H] shape included (docs/Models.md, "Fused QKV
projection"). Labels use nanoGPT's ignore index -1
where Loom's graph uses -100. nanoGPT's MLP uses the exact (erf) GELU, so
Loom builds with `--gelu none`; the tanh form is Hugging Face's `gelu_new`.
Skipped when PyTorch is not installed.
"""

import math
import re
from dataclasses import dataclass

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python; the "
    "cross-checks against PyTorch need `import torch`")
nn = torch.nn
F = torch.nn.functional

import test_loom_run_torch as ref  # noqa: E402  (after the torch check)

RTOL = 1e-10

#===----------------------------------------------------------------------===#
# nanoGPT's model.py (dropout 0; the manual attention path, which is what
# PyTorch < 2.0 runs and what the mask buffer is for)
#===----------------------------------------------------------------------===#


@dataclass
class GPTConfig:
    block_size: int
    vocab_size: int
    n_layer: int
    n_head: int
    n_embd: int
    bias: bool = True
    # nanoGPT always ties; False removes its `wte.weight = lm_head.weight`.
    tie: bool = True
    # nanoGPT's nn.GELU() is the erf form; "tanh" is GPT-2's gelu_new.
    gelu: str = "none"


class LayerNorm(nn.Module):
    """LayerNorm but with an optional bias (PyTorch's has none of that)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd,
                                bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
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
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd,
                              bias=config.bias)
        self.gelu = nn.GELU(approximate=config.gelu)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd,
                                bias=config.bias)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        if config.tie:
            self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx, targets):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               targets.view(-1), ignore_index=-1)


#===----------------------------------------------------------------------===#
# The checkpoint, its loader into Loom's inputs, and the comparison
#===----------------------------------------------------------------------===#


def nanogpt(config, seed):
    """nanoGPT's GPT in f64 with random weights (std 0.2, norm weights
    around 1, so that every term matters)."""
    model = GPT(config).double()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.2)
            if re.search(r"\bln_(1|2|f)\.weight$", name):
                p.add_(1.0)
    return model


def loom_inputs(state_dict, config):
    """The checkpoint as Loom's parameters: no mask buffers, no tied
    lm_head; every tensor as it is."""
    out = {}
    for name, w in state_dict.items():
        if name.endswith(".attn.bias"):  # the causal-mask buffer
            continue
        if name == "lm_head.weight" and config.tie:  # is wte.weight
            assert w.data_ptr() == \
                state_dict["transformer.wte.weight"].data_ptr()
            continue
        out[name] = w.detach().clone()
    return out


def declared_parameters(ir):
    """`{name: shape}` of the `#loom.param` arguments of @forward, in the
    shape tensor files give them: `loom.file_shape` where the IR holds a
    row-major view, else the IR type's."""
    found = {}
    for m in re.finditer(r'tensor<((?:\d+x)+)f64> \{(?:loom\.file_shape = '
                         r'array<i64: ([\d, ]+)>, )?loom\.param = '
                         r'#loom\.param<"([^"]+)"', ir):
        shape = (m.group(2).split(", ") if m.group(2)
                 else m.group(1).split("x")[:-1])
        found[m.group(3)] = tuple(int(x) for x in shape)
    return found


CONFIGS = {
    # nanoGPT's defaults: bias=False (its train.py), tied, exact GELU.
    "nobias-tied": dict(bias=False, tie=True, gelu="none"),
    "bias-tied": dict(bias=True, tie=True, gelu="none"),
    "nobias-untied": dict(bias=False, tie=False, gelu="none"),
    "bias-untied-tanh": dict(bias=True, tie=False, gelu="tanh"),
}


@pytest.mark.parametrize("variant", sorted(CONFIGS))
def test_nanogpt_forward_loss(tmp_path, variant):
    opts = CONFIGS[variant]
    layers, hidden, heads, vocab, seq, batch = 2, 48, 4, 67, 12, 3
    config = GPTConfig(block_size=seq, vocab_size=vocab, n_layer=layers,
                       n_head=heads, n_embd=hidden, **opts)
    model = nanogpt(config, seed=60 + len(variant))
    ir = ref.model_ir(
        tmp_path, "gpt2", "--layers", str(layers), "--hidden", str(hidden),
        "--heads", str(heads), "--vocab", str(vocab), "--seq", str(seq),
        "--batch", str(batch), "--gelu", opts["gelu"],
        "--bias", str(opts["bias"]).lower(),
        "--tie-embeddings", str(opts["tie"]).lower())

    # Names and shapes: nanoGPT's, as the checkpoint holds them.
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()
                if not k.endswith(".attn.bias")}
    if opts["tie"]:
        del expected["lm_head.weight"]
    assert declared_parameters(ir) == expected
    if not opts["bias"]:
        assert not any(k.endswith(".bias") for k in expected)

    ids, labels = ref.batch(vocab, batch, seq, seed=61)
    out = ref.run(tmp_path, ir,
                  {**loom_inputs(model.state_dict(), config),
                   "input_ids": ids, "labels": labels}, entry="forward")
    with torch.no_grad():
        loss = model(ids, labels.masked_fill(labels == -100, -1))
    ref.close(out["loss"], loss, RTOL)


def test_c_attn_row_order_matters(tmp_path):
    """The comparison above sees c_attn's row order: the same weights with
    the rows of each head's q, k and v grouped together (Megatron-LM's
    head-major order, which Loom used before) give another loss."""
    config = GPTConfig(block_size=8, vocab_size=31, n_layer=1, n_head=4,
                       n_embd=16, bias=True)
    model = nanogpt(config, seed=70)
    ir = ref.model_ir(tmp_path, "gpt2", "--layers", "1", "--hidden", "16",
                      "--heads", "4", "--vocab", "31", "--seq", "8",
                      "--batch", "2", "--gelu", "none")
    ids, labels = ref.batch(31, 2, 8, seed=71)
    with torch.no_grad():
        loss = model(ids, labels.masked_fill(labels == -100, -1))
    inputs = loom_inputs(model.state_dict(), config)
    out = ref.run(tmp_path, ir, {**inputs, "input_ids": ids,
                                 "labels": labels}, entry="forward")
    ref.close(out["loss"], loss, RTOL)
    d = config.n_embd // config.n_head
    for name in list(inputs):
        if ".attn.c_attn." in name:
            w = inputs[name]
            # [3 (q, k, v), heads, D, ...] -> [heads, 3, D, ...].
            inputs[name] = w.reshape(3, config.n_head, d, *w.shape[1:]) \
                .transpose(0, 1).reshape(w.shape)
    out = ref.run(tmp_path, ir, {**inputs, "input_ids": ids,
                                 "labels": labels}, entry="forward")
    assert abs(float(out["loss"]) - float(loss)) > 1e-6 * abs(float(loss))


@pytest.mark.parametrize("variant", ["nobias-tied", "nobias-untied"])
def test_nanogpt_gradients_without_bias(tmp_path, variant):
    """The bias-free LayerNorm (normalize, then times the weight) trains:
    `optimizer=none`'s gradients equal torch.autograd's, each in the
    state_dict's shape (c_attn's [3H, H] included)."""
    import test_autodiff_torch as steps
    opts = CONFIGS[variant]
    config = GPTConfig(block_size=8, vocab_size=29, n_layer=2, n_head=2,
                       n_embd=16, **opts)
    model = nanogpt(config, seed=80)
    ir = ref.model_ir(tmp_path, "gpt2", "--layers", "2", "--hidden", "16",
                      "--heads", "2", "--vocab", "29", "--seq", "8",
                      "--batch", "2", "--gelu", "none", "--bias", "false",
                      "--tie-embeddings", str(opts["tie"]).lower())
    ids, labels = ref.batch(29, 2, 8, seed=81)
    loss = model(ids, labels.masked_fill(labels == -100, -1))
    loss.backward()
    out = steps.train_step(
        tmp_path, ir, "optimizer=none",
        {**loom_inputs(model.state_dict(), config), "input_ids": ids,
         "labels": labels})
    ref.close(out["loss"], loss, 1e-9)
    grads = {k: p.grad for k, p in model.named_parameters()}
    if opts["tie"]:
        # named_parameters lists the shared tensor once, as wte.
        grads["lm_head.weight"] = grads["transformer.wte.weight"]
    for name, grad in loom_inputs(grads, config).items():
        ref.close(out[name + ".grad"], grad, 1e-9)
