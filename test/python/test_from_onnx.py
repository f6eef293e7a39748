"""`loomc model.onnx`: nanoGPT's GPT through `torch.onnx.export`.

The model is test_from_torch.py's nanoGPT (written there the ordinary
PyTorch way: fused `c_attn` split into q, k, v, the `tril` buffer,
`masked_fill`, softmax, GELU, `lm_head` tied to `wte`, `F.cross_entropy(...,
ignore_index=-1)`), exported here with `torch.onnx.export` (Debian's torch
1.13 exports without the `onnx` package) at opsets 14-17, in eval and in
training mode, and compiled by `loomc` / `loom-translate --import-onnx`. In
f64:

- the parameters are the ones `named_parameters()` lists, under their names
  (the tied lm_head once, as wte), the attention of every layer is one
  causal `loom.attention` (no softmax left), every LayerNorm one
  `loom.layer_norm` (also when opsets < 17 decompose it), exact GELU one
  `loom.gelu`;
- the forward loss equals PyTorch's to 1e-10 (relative);
- one AdamW step (`loomc --optimizer adamw`, nanoGPT's decay groups) gives
  the loss and weights `torch.optim.AdamW` gives, to 1e-9, on one device and
  on a plan the search picks for 4 host devices (`--cluster host --devices
  4`, run on 4 simulated ranks).

Bad input (an unsupported operator, a truncated file, an initializer whose
shape disagrees with its use, a dynamic shape) is refused with every problem
named, a non-zero exit and no output file. Skipped without PyTorch.
"""

import functools
import math
import os
import pathlib
import re
import subprocess

import numpy as np
import pytest

import loom

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this Python; the test "
    "exports PyTorch modules to ONNX")
nn = torch.nn
F = torch.nn.functional

from test_from_torch import (CONFIGS, F32_TABLES_RTOL, FWD_RTOL,  # noqa
                             LR, LM, STEP_RTOL, close, gpt, llama,
                             torch_adamw_step, weights)
import onnx_writer  # noqa: E402

TOOLS = pathlib.Path(os.environ.get("LOOM_TOOLS_DIR") or pathlib.Path(
    __file__).resolve().parents[2] / "build" / "bin")


