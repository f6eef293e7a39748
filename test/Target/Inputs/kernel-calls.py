"""Compares the kernel and collective calls of an emitted host program with
those of the CUDA program of the same step.

Usage: kernel-calls.py HOST_train_step.cpp CUDA_train_step.cu

Both emitters print each op through one emission table
(lib/Target/Common/KernelCallTable.h), so for an f32 step they call the same
kernels (host::X, cuda::X) and the same collectives (comm.X, nccl.X) in the
same order. Prints the number of calls of each step function and exits 0
when they agree; otherwise prints the first difference and exits 1.

Both programs start a data-parallel gradient bucket's all-reduce where it
stands (non-blocking MPI on the host, the communication stream in CUDA;
docs/Codegen.md, "Overlap: data-parallel gradient buckets") and wait for it
later; with buckets off both call the blocking one: the same collective at
the same point, so `startAllReduce` counts as `allReduce`, and waits and
progress calls are not calls of an op.
"""

import re
import sys

# A statement's call: `host::binary<T>(`, `LOOM_CHECK(cuda::embeddingGrad<T>(`,
# `LOOM_CHECK(comm.allReduce(`; not the step's own set-up calls.
CALL = re.compile(
    r"^\s*(?:LOOM_CHECK(?:_MESSAGE)?\()?"
    r"(?:(?:host|cuda)::(?P<kernel>\w+)|(?:comm|nccl)\.(?P<collective>\w+))"
    r"[<(]")
STEP = re.compile(r"^Status loom_(\w+)\(")
SET_UP = {"beginStep", "getRank", "getCoordinates", "getMesh"}
OVERLAP = {"wait", "progress", "checkAllWaited"}
SAME_AS = {"startAllReduce": "allReduce"}


def calls(path):
    steps, current = {}, None
    with open(path) as f:
        for line in f:
            step = STEP.match(line)
            if step:
                current = steps.setdefault(step.group(1), [])
                continue
            match = CALL.match(line)
            if current is None or not match:
                continue
            name = match.group("kernel") or match.group("collective")
            if name not in SET_UP and name not in OVERLAP:
                current.append(SAME_AS.get(name, name))
    return steps


def main():
    host, cuda = calls(sys.argv[1]), calls(sys.argv[2])
    if sorted(host) != sorted(cuda):
        print(f"step functions differ: host {sorted(host)}, cuda {sorted(cuda)}")
        return 1
    for step in sorted(host):
        h, c = host[step], cuda[step]
        for i, (a, b) in enumerate(zip(h, c)):
            if a != b:
                print(f"{step}: call {i} is {a} on the host, {b} in CUDA")
                return 1
        if len(h) != len(c):
            print(f"{step}: {len(h)} host calls, {len(c)} CUDA calls")
            return 1
        print(f"{step}: {len(h)} calls, the same kernels in the same order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
