# Prints whether the files given after the tolerance have line counts within
# the tolerance of each other; exits 1 (with the counts) when they do not.
import sys

tolerance = int(sys.argv[1])
counts = {}
for path in sys.argv[2:]:
    with open(path) as f:
        counts[path] = sum(1 for _ in f)
spread = max(counts.values()) - min(counts.values())
if spread > tolerance:
    for path, n in counts.items():
        print(f"{n} lines: {path}")
    print(f"line counts differ by {spread} (> {tolerance})")
    sys.exit(1)
print(f"lines within {tolerance} of each other over {len(counts)} programs")