def tool(name, *args, check=True):
    result = subprocess.run([str(TOOLS / name), *map(str, args)],
                            capture_output=True, text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


@functools.lru_cache(maxsize=None)
def have_onnx():
    """Whether this build reads ONNX (one built without libonnx says so)."""
    tiny = pathlib.Path(__file__).resolve().parents[1] / "Target" / "ONNX" / \
        "Inputs" / "tiny.onnx"
    probe = tool("loom-translate", "--import-onnx", tiny, "-o", os.devnull,
                 check=False)
    return "has no ONNX support" not in probe.stderr


def export(model, idx, targets, path, opset=17, training=False, **kwargs):
    mode = (torch.onnx.TrainingMode.TRAINING if training
            else torch.onnx.TrainingMode.EVAL)
    # do_constant_folding=False keeps the weights' names: folding would
    # replace Transpose(W) by an unnamed transposed copy (and untie tied
    # weights).
    torch.onnx.export(model, (idx, targets), str(path), opset_version=opset,
                      input_names=["idx", "targets"],
                      output_names=["logits", "loss"], training=mode,
                      do_constant_folding=False, **kwargs)
    return path


def data(idx, targets):
    return {"input_ids": idx.numpy(), "labels": targets.numpy()}


pytestmark = pytest.mark.skipif(
    not (TOOLS / "loomc").exists(), reason="the Loom tools are not built")

VARIANTS = [("bias-tied", 17, False), ("nobias-untied", 14, True),
            ("bias-untied-tanh", 16, False), ("nobias-tied", 15, True)]


@pytest.mark.parametrize("variant,opset,training", VARIANTS)
def test_gpt_forward_loss(tmp_path, variant, opset, training):
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    model, idx, targets = gpt(seed=len(variant), **CONFIGS[variant])
    path = export(model, idx, targets, tmp_path / "gpt.onnx", opset, training)
    ir = tmp_path / "gpt.mlir"
    tool("loom-translate", "--import-onnx", path, "-o", ir)
    text = ir.read_text()

    # Parameters under their names, the tied one once.
    names = re.findall(r'#loom\.param<"([^"]+)"', text)
    assert sorted(names) == sorted(n for n, _ in model.named_parameters())
    # One causal attention per layer, the default scale; no softmax left.
    attention = re.findall(r"loom\.attention .*", text)
    assert len(attention) == model.config.n_layer, text
    assert all("{causal}" in a for a in attention), attention
    assert "loom.softmax" not in text
    assert "loom.cross_entropy" in text
    # Every LayerNorm is one layer_norm, also where opsets < 17 spell it
    # out (ReduceMean, Sub, Pow, Sqrt, Div); exact GELU is one gelu.
    n_layer = model.config.n_layer
    assert text.count("loom.layer_norm ") == 2 * n_layer + 1, text
    assert "loom.reduce_mean" not in text
    if model.config.gelu == "none":
        assert text.count("loom.gelu ") == n_layer, text

    out = loom.run(ir, {**weights(model), **data(idx, targets)},
                   entry="forward")
    with torch.no_grad():
        _, loss = model(idx, targets)
    close(out["loss"], loss, FWD_RTOL)


@pytest.mark.parametrize("variant,opset", [("bias-tied", 17),
                                           ("nobias-untied", 14)])
def test_gpt_adamw_step_single_and_4_ranks(tmp_path, variant, opset):
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    model, idx, targets = gpt(seed=11, **CONFIGS[variant])
    path = export(model, idx, targets, tmp_path / "gpt.onnx", opset)
    start = weights(model)
    inputs = {**start, **data(idx, targets)}
    loss, expected = torch_adamw_step(model, idx, targets)

    single = tmp_path / "single.mlir"
    tool("loomc", path, "--compile-to", "autodiff", "--optimizer", "adamw",
         "--lr", LR, "-o", single)
    out = loom.run(single, inputs, entry="train_step")
    close(out["loss"], loss, STEP_RTOL)
    for name, w in expected.items():
        close(out[name], w, STEP_RTOL)
        # The step moved every weight (the comparison is not vacuous).
        assert np.max(np.abs(out[name] - start[name])) > 1e-4

    # The Python API takes the .onnx path as loomc does.
    api = loom.run(loom.compile(path, phase="autodiff", optimizer="adamw",
                                lr=LR), inputs)
    for name, value in out.items():
        np.testing.assert_array_equal(api[name], value)
    close(loom.run(path, inputs)["loss"], loss, FWD_RTOL)

    parallel = tmp_path / "parallel.mlir"
    tool("loomc", path, "--compile-to", "partition", "--cluster", "host",
         "--devices", 4, "--optimizer", "adamw", "--lr", LR, "-o", parallel)
    assert "dist." in parallel.read_text()
    out = loom.run(parallel, inputs, entry="train_step", ranks=4)
    close(out["loss"], loss, STEP_RTOL)
    for name, w in expected.items():
        close(out[name], w, STEP_RTOL)


#===----------------------------------------------------------------------===#
# A Hugging Face-style Llama (test_from_torch.py's: RMSNorm, rotate_half RoPE
# from cos/sin buffers, GQA through repeat_kv or repeat_interleave, SwiGLU,
# a finfo.min causal mask; forward returns a dict)
#===----------------------------------------------------------------------===#


@pytest.mark.parametrize("repeat", ["repeat_kv", "repeat_interleave"])
def test_llama_forward_and_adamw_step(tmp_path, repeat):
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    model, ids, labels = llama(seed=21, repeat=repeat)
    path = tmp_path / "llama.onnx"
    torch.onnx.export(model, (ids, labels), str(path), opset_version=17,
                      input_names=["input_ids", "labels"],
                      output_names=["logits", "loss"],
                      do_constant_folding=False)
    ir = tmp_path / "llama.mlir"
    tool("loom-translate", "--import-onnx", path, "-o", ir)
    text = ir.read_text()
    # The RoPE tables are non-persistent buffers: the exporter inlines them
    # as constants, so the parameters are exactly named_parameters().
    names = re.findall(r'#loom\.param<"([^"]+)"', text)
    assert sorted(names) == sorted(n for n, _ in model.named_parameters())
    # The finfo.min mask is the causal triangle: one causal attention per
    # layer; the repeat (repeat_kv's Unsqueeze/Expand/Reshape, or
    # repeat_interleave's Split/Unsqueeze/Expand/Reshape/Concat) is undone,
    # so it is grouped-query attention (4 query heads, 2 key/value heads),
    # as from_torch gives it.
    attention = re.findall(r"loom\.attention .*", text)
    assert len(attention) == 2 and all("{causal}" in a for a in attention)
    for a in attention:
        assert re.search(r"\(tensor<4x4x8x4xf64>, tensor<4x2x8x4xf64>, "
                         r"tensor<4x2x8x4xf64>\)", a), a
    # Hugging Face's float32 RoPE tables are loom.rope's to the error of
    # float32 tables (docs/Frontends.md, "RoPE tables"): one per q and k.
    assert len(re.findall(r"loom\.rope ", text)) == 4
    assert "loom.concat" not in text and "loom.neg" not in text
    assert "loom.softmax" not in text
    # RMSNorm (`x * rsqrt(mean(x^2) + eps)`, then the weight) is one op: 2
    # per layer and the final one.
    assert text.count("loom.rms_norm ") == 5, text
    assert "loom.reduce_mean" not in text
    # SwiGLU's gate: the exported `x * sigmoid(x)` is one loom.silu.
    assert text.count("loom.silu ") == 2 and "loom.sigmoid" not in text

    # loom.rope's tables are exact: the numbers to equal are the same
    # model's with f64 tables; the float32-table model's loss is within
    # F32_TABLES_RTOL of them.
    exact, _, _ = llama(seed=21, repeat=repeat, rope_dtype=torch.float64)
    start = weights(model)
    inputs = {**start, "input_ids": ids.numpy(), "labels": labels.numpy()}
    with torch.no_grad():
        expected_loss = exact(ids, labels)["loss"]
        f32_tables_loss = model(ids, labels)["loss"]
    got = loom.run(ir, inputs, entry="forward")["loss"]
    close(got, expected_loss, FWD_RTOL)
    close(got, f32_tables_loss, F32_TABLES_RTOL)
    adamw_one_device_and_4_ranks(tmp_path, path, exact, ids, labels, start)


def adamw_one_device_and_4_ranks(tmp_path, path, model, ids, labels, start,
                                 extra=()):
    """One AdamW step of `loomc path` on 1 device and on a searched 4-rank
    plan equals torch.optim.AdamW's on `model` (decay on the matrices)."""
    inputs = {**start, "input_ids": ids.numpy(), "labels": labels.numpy()}
    params = dict(model.named_parameters())
    opt = torch.optim.AdamW(
        [{"params": [p for p in params.values() if p.dim() >= 2]},
         {"params": [p for p in params.values() if p.dim() < 2],
          "weight_decay": 0.0}], lr=LR)
    loss = model(ids, labels)["loss"]
    loss.backward()
    opt.step()
    for flags, ranks in ((["--compile-to", "autodiff"], None),
                         (["--compile-to", "partition", "--cluster", "host",
                           "--devices", 4], 4)):
        step = tmp_path / "step.mlir"
        tool("loomc", path, *flags, *extra, "--optimizer", "adamw", "--lr",
             LR, "-o", step)
        out = loom.run(step, inputs, entry="train_step", ranks=ranks)
        close(out["loss"], loss, STEP_RTOL)
        for name, p in params.items():
            close(out[name], p, STEP_RTOL)
            assert np.max(np.abs(out[name] - start[name])) > 1e-4


def test_llama_rope_in_model_precision_is_loom_rope(tmp_path):
    """With RoPE tables computed in the model's precision (f64 here), the
    exported `q * cos + rotate_half(q) * sin` of q and k is `loom.rope`
    (theta read from the tables), as through from_torch; the loss and one
    AdamW step on 1 device and on a searched 4-rank plan equal PyTorch's,
    and Megatron costs 4 all-reduces per layer, as on `loom-model llama`.
    (Hugging Face's float32 tables: test_llama_forward_and_adamw_step.)"""
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    model, ids, labels = llama(seed=23, rope_dtype=torch.float64,
                               rope_theta=500000.0)
    path = tmp_path / "llama.onnx"
    torch.onnx.export(model, (ids, labels), str(path), opset_version=17,
                      input_names=["input_ids", "labels"],
                      output_names=["logits", "loss"],
                      do_constant_folding=False)
    ir = tmp_path / "llama.mlir"
    tool("loom-translate", "--import-onnx", path, "-o", ir)
    text = ir.read_text()
    ropes = re.findall(r"loom\.rope .*", text)
    assert len(ropes) == 4, text
    assert all("{theta = 5.000000e+05 : f64}" in r for r in ropes), ropes
    assert "loom.concat" not in text and "loom.neg" not in text

    start = weights(model)
    inputs = {**start, "input_ids": ids.numpy(), "labels": labels.numpy()}
    with torch.no_grad():
        expected_loss = model(ids, labels)["loss"]
    close(loom.run(ir, inputs, entry="forward")["loss"], expected_loss,
          FWD_RTOL)
    params = dict(model.named_parameters())
    opt = torch.optim.AdamW(
        [{"params": [p for p in params.values() if p.dim() >= 2]},
         {"params": [p for p in params.values() if p.dim() < 2],
          "weight_decay": 0.0}], lr=LR)
    loss = model(ids, labels)["loss"]
    loss.backward()
    opt.step()
    for flags, ranks in ((["--compile-to", "autodiff"], None),
                         (["--compile-to", "partition", "--cluster", "host",
                           "--devices", 4], 4)):
        step = tmp_path / "step.mlir"
        tool("loomc", path, *flags, "--optimizer", "adamw", "--lr", LR, "-o",
             step)
        out = loom.run(step, inputs, entry="train_step", ranks=ranks)
        close(out["loss"], loss, STEP_RTOL)
        for name, p in params.items():
            close(out[name], p, STEP_RTOL)
            assert np.max(np.abs(out[name] - start[name])) > 1e-4

    per_depth = []
    for layers in (1, 2):
        deep, d_ids, _ = llama(seed=23, num_hidden_layers=layers,
                               rope_dtype=torch.float64)
        depth_path = tmp_path / f"llama{layers}.onnx"
        torch.onnx.export(deep, (d_ids, d_ids), str(depth_path),
                          opset_version=17,
                          input_names=["input_ids", "labels"],
                          output_names=["logits", "loss"],
                          do_constant_folding=False)
        per_depth.append(onnx_collectives(
            depth_path, tmp_path / f"llama{layers}.mlir",
            '{"data_parallel": 1, "model_parallel": 2}'))
    shallow, deep_found = per_depth
    assert {k: deep_found.get(k, 0) - shallow.get(k, 0)
            for k in deep_found} == {"all_reduce": 4}


@pytest.mark.parametrize("repeat", ["repeat_kv", "repeat_interleave"])
def test_llama_megatron_tensor_parallel(tmp_path, repeat):
    """Megatron (`--parallel-config` model_parallel 2) on the imported
    Llama: per layer two all-reduces forward and two backward, nothing else,
    as on `loom-model llama` and through `loom.from_torch`, whichever way
    the keys and values are repeated (both are grouped attention)."""
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    from test_from_torch import LlamaConfig, LlamaForCausalLM
    per_depth = []
    for layers in (1, 2):
        model = LlamaForCausalLM(LlamaConfig(
            num_hidden_layers=layers, repeat=repeat)).double()
        ids = torch.randint(0, 41, (4, 8))
        path = tmp_path / f"llama{layers}.onnx"
        torch.onnx.export(model, (ids, ids), str(path), opset_version=17,
                          input_names=["input_ids", "labels"],
                          output_names=["logits", "loss"],
                          do_constant_folding=False)
        out = tmp_path / f"llama{layers}.mlir"
        tool("loomc", path, "--compile-to", "partition", "--optimizer",
             "adamw", "--lr", LR, "--parallel-config",
             '{"data_parallel": 1, "model_parallel": 2}', "-o", out)
        found = {}
        for kind in re.findall(r"dist\.(all_reduce|all_gather|"
                               r"reduce_scatter|all_to_all|"
                               r"collective_permute)\b", out.read_text()):
            found[kind] = found.get(kind, 0) + 1
        per_depth.append(found)
    shallow, deep = per_depth
    assert {k: deep.get(k, 0) - shallow.get(k, 0) for k in deep} == \
        {"all_reduce": 4}


def onnx_collectives(path, out, parallel_config):
    tool("loomc", path, "--compile-to", "partition", "--optimizer", "adamw",
         "--lr", LR, "--parallel-config", parallel_config, "-o", out)
    found = {}
    for kind in re.findall(r"dist\.(all_reduce|all_gather|reduce_scatter|"
                           r"all_to_all|collective_permute)\b",
                           out.read_text()):
        found[kind] = found.get(kind, 0) + 1
    return found


def test_gpt_megatron_tensor_parallel(tmp_path):
    """Megatron on the exported nanoGPT: its `MatMul` + `Add` + `Split` of
    c_attn is held as the [3, 1, H, H] view (loom-view-fused-projections,
    in the import pipeline), so a layer costs two all-reduces forward and
    two backward, as through `loom.from_torch` and on `loom-model gpt2`;
    and one AdamW step on a 4-rank plan with tp = 2 gives
    torch.optim.AdamW's weights, in nanoGPT's [3H, H] layout."""
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    megatron = '{"data_parallel": 1, "model_parallel": 2}'
    per_depth = []
    for layers in (1, 2):
        model, idx, targets = gpt(seed=11, n_layer=layers)
        path = export(model, idx, targets, tmp_path / f"gpt{layers}.onnx")
        per_depth.append(onnx_collectives(
            path, tmp_path / f"gpt{layers}.mlir", megatron))
    shallow, deep = per_depth
    assert {k: deep.get(k, 0) - shallow.get(k, 0) for k in deep} == \
        {"all_reduce": 4}

    start = weights(model)
    inputs = {**start, **data(idx, targets)}
    loss, expected = torch_adamw_step(model, idx, targets)
    step = tmp_path / "tp.mlir"
    tool("loomc", path, "--compile-to", "partition", "--optimizer", "adamw",
         "--lr", LR, "--parallel-config",
         '{"data_parallel": 2, "model_parallel": 2}', "-o", step)
    text = step.read_text()
    hidden = model.config.n_embd
    assert f"loom.file_shape = array<i64: {3 * hidden}, {hidden}>" in text
    out = loom.run(step, inputs, entry="train_step", ranks=4)
    close(out["loss"], loss, STEP_RTOL)
    for name, w in expected.items():
        assert out[name].shape == tuple(w.shape), name
        close(out[name], w, STEP_RTOL)
        assert np.max(np.abs(out[name] - start[name])) > 1e-4


#===----------------------------------------------------------------------===#
# Bad input
#===----------------------------------------------------------------------===#


def refused(tmp_path, path, *patterns):
    """loomc and loom-translate exit non-zero, print every pattern, and
    write no output file."""
    for command in (["loomc", path, "--compile-to", "import"],
                    ["loom-translate", "--import-onnx", path]):
        out = tmp_path / "out.mlir"
        result = tool(*command, "-o", out, check=False)
        assert result.returncode != 0
        assert not out.exists()
        for pattern in patterns:
            assert re.search(pattern, result.stderr), result.stderr
        assert "Assertion" not in result.stderr
        assert "Stack dump" not in result.stderr


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


def test_unsupported_operators_are_all_listed(tmp_path):
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    idx = torch.randint(0, 11, (2, 4))
    path = tmp_path / "unsupported.onnx"
    torch.onnx.export(Unsupported().double(), (idx, idx), str(path),
                      opset_version=17, do_constant_folding=False)
    refused(tmp_path, path, r"2 problem\(s\) prevent importing",
            r"node '/CumSum' \(CumSum\): unsupported operator",
            r"node '/TopK' \(TopK\): unsupported operator")


def test_truncated_and_garbage_files(tmp_path):
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    model, idx, targets = gpt(seed=1, n_layer=1)
    whole = export(model, idx, targets, tmp_path / "gpt.onnx").read_bytes()
    for cut in (len(whole) // 3, len(whole) - 7):
        path = tmp_path / "truncated.onnx"
        path.write_bytes(whole[:cut])
        refused(tmp_path, path, r"truncated\.onnx: not a valid ONNX model")
    path = tmp_path / "garbage.onnx"
    path.write_bytes(b"\x00\xff garbage " * 50)
    refused(tmp_path, path, r"garbage\.onnx: not a valid ONNX model")


def test_initializer_shape_disagrees_with_its_use(tmp_path):
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    path = tmp_path / "mismatch.onnx"
    path.write_bytes(onnx_writer.tiny_lm(dim=4, ln_dim=5))
    refused(tmp_path, path, r"node '/ln/LayerNormalization' "
            r"\(LayerNormalization\): scale has shape \[5\], expected \[4\]")
    path.write_bytes(onnx_writer.tiny_lm(wte_dims=(11, 5)))
    refused(tmp_path, path, r"initializer: tensor 'wte' declares 55 "
            r"element\(s\) \(shape \[11, 5\]\) but its data holds 352 byte")


def test_dynamic_shapes_are_refused(tmp_path):
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    model, idx, targets = gpt(seed=2, n_layer=1)
    path = export(model, idx, targets, tmp_path / "dynamic.onnx",
                  dynamic_axes={"idx": {0: "batch"}, "targets": {0: "batch"}})
    refused(tmp_path, path, r"graph input 'idx' has a dynamic shape "
            r"\[\?, 8\]: Loom graphs have static shapes")


#===----------------------------------------------------------------------===#
# Masks other than the causal triangle
#===----------------------------------------------------------------------===#


class MaskedLM(nn.Module):
    """One attention layer with a banded mask buffer (each query sees itself
    and the `band - 1` keys before it), filled with -inf (`loom.attention`
    with the mask operand) or with a finite -1e4 (no select in Loom: it
    stays primitive, `x * keep + fill`)."""

    def __init__(self, fill, vocab=13, dim=8, heads=2, block=8, band=3):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.heads, self.fill = heads, fill
        i = torch.arange(block)
        band_mask = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :]
                                                  < band)
        self.register_buffer("band", band_mask.view(1, 1, block, block))

    def forward(self, idx, targets):
        B, T = idx.size()
        x = self.wte(idx)
        q, k, v = self.qkv(x).split(x.size(-1), dim=2)
        q, k, v = (t.view(B, T, self.heads, -1).transpose(1, 2)
                   for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(~self.band[:, :, :T, :T], self.fill)
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(B, T, -1)
        logits = self.head(x + self.proj(y))
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               targets.view(-1))


