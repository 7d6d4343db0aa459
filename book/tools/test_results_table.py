#!/usr/bin/env python3
"""book/tools/test_results_table: what a results-table cell shows (chapter 04).

The cell text for a plain column, a median with its range, an empty cell, a missing column,
and a column scaled by ``*1000`` (a per-request count read per 1,000 requests), median and
range alike. Then a one-page book built with Sphinx -W: a table split with ``|``
in ``:columns:`` renders as parts under one caption, numbered, its keys repeated in each and
the provenance once; a range is kept whole; an empty part fails the build.
"""
import json
import re
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sphinx_page import build_page  # noqa: E402

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

EXT = pathlib.Path(__file__).resolve().parent.parent / "_ext"
CONF = f"""
import sys

sys.path.insert(0, {str(EXT)!r})
extensions = ["myst_parser", "results_table"]
exclude_patterns = ["results/**", "out/**"]
source_suffix = {{".md": "markdown"}}
"""
PAGE = """# t

```{{results-table}} t.csv
:columns: {columns}
:caption: Split
```
"""


def build(root: pathlib.Path, columns: str) -> tuple[int, str, str]:
    return build_page(root, PAGE.format(columns=columns))


with tempfile.TemporaryDirectory() as tmp:
    root = pathlib.Path(tmp)
    (root / "conf.py").write_text(CONF, encoding="utf-8")
    (root / "results").mkdir()
    (root / "results" / "t.csv").write_text(
        "row,arm,rps_median,rps_min,rps_max,p99_us\nc16,ring,2310,2200,2400,339\n", encoding="utf-8")
    (root / "results" / "t.json").write_text(json.dumps({"mode": "full", "machine": {}}), encoding="utf-8")
    rc, err, html = build(root, "row=connections, arm | rps=requests/s | p99_us=p99 µs")
    checks = [
        ("the split builds", rc == 0),
        ("two tables", html.count("<table") == 2),
        ("numbered parts", re.search(r"Split<span[^>]*> \(1 of 2\)</span>", html) is not None
                           and re.search(r"Split<span[^>]*> \(2 of 2\)</span>", html) is not None),
        ("the keys in both parts", html.count(">connections<") == 2 and html.count(">ring<") == 2),
        ("one provenance line", html.count("Regenerate:") == 1),
        ("the range kept whole", '<span class="range">(2200–2400)</span>' in html),
    ]
    rc, err, _ = build(root, "row, arm | | p99_us")
    checks.append(("an empty part fails the build", rc != 0 and "empty part" in err))
    for what, ok in checks:
        if not ok:
            print(f"FAIL: {what}" + (f"; stderr: {err.strip()[:300]}" if "build" in what else ""))
            failed += 1
    print(f"{sum(ok for _, ok in checks)}/{len(checks)} split cases")
sys.exit(1 if failed else 0)
