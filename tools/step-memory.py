#!/usr/bin/env python3
# ===- step-memory.py - Check the step memory a training run reports -------===#
#
# Part of the Loom project.
#
# ===-----------------------------------------------------------------------===#
#
# Reads the lines that `--report-memory` makes rank 0 of an emitted training
# executable (host or CUDA) print after training (docs/Codegen.md, "Memory"):
#
#   memory: rank R: arena A B + other buffers O B = S B; predicted liveness
#           peak P B (ratio X)
#   rss: rank R: the peak resident set grew G B in the first step: ...
#
# and checks what the integration tests claim:
#
#   step-memory.py check LOG --ranks N [--tolerance F]
#       every one of the N ranks reports its step memory S (the arena and the
#       other buffers), and S is within F (default 0.05) of the liveness peak
#       P the compiler predicted for it: |S / P - 1| <= F.
#
# Prints what held, one line per rank and a summary; exits 1 (printing
# MISMATCH) otherwise.
#
# ===-----------------------------------------------------------------------===#

import argparse
import re
import sys

MEMORY = re.compile(
    r"^memory: rank (\d+): arena (\d+) B \+ other buffers (\d+) B = (\d+) B; "
    r"predicted liveness peak (\d+) B \(ratio [0-9.]+\)$")
RSS = re.compile(r"^rss: rank (\d+): the peak resident set grew (\d+) B ")


def read_report(path):
    """Rank -> (arena, other, total, predicted, rss growth or None)."""
    ranks, growth = {}, {}
    with open(path) as log:
        for line in log:
            line = line.rstrip("\n")
            if m := MEMORY.match(line):
                rank, arena, other, total, predicted = map(int, m.groups())
                if rank in ranks:
                    raise SystemExit(f"MISMATCH: rank {rank} reported twice")
                if arena + other != total:
                    raise SystemExit(f"MISMATCH: rank {rank}: {arena} + "
                                     f"{other} is not {total}")
                ranks[rank] = (arena, other, total, predicted)
            elif m := RSS.match(line):
                growth[int(m.group(1))] = int(m.group(2))
    return {r: v + (growth.get(r),) for r, v in ranks.items()}


def check(args):
    report = read_report(args.log)
    failed = False
    for rank in range(args.ranks):
        if rank not in report:
            print(f"MISMATCH: rank {rank} reports no step memory")
            failed = True
            continue
        arena, other, total, predicted, rss = report[rank]
        ratio = total / predicted if predicted > 0 else float("inf")
        ok = abs(ratio - 1) <= args.tolerance
        failed |= not ok
        extra = "" if rss is None else f"; resident set +{rss} B"
        print(f"rank {rank}: arena {arena} B + other {other} B = {total} B, "
              f"predicted {predicted} B, ratio {ratio:.3f}{extra}"
              f"{'' if ok else ' MISMATCH'}")
    extra = sorted(set(report) - set(range(args.ranks)))
    if extra:
        print(f"MISMATCH: ranks {extra} beyond --ranks {args.ranks}")
        failed = True
    if failed:
        return 1
    ratios = [report[r][2] / report[r][3] for r in range(args.ranks)]
    print(f"all {args.ranks} ranks within {args.tolerance:g} of the predicted "
          f"liveness peak (ratios {min(ratios):.3f}-{max(ratios):.3f})")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("log")
    c.add_argument("--ranks", type=int, required=True)
    c.add_argument("--tolerance", type=float, default=0.05)
    c.set_defaults(run=check)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
