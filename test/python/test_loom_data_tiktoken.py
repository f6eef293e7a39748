"""`loom-data encode --tokenizer gpt2` writes tiktoken's GPT-2 ids.

The ids are compared with those of `tiktoken.get_encoding("gpt2")` called
here (the reference implementation of GPT-2's BPE), read back from the
llm.c file `loom-data` writes (header magic 20240520, version 1, uint16
ids). Skipped where tiktoken is not installed, or where it cannot fetch its
vocabulary (it downloads it on first use; tests never need the network).
"""

import pathlib
import subprocess

import numpy as np
import pytest

from loom.tools import find_tool

tiktoken = pytest.importorskip(
    "tiktoken", reason="tiktoken is not installed for this Python")

TEXT = pathlib.Path(__file__).resolve().parents[1] / "Inputs" / "data" / \
    "coriolanus.txt"


def gpt2_encoding():
    try:
        return tiktoken.get_encoding("gpt2")
    except Exception as e:  # no network, no cached vocabulary
        pytest.skip(f"tiktoken cannot load the gpt2 encoding here: {e}")


def test_gpt2_ids_equal_tiktoken(tmp_path):
    want = gpt2_encoding().encode_ordinary(TEXT.read_text(encoding="utf-8"))
    out = tmp_path / "gpt2.bin"
    subprocess.run([str(find_tool("loom-data")), "encode", "--input",
                    str(TEXT), "--output", str(out), "--tokenizer", "gpt2"],
                   check=True, capture_output=True, text=True)
    blob = out.read_bytes()
    header = np.frombuffer(blob[:1024], dtype="<i4")
    assert header[0] == 20240520 and header[1] == 1
    assert header[2] == len(want)
    ids = np.frombuffer(blob[1024:], dtype="<u2")
    assert ids.tolist() == want
