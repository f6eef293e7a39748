"""Exits non-zero unless FILE is laid out exactly as a two-space-indented
dump of its own content (Python's json.dumps(indent=2), which lays JSON out
as nlohmann's dump(2) does: one member or item per line, `[]` and `{}` when
empty). writePlanJSON streams the op list by hand; this checks it byte for
byte against the layout the plan JSON has always had.

Usage: check-json-layout.py FILE
"""
import json
import sys

with open(sys.argv[1], encoding="utf-8") as file:
    text = file.read()
expected = json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
if text != expected:
    for number, (got, want) in enumerate(
            zip(text.splitlines(), expected.splitlines()), start=1):
        if got != want:
            print(f"{sys.argv[1]}:{number}: got {got!r}, expected {want!r}")
            break
    else:
        print(f"{sys.argv[1]}: {len(text)} characters, expected "
              f"{len(expected)}")
    sys.exit(1)