@pytest.mark.parametrize("fill", [float("-inf"), -1e4])
def test_banded_mask_forward_and_step(tmp_path, fill):
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    torch.manual_seed(4)
    model = MaskedLM(fill).double()
    idx = torch.randint(0, 13, (2, 6))
    targets = torch.randint(0, 13, (2, 6))
    path = tmp_path / "masked.onnx"
    torch.onnx.export(model, (idx, targets), str(path), opset_version=17,
                      input_names=["idx", "targets"],
                      do_constant_folding=False)
    ir = tmp_path / "masked.mlir"
    tool("loom-translate", "--import-onnx", path, "-o", ir)
    text = ir.read_text()
    if fill == float("-inf"):
        # Not the causal triangle: the band is the mask operand.
        attention = re.findall(r"loom\.attention .*", text)
        assert len(attention) == 1 and "causal" not in attention[0]
        assert attention[0].count("%") == 4, attention
    else:
        assert "loom.attention" not in text and "loom.softmax" in text
    inputs = {**weights(model), **data(idx, targets)}
    with torch.no_grad():
        expected = model(idx, targets)
    close(loom.run(ir, inputs, entry="forward")["loss"], expected, FWD_RTOL)

    # One SGD step's weights (gradients through the mask path).
    step = tmp_path / "step.mlir"
    tool("loomc", path, "--compile-to", "autodiff", "--optimizer", "sgd",
         "--lr", LR, "-o", step)
    out = loom.run(step, inputs, entry="train_step")
    model(idx, targets).backward()
    with torch.no_grad():
        for name, p in model.named_parameters():
            close(out[name], p - LR * p.grad, STEP_RTOL)


