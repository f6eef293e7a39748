"""A small pure-Python safetensors writer and reader for the tests.

The format: an 8-byte little-endian header length, a JSON header
{name: {"dtype", "shape", "data_offsets"}}, then the raw little-endian data.
Written here (and not taken from the `safetensors` package, which Debian does
not ship) so that the tests check Loom's C++ implementation against an
independent one.
"""

import json
import struct

import numpy as np

_DTYPES = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "BOOL": np.dtype("?"),
}


def _name_of(dtype: np.dtype) -> str:
    for name, d in _DTYPES.items():
        if d == dtype.newbyteorder("<") or d == dtype:
            return name
    raise ValueError(f"no safetensors dtype for {dtype}")


def save(path, tensors: dict) -> None:
    """Writes {name: numpy array} to `path`."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        array = np.asarray(tensors[name])
        # ascontiguousarray makes rank-0 arrays rank 1; keep the shape.
        array = np.ascontiguousarray(array).reshape(array.shape)
        data = array.astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _name_of(array.dtype),
                        "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def load(path) -> dict:
    """Reads `path` into {name: numpy array}."""
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + length])
    data = blob[8 + length:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(data[begin:end],
                                  dtype=_DTYPES[entry["dtype"]]).reshape(
                                      entry["shape"])
    return out
