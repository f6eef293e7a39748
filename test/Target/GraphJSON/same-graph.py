#!/usr/bin/env python3
# ===- same-graph.py - Compare two graph JSON files -----------------------===#
#
# Part of the Loom project.
#
# ===-----------------------------------------------------------------------===#
#
# Exits 0 when two graph JSON files describe the same graph: equal as JSON
# values, except that `tensors` is compared as a set (a writer may declare
# tensors in any order as long as the arguments keep theirs). Prints the
# first difference otherwise.
#
# ===-----------------------------------------------------------------------===#

import json
import sys


def normalized(path):
    with open(path) as f:
        graph = json.load(f)
    graph["tensors"] = sorted(graph["tensors"], key=lambda t: t["name"])
    return graph


def main():
    a, b = (normalized(p) for p in sys.argv[1:3])
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            print(f"graphs differ in {key!r}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