#===----------------------------------------------------------------------===#
# nn.TransformerEncoderLayer (nn.MultiheadAttention: heads folded into the
# batch, the scale on the queries)
#===----------------------------------------------------------------------===#


class EncoderLM(nn.Module):
    """Token and learned position embeddings, two post-LN
    nn.TransformerEncoderLayers in their (S, N, E) layout, a linear head;
    `causal`: the square subsequent mask."""

    def __init__(self, causal, vocab=29, dim=16, heads=4, seq=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(seq, dim)
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(
            dim, heads, 32, dropout=0.0) for _ in range(2)])
        self.head = nn.Linear(dim, vocab)
        self.causal = causal

    def forward(self, data, targets):
        s = data.size(0)
        x = self.wte(data) + self.wpe(torch.arange(s)).unsqueeze(1)
        mask = nn.Transformer.generate_square_subsequent_mask(s).to(
            x.dtype) if self.causal else None
        for layer in self.layers:
            x = layer(x, src_mask=mask)
        logits = self.head(x)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)),
                               targets.reshape(-1))


@pytest.mark.parametrize("causal", [False, True])
def test_transformer_encoder_layer_forward_and_step(tmp_path, causal):
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    torch.manual_seed(31)
    model = EncoderLM(causal).double()
    tokens = torch.randint(0, 29, (8, 4))
    targets = torch.randint(0, 29, (8, 4))
    path = tmp_path / "encoder.onnx"
    torch.onnx.export(model, (tokens, targets), str(path), opset_version=17,
                      input_names=["data", "targets"],
                      do_constant_folding=False)
    ir = tmp_path / "encoder.mlir"
    tool("loom-translate", "--import-onnx", path, "-o", ir)
    text = ir.read_text()
    names = re.findall(r'#loom\.param<"([^"]+)"', text)
    assert sorted(names) == sorted(n for n, _ in model.named_parameters())
    # One attention per layer over [B, H, S, D] (unfolded from the
    # exporter's [B * H, S, D]), causal with the subsequent mask.
    attention = re.findall(r"loom\.attention .*", text)
    assert len(attention) == 2 and "loom.softmax" not in text
    assert all(("{causal}" in a) == causal for a in attention), attention
    assert all("tensor<4x4x8x4xf64>" in a for a in attention), attention

    inputs = {**weights(model), **data(tokens, targets)}
    with torch.no_grad():
        expected = model(tokens, targets)
    close(loom.run(ir, inputs, entry="forward")["loss"], expected, FWD_RTOL)
    step = tmp_path / "step.mlir"
    tool("loomc", path, "--compile-to", "autodiff", "--optimizer", "sgd",
         "--lr", 0.5, "-o", step)
    out = loom.run(step, inputs, entry="train_step")
    loss = model(tokens, targets)
    loss.backward()
    torch.optim.SGD(model.parameters(), lr=0.5).step()
    close(out["loss"], loss, STEP_RTOL)
    for name, p in model.named_parameters():
        close(out[name], p, STEP_RTOL)


