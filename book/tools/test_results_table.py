#!/usr/bin/env python3
"""book/tools/test_results_table: what a results-table cell shows (chapter 04).

The cell text for a plain column, a median with its range, an empty cell, a missing column,
and a column scaled by ``*1000`` (a per-request count read per 1,000 requests), median and
range alike.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "_ext"))
from results_table import cell_text  # noqa: E402

LINE = {"arm": "drain", "rps_median": "2310", "rps_min": "2200", "rps_max": "2400",
        "pg_sessions_per_req_median": "0.0123", "pg_sessions_per_req_min": "0.0101",
        "pg_sessions_per_req_max": "0.02", "p99_us": ""}
CASES = [
    ("arm", "drain"),
    ("rps", "2310 (2200–2400)"),
    ("p99_us", "–"),
    ("nope", None),
    ("pg_sessions_per_req*1000", "12.3 (10.1–20)"),
    ("nope*1000", None),
]
failed = 0
for key, want in CASES:
    got = cell_text(LINE, key)
    if got != want:
        print(f"FAIL: cell_text({key!r}) = {got!r}, want {want!r}")
        failed += 1
print(f"{len(CASES) - failed}/{len(CASES)} cases")
sys.exit(1 if failed else 0)
