#!/usr/bin/env python3
"""book/tools/test_chapter_files: the chapter tags of a file's head comment, and the table and check built from them (book tooling).

Four parts. The head comment and its tags in each comment style the tree uses (C++ ``//``,
Promela ``/* */``, a Python docstring after ``#!``, CMake ``#``, Lua ``--``): the first
``(chapter NN`` is the chapter that introduced the file, even wrapped across two lines;
``Changed in chapter NN:`` counts only at the start of a line of the head comment, not in
its prose and not below it. The check: a file with no tag, a tag naming a chapter with no
folder, and a change tagged at or before the introduction are each one problem, and a good
file none. The walk, on a tree made here: ``book/``, ``exercises/``, ``build*`` and data
files are not read, nor a CMake build tree under any name; a folder at the top level that is not known to the walker is. Then the
repository's own tree must have no problem, and a one-page book built with Sphinx -W renders
a chapter's table from a made tree and fails on an untagged file.
"""
import pathlib
import sys
import tempfile

BOOK = pathlib.Path(__file__).resolve().parent.parent
ROOT = BOOK.parent
sys.path.insert(0, str(BOOK / "_ext"))
sys.path.insert(0, str(BOOK / "tools"))

import chapter_files as cf  # noqa: E402
from sphinx_page import build_page  # noqa: E402

failures = []


def expect(name, got, want):
    if got != want:
        failures.append(f"{name}: got {got!r}, want {want!r}")


def tags(path, text):
    t = cf.parse_tags(path, text)
    return t.introduced, t.changed


# 1. The head comment and its tags, one comment style after another.
expect("C++ with a change", tags("code/pool/ring_pool.h",
       "// pool/ring_pool: the hand-off in memory (chapter 02; the chained wake, chapter 03).\n"
       "// Changed in chapter 03: the chained wake policy.\n"
       "// Role: move jobs.\n\n#pragma once\n"), (2, (3,)))
expect("C++, several changes on one line and on two", tags("code/server/worker.cpp",
       "// server/worker: one loop thread (chapter 01).\n"
       "// Changed in chapters 04, 05: the callback loop, a stack.\n"
       "// Changed in chapter 06: a stop taken up.\n#include <x>\n"), (1, (4, 5, 6)))
expect("a tag wrapped across two lines", tags("code/a.h",
       "// a: something long enough to wrap\n// (chapter\n// 03).\n#pragma once\n"), (3, ()))
expect("the first of several chapters", tags("code/b.h", "// b: shared (chapters 02-03).\n"), (2, ()))
expect("Promela block comment", tags("chapters/03-x/models/m.pml",
       "/* models/m: a model (chapter 03).\n * Changed in chapter 04: a step.\n */\nbit x;\n"), (3, (4,)))
expect("Python docstring after #!", tags("benchmarks/harness/bench.py",
       '#!/usr/bin/python3\n"""harness/bench: the command (chapter 01).\nChanged in chapters 04, 06: peers.\n\n'
       'Role: it runs.\n"""\nimport os\n'), (1, (4, 6)))
expect("CMake comment", tags("code/cmake/x.cmake", "# code/cmake/x: a function (chapter 02).\nfunction(x)\n"), (2, ()))
expect("Lua comment", tags("benchmarks/harness/r.lua", "-- harness/r.lua: a report (chapter 01).\nlocal x\n"), (1, ()))
expect("no tag", tags("code/c.cpp", "// c: the composition root.\n#include <x>\n"), (None, ()))
expect("a change named in prose is not a tag", tags("code/d.h",
       "// d: a thing (chapter 01); its note's heading, Changed in chapter 03: x, is prose.\n"), (1, ()))
expect("a tag below the head comment is not read", tags("code/e.cpp",
       "// e: a thing.\n#include <x>\n// (chapter 02)\n// Changed in chapter 03: x.\n"), (None, ()))
expect("a '#' line in C++ is not a comment", tags("code/f.h", "#pragma once\n// f: a thing (chapter 02).\n"), (None, ()))

# 2. The check.
known = {1, 2, 3}
probs = cf.problems([cf.Tags("code/ok.h", 1, (2, 3)), cf.Tags("code/none.h", None),
                     cf.Tags("code/seven.h", 7), cf.Tags("code/late.h", 2, (9,)),
                     cf.Tags("code/early.h", 2, (2,))], known)