#===----------------------------------------------------------------------===#
# Persistent float buffers (initializers that do not train)
#===----------------------------------------------------------------------===#


def test_persistent_sinusoidal_table_is_a_constant(tmp_path):
    """The PyTorch seed's TransformerEncoder LM (test_from_torch.py's LM:
    nn.TransformerEncoderLayer, a sinusoidal `pe` registered the default,
    persistent way): the exporter writes `pe` as an initializer, read
    through a Slice (`pe[:S]`), so it is a constant; the parameters are
    exactly named_parameters(), and the loss and one SGD step equal
    PyTorch's. `--onnx-parameters` makes it a parameter all the same, and
    `--onnx-constants` holds a weight constant (it is then not trained)."""
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    torch.manual_seed(31)
    model = LM(causal=True).double()
    tokens = torch.randint(0, 29, (4, 8))
    targets = torch.randint(0, 29, (32,))
    assert "encoder.pos_encoder.pe" in model.state_dict()
    path = tmp_path / "seed.onnx"
    torch.onnx.export(model, (tokens, targets), str(path), opset_version=17,
                      input_names=["data", "targets"],
                      do_constant_folding=False)
    ir = tmp_path / "seed.mlir"
    tool("loom-translate", "--import-onnx", path, "-o", ir)
    text = ir.read_text()
    names = re.findall(r'#loom\.param<"([^"]+)"', text)
    assert sorted(names) == sorted(n for n, _ in model.named_parameters())
    assert len(re.findall(r"loom\.attention .*", text)) == 2

    inputs = {**weights(model), "input_ids": tokens.numpy(),
              "labels": targets.numpy()}
    with torch.no_grad():
        expected = model(tokens, targets)
    close(loom.run(ir, inputs, entry="forward")["loss"], expected, FWD_RTOL)
    step = tmp_path / "step.mlir"
    tool("loomc", path, "--compile-to", "autodiff", "--optimizer", "sgd",
         "--lr", 0.5, "-o", step)
    out = loom.run(step, inputs, entry="train_step")
    loss = model(tokens, targets)
    loss.backward()
    torch.optim.SGD(model.parameters(), lr=0.5).step()
    close(out["loss"], loss, STEP_RTOL)
    for name, p in model.named_parameters():
        close(out[name], p, STEP_RTOL)

    # The user's word over the rule, in both tools.
    pe, weight = "encoder.pos_encoder.pe", "decoder.decoder.weight"
    for command in (["loom-translate", "--import-onnx"],
                    ["loomc", "--compile-to", "import"]):
        tool(*command, path, f"--onnx-parameters={pe}",
             f"--onnx-constants={weight}", "-o", ir)
        names = set(re.findall(r'#loom\.param<"([^"]+)"', ir.read_text()))
        assert pe in names and weight not in names
        assert names - {pe} == {n for n, _ in model.named_parameters()} - \
            {weight}
    # loom.compile takes them as keywords (the C API's options).
    ir_text = loom.compile(path, phase="import", onnx_parameters=pe).ir
    assert pe in re.findall(r'#loom\.param<"([^"]+)"', ir_text)


