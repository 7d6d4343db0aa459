"""book/_ext/chapter_files: each chapter's files, read from their chapter tags (book tooling).

Role: a Sphinx extension with one directive, ``chapter-files``, that puts in a chapter's note
the table of the files the chapter adds and the files it changes::

    ```{chapter-files} 03
    ```

The table is read from the files themselves, so it cannot drift from the tree. Every source
file opens with a head comment that says its role and the chapter that introduced it, and
names each later chapter that changed it (the grammar is on the book's conventions page):

- the *head comment* is the file's opening comment: after an optional ``#!`` line, a Python
  docstring, or the run of comment lines (``//`` or ``/* ... */`` in C++ and Promela, ``#``
  in Python, CMake, shell, TOML, YAML and the peers' configuration templates, ``--`` in Lua)
  up to the first line that is not one;
- its first ``(chapter NN`` (or ``(chapters NN``, which names the first of several) is the
  chapter that introduced the file;
- each of its lines that starts ``Changed in chapter NN:`` (or ``Changed in chapters NN,
  MM:``) names a later chapter that changed it, with what it changed after the colon.

The files read are the sources under every top-level folder of the repository but ``book/``
(the book's own tooling) and ``exercises/`` (each exercise is its chapter's by its folder's
name and is listed on the exercises page), so a folder that moves or is added is walked
without a change here; build output (``build*``, and any folder holding a
``CMakeCache.txt``), dot-folders, caches and data files (results, corpora, trails, pages)
are not sources. At ``builder-inited`` the whole tree is
checked: a source with no chapter tag, a tag that names a chapter with no
``chapters/NN-slug/`` folder, or a change tagged at or before the chapter that introduced
the file is a warning, which the book's ``-W`` build turns into a failure.
"""

from __future__ import annotations

import os
import pathlib
import re
from dataclasses import dataclass, field

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from table_frame import frame

__version__ = "1"

logger = logging.getLogger(__name__)

# The sources, by how their comments are written.
SLASH = {".cpp", ".cc", ".c", ".h", ".hpp", ".pml"}
HASH = {".py", ".sh", ".cmake", ".toml", ".yml", ".yaml", ".in"}
DASH = {".lua"}
SKIP_TOP = {"book", "exercises"}
SKIP_DIRS = {"__pycache__", "node_modules"}

INTRODUCED = re.compile(r"\(chapters? (\d{2})(?!\d)")
CHANGED = re.compile(r"Changed in chapters? (\d{2}(?:, \d{2})*):")
CHAPTER_DIR = re.compile(r"(\d{2})-[a-z0-9-]+")


class TagError(ValueError):
    pass


@dataclass(frozen=True)
class Tags:
    path: str                  # relative to the repository root, with '/'
    introduced: int | None     # the chapter that introduced the file
    changed: tuple[int, ...] = field(default=())  # the later chapters that changed it


def head_comment(text: str, suffix: str) -> list[str]:
    """The lines of the file's opening comment, comment markers removed."""
    lines = text.splitlines()
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    out: list[str] = []
    if suffix == ".py" and lines and lines[0].lstrip().startswith(('"""', "'''", 'r"""')):
        quote = '"""' if '"""' in lines[0] else "'''"
        first = lines[0].split(quote, 1)[1]
        if quote in first:
            return [first.split(quote, 1)[0].strip()]
        out.append(first.strip())
        for line in lines[1:]:
            if quote in line:
                out.append(line.split(quote, 1)[0].strip())
                break
            out.append(line.strip())
        return out
    markers = ("//",) if suffix in SLASH else ("--",) if suffix in DASH else ("#",)
    in_block = False
    for line in lines:
        s = line.strip()
        if in_block:
            end = s.find("*/")
            body = s if end < 0 else s[:end]
            out.append(body.lstrip("*").strip())
            in_block = end < 0
            continue
        if suffix in SLASH and s.startswith("/*"):
            body = s[2:]
            end = body.find("*/")
            out.append((body if end < 0 else body[:end]).strip())
            in_block = end < 0
            continue
        marker = next((m for m in markers if s.startswith(m)), None)
        if marker is None:
            break
        out.append(s[len(marker):].strip())
    return out


def parse_tags(path: str, text: str) -> Tags:
    """The chapter tags of one file's head comment (not yet checked against the chapters)."""
    head = head_comment(text, pathlib.PurePosixPath(path).suffix)
    joined = " ".join(head)
    m = INTRODUCED.search(joined)
    changed: list[int] = []
    for line in head:
        c = CHANGED.match(line)
        if c:
            changed += [int(n) for n in c.group(1).split(", ")]
    return Tags(path, int(m.group(1)) if m else None, tuple(sorted(set(changed))))


