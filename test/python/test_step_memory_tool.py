"""tools/step-memory.py, the check the host and CUDA training tests run on
`--report-memory`: it passes a report whose every rank is within the
tolerance of its prediction, and fails (exit 1, MISMATCH) when one rank is
outside it, when a rank is missing, or when a line's sum is wrong."""

import pathlib
import subprocess
import sys

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "step-memory.py"


def line(rank, arena, other, predicted, total=None):
    total = arena + other if total is None else total
    return (f"memory: rank {rank}: arena {arena} B + other buffers {other} B "
            f"= {total} B; predicted liveness peak {predicted} B "
            f"(ratio {total / predicted:.3f})\n")


def check(tmp_path, lines, ranks, *extra):
    log = tmp_path / "train.log"
    log.write_text("step 1 | loss 5.5 | 4.5 ms | 28202 tok/s\n" +
                   "".join(lines))
    return subprocess.run(
        [sys.executable, str(TOOL), "check", str(log), "--ranks", str(ranks),
         *extra], capture_output=True, text=True)


def test_every_rank_within_five_percent_passes(tmp_path):
    lines = [line(0, 319552, 261028, 588176),
             "rss: rank 0: the peak resident set grew 786432 B in the first "
             "step: the arena 319552 B + 466880 B\n",
             line(1, 100, 1000, 1100 * 100 // 104)]
    run = check(tmp_path, lines, 2)
    assert run.returncode == 0, run.stdout
    assert "all 2 ranks within 0.05 of the predicted liveness peak" in run.stdout
    assert "resident set +786432 B" in run.stdout


def test_a_rank_six_percent_above_fails(tmp_path):
    run = check(tmp_path, [line(0, 500, 500, 1000), line(1, 560, 500, 1000)], 2)
    assert run.returncode == 1
    assert "rank 1:" in run.stdout and "MISMATCH" in run.stdout
    # A wider tolerance accepts it.
    assert check(tmp_path, [line(0, 500, 500, 1000), line(1, 560, 500, 1000)],
                 2, "--tolerance", "0.07").returncode == 0


def test_a_missing_rank_fails(tmp_path):
    run = check(tmp_path, [line(0, 500, 500, 1000)], 2)
    assert run.returncode == 1
    assert "rank 1 reports no step memory" in run.stdout


def test_a_wrong_sum_fails(tmp_path):
    run = check(tmp_path, [line(0, 500, 500, 1000, total=1001)], 1)
    assert run.returncode != 0
    assert "MISMATCH" in run.stdout + run.stderr