def test_onnx_buffer_options_bad_input(tmp_path):
    """A name that is not an initializer, a name given both ways, and the
    flags on a non-ONNX input are errors: named, exit non-zero, no
    output."""
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    torch.manual_seed(31)
    model = LM().double()
    tokens = torch.randint(0, 29, (4, 8))
    path = tmp_path / "seed.onnx"
    torch.onnx.export(model, (tokens, tokens.reshape(-1)), str(path),
                      opset_version=17, input_names=["data", "targets"],
                      do_constant_folding=False)
    pe = "encoder.pos_encoder.pe"
    cases = [
        (["--onnx-constants=no.such.weight"],
         r"--onnx-constants names 'no\.such\.weight', which is not an "
         r"initializer of the model"),
        ([f"--onnx-constants={pe}", f"--onnx-parameters={pe}"],
         rf"'{re.escape(pe)}' is named by both --onnx-constants and "
         r"--onnx-parameters"),
    ]
    for flags, pattern in cases:
        for command in (["loom-translate", "--import-onnx"],
                        ["loomc", "--compile-to", "import"]):
            out = tmp_path / "out.mlir"
            result = tool(*command, path, *flags, "-o", out, check=False)
            assert result.returncode != 0 and not out.exists()
            assert re.search(pattern, result.stderr), result.stderr
    graph = tmp_path / "graph.json"
    graph.write_text("{}")
    result = tool("loomc", graph, "--onnx-constants=x", "-o",
                  tmp_path / "out.mlir", check=False)
    assert result.returncode != 0
    assert "--onnx-constants applies to an ONNX input (.onnx)" in \
        result.stderr, result.stderr


