"""harness/results/book_figures: every figure the book shows, read from two results directories (chapter 01).

Role: the report that ends `bench.py reproduce` (and that `bench.py compare` writes alone).
A figure enters the book's prose only through the roles of book/_ext/results_cell.py
(``result``, ``range``, ``verdict``, ``count`` read results), so the figures the book shows
are those roles' uses in its pages. This module finds each use in the Markdown sources (the
pages book/conf.py builds, outside code and inline literals: ``role_spans``, the one scanner
of the pages, which book/tools/refresh_figures.py uses too), splits off the text a use
carries (the title form, ``TEXT <SOURCE>``), and reads its source twice with the roles' own
functions (harness.results.cells: evaluate, evaluate_range, verdict_reading,
evaluate_count): once from the committed results, once from the new ones. For each it gives

- the committed value and range, the new value and range (a ``result`` of one cell has its
  range read from the same cell's _min and _max columns, as the ``range`` role reads it);
- for a sentence that claims something (a ``verdict``'s expected word, a ``result``'s
  ``expect<=...``), whether the claim holds on each: a verdict is recomputed on the new data
  and a claim that held on the committed data and not on the new one is a *flip*.

The verdict word is the role's own (cells.verdict_reading, which asks the one rule in
harness/results/verdict.py), not a copy. Every figure whose rendering differs from the
sentence's text (or, without one, from the committed figure) is listed under "Sentences the
book marks" with the mark the book built from the new folder shows beside it
(cells.reader_mark).
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

from harness import REPO_ROOT
from harness.results import cells as rc  # the roles' parser and evaluators


ROLES = ("result", "range", "verdict", "count")
# The pages the book builds (book/conf.py's include_patterns) that can hold a figure.
PAGES = ("chapters/*/note.md", "exercises/*/README.md", "book/*.md")
LITERAL = re.compile(r"``.*?``")          # an inline literal: ``{result}`x` `` shows a role's syntax
FENCE = re.compile(r"^\s*(```|~~~)")


def pages(repo_root: str = REPO_ROOT) -> list[str]:
    """The book's pages that can hold a figure, as paths, in order."""
    return [path for pattern in PAGES for path in sorted(glob.glob(os.path.join(repo_root, pattern)))]


def role_spans(text: str, roles=rc.ROLES):
    """Each use of a figure role in a page's text, outside code fences and inline literals:
    (line number, start, end, role, content) with start and end the offsets of the whole
    ``{role}`content``` in TEXT. The one scanner of the book's pages (this report and the
    book's figure refresh, book/tools/refresh_figures.py)."""
    use = re.compile(r"(?<!`)\{(" + "|".join(roles) + r")\}`([^`]+)`")
    fenced, offset = False, 0
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        start, offset = offset, offset + len(line)
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        blanked = LITERAL.sub(lambda m: " " * len(m.group(0)), line)
        for m in use.finditer(blanked):
            yield n, start + m.start(), start + m.end(), m.group(1), line[m.start(2):m.end(2)]


@dataclass
class Use:
    page: str      # relative to the repository root
    line: int
    role: str
    text: str                  # the role's source (without the text it carries)
    title: str | None = None   # the text the sentence carries (the title form), if any


@dataclass
class Reading:
    value: str | None = None
    range: str | None = None
    holds: bool | None = None      # None: the figure claims nothing
    claim: str | None = None       # what the sentence claims ("ahead", "<= 0.75")
    error: str | None = None
    shown: str | None = None       # the figure as the role renders it (a verdict's phrase)
    span: tuple[float, float] | None = None   # one cell's min and max over the rounds
    median: float | None = None               # that cell's median (a result of one cell)
    why: str | None = None                    # a verdict's ratio, interval, margin and rounds

    def rendered(self) -> str:
        return self.shown if self.shown is not None else self.value or ""


@dataclass
class Compared:
    use: Use
    old: Reading
    new: Reading

    def marks(self) -> str | None:
        """The mark the book built from the new folder shows beside this figure, or None:
        the sentence's text (else the committed figure) against the new figure."""
        if self.use.title is not None:
            old = self.use.title
        else:
            old = self.old.rendered() if not self.old.error else f"not read ({self.old.error})"
        new = self.new.rendered() if not self.new.error else f"not read ({self.new.error})"
        return None if rc.plain(old) == rc.plain(new) else rc.reader_mark(rc.plain(old), rc.plain(new))

    def flips(self) -> bool:
        return self.old.holds is True and self.new.holds is False

    def status(self) -> str:
        if self.flips():
            return f"FLIPS: the sentence says {self.old.claim}, the new data says {self.new.value}"
        if self.new.error:
            return "not read: " + self.new.error
        if self.old.error:
            return "committed not read: " + self.old.error
        if (self.old.value, self.old.range) == (self.new.value, self.new.range):
            return "same"
        return "changed" + (", still holds" if self.new.holds else "") + self._against_range()

    def _against_range(self) -> str:
        """Where the new figure lies against the committed rounds: a new median inside the
        committed min-max (or a new range overlapping it) is a change the rounds already
        showed; outside it is a change of the figure."""
        if self.old.span is None or self.new.span is None:
            return ""
        lo, hi = self.old.span
        if self.new.median is not None:
            inside = lo <= self.new.median <= hi
        else:
            inside = self.new.span[0] <= hi and lo <= self.new.span[1]
        return ", within the committed range" if inside else ", outside the committed range"


