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
With --self-test it proves it catches each case.
"""
import pathlib
import re
import sys
import tempfile

PAGES = ["book/**/*.md", "chapters/*/note.md", "exercises/*/README.md"]
DIRECTIVE = re.compile(r"```\{literalinclude\}\s+(\S+)\s*\n(.*?)```", re.S)
OPTION = re.compile(r"^:(start-after|start-at|end-before|end-at):\s*(.+?)\s*$", re.M)
MARKER = re.compile(r"\[[A-Za-z0-9_.-]+\]")


def check(root: pathlib.Path) -> list[str]:
    problems = []
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
    return problems


def check_anchored(path: pathlib.Path, opts: dict[str, str], where: str) -> list[str]:
    """An excerpt anchored by text: every anchor on exactly one line of its file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    problems = []
    for option in ("start-after", "start-at", "end-before", "end-at"):
        if option in opts:
            hits = sum(1 for line in lines if opts[option] in line)
            if hits != 1:
                problems.append(f"{where}: :{option}: {opts[option]!r} is on {hits} lines, not one")
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
                             "int f() {\n// [a]\nreturn 1;\n// [a]\n}\nint f() {}\nint g() {}\n"),
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
        (root / "code" / "x.cpp").write_text("int f() {\n  // [a]\n  return 1;\n  // [a]\n}\nint g() {}\n")
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
