#!/usr/bin/env python3
"""book/tools/check_regions: the book's excerpts cannot go stale (chapter: conventions).

Every code excerpt in the book is a region of a real file, marked twice with the same
bracketed marker (`// [ring.push]` ... `// [ring.push]`) and pulled in by MyST's
literalinclude with :start-after: and :end-before:. This checker fails when a page names a
file or marker that does not exist, a marker appears other than exactly twice in its file,
or the region between the two is empty. An excerpt that starts at a function's signature
(:start-at:, because the region sits inside the function's body, or the file has no
region) is anchored by text: each anchor must occur on exactly one line of its file, so the
excerpt can neither vanish nor quietly start at another function that happens to match.

It also keeps the markers honest and the excerpts short (issue 26): a region marker in the
tree that no page excerpts is a failure (a marker that guards nothing only misleads), and so
is an excerpt longer than MAX_LINES lines (a reader scrolls past it: split the region, or
excerpt the part the prose discusses). With --self-test it proves it catches each case.
"""
import pathlib
import re
import sys
import tempfile

PAGES = ["book/**/*.md", "chapters/*/note.md", "exercises/*/README.md"]
DIRECTIVE = re.compile(r"```\{literalinclude\}\s+(\S+)\s*\n(.*?)```", re.S)
OPTION = re.compile(r"^:(start-after|start-at|end-before|end-at):\s*(.+?)\s*$", re.M)
MARKER = re.compile(r"\[[A-Za-z0-9_.-]+\]")
# A line that is a region marker and nothing else: `// [name]`, `# [name]`, `/* [name] */`.
MARKER_LINE = re.compile(r"^\s*(?://|#|--|/\*)\s*(\[[A-Za-z0-9_.-]+\])\s*(?:\*/)?\s*$")
SOURCES = ["code", "chapters", "benchmarks", "exercises", "book"]
SKIP_DIRS = {"build", "_build", ".git", "__pycache__", "node_modules"}
SKIP_SUFFIXES = {".md", ".json", ".csv", ".svg", ".png"}
MAX_LINES = 40


def check(root: pathlib.Path) -> list[str]:
    problems = []
    excerpted = set()  # (path relative to root, marker)
    for pattern in PAGES:
        for page in sorted(root.glob(pattern)):
            text = page.read_text(encoding="utf-8")
            for m in DIRECTIVE.finditer(text):
                target, body = m.group(1), m.group(2)
                # MyST reads option values as YAML: a value that needs quoting is quoted.
                opts = {k: v[1:-1] if len(v) > 1 and v[0] == v[-1] and v[0] in "'\"" else v
                        for k, v in OPTION.findall(body)}
                where = f"{page.relative_to(root)}: {target}"
                path = root / target.lstrip("/")
                if not path.is_file():
                    problems.append(f"{where}: no such file")
                    continue
                if "start-at" in opts or "end-at" in opts:
                    problems += check_anchored(path, opts, where)
                    continue
                start, end = opts.get("start-after"), opts.get("end-before")
                if start is None and end is None:
                    continue
                if start != end:
                    problems.append(f"{where}: start-after and end-before name different markers")
                    continue
                lines = path.read_text(encoding="utf-8").splitlines()
                hits = [i for i, line in enumerate(lines) if line.strip().endswith(start)]
                if len(hits) != 2:
                    problems.append(f"{where}: marker {start} appears {len(hits)} times, not twice")
                    continue
                inner = [line for line in lines[hits[0] + 1:hits[1]] if line.strip()]
                if not inner:
                    problems.append(f"{where}: region {start} is empty")
                marker = MARKER.search(start)
                if marker:
                    excerpted.add((target.lstrip("/"), marker.group(0)))
                if hits[1] - hits[0] - 1 > MAX_LINES:
                    problems.append(f"{target.lstrip('/')} {marker.group(0) if marker else start} long: "
                                    f"{hits[1] - hits[0] - 1} lines, over {MAX_LINES} ({page.relative_to(root)})")
    for path, marker in sorted(markers(root)):
        if (path, marker) not in excerpted:
            problems.append(f"{path} {marker} unused: no page excerpts it (delete the marker, or excerpt it)")
    return problems


def markers(root: pathlib.Path) -> set[tuple[str, str]]:
    """Every (file, marker) whose marker lines stand in a source file of the tree."""
    found = set()
    for top in SOURCES:
        for path in sorted((root / top).rglob("*")):
            rel = path.relative_to(root)
            if any(part in SKIP_DIRS for part in rel.parts) or not path.is_file() or path.suffix in SKIP_SUFFIXES:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for line in text.splitlines():
                m = MARKER_LINE.match(line)
                if m:
                    found.add((rel.as_posix(), m.group(1)))
    return found


