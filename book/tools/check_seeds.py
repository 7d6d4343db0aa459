#!/usr/bin/env python3
"""book/tools/check_seeds: every row of book/seeds.csv says what its seed's line says.

Role: the seeds table is the only way a seed's figure enters the book (the ``seed`` role,
book/_ext/results_cell.py); this checks the table against the seed records themselves. For
every row, the named line of the named file must contain the row's ``quote``, and the quote
must contain the row's ``value`` (dashes and separators normalised: the seeds write
``300-450`` and ``us`` where the book writes ``300–450`` and ``µs``).

The seed records are the project's working material, not part of this repository: pass their
folder (the one holding ``seeds/`` and ``background/``) as the argument or in
HANDOFF_SEEDS_DIR. Without it the check is skipped (exit 77, CTest's SKIP_RETURN_CODE).
"""
import csv
import os
import pathlib
import sys

TABLE = pathlib.Path(__file__).resolve().parent.parent / "seeds.csv"


def norm(text: str) -> str:
    return (text.replace("–", "-").replace("→", "->").replace("µs", "us").replace(",", "")
            .replace(" ", "").lower())


def main(argv: list[str]) -> int:
    where = argv[1] if len(argv) > 1 else os.environ.get("HANDOFF_SEEDS_DIR", "")
    if not where or not os.path.isdir(where):
        print("check_seeds: no seed records (pass their folder or set HANDOFF_SEEDS_DIR); skipped")
        return 77
    root = pathlib.Path(where)
    problems, rows = [], list(csv.DictReader(TABLE.open(encoding="utf-8")))
    for row in rows:
        path = root / ("background" if row["file"] == "FACTS.md" else "seeds") / row["file"]
        if not path.is_file():
            problems.append(f"{row['id']}: no file {row['file']}")
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        n = int(row["line"])
        if not 1 <= n <= len(lines):
            problems.append(f"{row['id']}: {row['file']} has no line {n}")
            continue
        if norm(row["quote"]) not in norm(lines[n - 1]):
            problems.append(f"{row['id']}: line {n} of {row['file']} does not say {row['quote']!r}")
        value = row["value"].removeprefix("about ")
        if norm(value) not in norm(row["quote"]):
            problems.append(f"{row['id']}: the quote {row['quote']!r} does not hold the value {value!r}")
    for p in problems:
        print("FAIL", p)
    print(f"{len(rows) - len(problems)} of {len(rows)} seed figures found on their lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
