#!/usr/bin/env python3
"""book/tools/test_refresh_figures: a figure's text in the note is checked against the data, and written from it (chapter 01).

Role: the check behind "a raw note reads as prose" (the title form of book/_ext/results_cell.py
and book/tools/refresh_figures.py). A one-page book whose figures are in the form without text
(all six roles, one verdict with phrases, one role in an inline literal and one in a code
fence, which are not figures) is refreshed:

- every role gets its figure as its text, nothing outside a role's backticks changes, the
  literal and the fence are untouched, and a second run changes no byte (idempotent);
  ``--check`` then passes, and fails on a text made stale by hand;
- a verdict the data contradicts is not rewritten: refresh names it and exits 1;
- built with Sphinx -W from the committed results with ``figure_text_required``, the page
  builds; with one cell changed in the committed results it fails, naming the text and
  the figure; built from a reader's copy with that cell changed it builds, and only the
  sentence on that cell carries a mark ("[the book's machine: 560; yours: 250]");
- the form without text fails a build that requires the text.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from sphinx_page import build_page  # noqa: E402

EXT = HERE.parent / "_ext"
BENCHMARKS = HERE.parent.parent / "benchmarks"
REFRESH = HERE / "refresh_figures.py"
CSV = """row,arm,p99_us_median,p99_us_min,p99_us_max,rps_median
c16,a,560,543,592,100
c16,b,300,295,305,120
c16,c,300,297,303,90
"""
ROUNDS = {"a": [560, 543, 592, 555, 570], "b": [300, 305, 295, 302, 298], "c": [300, 303, 297, 301, 299]}
RECORD = json.dumps({"cells": [{"round": r, "row": "c16", "arm": arm, "ok": True, "metrics": {"p99_us": v}}
                               for arm, values in ROUNDS.items() for r, v in enumerate(values)]})
SEEDS = """record,id,value,unit,machine,file,line,quote
seed 000,s.off,7.4, µs,Apple M4,000.txt,28,7.4 µs off
seed 000,s.on,6.3, µs,Apple M4,000.txt,28,6.3 on
"""
CODE = 'std::int64_t spin_ns = 10\'000;\napp.add_option("--pipeline", o.pipeline)->default_val(64);\n'
CONF = f"""
import sys

sys.path.insert(0, {str(EXT)!r})
sys.path.insert(0, {str(BENCHMARKS)!r})
extensions = ["myst_parser", "results_cell"]
exclude_patterns = ["results/**", "mine/**", "out/**"]
source_suffix = {{".md": "markdown"}}
seeds_table = "seeds.csv"
committed_results = "results"
figure_text_required = True
"""
PAGE = """# t

Moved: a's p99 is {result}`t.csv: p99_us_median[row=c16, arm=a]` µs, over {range}`t.csv: p99_us[row=c16, arm=a]; .0f µs`.

Kept: b is {verdict}`t.csv: p99_us[row=c16, arm=b] vs p99_us[row=c16, arm=c]; lower; expected=level; words=ahead of|level with|behind` c, {result}`t.csv: rps_median[row=c16, arm=b] / rps_median[row=c16, arm=a]; .2f; expect>1` of a's rate, on {count}`t.csv: [row=c16]` arms; a spin of {param}`code.h: spin_ns / 1000; .0f µs`, a pipeline of {param}`code.h: /"--pipeline".*?default_val\\((\\d+)\\)/`, and {seed}`s.off -> s.on`.

A literal ``{result}`t.csv: rps_median[row=c16, arm=z]` `` is syntax, not a figure.

