#!/usr/bin/env python3
"""code/spin/trail_table: a spin counter-example as a timeline, one column per thread (chapter 03).

Reads what `spin -T -t MODEL` prints when it replays a pan trail and writes a Markdown
table the book can show: one row per step a thread took, in the thread's column, in the
order the steps happened. The models announce their steps with printf lines of the form
`@<column>|<text>`: column 0 is the loop, column N the pool thread N (named
`--workers`-N: a model whose other threads are not a pool's names them); `@@|<text>` is the
verdict of a check at the end, where nothing can move, and `@!|<text>` the verdict of an
assertion that fails on the way; either is printed only when its check fails, and becomes
the line under the table. Every other line of spin's output (the final state dump) is
ignored.

    spin -T -t -DFENCE_SUBMIT=0 pool_wake.pml | trail_table.py --title "..." > out.md
"""

import argparse
import sys


def column_name(col: int, workers: str = "pool") -> str:
    return "loop" if col == 0 else f"{workers}-{col}"


VERDICTS = {"@@": "Then nothing can move: ", "@!": "Then the check fails: "}


def parse(lines):
    steps = []  # (column, text)
    verdict = None  # the line under the table
    for line in lines:
        line = line.rstrip("\n")
        if not line.startswith("@"):
            continue
        head, sep, text = line.partition("|")
        if not sep:
            continue
        if head in VERDICTS:
            verdict = VERDICTS[head] + text.strip()
            continue
        try:
            col = int(head[1:])
        except ValueError:
            continue
        steps.append((col, text.strip()))
    return steps, verdict


def render(steps, verdict, title, workers="pool"):
    cols = sorted({c for c, _ in steps})
    out = []
    if title:
        out.append(f"**{title}**")
        out.append("")
    header = ["step"] + [column_name(c, workers) for c in cols]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "|".join(["---:"] + ["---"] * len(cols)) + "|")
    for i, (col, text) in enumerate(steps, start=1):
        cells = [str(i)] + [text.replace("|", "\\|") if c == col else "" for c in cols]
        out.append("| " + " | ".join(cells) + " |")
    if verdict:
        out.append("")
        out.append(verdict)
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", nargs="?", help="spin -T -t output (default: stdin)")
    ap.add_argument("--title", default="", help="a bold line above the table")
    ap.add_argument("--workers", default="pool", help="the name of columns 1.. (NAME-1, ...)")
    args = ap.parse_args()
    if args.input:
        with open(args.input, encoding="utf-8") as f:
            steps, verdict = parse(f)
    else:
        steps, verdict = parse(sys.stdin)
    if not steps:
        print("trail_table: no @column|text lines in the input", file=sys.stderr)
        return 1
    sys.stdout.write(render(steps, verdict, args.title, args.workers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
