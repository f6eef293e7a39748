#===- _safetensors.py - Reads and writes safetensors files with numpy ----===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""The interpreter's tensors travel as safetensors files: an 8-byte
little-endian header length, a JSON header (dtype, shape, byte offsets per
tensor) and the raw little-endian data. numpy is all this needs."""

import json
import pathlib

import numpy as np

from loom.errors import LoomError

_TO_NUMPY = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8",
             "I32": "<i4", "BOOL": "?", "U8": "u1"}
_FROM_NUMPY = {np.dtype(v): k for k, v in _TO_NUMPY.items() if k != "U8"}


def save(path: pathlib.Path, tensors: dict) -> None:
    """Writes `tensors` (name -> array-like) as one safetensors file."""
    header, chunks, offset = {}, [], 0
    for name, value in tensors.items():
        array = np.ascontiguousarray(value)
        if array.dtype not in _FROM_NUMPY:
            raise LoomError(f"input `{name}`: dtype {array.dtype} has no "
                            "safetensors form Loom reads (float64, float32, "
                            "float16, int64, int32, bool)")
        data = array.astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _FROM_NUMPY[array.dtype],
                        "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for chunk in chunks:
            f.write(chunk)


def load(path: pathlib.Path) -> dict:
    """Reads a safetensors file into name -> numpy array, in file order."""
    blob = pathlib.Path(path).read_bytes()
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + size])
    base = 8 + size
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(blob[base + begin:base + end],
                                  dtype=_TO_NUMPY[info["dtype"]]).reshape(
                                      info["shape"]).copy()
    return out
