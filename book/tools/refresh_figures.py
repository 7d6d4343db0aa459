#!/usr/bin/env python3
"""book/tools/refresh_figures: write each figure role's text from the data (chapter 01).

Role: the one command that keeps a raw note readable. A figure role carries its figure as
its text, ``{result}`12.3 µs <01-baseline/server.csv: p50_us_median[row=c16, arm=inline]; .1f µs>```
(the title form, book/_ext/results_cell.py), and the book's build fails where that text is
not what the data gives. This rewrites the text of every ``result``, ``range``, ``count``,
``verdict``, ``param`` and ``seed`` in the book's pages (or the files named) from the
committed results, the code and the seeds table, by the roles' own rendering
(harness.results.cells.render) and the reproduce report's own page scanner
(harness.results.book_figures.role_spans: code fences and inline literals are left alone).

- A role in the form without text gets its text; a role whose text is already the figure
  is left byte for byte, so a second run changes nothing; nothing outside a role's backticks
  is touched.
- A claim is never rewritten: a verdict whose ``expected=`` word the data no longer gives,
  or a ``result`` whose ``expect<=`` fails, is left as it is and named (exit status 1), as is
  a role that cannot be read at all. Fix the sentence, then run again.
- ``--check`` writes nothing and exits 1 when some text would change (or cannot be read).

    python3 book/tools/refresh_figures.py            # every page of the book
    python3 book/tools/refresh_figures.py chapters/03-lost-wakes/note.md --check
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))  # the harness package: the roles' own reader
from harness.results import book_figures, cells  # noqa: E402


def refresh_text(text: str, results: str, srcdir: str, seeds: str) -> tuple[str, int, list[str]]:
    """(the text with every role's text written from the data, how many roles changed,
    the problems: 'LINE: role: why' for each role left as it was)."""
    out, pos, changed, problems = [], 0, 0, []
    for line, start, end, role, body in book_figures.role_spans(text, cells.ROLES):
        title, target = cells.split_title(body)
        try:
            shown = cells.render(role, target, results, srcdir, seeds)[0]
            if title is not None and cells.plain(title) == cells.plain(shown):
                continue
            written = cells.titled(role, shown, target)
        except cells.CellError as e:
            problems.append(f"{line}: {role}: {e}")
            continue
        out += [text[pos:start], written]
        pos = end
        changed += 1
    out.append(text[pos:])
    return "".join(out), changed, problems


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="*", help="the files to refresh (default: every page of the book)")
    ap.add_argument("--results", default=str(ROOT / "benchmarks" / "results"),
                    help="the results folder the text is written from (default: the committed one)")
    ap.add_argument("--srcdir", default=str(ROOT), help="where a param's file path starts (the book's source)")
    ap.add_argument("--seeds", default=cells.SEEDS_TABLE, help="the seeds table (default: book/seeds.csv)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if some text would change")
    args = ap.parse_args(argv[1:])
    pages = args.pages or book_figures.pages(str(ROOT))
    results = os.path.abspath(args.results)
    status, total = 0, 0
    for page in pages:
        with open(page, encoding="utf-8", newline="") as f:
            text = f.read()
        new, changed, problems = refresh_text(text, results, os.path.abspath(args.srcdir), args.seeds)
        for p in problems:
            print(f"{page}:{p}", file=sys.stderr)
        status |= bool(problems)
        if changed:
            total += changed
            if args.check:
                print(f"{page}: {changed} figure texts are not what the data gives", file=sys.stderr)
                status = 1
            else:
                with open(page, "w", encoding="utf-8", newline="") as f:
                    f.write(new)
                print(f"{page}: {changed} figure texts written")
    print(f"refresh_figures: {len(pages)} pages, {total} texts {'stale' if args.check else 'written'}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
