"""book/_ext/conformance_table: the book's view of the RFC conformance run (chapter 01).

Role: a Sphinx extension with one directive, ``conformance-table``, that renders the
results benchmarks/conformance/conformance.py wrote (one row per rule of rules.toml: the
rule, its RFC section and level, the requirement, what each server answered, and whether
that keeps the rule), so that no answer is typed into the book by hand::

    ```{conformance-table}
    ```

The results file is HANDOFF_CONFORMANCE_RESULTS, else <build>/conformance/table.json,
where <build> is the build directory whose book/html Sphinx is writing (the
conformance-table target makes it before the book). A missing file is an error, so a
``-W`` build fails rather than showing a table that was never measured.
"""

from __future__ import annotations

import json
import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from table_frame import frame

__version__ = "1"


def results_path(env) -> str:
    from_env = os.environ.get("HANDOFF_CONFORMANCE_RESULTS")
    if from_env:
        return os.path.abspath(from_env)
    return os.path.abspath(os.path.join(env.app.outdir, "..", "..", "conformance", "table.json"))


def request_lines(request) -> list[str]:
    """The raw request as the rules file writes it, one line per CRLF (so that a narrow
    column wraps where the request does), control characters escaped; ⏸ marks a pause."""
    parts = request if isinstance(request, list) else [request]
    text = "\n⏸ ".join(parts).replace("\r\n", "\\r\\n\n")
    text = text.replace("\r", "\\r").replace("\x00", "\\0")
    return [line if len(line) <= 60 else line[:57] + "…" for line in text.split("\n") if line]


def answer(got: dict) -> str:
    statuses = " ".join(map(str, got["statuses"])) or "no response"
    if got.get("junk"):
        statuses += " (malformed)"
    mark = "✓" if got["holds"] else "✗"
    return f"{mark} {statuses}, {'closed' if got['closed'] else 'open'}"


def expected(expect: dict) -> str:
    text = " then ".join(expect["status"])
    if "close" in expect:
        text += ", closed" if expect["close"] else ", open"
    return text


class ConformanceTable(SphinxDirective):
    has_content = False

    def run(self):
        path = results_path(self.env)
        if not os.path.exists(path):
            raise self.error(f"conformance results not found: {path} "
                             "(made by the conformance-table target; see benchmarks/conformance/)")
        self.env.note_dependency(path)
        with open(path) as f:
            data = json.load(f)
        servers = data["servers"]
        rules = data["rules"]

        summary = nodes.paragraph()
        pieces = []
        for name in servers:
            for level in ("MUST", "SHOULD", "MAY"):
                rows = [r for r in rules if r["level"] == level]
                kept = sum(r["results"][name]["holds"] for r in rows)
                pieces.append(f"{name} {kept}/{len(rows)} {level}")
        summary += nodes.Text(f"{len(rules)} rules. Kept: " + "; ".join(pieces) + ".")

        headings = ["rule", "requirement and request", "expected"] + servers
        widths = [14, 50, 12] + [12] * len(servers)
        table, body = frame(["conformance"], widths, self.row(headings))
        for r in rules:
            rule = [nodes.paragraph("", "", nodes.strong(text=r["id"])),
                    nodes.paragraph(text=f"RFC {r['rfc']}"), nodes.paragraph(text=r["level"])]
            request = nodes.line_block()
            for line in request_lines(r["request"]):
                request += nodes.line("", "", nodes.literal(text=line))
            requirement = [nodes.paragraph(text=r["text"]), request]
            if r.get("known"):
                requirement.append(nodes.paragraph(text="Known break: " + r["known"]))
            body += self.row([rule, requirement, expected(r["expect"])] +
                             [answer(r["results"][name]) for name in servers])
        return [summary, table]

    @staticmethod
    def row(cells) -> nodes.row:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            if isinstance(cell, list):
                entry.extend(cell)
            else:
                entry += nodes.paragraph(text=str(cell))
            row += entry
        return row


def setup(app):
    app.add_directive("conformance-table", ConformanceTable)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
