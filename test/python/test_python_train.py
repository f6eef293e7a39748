"""`loom.train`: the trainer's options from Python (and the C API).

The keywords are the training executable's flags, read from the table it
parses with (`loomTrainOptionGet*`), and a command line is checked by its
parser (`loomTrainArgsCheck`) before any rank starts. Checked here:

- the table names every option of the training loop (schedule, warmup, min
  lr, decay steps, grad-accum, evaluation, metrics, init-from);
- a bad combination is refused in the executable's words, before a run;
- `loom.train` with a schedule, evaluation, metrics and pretrained weights
  gives exactly the losses, rates and validation losses of `launch.sh` run
  by hand with the same flags (f64, 2 MPI ranks), and the first loss is the
  independent PyTorch GPT-2's on the loaded weights (1e-10);
- a grad-accum the program was not compiled for fails with its message.
Skipped without mpirun or PyTorch.
"""

import json
import shutil
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the reference is PyTorch")

import loom  # noqa: E402
from loom.tools import find_tool  # noqa: E402
import safetensors_io  # noqa: E402
import test_init_from as init  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None,
                                reason="the emitted trainer runs under mpirun")


def test_options_name_the_training_loop():
    opts = loom.trainer.options()
    for name in ("data", "steps", "lr_schedule", "warmup_steps", "min_lr",
                 "decay_steps", "step_gamma", "step_every", "grad_accum",
                 "eval_data", "eval_every", "eval_steps", "metrics",
                 "init_from", "init_format", "ckpt_dir"):
        flag, takes_value, description = opts[name]
        assert flag == "--" + name.replace("_", "-") and takes_value
        assert description
    assert opts["resume"][1] is False


@pytest.mark.parametrize("kwargs,message", [
    (dict(min_lr=0.01),
     "--min-lr applies to --lr-schedule cosine or linear, not constant"),
    (dict(lr_schedule="step"), "--lr-schedule step needs --step-every N"),
    (dict(init_from="w.safetensors"),
     "--init-from needs --init-format loom|nanogpt|hf"),
    (dict(eval_every=2), "--eval-every shapes the evaluation"),
    (dict(warmup_steps=-1), "--warmup-steps expects an integer >= 0, got `-1`"),
    (dict(lr_shedule="cosine"), "unknown option(s) lr_shedule"),
    (dict(resume=1), "resume is a switch: pass True"),
])
def test_bad_options_are_refused_before_a_run(tmp_path, kwargs, message):
    with pytest.raises(loom.LoomError) as e:
        loom.trainer.command_line(data="t.bin", steps=3, **kwargs)
    assert message in str(e.value)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """A dp=2 GPT-2 program (f64), token files and HF-layout weights."""
    root = tmp_path_factory.mktemp("train")
    rng = np.random.default_rng(5)
    rng.integers(0, init.VOCAB, 4000).astype(np.uint16).tofile(
        root / "train.bin")
    rng.integers(0, init.VOCAB, 400).astype(np.uint16).tofile(root / "val.bin")
    subprocess.run([str(find_tool("loom-model")), "gpt2", "--layers",
                    str(init.GPT_LAYERS), "--hidden", str(init.GPT_HIDDEN),
                    "--heads", str(init.GPT_HEADS), "--vocab",
                    str(init.VOCAB), "--seq", str(init.SEQ), "--batch",
                    str(init.BATCH), "-o", str(root / "gpt2.mlir")],
                   check=True, capture_output=True)
    subprocess.run([str(find_tool("loomc")), str(root / "gpt2.mlir"),
                    "--mesh", "dp=2", "--lr", "0.05", "--emit", "host",
                    "--emit-dtypes", "f64", "-o", str(root / "prog")],
                   check=True, capture_output=True)
    w = init.hf_gpt2_weights(seed=51)
    safetensors_io.save(root / "hf.safetensors",
                        {k: v.numpy() for k, v in w.items()})
    return root, w


def test_train_passes_every_option_through(program):
    root, w = program
    flags = dict(data=root / "train.bin", data_format="uint16",
                 data_order="sequential", dtype="f64", steps=4,
                 lr_schedule="cosine", warmup_steps=1, min_lr=0.005,
                 decay_steps=4, eval_data=root / "val.bin", eval_every=2,
                 eval_steps=1, init_from=root / "hf.safetensors",
                 init_format="hf")
    result = loom.train(root / "prog", metrics=root / "py.jsonl", **flags)
    assert sorted(result.losses) == [1, 2, 3, 4]
    assert sorted(result.val_losses) == [0, 2, 4]
    assert "initialized " in result.log

    # launch.sh by hand with the same flags.
    args = []
    for key, value in flags.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    subprocess.run([str(root / "prog" / "launch.sh"), *args, "--metrics",
                    str(root / "sh.jsonl")], check=True, capture_output=True)
    by_hand = [json.loads(l) for l in
               (root / "sh.jsonl").read_text().splitlines()]
    assert len(by_hand) == len(result.metrics)
    for ours, theirs in zip(result.metrics, by_hand):
        for key in ("step", "loss", "lr", "val_loss"):
            assert ours.get(key) == theirs.get(key), (key, ours, theirs)
    # The schedule took effect: warmup, then a cosine to the minimum.
    rates = [r["lr"] for r in result.metrics if "lr" in r]
    assert rates[0] < rates[1] and rates[-1] < rates[1]

    # The first loss is the PyTorch model's on the loaded weights.
    subprocess.run([str(find_tool("loom-data")), "batch",
                    str(root / "train.bin"), "--format", "uint16", "--batch",
                    str(init.BATCH), "--seq", str(init.SEQ), "--step", "0",
                    "--sequential", "-o", str(root / "b0.safetensors")],
                   check=True, capture_output=True)
    b = safetensors_io.load(root / "b0.safetensors")
    expected = init.hf_gpt2_loss(
        w, torch.from_numpy(b["input_ids"].astype(np.int64)),
        torch.from_numpy(b["labels"].astype(np.int64)))
    first = [r for r in result.metrics if r["step"] == 1 and "loss" in r][0]
    assert abs(first["loss"] - expected) <= 1e-10 * abs(expected)


def test_a_failing_run_raises_the_executables_message(program):
    root, _ = program
    with pytest.raises(loom.LoomError) as e:
        loom.train(root / "prog", data=root / "train.bin",
                   data_format="uint16", dtype="f64", steps=1, grad_accum=2)
    assert "--grad-accum 2: @train_step accumulates over 1 micro-batch" in \
        str(e.value)
    with pytest.raises(loom.LoomError, match="holds no launch.sh"):
        loom.train(root, data=root / "train.bin", steps=1)