def check_anchored(path: pathlib.Path, opts: dict[str, str], where: str) -> list[str]:
    """An excerpt anchored by text: every anchor on exactly one line of its file, and short."""
    lines = path.read_text(encoding="utf-8").splitlines()
    problems = []
    at = {}
    for option in ("start-after", "start-at", "end-before", "end-at"):
        if option in opts:
            hits = [i for i, line in enumerate(lines) if opts[option] in line]
            if len(hits) != 1:
                problems.append(f"{where}: :{option}: {opts[option]!r} is on {len(hits)} lines, not one")
            else:
                at[option] = hits[0]
    first = at.get("start-at", at.get("start-after", -1) + 1) if at.keys() & {"start-at", "start-after"} else 0
    last = at.get("end-before", at.get("end-at", len(lines) - 1) + 1) if at.keys() & {"end-before", "end-at"} else len(lines)
    shown = [line for line in lines[first:last] if not MARKER_LINE.match(line)]
    if not problems and len(shown) > MAX_LINES:
        problems.append(f"{where} long: the excerpt from {opts.get('start-at', opts.get('start-after', 'the top'))!r} "
                        f"is {len(shown)} lines, over {MAX_LINES}")
    return problems


def self_test() -> int:
    cases = {
        "missing file": ("```{literalinclude} /code/nope.cpp\n:start-after: // [a]\n:end-before: // [a]\n```\n", "x"),
        "unpaired marker": ("```{literalinclude} /code/x.cpp\n:start-after: // [a]\n:end-before: // [a]\n```\n",
                            "// [a]\nint x;\n"),
        "empty region": ("```{literalinclude} /code/x.cpp\n:start-after: // [a]\n:end-before: // [a]\n```\n",
                         "// [a]\n\n// [a]\n"),
        "missing marker": ("```{literalinclude} /code/x.cpp\n:start-after: // [b]\n:end-before: // [b]\n```\n",
                           "// [a]\nint x;\n// [a]\n"),
        "ambiguous anchor": ("```{literalinclude} /code/x.cpp\n:start-at: int f()\n:end-before: int g()\n```\n",
                             "int f() {\nreturn 1;\n}\nint f() {}\nint g() {}\n"),
        "marker nothing excerpts": ("```{literalinclude} /code/x.cpp\n:start-after: // [a]\n:end-before: // [a]\n```\n",
                                    "// [a]\nint x;\n// [a]\n# [b]\nint y;\n# [b]\n"),
        "region over 40 lines": ("```{literalinclude} /code/x.cpp\n:start-after: // [a]\n:end-before: // [a]\n```\n",
                                 "// [a]\n" + "int x;\n" * 41 + "// [a]\n"),
        "anchored excerpt over 40 lines": ("```{literalinclude} /code/x.cpp\n:start-at: int f()\n:end-before: int g()\n```\n",
                                           "int f() {\n" + "x();\n" * 40 + "}\nint g() {}\n"),
    }
    failed = 0
    for name, (page, code) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            root = pathlib.Path(d)
            (root / "book").mkdir()
            (root / "code").mkdir()
            (root / "book" / "page.md").write_text(page)
            (root / "code" / "x.cpp").write_text(code)
            if not check(root):
                print(f"self-test: the checker missed a {name}")
                failed += 1
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        (root / "book").mkdir()
        (root / "code").mkdir()
        (root / "book" / "page.md").write_text(cases["unpaired marker"][0])
        (root / "code" / "x.cpp").write_text("// [a]\nint x;\n// [a]\n")
        if check(root):
            print("self-test: the checker rejected a good region")
            failed += 1
        (root / "book" / "page.md").write_text(cases["ambiguous anchor"][0])
        (root / "code" / "x.cpp").write_text("int f() {\n" + "  x();\n" * 38 + "}\nint g() {}\n")
        if check(root):
            print("self-test: the checker rejected a good anchored excerpt")
            failed += 1
    print("self-test:", "failed" if failed else "every broken case caught, the good one passed")
    return 1 if failed else 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    problems = check(root)
    for p in problems:
        print(p)
    count = sum(len(DIRECTIVE.findall(p.read_text(encoding="utf-8")))
                for pattern in PAGES for p in root.glob(pattern))
    print(f"{count} literalinclude directives checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
