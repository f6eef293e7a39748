"""`loom.from_torch` through `torch.export` (PyTorch >= 2.6).

With PyTorch >= 2.6, from_torch exports the module's loss with
`torch.export.export` (non-strict) and decomposes it to core ATen, keeping
the ATen ops Loom maps whole; make_fx (PyTorch 1.13's path) is not used.
These tests check that it is the path taken and that the three models of
test_from_torch.py come through it with their attention recognised and
their loss PyTorch's in f64. Every other test of test_from_torch.py runs
through the same path under PyTorch 2 (docs/Frontends.md, "Tracing with
torch.export", says how to run them). Skipped with PyTorch < 2.6, as
on Debian's 1.13 (CI).
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python")
import loom  # noqa: E402
from loom.frontends import torch as frontend  # noqa: E402

if not frontend._has_torch_export():
    pytest.skip(f"from_torch uses torch.export from PyTorch 2.6 on (this is "
                f"{torch.__version__}); docs/Frontends.md says how to run "
                f"these tests", allow_module_level=True)

from test_from_torch import (FWD_RTOL, LM, close, gpt, llama,  # noqa: E402
                             ops, weights)


@pytest.fixture(autouse=True)
def no_make_fx(monkeypatch):
    """make_fx is PyTorch 1.13's path: calling it fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("from_torch traced with make_fx, not "
                             "torch.export")
    monkeypatch.setattr(frontend, "_trace", refuse)


def test_gpt_through_torch_export():
    model, idx, targets = gpt(seed=3)
    graph = loom.from_torch(model, (idx, targets), loss=1)
    # The tied lm_head is lifted under both names; it is one parameter.
    assert [p["name"] for p in graph.parameters] == \
        [n for n, _ in model.named_parameters()]
    attention = ops(graph, "attention")
    assert len(attention) == model.config.n_layer
    assert all(o["attributes"] == {"causal": True} for o in attention)
    assert not ops(graph, "softmax")
    with torch.no_grad():
        expected = model(idx, targets)[1]
    close(loom.run(graph, {**weights(model), "idx": idx.numpy(),
                           "targets": targets.numpy()})["loss"], expected,
          FWD_RTOL)


@pytest.mark.parametrize("repeat", ["repeat_kv", "repeat_interleave"])
def test_llama_through_torch_export(repeat):
    model, ids, labels = llama(seed=21, repeat=repeat)
    graph = loom.from_torch(model, (ids, labels), loss="loss")
    assert [p["name"] for p in graph.parameters] == \
        [n for n, _ in model.named_parameters()]
    assert len(ops(graph, "rms_norm")) == 5 and len(ops(graph, "rope")) == 4
    attention = ops(graph, "attention")
    assert len(attention) == 2
    for o in attention:
        assert graph.tensor(o["operands"][1]).shape == (4, 2, 8, 4)
    exact, _, _ = llama(seed=21, repeat=repeat, rope_dtype=torch.float64)
    with torch.no_grad():
        expected = exact(ids, labels)["loss"]
    close(loom.run(graph, {**weights(model), "input_ids": ids.numpy(),
                           "labels": labels.numpy()})["loss"], expected,
          FWD_RTOL)


def test_encoder_lm_through_torch_export():
    torch.manual_seed(31)
    model = LM(causal=True).double()
    data = torch.randint(0, 29, (4, 8))
    targets = torch.randint(0, 29, (32,))
    graph = loom.from_torch(model, (data, targets))
    # The persistent `pe` buffer is lifted as a buffer: a constant.
    assert [p["name"] for p in graph.parameters] == \
        [n for n, _ in model.named_parameters()]
    attention = ops(graph, "attention")
    assert len(attention) == 2 and not ops(graph, "softmax")
    with torch.no_grad():
        expected = model(data, targets)
    close(loom.run(graph, {**weights(model), "data": data.numpy(),
                           "targets": targets.numpy()})["loss"], expected,
          FWD_RTOL)


class SdpaLM(torch.nn.Module):
    """Attention through `F.scaled_dot_product_attention` (which PyTorch
    1.13 lacks): causal, or with a boolean band mask (True: attend)."""

    def __init__(self, causal):
        super().__init__()
        nn = torch.nn
        self.wte = nn.Embedding(11, 16)
        self.qkv = nn.Linear(16, 48)
        self.proj = nn.Linear(16, 16)
        self.head = nn.Linear(16, 11)
        self.causal = causal
        i = torch.arange(8)
        self.register_buffer("band", (i[None, :] - i[:, None]).abs() <= 2)

    def forward(self, idx, targets):
        F = torch.nn.functional
        b, t = idx.shape
        x = self.wte(idx)
        q, k, v = self.qkv(x).split(16, dim=2)
        q, k, v = (y.view(b, t, 4, 4).transpose(1, 2) for y in (q, k, v))
        if self.causal:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.band)
        y = self.proj(y.transpose(1, 2).reshape(b, t, 16))
        return F.cross_entropy(self.head(x + y).view(-1, 11),
                               targets.view(-1))


@pytest.mark.parametrize("causal", [True, False])
def test_scaled_dot_product_attention_through_torch_export(causal):
    """F.scaled_dot_product_attention is one loom.attention (causal, or
    the band as its additive mask operand); the loss is PyTorch's."""
    torch.manual_seed(7)
    model = SdpaLM(causal).double()
    idx = torch.randint(0, 11, (2, 8))
    targets = torch.randint(0, 11, (2, 8))
    graph = loom.from_torch(model, (idx, targets))
    attention = ops(graph, "attention")
    assert len(attention) == 1 and not ops(graph, "softmax")
    assert attention[0].get("attributes", {}) == (
        {"causal": True} if causal else {})
    assert len(attention[0]["operands"]) == (3 if causal else 4)
    with torch.no_grad():
        expected = model(idx, targets)
    close(loom.run(graph, {**weights(model), "idx": idx.numpy(),
                           "targets": targets.numpy()})["loss"], expected,
          FWD_RTOL)
