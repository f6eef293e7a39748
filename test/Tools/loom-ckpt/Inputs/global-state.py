"""Writes or compares the global model state the loom-ckpt tests cut up.

  global-state.py write OUT.safetensors   the state: names, shapes, dtypes
                                          and values of a tiny model
  global-state.py same A B                exits 1 unless A and B hold the
                                          same tensors bit for bit
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "python"))
import safetensors_io  # noqa: E402


def state():
    ramp = np.arange(64, dtype=np.float64) * 0.37 - 5.0
    return {
        "wte": ramp[:32].reshape(8, 4).astype(np.float32),
        "h.0.mlp.w": ramp[32:64].reshape(4, 8).astype(np.float32),
        "h.0.mlp.b": ramp[:8].astype(np.float64),
        "adam.m.wte": (ramp[:32] * 1e-3).reshape(8, 4).astype(np.float32),
        "adam.step": np.array(12, dtype=np.int64),
    }


def main():
    if sys.argv[1] == "write":
        safetensors_io.save(sys.argv[2], state())
        return 0
    a, b = safetensors_io.load(sys.argv[2]), safetensors_io.load(sys.argv[3])
    if sorted(a) != sorted(b):
        print(f"different names: {sorted(a)} vs {sorted(b)}")
        return 1
    for name in a:
        if a[name].dtype != b[name].dtype or a[name].shape != b[name].shape \
                or a[name].tobytes() != b[name].tobytes():
            print(f"tensor {name} differs")
            return 1
    print(f"same: {len(a)} tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
