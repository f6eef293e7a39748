"""python-bindings/examples/torch_to_loom.py works: a nanoGPT-style GPT
brought in by `loom.from_torch`, auto-parallelized, gives the same AdamW
step on 1 and 4 simulated ranks, equal to torch.optim.AdamW's own step (the
example checks the numbers and exits non-zero on a mismatch; this test also
reads what it printed)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

EXAMPLE = (pathlib.Path(__file__).resolve().parents[2] / "python-bindings" /
           "examples" / "torch_to_loom.py")


@pytest.mark.parametrize("flags", [[], ["--mesh", "dp=2,tp=2"]])
def test_torch_to_loom(flags):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    result = subprocess.run([sys.executable, str(EXAMPLE), *flags],
                            capture_output=True, text=True, check=False,
                            env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert out.rstrip().endswith("OK")
    # Attention was recognised: one fused op per layer.
    assert "from GPT: 2 attention" in out
    assert "(4 devices)" in out
    if flags:
        assert "mesh dp=2,tp=2" in out
    err = float(re.search(r"4 ranks vs 1 rank: max relative error (\S+)",
                          out).group(1))
    assert err <= 1e-10
    loom_loss, torch_loss = map(float, re.search(
        r"loss: loom (\S+)  torch (\S+)", out).groups())
    assert abs(loom_loss - torch_loss) <= 1e-10 * abs(torch_loss)
