#!/usr/bin/env python3
"""book/tools/test_readers_results: a book built from a reader's results builds and marks what differs (chapter 06).

Role: the check behind "the book builds on the reader's machine" (book/_ext/results_cell.py,
reader_mark). A one-page book with a verdict, two figures and a figure with an expectation
is built twice with Sphinx -W: from a copy of the committed results in which some cells were
changed (a verdict flipped, a median moved, an expectation broken, one sentence untouched),
it must build and mark exactly the changed sentences, "[the book's machine: behind; yours:
ahead]"; with that same changed folder as the committed one, the build must fail on the
flipped verdict, as the committed book's build does.
"""
import json
import pathlib
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sphinx_page import build_page  # noqa: E402

EXT = pathlib.Path(__file__).resolve().parent.parent / "_ext"
BENCHMARKS = EXT.parent.parent / "benchmarks"   # the harness package the roles read through
CSV = """row,arm,p99_us_median,p99_us_min,p99_us_max,rps_median
c16,a,560,543,592,100
c16,b,300,295,305,120
c16,c,300,297,303,90
"""
ROUNDS = {"a": [560, 543, 592, 555, 570], "b": [300, 305, 295, 302, 298], "c": [300, 303, 297, 301, 299]}


def record(rounds: dict) -> str:
    return json.dumps({"cells": [{"round": r, "row": "c16", "arm": arm, "ok": True, "metrics": {"p99_us": v}}
                                 for arm, values in rounds.items() for r, v in enumerate(values)]})


def conf(committed: str) -> str:
    return f"""
import sys

sys.path.insert(0, {str(EXT)!r})
sys.path.insert(0, {str(BENCHMARKS)!r})
extensions = ["myst_parser", "results_cell"]
exclude_patterns = ["results/**", "mine/**", "out/**"]
source_suffix = {{".md": "markdown"}}
committed_results = {committed!r}
"""


PAGE = """# t

Flipped: a is {verdict}`t.csv: p99_us[row=c16, arm=a] vs p99_us[row=c16, arm=b]; lower; expected=behind` b.

Moved: a's p99 is {result}`t.csv: p99_us_median[row=c16, arm=a]` µs.

Broken: b serves {result}`t.csv: rps_median[row=c16, arm=b] / rps_median[row=c16, arm=a]; .2f; expect>1` of a's rate.

Untouched: b is {verdict}`t.csv: p99_us[row=c16, arm=b] vs p99_us[row=c16, arm=c]; lower; expected=level` with c.
"""
MARKS = {
    "Flipped": "[the book's machine: behind; yours: ahead]",
    "Moved": "[the book's machine: 560; yours: 250]",
    "Broken": "[the book's machine: 1.20; yours: 0.80]",
}


def paragraph(html: str, label: str) -> str:
    start = html.find(f"<p>{label}:")
    text = html[start: html.find("</p>", start)] if start >= 0 else ""
    return text.replace("\u2019", "'")      # Sphinx's smart quotes


def main() -> int:
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "results").mkdir()
        (root / "results" / "t.csv").write_text(CSV, encoding="utf-8")
        (root / "results" / "t.json").write_text(record(ROUNDS), encoding="utf-8")
        # The reader's copy: a cheaper than b in every round, a's median moved, b's rate down.
        shutil.copytree(root / "results", root / "mine")
        (root / "mine" / "t.csv").write_text(CSV.replace("c16,a,560,543,592,100", "c16,a,250,240,260,100")
                                             .replace("c16,b,300,295,305,120", "c16,b,300,295,305,80"),
                                             encoding="utf-8")
        (root / "mine" / "t.json").write_text(record({**ROUNDS, "a": [250, 240, 260, 245, 255]}), encoding="utf-8")

        (root / "conf.py").write_text(conf("results"), encoding="utf-8")
        rc, err, html = build_page(root, PAGE, results="mine")
        if rc != 0:
            failures.append(f"the reader's build failed (rc={rc}): {err.strip()}")
        for label, mark in MARKS.items():
            if mark not in paragraph(html, label):
                failures.append(f"{label}: no mark {mark!r} in {paragraph(html, label)!r}")
        if "reader-mark" in paragraph(html, "Untouched"):
            failures.append(f"Untouched: marked although nothing changed: {paragraph(html, 'Untouched')!r}")
        marks = html.count('class="reader-mark"')
        if marks != len(MARKS):
            failures.append(f"{marks} marks, wanted {len(MARKS)}")

        # The same changed folder as the committed one: strict, and the flipped verdict fails.
        (root / "conf.py").write_text(conf("mine"), encoding="utf-8")
        rc, err, _ = build_page(root, PAGE, results="mine")
        if rc == 0 or "the sentence says 'behind' but the data says 'ahead'" not in err:
            failures.append(f"the committed build did not fail on the flipped verdict: rc={rc}; {err.strip()}")
    for f in failures:
        print("FAIL", f)
    print("the reader's build marks each changed sentence; the committed build fails on a flip"
          if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
