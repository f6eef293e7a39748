"""loom-ckpt and loom-data files read by independent Python code.

A global model state written with numpy is cut into a dp=2 x tp=2 checkpoint
by `loom-ckpt split`; every rank file holds exactly the numpy slice its
layout names, the manifest's CRC-32C values match a Python implementation,
and `loom-ckpt merge` gives back a standard safetensors file equal to the
original bit for bit (read by the independent reader in safetensors_io.py).
Token files from `loom-data encode` read as llm.c's and nanoGPT's readers
read them.
"""

import json
import pathlib
import subprocess

import numpy as np

import safetensors_io
from loom.tools import find_tool

LAYOUTS = {
    "wte": '[["tp"], []]',
    "h.0.attn.w": '[[], ["tp"]]',
    "h.0.attn.b": '[["tp", "dp"]]',
    "adam.m.wte": '[["dp", "tp"], []]',
    "adam.v.h.0.attn.w": '[["dp"], ["tp"]]',
}


def global_state():
    rng = np.random.default_rng(7)
    return {
        "wte": rng.standard_normal((16, 6)).astype(np.float32),
        "h.0.attn.w": rng.standard_normal((6, 8)).astype(np.float64),
        "h.0.attn.b": rng.standard_normal(8).astype(np.float16),
        "adam.m.wte": rng.standard_normal((16, 6)).astype(np.float32),
        "adam.v.h.0.attn.w": rng.standard_normal((6, 8)).astype(np.float32),
        "ln.w": rng.standard_normal(6).astype(np.float32),
        "adam.step": np.array(3, dtype=np.int64),
        "tokens.seen": np.arange(4, dtype=np.int32),
    }


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def block(value, layout, dp, tp):
    """The numpy slice rank (dp, tp) of mesh dp=2 x tp=2 holds."""
    coords, sizes = {"dp": dp, "tp": tp}, {"dp": 2, "tp": 2}
    index = []
    for dim, axes in enumerate(json.loads(layout)):
        blocks, which = 1, 0
        for axis in axes:  # major to minor
            which = which * sizes[axis] + coords[axis]
            blocks *= sizes[axis]
        size = value.shape[dim] // blocks
        index.append(slice(which * size, (which + 1) * size))
    return value[tuple(index)]


def test_split_blocks_and_merge_round_trip(tmp_path: pathlib.Path):
    state = global_state()
    safetensors_io.save(tmp_path / "global.safetensors", state)
    (tmp_path / "layouts.json").write_text(json.dumps(LAYOUTS))
    subprocess.run([str(find_tool("loom-ckpt")), "split",
                    str(tmp_path / "global.safetensors"), "--mesh",
                    "dp=2,tp=2", "--layouts", str(tmp_path / "layouts.json"),
                    "--step", "3", "-o", str(tmp_path / "ckpt")], check=True)

    manifest = json.loads((tmp_path / "ckpt" / "manifest.json").read_text())
    assert manifest["format"] == "loom-checkpoint"
    assert manifest["mesh"] == {"axes": ["dp", "tp"], "shape": [2, 2]}
    assert manifest["step"] == 3
    for rank, entry in enumerate(manifest["files"]):
        data = (tmp_path / "ckpt" / entry["name"]).read_bytes()
        assert entry["rank"] == rank
        assert len(data) == entry["bytes"]
        assert f"{crc32c(data):08x}" == entry["crc32c"]
        blocks = safetensors_io.load(tmp_path / "ckpt" / entry["name"])
        assert sorted(blocks) == sorted(state)
        dp, tp = divmod(rank, 2)
        for name, value in state.items():
            layout = manifest["tensors"][name]["layout"]
            expected = block(value, layout, dp, tp)
            assert blocks[name].dtype == value.dtype
            assert np.array_equal(blocks[name], expected), (name, rank)

    subprocess.run([str(find_tool("loom-ckpt")), "merge",
                    str(tmp_path / "ckpt"), "-o",
                    str(tmp_path / "merged.safetensors")], check=True)
    merged = safetensors_io.load(tmp_path / "merged.safetensors")
    assert sorted(merged) == sorted(state)
    for name, value in state.items():
        assert merged[name].dtype == value.dtype
        assert merged[name].shape == value.shape
        assert merged[name].tobytes() == value.tobytes(), name


def test_token_files_read_as_llmc_and_nanogpt_read_them(tmp_path):
    text = "Speak, speak.\nYou are all resolved rather to die than to famish?"
    (tmp_path / "in.txt").write_text(text)
    loom_data = str(find_tool("loom-data"))
    subprocess.run([loom_data, "encode", "--input", str(tmp_path / "in.txt"),
                    "--output", str(tmp_path / "llmc.bin")], check=True)
    subprocess.run([loom_data, "encode", "--input", str(tmp_path / "in.txt"),
                    "--output", str(tmp_path / "nano.bin"), "--format",
                    "uint16"], check=True)
    expected = np.frombuffer(text.encode(), dtype=np.uint8).astype(np.uint16)
    # llm.c: 256 int32 of header (magic, version, count), then uint16.
    with open(tmp_path / "llmc.bin", "rb") as f:
        header = np.frombuffer(f.read(1024), dtype="<i4")
        tokens = np.frombuffer(f.read(), dtype="<u2")
    assert list(header[:3]) == [20240520, 1, len(text)]
    assert not header[3:].any()
    assert np.array_equal(tokens, expected)
    # nanoGPT: np.memmap(path, dtype=np.uint16) of the whole file.
    nano = np.memmap(tmp_path / "nano.bin", dtype=np.uint16, mode="r")
    assert np.array_equal(nano, expected)