def uses(repo_root: str = REPO_ROOT) -> list[Use]:
    """Every use of a figure role in the book's pages, in page and line order."""
    found = []
    for path in pages(repo_root):
        page = os.path.relpath(path, repo_root)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for n, _, _, role, body in role_spans(text, ROLES):
            title, target = rc.split_title(body)
            found.append(Use(page, n, role, target.strip(), title))
    return found


def _verdict(root: str, text: str) -> Reading:
    """The word the role's own rule gives (results_cell.verdict_reading, which asks
    harness/results/verdict.py), and whether it is the word the sentence claims."""
    word, why, _, options = rc.verdict_reading(root, text)
    claimed = rc.expected_word(text, options)
    shown = rc.explain_verdict(root, text, check=False)[0]
    return Reading(value=word, holds=word == claimed, claim=claimed, why=why, shown=shown)


def _numbers(root: str, text: str, with_median: bool) -> tuple[tuple[float, float] | None, float | None]:
    """The span (and, for a result, the value) of a figure that is one cell with _min and
    _max columns, read with the roles' own cell functions; a ratio, or a column without
    them, has neither."""
    rel, cells, _, _ = rc.parse(text)
    if len(cells) != 1 or cells[0][0] is None:
        return None, None
    lines, _ = rc.load(root, rel)
    try:
        span = rc.cell_range(lines, rel, *cells[0])
    except rc.CellError:
        return None, None
    return span, rc.cell_number(lines, rel, *cells[0]) if with_median else None


def read(root: str, use: Use) -> Reading:
    """One use read from one results directory."""
    try:
        if use.role == "verdict":
            return _verdict(root, use.text)
        if use.role == "range":
            span, _ = _numbers(root, use.text, False)
            return Reading(value=rc.evaluate_range(root, use.text)[0], span=span)
        if use.role == "count":
            return Reading(value=rc.evaluate_count(root, use.text)[0])
        text, expect = rc.split_expect(use.text)
        out = Reading(value=rc.evaluate(root, text)[0])
        try:
            out.range = rc.evaluate_range(root, text)[0]
            out.span, out.median = _numbers(root, text, True)
        except rc.CellError:
            pass        # a ratio, or a column without _min and _max: a value alone
        if expect:
            out.claim = f"{expect[0]} {expect[1]:g}"
            try:
                rc.evaluate(root, use.text)
                out.holds = True
            except rc.CellError:
                out.holds = False
        return out
    except rc.CellError as e:
        return Reading(error=str(e))


def compare(committed: str, new: str, repo_root: str = REPO_ROOT) -> list[Compared]:
    committed, new = os.path.abspath(committed), os.path.abspath(new)
    return [Compared(u, read(committed, u), read(new, u)) for u in uses(repo_root)]


def _shown(r: Reading) -> str:
    if r.error:
        return "—"
    text = r.value or ""
    if r.range and r.range != r.value:
        text += f" [{r.range}]"
    return text.replace("\u00a0", " ")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(rows: list[Compared], context: list[str]) -> str:
    """The report in Markdown: what was compared, the flips, then every figure by page."""
    flips = [r for r in rows if r.flips()]
    counts = {}
    for r in rows:
        word = r.status().split(":")[0]
        counts[word] = counts.get(word, 0) + 1
    out = ["# Reproduce, then compare: every figure the book shows", ""]
    out += [f"- {c}" for c in context]
    out += [f"- figures: {len(rows)} role uses in the book's pages; "
            + ", ".join(f"{n} {w}" for w, n in sorted(counts.items())), ""]
    out += ["## Claims that flip", ""]
    if flips:
        out += [f"- {r.use.page}:{r.use.line}: {r.status()} (`{_cell(r.use.text)}`)" for r in flips]
    else:
        out.append("None: every verdict and expectation that holds on the committed results "
                   "holds on the new ones (or could not be read there; see below).")
    out.append("")
    marked = [r for r in rows if r.marks()]
    out += ["## Sentences the book marks", "",
            f"Built from the new folder, the book shows these {len(marked)} figures with a mark."
            if marked else "None: every figure reads the same from both folders.", ""]
    out += [f"- {r.use.page}:{r.use.line}: {r.marks()}" + (f" ({r.new.why})" if r.new.why else "")
            for r in marked]
    out.append("")
    page = None
    for r in rows:
        if r.use.page != page:
            page = r.use.page
            out += ["", f"## {page}", "", "| line | role | figure | committed [range] | new [range] | status |",
                    "|---|---|---|---|---|---|"]
        out.append(f"| {r.use.line} | {r.use.role} | `{_cell(r.use.text)}` | {_cell(_shown(r.old))} "
                   f"| {_cell(_shown(r.new))} | {_cell(r.status())} |")
    return "\n".join(out) + "\n"
