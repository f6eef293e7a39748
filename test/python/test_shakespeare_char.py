"""tools/shakespeare-char.py: nanoGPT's character-level data, end to end.

The recipe (docs/Recipes.md) prepares the split as nanoGPT's
`shakespeare_char/prepare.py` does, reads `vocab_size` from `meta.pkl`
without running code, compiles a GPT for 2 host ranks and trains it with
warmup + cosine and held-out evaluation. Checked with a tiny model and a few
steps: the files are nanoGPT's layout (uint16 ids of the sorted characters,
90 % / 10 %), a `meta.pkl` that names a global is refused before anything
runs, and the run logs the evaluations it was asked for. Skipped without
mpirun.
"""

import importlib.util
import json
import pathlib
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

from loom.tools import find_tool

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "shakespeare-char.py"
TEXT = ROOT / "test" / "Inputs" / "data" / "coriolanus.txt"


def load_script():
    spec = importlib.util.spec_from_file_location("shakespeare_char", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prepare_writes_nanogpt_layout(tmp_path):
    recipe = load_script()
    recipe.prepare(TEXT, tmp_path)
    text = TEXT.read_text(encoding="utf-8")
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text], dtype=np.uint16)
    split = int(len(ids) * 0.9)
    assert np.array_equal(np.fromfile(tmp_path / "train.bin", np.uint16),
                          ids[:split])
    assert np.array_equal(np.fromfile(tmp_path / "val.bin", np.uint16),
                          ids[split:])
    with open(tmp_path / "meta.pkl", "rb") as f:
        meta = pickle.load(f)
    assert meta["vocab_size"] == len(chars)
    assert meta["itos"][3] == chars[3] and meta["stoi"][chars[3]] == 3
    assert recipe.read_vocab_size(tmp_path / "meta.pkl") == len(chars)


class Payload:
    """Pickles as a call of a global: what a malicious meta.pkl does."""

    def __reduce__(self):
        return (print, ("ran code from meta.pkl",))


def test_meta_pkl_naming_a_global_is_refused(tmp_path, capsys):
    recipe = load_script()
    with open(tmp_path / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": 65, "x": Payload()}, f)
    with pytest.raises(SystemExit) as e:
        recipe.read_vocab_size(tmp_path / "meta.pkl")
    assert "meta.pkl names builtins.print" in str(e.value)
    assert "ran code" not in capsys.readouterr().out
    with open(tmp_path / "meta.pkl", "wb") as f:
        pickle.dump({"itos": {}}, f)
    with pytest.raises(SystemExit) as e:
        recipe.read_vocab_size(tmp_path / "meta.pkl")
    assert "has no vocab_size" in str(e.value)


@pytest.mark.skipif(shutil.which("mpirun") is None,
                    reason="the emitted trainer runs under mpirun")
def test_tiny_run_trains_and_evaluates(tmp_path):
    build = pathlib.Path(find_tool("loomc")).parent.parent
    out = tmp_path / "run"
    log = subprocess.run(
        [sys.executable, str(SCRIPT), "-o", str(out), "--build", str(build),
         "--layers", "1", "--hidden", "16", "--heads", "2", "--seq", "16",
         "--batch", "4", "--steps", "6", "--warmup-steps", "2",
         "--eval-every", "3", "--eval-steps", "2", "--log-every", "3"],
        check=True, capture_output=True, text=True).stdout
    records = [json.loads(l) for l in
               (out / "metrics.jsonl").read_text().splitlines()]
    evals = [r for r in records if "val_loss" in r]
    assert [r["step"] for r in evals] == [0, 3, 6]
    # The untrained model is close to uniform over the 52 characters.
    assert abs(evals[0]["val_loss"] - np.log(52)) < 0.5
    assert "validation loss" in log and "training took" in log
