#!/usr/bin/env python3
"""book/tools/check_layout: the conventions page's layout table names every folder the tree has, and only those (book tooling; issue 40).

Role: keep book/conventions.md's "Layout" table true. Its rows' first cell is a path in
backticks: a folder (ending in `/`) or a file at the top level (no `/` at all). In a folder's
path, the segment `NN-slug` stands for a chapter-numbered name (`03-lost-wakes`) and `*` for
any name. The tree is what git tracks or would track (`git ls-files --cached --others
--exclude-standard`): build output and other ignored files are not in it. The check fails when

  * a folder of the tree (every folder that holds a file, and each folder above it) matches
    no row;
  * a file at the top level is not a row (so nothing else lives there unannounced);
  * a row matches nothing in the tree (the page names a folder that is gone).

    check_layout.py ROOT          (exit 0 when the table and the tree agree, 1 otherwise)
    check_layout.py --self-test   (each of the three failures is caught)
"""
import pathlib
import re
import subprocess
import sys

PAGE = "book/conventions.md"
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")
SLUG = re.compile(r"\d\d-[a-z0-9-]+")


def table_rows(page: str) -> list[str]:
    """The first cells of the table in the page's "## Layout" section, in order."""
    section = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", page, re.M | re.S)
    if not section:
        return []
    return [m.group(1) for line in section.group(1).splitlines() if (m := ROW.match(line))]


def tree(root: pathlib.Path) -> list[str]:
    """Every file git tracks or would track under root, relative to it."""
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.split("\0") if f and (root / f).exists()]


def matches(row: str, folder: str) -> bool:
    want = row.rstrip("/").split("/")
    have = folder.split("/")
    return len(want) == len(have) and all(
        w == h or w == "*" or (w == "NN-slug" and SLUG.fullmatch(h)) for w, h in zip(want, have))


def check(rows: list[str], files: list[str]) -> list[str]:
    folders = sorted({"/".join(parts[:i]) for f in files for parts in [f.split("/")] for i in range(1, len(parts))})
    top_files = sorted(f for f in files if "/" not in f)
    folder_rows = [r for r in rows if r.endswith("/")]
    file_rows = [r for r in rows if not r.endswith("/")]
    problems = [f"{d}/: a folder the layout table does not name" for d in folders
                if not any(matches(r, d) for r in folder_rows)]
    problems += [f"{f}: a file at the top level the layout table does not name" for f in top_files
                 if f not in file_rows]
    problems += [f"{r}: the layout table names it, but the tree has no such folder" for r in folder_rows
                 if not any(matches(r, d) for d in folders)]
    problems += [f"{r}: the layout table names it, but the tree has no such file at the top level"
                 for r in file_rows if r not in top_files]
    return problems


def self_test() -> int:
    page = ("# Conventions\n\n## Layout\n\n| folder | what |\n|---|---|\n| `README.md` | front |\n"
            "| `code/` | library |\n| `code/*/` | areas |\n| `chapters/` | notes |\n"
            "| `chapters/NN-slug/` | a chapter |\n\n## Names\n\n| `ghost/` | not in the layout section |\n")
    rows = table_rows(page)
    good = ["README.md", "code/net/fd.h", "chapters/01-baseline/note.md", "chapters/02-ring/note.md"]
    cases = [
        ("the table and the tree agree", good, []),
        ("a folder nobody named", good + ["code/net/tests/fd_test.cpp"], ["code/net/tests/"]),
        ("a chapter folder that is not NN-slug", good + ["chapters/drafts/x.md"], ["chapters/drafts/"]),
        ("a file at the top level nobody named", good + ["notes.txt"], ["notes.txt"]),
        ("a row whose folder is gone", ["README.md", "code/net/fd.h"], ["chapters/NN-slug/", "chapters/"]),
        ("a row whose file is gone", ["code/net/fd.h", "chapters/01-baseline/note.md"], ["README.md"]),
    ]
    failed = 0
    for name, files, expect in cases:
        problems = check(rows, files)
        found = sorted(p.split(":")[0] for p in problems)
        if found != sorted(expect):
            failed += 1
            print(f"check_layout self-test: {name}: expected {sorted(expect)}, got {found}")
    print(f"check_layout self-test: {len(cases) - failed} of {len(cases)} cases as expected")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1])
    rows = table_rows((root / PAGE).read_text(encoding="utf-8"))
    if not rows:
        print(f"check_layout: {PAGE} has no layout table under '## Layout'")
        return 1
    problems = check(rows, tree(root))
    for p in problems:
        print(f"check_layout: {p}")
    if problems:
        print(f"check_layout: {len(problems)} disagreements between {PAGE}'s layout table and the tree; "
              f"change the page in the same commit as the tree")
        return 1
    print(f"check_layout: {PAGE}'s layout table ({len(rows)} rows) names every folder of the tree, and only those")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