expect("problems: one per bad file, none for the good one", [p.split(":")[0] for p in probs],
       ["code/none.h", "code/seven.h", "code/late.h", "code/early.h"])
expect("problems say what is wrong", ["no chapter tag" in probs[0], "does not exist" in probs[1],
                                     "does not exist" in probs[2], "not after" in probs[3]], [True] * 4)


def make_tree(root, files):
    for path, text in files.items():
        p = root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


# 3. The walk.
with tempfile.TemporaryDirectory() as tmp:
    root = pathlib.Path(tmp)
    make_tree(root, {
        "chapters/01-base/stage.cpp": "// stage (chapter 01).\n",
        "chapters/02-next/stage.cpp": "// stage (chapter 02).\n",
        "code/pool/p.h": "// pool/p: a pool (chapter 01).\n// Changed in chapter 02: rings.\n",
        "code/pool/q.h": "// pool/q: rings (chapter 02).\n",
        "newhome/spin/run.py": '"""spin/run: a runner (chapter 02)."""\n',
        "book/_ext/x.py": "# no tag\n",
        "exercises/01-a/starter/a.cpp": "// no tag\n",
        "build/release/gen.cpp": "// no tag\n",
        "code/out/CMakeCache.txt": "# a build tree configured inside the source tree\n",
        "code/out/CMakeFiles/CompilerIdCXX/id.cpp": "// no tag\n",
        ".ci/run.sh": "# no tag\n",
        "benchmarks/results/01/server.csv": "no,tag\n",
        "code/fuzz/corpus/seed": "GET / HTTP/1.1\n",
    })
    walked = cf.walk(root)
    expect("walk: the sources outside book/, exercises/, build trees and dot-folders", [t.path for t in walked],
           ["chapters/01-base/stage.cpp", "chapters/02-next/stage.cpp", "code/pool/p.h", "code/pool/q.h",
            "newhome/spin/run.py"])
    expect("chapters", cf.chapters(root), {1, 2})
    expect("the table of chapter 02", cf.by_folder(walked, 2),
           [("chapters/02-next/", ["stage.cpp"], []), ("code/pool/", ["q.h"], ["p.h"]),
            ("newhome/spin/", ["run.py"], [])])

# 4. The repository's tree, then the directive in a -W build.
real = cf.problems(cf.walk(ROOT), cf.chapters(ROOT))
expect("the repository's tree has no tag problem", real, [])

CONF = f"""
import sys
sys.path.insert(0, {str(BOOK / "_ext")!r})
extensions = ["myst_parser", "chapter_files"]
exclude_patterns = ["out/**", "chapters/**", "code/**"]
source_suffix = {{".md": "markdown"}}
"""
PAGE = "# Files\n\n```{chapter-files} 02\n```\n"
with tempfile.TemporaryDirectory() as tmp:
    root = pathlib.Path(tmp)
    make_tree(root, {"conf.py": CONF,
                     "chapters/01-base/stage.cpp": "// stage (chapter 01).\n",
                     "chapters/02-next/stage.cpp": "// stage (chapter 02).\n",
                     "code/pool/p.h": "// pool/p (chapter 01).\n// Changed in chapter 02: rings.\n"})
    rc, err, html = build_page(root, PAGE)
    expect("a tagged tree builds", (rc, err.strip()), (0, ""))
    expect("the table names the added and the changed file", ["stage.cpp" in html, "p.h" in html,
                                                               "code/pool/" in html], [True] * 3)
    (root / "code/pool/untagged.cpp").write_text("// pool/untagged: no tag.\n", encoding="utf-8")
    rc, err, _ = build_page(root, PAGE)
    expect("an untagged file fails the -W build, named", (rc != 0, "code/pool/untagged.cpp" in err), (True, True))
    (root / "code/pool/untagged.cpp").write_text("// pool/untagged (chapter 07).\n", encoding="utf-8")
    rc, err, _ = build_page(root, PAGE)
    expect("a tag naming no chapter fails the -W build", (rc != 0, "does not exist" in err), (True, True))
    (root / "code/pool/untagged.cpp").unlink()
    rc, err, _ = build_page(root, "# Files\n\n```{chapter-files} 05\n```\n")
    expect("a directive naming no chapter fails the -W build", (rc != 0, "not a chapter" in err), (True, True))

for f in failures:
    print("FAIL", f)
print("ok" if not failures else f"{len(failures)} failed")
sys.exit(1 if failures else 0)
