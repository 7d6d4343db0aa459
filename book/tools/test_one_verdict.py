#!/usr/bin/env python3
"""book/tools/test_one_verdict: touching ranges get one answer everywhere (chapter 06).

Role: the check behind "one verdict, in one home". Two arms whose min-max ranges touch (A's
highest round equals B's lowest) while A is cheaper in every round: a rule of ranges calls
them level, a rule of rounds ahead, and before the rule had one home the harness's column
and the book's role disagreed here. Every consumer is asked: the harness's comparison
(summary.compare, which writes the verdict_* columns), the book's verdict role on the two
cells and on that column (harness.results.cells, what the role reads), the headline table
(harness.results.headline.our_side) and the reproduce report (book_figures.read). All must
give the one word harness/results/verdict.py gives.
"""
import csv
import json
import os
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "benchmarks"))  # the harness package
from harness.results import book_figures, summary, verdict  # noqa: E402
from harness.results import cells as rc  # noqa: E402  (what the verdict role reads)
from harness.results import headline as ht  # noqa: E402  (what the headline table shows)
from harness.run import specfile  # noqa: E402

A = [10.0, 11.0, 12.0, 11.0, 10.5]      # A's highest round ...
B = [12.0, 13.0, 14.0, 13.0, 12.5]      # ... is B's lowest: the ranges touch


def main() -> int:
    cells = []
    for r in range(5):
        for arm, v in (("a", A[r]), ("b", B[r])):
            metrics = {m: None for m in summary.METRICS}
            metrics.update(server_us_per_req=v, errors=0.0, busy_pct=0.0)
            cells.append({"round": r, "row": "c16", "arm": arm, "ok": True, "metrics": metrics})
    summ = summary.summarize(cells, ["c16"], ["a", "b"], 25)
    ra, rb = (summ[("c16", x)]["metrics"]["server_us_per_req"] for x in ("a", "b"))
    assert ra.hi == rb.lo, "the fixture's ranges must touch"
    (cmp,) = summary.compare(summ, [specfile.Compare("a", "b", "arms", ("server_us_per_req",))],
                             ["c16"], ["a", "b"], {}, cells)
    rule = verdict.of_rounds(dict(enumerate(A)), dict(enumerate(B)), False,
                             verdict.margin_for("server_us_per_req")).word

    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "results")
        os.makedirs(root)
        with open(os.path.join(root, "t.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["row", "arm", "server_us_per_req_median", "server_us_per_req_min",
                        "server_us_per_req_max", "verdict_server_us_per_req_vs_b"])
            w.writerow(["c16", "a", ra.median, ra.lo, ra.hi, cmp["verdict"]])
            w.writerow(["c16", "b", rb.median, rb.lo, rb.hi, ""])
        with open(os.path.join(root, "t.json"), "w", encoding="utf-8") as f:
            json.dump({"mode": "full", "machine": {}, "cells": cells, "comparisons": [cmp]}, f)
        pair = "t.csv: server_us_per_req[row=c16, arm=a] vs server_us_per_req[row=c16, arm=b]; lower; expected=ahead"
        column = "t.csv: verdict_server_us_per_req_vs_b[row=c16, arm=a]; expected=ahead"
        role_pair = rc.verdict_reading(root, pair)[0]
        role_column = rc.verdict_reading(root, column)[0]
        headline = ht.our_side(root, {"ours": ["t.csv: server_us_per_req_median[row=c16, arm=b]",
                                               "t.csv: server_us_per_req_median[row=c16, arm=a]"],
                                      "better": "lower"}).judged.word
        report = book_figures.read(root, book_figures.Use("x.md", 1, "verdict", pair)).value

    words = {"verdict.py": rule, "harness column": cmp["verdict"], "role on two cells": role_pair,
             "role on the column": role_column, "headline table": headline, "reproduce report": report}
    if set(words.values()) != {"ahead"}:
        print("FAIL: touching ranges, answers differ (or are not 'ahead'):", words)
        return 1
    print("touching ranges: every consumer says", rule)
    return 0


if __name__ == "__main__":
    sys.exit(main())
