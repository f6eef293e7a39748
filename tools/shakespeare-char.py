#!/usr/bin/env python3
"""A character-level Shakespeare GPT, trained on host ranks (docs/Recipes.md).

nanoGPT's `shakespeare_char` recipe, end to end with Loom:

  1. data: nanoGPT's `data/shakespeare_char/prepare.py` layout — the sorted
     characters of the text are the vocabulary, the first 90 % of the ids go
     to `train.bin` and the rest to `val.bin` (headerless uint16), and
     `meta.pkl` holds `vocab_size`, `itos` and `stoi`. By default the text is
     `test/Inputs/data/coriolanus.txt` (public domain, in the repository);
     `--data-dir` takes a directory nanoGPT prepared instead (its own
     `train.bin`, `val.bin` and `meta.pkl`);
  2. the vocabulary size is read from `meta.pkl` with an unpickler that
     refuses every global, so a crafted pickle cannot run code: nanoGPT's
     file holds only a dict of ints and strings;
  3. `loom-model gpt2` builds the model for that vocabulary, `loomc` compiles
     it for `--ranks` host ranks (data parallel over all of them, or
     `--parallel-config`) with AdamW (betas 0.9, 0.99 as nanoGPT's
     recipe) and emits the trainer;
  4. `launch.sh` trains it with linear warmup then cosine decay to
     `--min-lr`, evaluating on the held-out split every `--eval-every`
     steps; the metrics go to OUT/metrics.jsonl and the log to OUT/train.log.

The model is far smaller than nanoGPT's (6 layers of 384): the default text
holds 4,059 characters, which a larger model only memorizes, and a run takes
about a minute on two CPU cores; every size is a flag. Prints the final
validation loss and the wall time of the training run.
"""

import argparse
import json
import os
import pathlib
import pickle
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


class _NoGlobals(pickle.Unpickler):
    """Loads plain containers only: any class or function is refused."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(
            f"meta.pkl names {module}.{name}; only plain dicts, ints and "
            "strings are read")


def read_vocab_size(meta):
    """`vocab_size` of a nanoGPT `meta.pkl`, read without running code."""
    try:
        with open(meta, "rb") as f:
            data = _NoGlobals(f).load()
    except (OSError, pickle.UnpicklingError, EOFError, ValueError) as e:
        sys.exit(f"shakespeare-char: error: cannot read {meta}: {e}")
    size = data.get("vocab_size") if isinstance(data, dict) else None
    if not isinstance(size, int) or size < 1 or size > 65536:
        sys.exit(f"shakespeare-char: error: {meta} has no vocab_size "
                 f"(an integer in [1, 65536] for uint16 ids), found {size!r}")
    return size


def prepare(text_path, out):
    """nanoGPT's prepare.py for a character-level corpus."""
    text = pathlib.Path(text_path).read_text(encoding="utf-8")
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for i, c in enumerate(chars)}
    ids = [stoi[c] for c in text]
    n = len(ids)
    split = int(n * 0.9)
    out.mkdir(parents=True, exist_ok=True)
    # uint16 little-endian without a header, as np.uint16.tofile writes.
    for name, part in (("train.bin", ids[:split]), ("val.bin", ids[split:])):
        (out / name).write_bytes(
            b"".join(i.to_bytes(2, "little") for i in part))
    with open(out / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": itos, "stoi": stoi}, f)
    print(f"prepared {n} characters, vocabulary {len(chars)}: "
          f"{split} train, {n - split} validation tokens in {out}")


def tool(name, build):
    return str(pathlib.Path(build) / "bin" / name)


def run(args, log=None):
    print("$ " + " ".join(str(a) for a in args), flush=True)
    if log is None:
        subprocess.run([str(a) for a in args], check=True)
        return
    with open(log, "w") as f:
        proc = subprocess.Popen([str(a) for a in args], stdout=subprocess.PIPE,
                                text=True)
        for line in proc.stdout:
            sys.stdout.write(line)
            f.write(line)
        if proc.wait() != 0:
            sys.exit(f"shakespeare-char: error: {args[0]} failed")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-o", "--out", required=True, help="output directory")
    p.add_argument("--text", default=ROOT / "test/Inputs/data/coriolanus.txt",
                   help="the text to prepare (ignored with --data-dir)")
    p.add_argument("--data-dir",
                   help="a nanoGPT-prepared directory (train.bin, val.bin, "
                        "meta.pkl)")
    p.add_argument("--build", default=os.environ.get("LOOM_BUILD_DIR",
                                                     ROOT / "build"),
                   help="Loom's build directory (its bin/ has the tools)")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--parallel-config",
                   help="loomc's parallel config (JSON), e.g. "
                        "'{\"data_parallel\": 2, \"model_parallel\": 2}' "
                        "for Megatron tensor parallelism; default: data "
                        "parallel over --ranks")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup-steps", type=int, default=20)
    p.add_argument("--eval-every", type=int, default=25)
    p.add_argument("--eval-steps", type=int, default=10)
    p.add_argument("--log-every", type=int, default=25)
    args = p.parse_args()

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = pathlib.Path(args.data_dir) if args.data_dir else out / "data"
    if not args.data_dir:
        prepare(args.text, data)
    vocab = read_vocab_size(data / "meta.pkl")
    print(f"vocabulary {vocab} (from {data / 'meta.pkl'})")

    build = args.build
    run([tool("loom-model", build), "gpt2", "--layers", args.layers,
         "--hidden", args.hidden, "--heads", args.heads, "--vocab", vocab,
         "--seq", args.seq, "--batch", args.batch, "--dropout", args.dropout,
         "-o", out / "gpt.mlir"])
    plan = (["--parallel-config", args.parallel_config]
            if args.parallel_config else ["--mesh", f"dp={args.ranks}"])
    run([tool("loomc", build), out / "gpt.mlir", *plan, "--lr", args.lr,
         "--beta2", 0.99, "--emit", "host", "--emit-dtypes", "f32", "-o",
         out / "prog"])
    metrics = out / "metrics.jsonl"
    if metrics.exists():
        metrics.unlink()
    start = time.monotonic()
    run([out / "prog" / "launch.sh", "--data", data / "train.bin",
         "--data-format", "uint16", "--steps", args.steps, "--lr-schedule",
         "cosine", "--warmup-steps", args.warmup_steps, "--min-lr",
         args.min_lr, "--eval-data", data / "val.bin", "--eval-every",
         args.eval_every, "--eval-steps", args.eval_steps, "--log-every",
         args.log_every, "--metrics", metrics], log=out / "train.log")
    seconds = time.monotonic() - start
    evals = [r for r in map(json.loads, metrics.read_text().splitlines())
             if "val_loss" in r]
    if not evals:
        sys.exit("shakespeare-char: error: the run logged no evaluation")
    first, last = evals[0], evals[-1]
    best = min(evals, key=lambda r: r["val_loss"])
    print(f"validation loss {first['val_loss']:.4f} at step {first['step']}"
          f" -> {last['val_loss']:.4f} at step {last['step']} (perplexity "
          f"{last['val_ppl']:.2f}; best {best['val_loss']:.4f} at step "
          f"{best['step']}); training took {seconds:.1f} s")


if __name__ == "__main__":
    main()