def is_source(rel: pathlib.PurePosixPath) -> bool:
    return rel.suffix in SLASH | HASH | DASH


def walk(root: pathlib.Path) -> list[Tags]:
    """The chapter tags of every source under the walked top-level folders, sorted by path."""
    found: list[Tags] = []
    for top in sorted(p for p in root.iterdir() if p.is_dir()):
        if top.name in SKIP_TOP or top.name.startswith((".", "build")):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            if "CMakeCache.txt" in filenames:  # a build tree configured here, by any name
                dirnames[:] = []
                continue
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
            for name in sorted(filenames):
                full = pathlib.Path(dirpath) / name
                rel = pathlib.PurePosixPath(full.relative_to(root).as_posix())
                if is_source(rel):
                    found.append(parse_tags(str(rel), full.read_text(encoding="utf-8", errors="replace")))
    return found


def chapters(root: pathlib.Path) -> set[int]:
    """The chapters that exist: a folder chapters/NN-slug/ each."""
    base = root / "chapters"
    return {int(m.group(1)) for d in base.iterdir() if d.is_dir() and (m := CHAPTER_DIR.fullmatch(d.name))}


def problems(tags: list[Tags], known: set[int]) -> list[str]:
    """What is wrong with the tree's tags, one line per problem."""
    out = []
    for t in tags:
        if t.introduced is None:
            out.append(f"{t.path}: no chapter tag, '(chapter NN)', in its head comment")
            continue
        if t.introduced not in known:
            out.append(f"{t.path}: '(chapter {t.introduced:02d})' names a chapter that does not exist")
        for c in t.changed:
            if c not in known:
                out.append(f"{t.path}: 'Changed in chapter {c:02d}' names a chapter that does not exist")
            elif c <= t.introduced:
                out.append(f"{t.path}: 'Changed in chapter {c:02d}' is not after the chapter that "
                           f"introduced it ({t.introduced:02d})")
    return out


def by_folder(tags: list[Tags], chapter: int) -> list[tuple[str, list[str], list[str]]]:
    """(folder, files the chapter adds, files it changes) for each folder with either, by path."""
    rows: dict[str, tuple[list[str], list[str]]] = {}
    for t in tags:
        folder, _, name = t.path.rpartition("/")
        if t.introduced == chapter:
            rows.setdefault(folder + "/", ([], []))[0].append(name)
        if chapter in t.changed:
            rows.setdefault(folder + "/", ([], []))[1].append(name)
    return [(f, a, c) for f, (a, c) in sorted(rows.items())]


_cache: dict[str, list[Tags]] = {}


def tree(srcdir: str) -> list[Tags]:
    if srcdir not in _cache:
        _cache[srcdir] = walk(pathlib.Path(srcdir))
    return _cache[srcdir]


def _names(names: list[str]) -> nodes.paragraph:
    para = nodes.paragraph()
    for i, name in enumerate(names):
        if i:
            para += nodes.Text(", ")
        para += nodes.literal(text=name)
    return para


class ChapterFiles(SphinxDirective):
    """```{chapter-files} NN```: the table of the files chapter NN adds and changes."""

    required_arguments = 1

    def run(self):
        arg = self.arguments[0]
        known = chapters(pathlib.Path(self.env.srcdir))
        if not re.fullmatch(r"\d{2}", arg) or int(arg) not in known:
            raise self.error(f"chapter-files: {arg!r} is not a chapter (chapters/NN-slug/)")
        rows = by_folder(tree(self.env.srcdir), int(arg))
        if not rows:
            raise self.error(f"chapter-files: no file is tagged as added or changed by chapter {arg}")
        head = nodes.row()
        for name in ("Folder", "Adds", "Changes"):
            head += nodes.entry("", nodes.paragraph(text=name))
        table, body = frame(["chapter-files"], [3, 4, 3], head)
        for folder, added, changed in rows:
            row = nodes.row()
            row += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=folder)))
            row += nodes.entry("", _names(added))
            row += nodes.entry("", _names(changed))
            body += row
        return [table]


def check_tree(app):
    root = pathlib.Path(app.srcdir)
    for line in problems(tree(app.srcdir), chapters(root)):
        logger.warning(f"chapter tags: {line}")


def setup(app):
    app.add_directive("chapter-files", ChapterFiles)
    app.connect("builder-inited", check_tree)
    return {"version": __version__, "parallel_read_safe": True}
