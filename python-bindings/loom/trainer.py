#===- trainer.py - loom.train: run an emitted program's trainer ----------===#
#
# Part of the Loom project.
#
#===----------------------------------------------------------------------===#
"""`loom.train`: trains with the per-rank program `Compiled.emit` wrote
(its `launch.sh`, every rank under mpirun; docs/Codegen.md, "The training
executable"). Keyword arguments are the executable's flags in Python
spelling (`lr_schedule="cosine"` is `--lr-schedule cosine`), read from the
table the executable parses with (`loomTrainOptionGet*` in the C API), and
the command line is checked by that parser (`loomTrainArgsCheck`) before
any rank starts."""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import json
import os
import pathlib
import re
import subprocess

from loom.errors import LoomError
from loom.tools import find_library

_LOSS = re.compile(r"^step (\d+) \| loss (\S+) ", re.MULTILINE)
_VAL = re.compile(r"^step (\d+) \| val loss (\S+) \| val ppl (\S+)$",
                  re.MULTILINE)


@functools.lru_cache(maxsize=None)
def _library():
    lib = ctypes.CDLL(str(find_library()))
    lib.loomTrainOptionGetCount.restype = ctypes.c_size_t
    for getter in ("loomTrainOptionGetName", "loomTrainOptionGetDescription"):
        getattr(lib, getter).restype = ctypes.c_char_p
        getattr(lib, getter).argtypes = [ctypes.c_size_t]
    lib.loomTrainOptionTakesValue.restype = ctypes.c_int
    lib.loomTrainOptionTakesValue.argtypes = [ctypes.c_size_t]
    lib.loomTrainArgsCheck.restype = ctypes.c_void_p
    lib.loomTrainArgsCheck.argtypes = [ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.c_size_t]
    lib.loomStatusGetMessage.restype = ctypes.c_char_p
    lib.loomStatusGetMessage.argtypes = [ctypes.c_void_p]
    lib.loomStatusDestroy.argtypes = [ctypes.c_void_p]
    return lib


@functools.lru_cache(maxsize=None)
def options() -> dict:
    """The keyword options of `loom.train`: Python name -> (flag, takes a
    value, description)."""
    lib = _library()
    out = {}
    for i in range(lib.loomTrainOptionGetCount()):
        name = lib.loomTrainOptionGetName(i).decode()
        out[name.replace("-", "_")] = (
            "--" + name, bool(lib.loomTrainOptionTakesValue(i)),
            lib.loomTrainOptionGetDescription(i).decode())
    return out


def command_line(**kwargs) -> list:
    """The executable's arguments for `loom.train`'s keywords: a value
    becomes `--flag value` (paths and numbers as text), True a switch, None
    and False nothing. Raises LoomError for an unknown keyword or a command
    line the executable would refuse, in its words."""
    known = options()
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        raise LoomError(f"loom.train: unknown option(s) {', '.join(unknown)}; "
                        f"expected {', '.join(sorted(known))}")
    args = []
    for key, value in kwargs.items():
        flag, takes_value, _ = known[key]
        if value is None or value is False:
            continue
        if not takes_value:
            if value is not True:
                raise LoomError(f"loom.train: {key} is a switch: pass True")
            args.append(flag)
            continue
        if value is True:
            raise LoomError(f"loom.train: {key} takes a value ({flag} VALUE)")
        args += [flag, os.fspath(value) if isinstance(value, os.PathLike)
                 else repr(value) if isinstance(value, float) else str(value)]
    lib = _library()
    encoded = [a.encode() for a in args]
    array = (ctypes.c_char_p * len(encoded))(*encoded)
    status = lib.loomTrainArgsCheck(array, len(encoded))
    if status:
        message = lib.loomStatusGetMessage(status).decode()
        lib.loomStatusDestroy(status)
        raise LoomError(f"loom.train: {message}")
    return args


@dataclasses.dataclass
class TrainResult:
    """What a `loom.train` run printed and recorded.

    - `losses`: step -> training loss of the logged steps (rank 0's log);
    - `val_losses`: step -> held-out loss of each evaluation;
    - `metrics`: the records of `metrics=FILE` (one dict per line), else [];
    - `log`: everything the run printed on stdout.
    """
    losses: dict
    val_losses: dict
    metrics: list
    log: str


def train(program, **kwargs) -> TrainResult:
    """Trains with the emitted program in `program` (the directory
    `Compiled.emit` returned, holding `launch.sh`).

    Keywords are the executable's flags (`loom.trainer.options()` lists
    them): `data`, `steps`, `seed`, `dtype`, `data_format`, `data_order`,
    `log_every`, `ckpt_dir`, `ckpt_every`, `resume`; the learning-rate
    schedule `lr_schedule` ("constant" | "cosine" | "linear" | "step"),
    `warmup_steps`, `min_lr`, `decay_steps`, `step_gamma`, `step_every`;
    `grad_accum`; held-out evaluation `eval_data`, `eval_every`,
    `eval_steps`; `metrics` (a JSONL file); pretrained weights `init_from`
    with `init_format` ("loom" | "nanogpt" | "hf"). Raises LoomError with
    the executable's message when it refuses the flags or fails.
    """
    launch = pathlib.Path(program) / "launch.sh"
    if not launch.is_file():
        raise LoomError(f"loom.train: `{program}` holds no launch.sh (emit a "
                        "program with Compiled.emit first)")
    args = command_line(**kwargs)
    result = subprocess.run([str(launch), *args], capture_output=True,
                            text=True)
    if result.returncode != 0:
        errors = [line for line in result.stderr.splitlines()
                  if ": error: " in line]
        raise LoomError("loom.train: " + ("\n".join(errors) or
                                          result.stderr.strip() or
                                          f"exit status {result.returncode}"))
    metrics = []
    if kwargs.get("metrics"):
        path = pathlib.Path(kwargs["metrics"])
        metrics = [json.loads(line) for line in path.read_text().splitlines()
                   if line.strip()]
    return TrainResult(
        losses={int(s): float(v) for s, v in _LOSS.findall(result.stdout)},
        val_losses={int(s): float(v)
                    for s, v, _ in _VAL.findall(result.stdout)},
        metrics=metrics, log=result.stdout)