def test_llama_persistent_rope_tables_are_constants(tmp_path):
    """A Llama whose RoPE tables are persistent buffers (older
    transformers): the exporter writes them as initializers, read through
    a Slice (`cos_cached[:, :, :S]`), so they are constants, the rotation
    is one loom.rope per q and k, and the parameters are exactly
    named_parameters(); the loss equals the exact-table model's to 1e-10
    and one AdamW step torch.optim.AdamW's to 1e-9."""
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    model, ids, labels = llama(seed=24, rope_persistent=True)
    assert "layers.0.self_attn.rotary_emb.cos_cached" in model.state_dict()
    path = tmp_path / "llama.onnx"
    torch.onnx.export(model, (ids, labels), str(path), opset_version=17,
                      input_names=["input_ids", "labels"],
                      output_names=["logits", "loss"],
                      do_constant_folding=False)
    ir = tmp_path / "llama.mlir"
    tool("loom-translate", "--import-onnx", path, "-o", ir)
    text = ir.read_text()
    names = re.findall(r'#loom\.param<"([^"]+)"', text)
    assert sorted(names) == sorted(n for n, _ in model.named_parameters())
    assert len(re.findall(r"loom\.rope ", text)) == 4
    exact, _, _ = llama(seed=24, rope_dtype=torch.float64)
    start = weights(model)
    with torch.no_grad():
        expected = exact(ids, labels)["loss"]
    close(loom.run(ir, {**start, "input_ids": ids.numpy(),
                        "labels": labels.numpy()}, entry="forward")["loss"],
          expected, FWD_RTOL)
    adamw_one_device_and_4_ranks(tmp_path, path, exact, ids, labels, start)


