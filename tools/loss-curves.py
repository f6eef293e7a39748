#!/usr/bin/env python3
# ===- loss-curves.py - Compare the loss curves of training runs -----------===#
#
# Part of the Loom project.
#
# ===-----------------------------------------------------------------------===#
#
# Reads the `step N | loss X | T ms | tok/s` lines that rank 0 of an emitted
# training executable prints (docs/Codegen.md), and checks what the
# integration tests and the quickstart claim:
#
#   loss-curves.py compare A.log B.log --rtol R   every step both logs share
#                  [--val]                        has |a - b| <= R |b| (with
#                                                 --val: the `step N | val
#                                                 loss X` lines of --eval-data)
#   loss-curves.py falls A.log                    the last loss is below the
#                                                 first
#   loss-curves.py interp A.log SUMMARY --rtol R  step 1's (or --step N's)
#                  [--step N]                     loss equals the `loss:`
#                                                 line of `loom-run`
#   loss-curves.py table A.log B.log              both curves side by side and
#                                                 their largest difference
#   loss-curves.py timing A.log [--skip K]        median step time and tok/s
#                                                 after the first K steps
#
# Prints what held; exits 1 (printing MISMATCH) otherwise.
#
# ===-----------------------------------------------------------------------===#

import argparse
import re
import sys

STEP = re.compile(r"^step (\d+) \| loss (\S+) \| ")
VAL = re.compile(r"^step (\d+) \| val loss (\S+) \| ")
TIME = re.compile(r"^step \d+ \| loss \S+ \| ([0-9.]+) ms \| ([0-9.]+) tok/s")


def read_log(path, val=False):
    losses = {}
    with open(path) as f:
        for line in f:
            m = (VAL if val else STEP).match(line)
            if m:
                losses[int(m.group(1))] = float(m.group(2))
    if not losses:
        kind = "val loss" if val else "loss"
        sys.exit(f"loss-curves.py: error: no `step N | {kind} X` line in "
                 f"{path}")
    return losses


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def compare(args):
    a, b = read_log(args.a, args.val), read_log(args.b, args.val)
    steps = sorted(set(a) & set(b))
    if not steps:
        sys.exit("loss-curves.py: error: the logs share no step")
    worst = 0.0
    for s in steps:
        d = relative(a[s], b[s])
        worst = max(worst, d)
        if d > args.rtol:
            print(f"MISMATCH at step {s}: {a[s]!r} vs {b[s]!r} "
                  f"(relative difference {d:.3g} > {args.rtol:g})")
            return 1
    print(f"steps {steps[0]}-{steps[-1]} match ({len(steps)} steps, max "
          f"relative difference {worst:.3g} <= {args.rtol:g})")
    return 0


def falls(args):
    a = read_log(args.a)
    first, last = min(a), max(a)
    if not a[last] < a[first]:
        print(f"MISMATCH: the loss does not fall: {a[first]} at step {first}, "
              f"{a[last]} at step {last}")
        return 1
    print(f"the loss falls from {a[first]:.4f} at step {first} to "
          f"{a[last]:.4f} at step {last}")
    return 0


def interp(args):
    a = read_log(args.a)
    n = args.step
    if n not in a:
        sys.exit(f"loss-curves.py: error: {args.a} has no step {n}")
    with open(args.summary) as f:
        m = re.search(r"^loss: shape \[\] dtype \S+ mean (\S+)", f.read(),
                      re.MULTILINE)
    if not m:
        sys.exit(f"loss-curves.py: error: no `loss:` summary in {args.summary}")
    ref = float(m.group(1))
    d = relative(a[n], ref)
    if d > args.rtol:
        print(f"MISMATCH: step {n} loss {a[n]!r}, interpreter {ref!r} "
              f"(relative difference {d:.3g} > {args.rtol:g})")
        return 1
    print(f"step {n} equals the interpreter's step (relative difference "
          f"{d:.3g} <= {args.rtol:g})")
    return 0


def table(args):
    a, b = read_log(args.a), read_log(args.b)
    print(f"{'step':>5}  {args.a_name:>12}  {args.b_name:>12}  {'rel diff':>9}")
    steps = sorted(set(a) & set(b))
    for s in steps:
        print(f"{s:>5}  {a[s]:>12.6f}  {b[s]:>12.6f}  {relative(a[s], b[s]):>9.2e}")
    worst = max(relative(a[s], b[s]) for s in steps)
    print(f"max relative difference over {len(steps)} steps: {worst:.3g}")
    return 0


def timing(args):
    rows = []
    with open(args.a) as f:
        for line in f:
            m = TIME.match(line)
            if m:
                rows.append((float(m.group(1)), float(m.group(2))))
    rows = rows[args.skip:]
    if not rows:
        sys.exit(f"loss-curves.py: error: no timed step after {args.skip} in "
                 f"{args.a}")
    ms = sorted(r[0] for r in rows)
    tps = sorted(r[1] for r in rows)
    print(f"{args.a}: median {ms[len(ms) // 2]:.1f} ms/step, "
          f"{tps[len(tps) // 2]:.0f} tok/s over {len(rows)} steps")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("compare")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, required=True)
    p.add_argument("--val", action="store_true",
                   help="compare the validation losses")
    p.set_defaults(run=compare)
    p = sub.add_parser("falls")
    p.add_argument("a")
    p.set_defaults(run=falls)
    p = sub.add_parser("interp")
    p.add_argument("a")
    p.add_argument("summary")
    p.add_argument("--rtol", type=float, required=True)
    p.add_argument("--step", type=int, default=1)
    p.set_defaults(run=interp)
    p = sub.add_parser("table")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--a-name", default="A")
    p.add_argument("--b-name", default="B")
    p.set_defaults(run=table)
    p = sub.add_parser("timing")
    p.add_argument("a")
    p.add_argument("--skip", type=int, default=5)
    p.set_defaults(run=timing)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
