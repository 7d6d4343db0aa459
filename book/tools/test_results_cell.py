#!/usr/bin/env python3
"""book/tools/test_results_cell: the result role fails the build on a missing cell (the reader pass).

Builds a one-page book with Sphinx -W in a temporary directory, once per case: a good cell,
a ratio and a difference must render their values; a missing file, a missing column, a row
no line matches, a row two lines match and an empty cell used in arithmetic must each fail
the build with a message that names the problem.
"""
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sphinx_page import build_page  # noqa: E402

EXT = pathlib.Path(__file__).resolve().parent.parent / "_ext"
BENCHMARKS = EXT.parent.parent / "benchmarks"   # the harness package the roles read through
CSV = """row,arm,loop_us_per_req_median,p99_us_median
c16,ring,6.96,339
c16,dgram,8.42,288
c16,inline,5.33,
c256,ring,6.32,3187
c256,ring,6.40,3190
"""
CONF = f"""
import sys

sys.path.insert(0, {str(EXT)!r})
sys.path.insert(0, {str(BENCHMARKS)!r})
extensions = ["myst_parser", "results_cell"]
exclude_patterns = ["results/**", "out/**"]
source_suffix = {{".md": "markdown"}}
"""
GOOD = [
    ("t.csv: loop_us_per_req_median[row=c16, arm=ring]", "6.96"),
    ("t.csv: loop_us_per_req_median[row=c16, arm=ring] / loop_us_per_req_median[row=c16, arm=dgram]; .3f",
     "0.827"),
    ("t.csv: loop_us_per_req_median[row=c16, arm=dgram] - loop_us_per_req_median[row=c16, arm=inline]; .1f",
     "3.1"),
    ("t.csv: loop_us_per_req_median[row=c16, arm=ring] * 1000; .0f", "6960"),
]
BAD = [
    ("missing file", "nope.csv: loop_us_per_req_median[row=c16, arm=ring]", "does not exist"),
    ("missing column", "t.csv: loop_us_per_req_p50[row=c16, arm=ring]", "no column 'loop_us_per_req_p50'"),
    ("missing row", "t.csv: loop_us_per_req_median[row=c64, arm=ring]", "no line with row=c64"),
    ("ambiguous row", "t.csv: loop_us_per_req_median[row=c256, arm=ring]", "2 lines with"),
    ("a number first", "t.csv: 1000 * loop_us_per_req_median[row=c16, arm=ring]", "expected column"),
    ("empty cell", "t.csv: p99_us_median[row=c16, arm=inline] / p99_us_median[row=c16, arm=ring]", "is empty"),
]


def build(root: pathlib.Path, role_text: str) -> tuple[int, str, str]:
    return build_page(root, f"# t\n\nThe value is {{result}}`{role_text}`.\n")


def main() -> int:
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "results").mkdir()
        (root / "results" / "t.csv").write_text(CSV, encoding="utf-8")
        (root / "conf.py").write_text(CONF, encoding="utf-8")
        for text, want in GOOD:
            rc, err, html = build(root, text)
            if rc != 0 or f">{want}</abbr>" not in html:
                failures.append(f"good cell {text!r}: rc={rc}, wanted {want!r} in the page; stderr: {err.strip()}")
        for what, text, want in BAD:
            rc, err, _ = build(root, text)
            if rc == 0 or want not in err:
                failures.append(f"{what}: rc={rc}, wanted a failed build saying {want!r}; stderr: {err.strip()}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(GOOD) + len(BAD) - len(failures)} of {len(GOOD) + len(BAD)} cases behave")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