#===----------------------------------------------------------------------===#
# Malformed graphs never crash the importer
#===----------------------------------------------------------------------===#

FUZZ_OPS = [
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Tanh", "Relu", "Erf",
    "MatMul", "Gemm", "Gather", "Reshape", "Flatten", "Unsqueeze", "Squeeze",
    "Transpose", "Split", "Slice", "Concat", "Where", "Softmax",
    "LogSoftmax", "LayerNormalization", "ReduceMean", "ReduceSum",
    "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss", "Dropout",
    "Cast", "Identity", "Expand", "Constant", "ConstantOfShape", "Shape",
    "Size", "Range", "Equal", "Less", "Not", "Trilu"]


def random_graph(rng):
    """A graph of random nodes over the supported operators, with random
    inputs (missing, wrong arity, wrong types and ranks), outputs and
    attributes."""
    w = onnx_writer

    def attr():
        key = rng.choice(["axis", "perm", "axes", "keepdims", "to",
                          "epsilon", "split", "allowzero", "transB",
                          "upper", "value"])
        if key in ("perm", "axes", "split"):
            return w.attr_ints(key, [rng.randint(-3, 4)
                                     for _ in range(rng.randint(0, 4))])
        if key == "epsilon":
            return w.attr_float(key, rng.choice([1e-5, -1.0, 0.0]))
        if key == "value":
            return w.attr_tensor(key, w.tensor("", np.array(rng.choice(
                [[1, 2], [0], [-1, 4], [3]])), w.INT64))
        return w.attr_int(key, rng.randint(-3, 12))

    names = ["ids", "labels", "wte", "ln.weight", "c0", "c1"]
    nodes = [
        w.node("Constant", [], ["c0"], "/c0", [w.attr_tensor(
            "value", w.tensor("", np.array([2, -1]), w.INT64))]),
        w.node("Constant", [], ["c1"], "/c1", [w.attr_tensor(
            "value", w.tensor("", np.array(rng.choice([0.5, -np.inf]))))])]
    for i in range(rng.randint(1, 8)):
        inputs = [rng.choice(names + [""]) for _ in range(rng.randint(0, 4))]
        outputs = [f"v{i}_{j}" for j in range(rng.randint(0, 3))]
        nodes.append(w.node(rng.choice(FUZZ_OPS), inputs, outputs, f"/n{i}",
                            [attr() for _ in range(rng.randint(0, 3))]))
        names += outputs
    return w.model(
        nodes, [w.value_info("ids", w.INT64, [2, 3]),
                w.value_info("labels", w.INT64, [2, 3])],
        [w.value_info(rng.choice(names), w.DOUBLE, [])],
        [w.tensor("wte", np.random.default_rng(0).normal(size=(11, 4))),
         w.tensor("ln.weight", np.ones(4))], opset=rng.choice([13, 17]))


def test_malformed_graphs_are_errors_not_crashes(tmp_path):
    """150 random graphs (fixed seed) and 60 damaged copies of a real
    export: each is imported or refused with exit status 1 and a message;
    never a signal, an assertion or a stack dump. (These inputs found
    out-of-bounds reads on missing inputs and rank mismatches.)"""
    if not have_onnx():
        pytest.skip("this Loom build has no ONNX support")
    import random
    rng = random.Random(2026)
    cases = [random_graph(rng) for _ in range(150)]
    model, idx, targets = gpt(seed=1, n_layer=1, n_embd=8, n_head=2)
    whole = export(model, idx, targets, tmp_path / "gpt.onnx").read_bytes()
    for k in range(60):
        damaged = bytearray(whole)
        if k % 2:
            damaged = damaged[:rng.randrange(len(damaged))]
        else:
            for _ in range(3):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        cases.append(bytes(damaged))
    path = tmp_path / "case.onnx"
    for data in cases:
        path.write_bytes(data)
        result = subprocess.run(
            [str(TOOLS / "loom-translate"), "--import-onnx", str(path), "-o",
             str(tmp_path / "out.mlir")], capture_output=True, text=True,
            errors="replace", timeout=60)
        assert result.returncode in (0, 1), result.stderr[-2000:]
        assert "Stack dump" not in result.stderr, result.stderr[-2000:]
        if result.returncode:
            assert "error:" in result.stderr
            assert not (tmp_path / "out.mlir").exists()
        else:
            (tmp_path / "out.mlir").unlink()
