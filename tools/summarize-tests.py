#!/usr/bin/python3
"""Count the results of one ctest run case by case and print the total.

ctest reports a whole suite (lit, pytest, an MPI run) as one entry. Such
suites write JUnit XML to <results-dir>/<ctest name>.xml; this script replaces
each such entry by the cases in its file, so `N passed, N failed` counts real
tests. An entry that failed without writing its file counts as one failure.

Usage: summarize-tests.py CTEST_JUNIT_XML RESULTS_DIR
Prints the failed cases, then `N passed, N failed[, N skipped]` last.
Exits 0 when nothing failed and at least one test ran, 1 otherwise.
"""

import os
import sys
import xml.etree.ElementTree as ET


def suite_cases(path):
    """Yields (name, outcome) for each testcase of a JUnit file."""
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("failure") is not None or case.find("error") is not None:
            yield name, "failed"
        elif case.find("skipped") is not None:
            yield name, "skipped"
        else:
            yield name, "passed"


def ctest_cases(ctest_xml, results_dir):
    """Yields (name, outcome) for every test ctest ran, suites expanded."""
    for case in ET.parse(ctest_xml).getroot().iter("testcase"):
        name, status = case.get("name"), case.get("status")
        suite_file = os.path.join(results_dir, f"{name}.xml")
        if os.path.exists(suite_file):
            cases = list(suite_cases(suite_file))
            yield from cases
            # A suite can fail outside any case (a crash after the last one).
            if status == "fail" and not any(o == "failed" for _, o in cases):
                yield name, "failed"
        elif status == "run":
            yield name, "passed"
        elif status in ("notrun", "disabled"):
            yield name, "skipped"
        else:
            yield name, "failed"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for name, outcome in ctest_cases(sys.argv[1], sys.argv[2]):
        counts[outcome] += 1
        if outcome == "failed":
            print(f"FAILED: {name}")
    line = f"{counts['passed']} passed, {counts['failed']} failed"
    if counts["skipped"]:
        line += f", {counts['skipped']} skipped"
    print(line)
    return 0 if counts["failed"] == 0 and counts["passed"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
