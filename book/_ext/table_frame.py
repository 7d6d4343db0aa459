"""book/_ext/table_frame: the docutils skeleton every table directive of the book fills
(chapter 01's results table; the conformance and headline tables use it too).

Role: one home for the nodes a table is made of (table, its title, a tgroup with a colspec per
column, the heading row, an empty body), so that a directive builds only its rows.
"""

from __future__ import annotations

from docutils import nodes


def frame(classes: list[str], widths: list[int], head: nodes.row,
          title: nodes.title | None = None) -> tuple[nodes.table, nodes.tbody]:
    """A table with `title` (if any), one column per width (relative widths), `head` as its
    heading row, and the body to append rows to."""
    table = nodes.table(classes=classes)
    if title is not None:
        table += title
    tgroup = nodes.tgroup(cols=len(widths))
    table += tgroup
    for w in widths:
        tgroup += nodes.colspec(colwidth=w)
    thead = nodes.thead()
    tgroup += thead
    thead += head
    tbody = nodes.tbody()
    tgroup += tbody
    return table, tbody