```
{result}`t.csv: rps_median[row=c16, arm=z]`
```
"""
REFRESHED = {
    "{result}`560 <t.csv: p99_us_median[row=c16, arm=a]>`",
    "{range}`543–592 µs <t.csv: p99_us[row=c16, arm=a]; .0f µs>`",
    "{verdict}`level with <t.csv: p99_us[row=c16, arm=b] vs p99_us[row=c16, arm=c]; lower; expected=level; words=ahead of|level with|behind>`",
    "{result}`1.20 <t.csv: rps_median[row=c16, arm=b] / rps_median[row=c16, arm=a]; .2f; expect>1>`",
    "{count}`3 <t.csv: [row=c16]>`",
    "{param}`10 µs <code.h: spin_ns / 1000; .0f µs>`",
    "{param}`64 <code.h: /\"--pipeline\".*?default_val\\((\\d+)\\)/>`",
    "{seed}`7.4 → 6.3 µs (seed 000, Apple M4) <s.off -> s.on>`",
}


def refresh(root: pathlib.Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REFRESH), str(root / "index.md"), "--results", str(root / "results"),
                           "--srcdir", str(root), "--seeds", str(root / "seeds.csv"), *extra],
                          capture_output=True, text=True, timeout=60)


def paragraph(html: str, label: str) -> str:
    start = html.find(f"<p>{label}:")
    text = html[start: html.find("</p>", start)] if start >= 0 else ""
    return text.replace("\u2019", "'")      # Sphinx's smart quotes


def main() -> int:
    failures = []

    def check(what: str, ok: bool, detail: str = "") -> None:
        if not ok:
            failures.append(f"{what}: {detail}")

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "results").mkdir()
        (root / "results" / "t.csv").write_text(CSV, encoding="utf-8")
        (root / "results" / "t.json").write_text(RECORD, encoding="utf-8")
        (root / "seeds.csv").write_text(SEEDS, encoding="utf-8")
        (root / "code.h").write_text(CODE, encoding="utf-8")
        (root / "conf.py").write_text(CONF, encoding="utf-8")
        page = root / "index.md"

        # The form without text fails a build that requires the text.
        rc, err, _ = build_page(root, PAGE)
        check("the form without text fails where the text is required", rc != 0 and "TEXT <SOURCE>" in err, err)

        page.write_text(PAGE, encoding="utf-8")
        first = refresh(root)
        once = page.read_text(encoding="utf-8")
        check("refresh runs", first.returncode == 0, first.stderr)
        for role in REFRESHED:
            check("refresh writes the figure as the text", role in once, role)
        untouched = once
        for role in REFRESHED:
            untouched = untouched.replace(role, "")
        expected = PAGE
        for role in REFRESHED:
            body = role.split(" <", 1)[1][:-2]
            expected = expected.replace(f"{role.split('`')[0]}`{body}`", "")
        check("nothing outside a role changes (the literal and the fence included)", untouched == expected,
              f"{untouched!r} != {expected!r}")
        second = refresh(root)
        check("a second run changes no byte", page.read_text(encoding="utf-8") == once and
              "0 texts written" in second.stdout, second.stdout)
        check("--check passes on a refreshed page", refresh(root, "--check").returncode == 0)
        page.write_text(once.replace("{count}`3 <", "{count}`4 <"), encoding="utf-8")
        stale = refresh(root, "--check")
        check("--check fails on a stale text and writes nothing", stale.returncode == 1 and
              "{count}`4 <" in page.read_text(encoding="utf-8"), stale.stderr)
        page.write_text(once, encoding="utf-8")

        # A claim is never rewritten: a verdict the data contradicts is named and left.
        flipped = once.replace("expected=level; words", "expected=ahead; words")
        page.write_text(flipped, encoding="utf-8")
        claim = refresh(root)
        check("refresh leaves a contradicted verdict and exits 1", claim.returncode == 1 and
              "the sentence says 'ahead'" in claim.stderr and page.read_text(encoding="utf-8") == flipped,
              claim.stderr)

        # The committed build: the refreshed page builds; a changed cell fails it.
        rc, err, html = build_page(root, once)
        check("the refreshed page builds from the committed results", rc == 0 and ">560<" in html, err)
        shutil.copytree(root / "results", root / "mine")
        changed = CSV.replace("c16,a,560,543,592,100", "c16,a,250,543,592,100")
        (root / "results" / "t.csv").write_text(changed, encoding="utf-8")
        rc, err, _ = build_page(root, once)
        check("a changed cell fails the committed build", rc != 0 and "the text says '560' but the data gives '250'" in err, err)
        (root / "results" / "t.csv").write_text(CSV, encoding="utf-8")

        # A reader's folder with that cell changed: it builds and marks that sentence only.
        (root / "mine" / "t.csv").write_text(changed, encoding="utf-8")
        rc, err, html = build_page(root, once, results="mine")
        moved, kept = paragraph(html, "Moved"), paragraph(html, "Kept")
        check("the reader's build builds", rc == 0, err)
        check("the changed sentence is marked", "[the book's machine: 560; yours: 250]" in moved, moved)
        check("the unchanged sentences carry no mark", "reader-mark" not in kept and moved.count("reader-mark") == 1,
              kept)

    for f in failures:
        print("FAIL", f)
    print("test_refresh_figures: " + ("every check passed" if not failures else f"{len(failures)} checks failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
