"""Prints the loss-scaling state of a merged checkpoint:
`loss_scale S tracker T step N` (train-fp16-loss-scale.test)."""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8"}


def load(path):
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        data = f.read()
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=DTYPES[entry["dtype"]])
    return out


state = load(sys.argv[1])
print(f"loss_scale {float(state['loss_scale'][0]):g} "
      f"tracker {int(state['loss_scale.growth_tracker'][0])} "
      f"step {int(state['step'][0])}")
