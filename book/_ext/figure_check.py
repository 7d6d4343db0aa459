"""book/_ext/figure_check: no figure typed into a chapter note's prose.

Role: the check behind "a number in a sentence is read, not typed". After each chapter
note is parsed, every block of its prose (paragraphs, titles, captions, list items, terms,
admonitions) is read with the roles, literals and code taken out, and a warning, which the
book's ``-W`` build turns into a failure, names each of these still left in it:

- a number with a unit: ``6.3 µs``, ``10 ms``, ``2 s``, ``155k``, ``0.82x``, ``12×``,
  ``17%``, ``1 MiB``, ``185 req/s`` (a range ``2.7–3.0 µs`` counts once);
- a multiplier word: ``twice``, ``half``, ``doubled``, ``three times``, ``6 times``,
  ``several times``, ``tenfold``;
- a count of rounds or rows: ``2 of 10``, ``three of five``.

A measured figure goes through ``result``, ``range``, ``verdict`` or ``count``; a seed's
through ``seed``; a configuration value through ``param``, which renders it from the
constant in the code (book/_ext/results_cell.py has all six). What the check does not
read: anything a role rendered, inline literals and code blocks (excerpts), a
``results-table``'s cells and its provenance line, a ``results-figure``'s provenance, and
graphviz diagrams. Which pages it reads is the ``figure_check_docs`` setting, a list of
regular expressions matched against the document name (``chapters/[^/]+/note``).
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.util import logging

__version__ = "1"

logger = logging.getLogger(__name__)

NUM = r"(?<![\w.,/\-])\d+(?:[.,]\d+)*"
UNIT_SPACED = (r"µs|μs|us|ms|ns|s|sec|secs|min|rps|req/s|requests/s|requests per second|%|per ?cent"
               r"|×|KB|MB|GB|KiB|MiB|GiB|bytes?|GHz|MHz|Hz|seconds?|milliseconds?|microseconds?"
               r"|nanoseconds?|minutes?|hours?")
UNIT_ATTACHED = r"x|k|K|M"
FIGURE = re.compile(
    rf"{NUM}(?:\s*(?:–|-|to)\s*{NUM})?(?:[ \u00a0\u2009]?(?:{UNIT_SPACED})(?![\w/])|(?:{UNIT_ATTACHED})(?![\w/]))")
WORDS = r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|a hundred|hundred"
MULTIPLIER = re.compile(
    rf"\b(?:twice|thrice|(?<!'s )(?<!’s )(?<!first )(?<!second )(?<!other )(?<!each )(?<!high )(?<!low )(?<!upper )(?<!lower )half|halved|halving|doubled|doubles|doubling|tripled|triples"
    rf"|quadrupled|(?:two|three|four|five|six|ten|\d+)-?fold"
    rf"|(?:\d+(?:\.\d+)?|{WORDS}|several)\s+times)\b", re.I)
COUNT = re.compile(rf"\b(?:\d+|{WORDS.replace('one|', '')})\s+of\s+(?:the\s+)?(?:\d+|{WORDS})\b(?!\s*(?:{UNIT_SPACED})\b)", re.I)
PATTERNS = [("a number with a unit", FIGURE), ("a multiplier word", MULTIPLIER), ("a count", COUNT)]

# Inline nodes whose text is not the author's typing: what the roles rendered, literals.
SKIP_INLINE = (nodes.abbreviation, nodes.literal, nodes.problematic, nodes.raw, nodes.math,
               nodes.substitution_reference, nodes.footnote_reference, nodes.citation_reference)
# Blocks the check does not read at all.
SKIP_BLOCK = (nodes.literal_block, nodes.raw, nodes.comment, nodes.math_block, nodes.doctest_block,
              nodes.system_message)
PLACEHOLDER = "\u2063"  # where a role's figure stood: neither a digit nor a word


def prose(node: nodes.Node) -> str:
    """The text of a block as typed, with roles and literals replaced by a placeholder."""
    if isinstance(node, nodes.Text):
        return node.astext()
    if isinstance(node, SKIP_INLINE) or "seed-figure" in getattr(node, "get", lambda *_: [])("classes", []):
        return PLACEHOLDER
    # A reader's-results mark (harness.results.cells.reader_mark) quotes both machines' figures as read.
    if isinstance(node, nodes.Element) and {"results-provenance", "results-part", "reader-mark"} & set(node.get("classes", [])):
        return PLACEHOLDER
    if isinstance(node, nodes.Element):
        return "".join(prose(c) for c in node.children)
    return ""


def skipped(node: nodes.Node) -> bool:
    """Inside a block the check does not read: code, a results table's body, provenance."""
    while node is not None:
        if isinstance(node, SKIP_BLOCK):
            return True
        classes = node.get("classes", []) if isinstance(node, nodes.Element) else []
        if "results-provenance" in classes:
            return True
        if isinstance(node, (nodes.thead, nodes.tbody)) and \
                "results-table" in node.parent.parent.get("classes", []):
            return True
        node = node.parent
    return False


def findings(text: str) -> list[tuple[str, str]]:
    found = []
    for what, pattern in PATTERNS:
        for m in pattern.finditer(text):
            found.append((what, m.group(0)))
    return found


def blocks(doctree: nodes.document):
    """The smallest blocks of prose: text elements that are not inline."""
    for node in doctree.findall(nodes.TextElement):
        if isinstance(node, nodes.Inline) or isinstance(node, SKIP_BLOCK):
            continue
        if skipped(node):
            continue
        yield node


def line_of(node: nodes.Node) -> int | None:
    while node is not None:
        if getattr(node, "line", None):
            return node.line
        node = node.parent
    return None


def check(app, doctree: nodes.document) -> None:
    docname = app.env.docname
    if not any(re.fullmatch(p, docname) for p in app.config.figure_check_docs):
        return
    for block in blocks(doctree):
        text = prose(block)
        if isinstance(block.parent, nodes.figure) and "results-figure" in block.parent.get("classes", []):
            # a results-figure's caption: the author's text, then the provenance it appends
            text = text.split("Regenerate: ")[0]
        for what, figure in findings(text):
            logger.warning(
                f"figure typed into prose: {what}, {figure!r}; read it with a role "
                f"(result, range, verdict, count, seed or param; book/conventions.md)",
                location=(docname, line_of(block)), type="results", subtype="typed-figure")


def setup(app):
    app.add_config_value("figure_check_docs", [r"chapters/[^/]+/note"], "env")
    app.connect("doctree-read", check)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
