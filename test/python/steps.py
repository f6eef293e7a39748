"""Running training steps in `loom-run` and comparing them: the helpers the
equivalence tests share (partitioned or pipelined step = single-device step).

`assert_same` is the criterion of every such test: per tensor, max |actual -
expected| / max |expected| <= 1e-10, and tensors that are zero up to rounding
(below 1e-14; e.g. a gradient softmax cancels) to that absolute error.
"""

import re
import subprocess

import numpy as np

import safetensors_io
from loom.tools import find_tool

RTOL = 1e-10
# Below this a tensor is zero up to rounding.
ZERO = 1e-14


def tool(name, *args, check=True):
    """Runs a Loom tool; by default its failure fails the test."""
    result = subprocess.run([str(find_tool(name)), *map(str, args)],
                            capture_output=True, text=True, check=False)
    if check:
        assert result.returncode == 0, f"{name} {args}: {result.stderr}"
    return result


def run_step(tmp_path, program, inputs, name, ranks=None, report=False):
    """One f64 `@train_step` of `program` on `inputs` (seed 3): its outputs,
    and with `report` also loom-run's stdout (`--report-memory`)."""
    out = tmp_path / f"{name}.safetensors"
    args = [program, "--entry", "train_step", "--dtype", "f64", "--seed", "3",
            "--inputs", inputs, "--outputs", out]
    if ranks:
        args += ["--ranks", ranks]
    if report:
        args += ["--report-memory"]
    result = tool("loom-run", *args)
    outputs = safetensors_io.load(out)
    return (outputs, result.stdout) if report else outputs


def assert_same(single, parallel, what=""):
    """The same tensors with the same values, to RTOL (see above)."""
    prefix = f"{what}: " if what else ""
    assert set(single) == set(parallel)
    for key, expected in single.items():
        actual = parallel[key]
        assert actual.shape == expected.shape, key
        scale = float(np.max(np.abs(expected)))
        err = float(np.max(np.abs(actual - expected)))
        if scale < ZERO:
            assert err < ZERO, f"{prefix}{key}: absolute error {err:.3e}"
        else:
            assert err <= RTOL * scale, \
                f"{prefix}{key}: relative error {err / scale:.3e}"


def random_token_batch(ir, vocab, rng, low=0):
    """Token ids and labels in [low, vocab) for the training program `ir`
    (its text), shaped as its `#loom.input<input_ids>`/`<labels>` arguments
    and, for an encoder-decoder, `<decoder_input_ids>` (drawn in that order,
    so a decoder-only batch is the same whether or not the role exists)."""
    batch = {}
    for role in ("input_ids", "labels", "decoder_input_ids"):
        m = re.search(r"tensor<(\d+)x(\d+)xi64> \{loom\.input = "
                      rf"#loom\.input<{role}>", ir)
        if m is None:
            if role == "decoder_input_ids":
                continue
            raise ValueError(f"the training program has no {role} argument")
        batch[role] = rng.integers(
            low, vocab, size=(int(m.group(1)), int(m.group(2)))).astype(np.int64)
    return batch


# A loss-scaled step's results that are not carried into the next step.
NOT_CARRIED = {"loss", "found_inf", "grad_norm"}


def poisoned_inputs(tmp, name, batch, state):
    """The batch, the state a step returned, and the test hook set to inf."""
    tensors = dict(batch)
    for key, value in state.items():
        if key not in NOT_CARRIED:
            tensors[key] = value
    tensors["inject_nonfinite"] = np.array(np.inf)
    path = tmp / f"{name}.safetensors"
    safetensors_io.save(path, tensors)
    return path
