"""book/_ext/headline_table: the ``headline-table`` directive, the seeds' claims beside ours (chapter 06).

Role: the book's last table. The rows, their figures and their verdicts are computed on the
measuring side (benchmarks/harness/results/headline.py, which documents book/headline.toml
and the verdict words); ``bench.py compare`` ends its report with the same rows. This
directive renders them (no arguments; ``:records:`` keeps the rows of the records named,
comma separated, ``seed 003``; ``:file:`` names another TOML file relative to the book's
source directory, ``:seeds:`` another seeds table; ``:totals:`` the one line of totals).
A missing file, row, column or seed id fails the ``-W`` build with the entry's name.
"""

from __future__ import annotations

import os

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

import results_cell as rc  # the results folder the build reads
from harness.results.cells import SEEDS_TABLE, CellError
from harness.results.headline import (HEADLINE, VERDICT_WORDS, Row, Side, compute, counts, load_entries,
                                      ratio_text, verdict_aside)
from table_frame import frame

__version__ = "2"

logger = logging.getLogger(__name__)

# --- the directive ----------------------------------------------------------------------

HEADINGS = ["what is compared", "the seed: before → after", "ours: before → after", "verdict"]
WIDTHS = [30, 26, 32, 12]


class HeadlineTable(SphinxDirective):
    """Four columns: what is compared (and which way is better), the seed's pair (its ratio,
    its record and machine beneath), ours (the same beneath), the verdict. A side's ratio and
    machine sit inside its cell so the table fits the book's column at 1280 px
    (book/tools/check_widths.py)."""
    required_arguments = 0
    has_content = False
    option_spec = {"file": directives.unchanged_required, "seeds": directives.unchanged_required,
                   "records": directives.unchanged_required, "caption": directives.unchanged,
                   "totals": directives.flag}

    def run(self):
        confdir = self.env.app.confdir
        toml = os.path.join(self.env.srcdir, self.options["file"]) if "file" in self.options else HEADLINE
        configured = self.options.get("seeds") or getattr(self.env.config, "seeds_table", "")
        seeds = os.path.join(confdir, configured) if configured else SEEDS_TABLE
        root = rc.results_root(self.env)
        try:
            rows = compute(root, load_entries(toml), seeds)
        except CellError as e:
            raise self.error(f"headline-table: {e}") from None
        self.env.note_dependency(os.path.abspath(toml))
        self.env.note_dependency(os.path.abspath(seeds))
        if "totals" in self.options:  # the verdicts of every row, one line
            return [self._totals(rows)]
        if "records" in self.options:  # one seed's rows: ":records: seed 003" (or several, comma separated)
            wanted = [w.strip() for w in self.options["records"].split(",") if w.strip()]
            rows = [r for r in rows if r.record in wanted]
            if not rows:
                raise self.error(f"headline-table: no row of {toml} is a figure of {', '.join(wanted)}")
        # Which rows a page shows, so that the build fails on a row no table shows (check_shown).
        shown = getattr(self.env, "headline_shown", {})
        shown.setdefault(os.path.abspath(toml), {}).setdefault(self.env.docname, []).extend(r.name for r in rows)
        self.env.headline_shown = shown
        for r in rows:
            for p in r.ours.sources if r.ours else []:
                self.env.note_dependency(p)
                self.env.note_dependency(p[: -len(".csv")] + ".json")

        title = None
        if self.options.get("caption"):
            title = nodes.title(text=self.options["caption"])
            self.set_source_info(title)
        head = nodes.row()
        for h in HEADINGS:
            head += self._cell([nodes.paragraph(text=h)])
        table, tbody = frame(["results-table", "headline-table"], list(WIDTHS), head, title)
        for r in rows:
            tbody += self._row(r, root)
        self.set_source_info(table)
        return [table, self._totals(rows)]

    @staticmethod
    def _totals(rows: list[Row]) -> nodes.paragraph:
        """'40 rows: 18 reproduced, ...; ours measured on X (31 rows), Y (5 rows).'"""
        machines: dict[str, int] = {}
        for r in rows:
            if r.ours:
                machines[r.ours.machine] = machines.get(r.ours.machine, 0) + 1
        summary = nodes.paragraph(classes=["results-provenance"])
        needs = sorted({r.reason for r in rows if r.verdict == "needs"})
        text = f"{len(rows)} rows: " + ", ".join(
            f"{n} needs ({'; '.join(needs)})" if w == "needs" else f"{n} {w}"
            for w, n in counts(rows).items() if n or w in VERDICT_WORDS[:5])
        if machines:
            text += "; ours measured on " + ", ".join(f"{m} ({n} rows)" for m, n in machines.items())
        quick = sum(bool(r.ours and r.ours.quick) for r in rows)
        if quick:  # as results_table says under a quick-mode table
            text += (f". {quick} rows read quick-mode results (one round a cell): a pipeline check, "
                     f"not a result")
        summary += nodes.Text(text + ".")
        return summary

    @staticmethod
    def _cell(paragraphs, classes=()) -> nodes.entry:
        entry = nodes.entry(classes=list(classes))
        for p in paragraphs:
            entry += p
        return entry

    @staticmethod
    def _small(text: str) -> nodes.paragraph:
        return nodes.paragraph(text=text, classes=["headline-aside"])

    def _side(self, side: Side, label: str, why: str) -> nodes.entry:
        value = nodes.paragraph()
        before, after = (nodes.inline(text=t, classes=["headline-figure"]) for t in (side.before, side.after))
        abbr = nodes.abbreviation("", "", explanation=why, classes=["result-cell"])
        abbr += before
        abbr += nodes.Text(" → ")
        abbr += after
        if side.unit:  # an ordinary space: a long unit may go to the next line
            abbr += nodes.Text(" " + side.unit)
        value += abbr
        return self._cell([value, self._small(f"ratio {ratio_text(side.ratio)}"), self._small(label)])

    def _row(self, r: Row, root: str) -> nodes.row:
        row = nodes.row()
        what = [nodes.paragraph(text=r.compared), self._small(f"{r.better} is better")]
        if r.reason and r.ours:
            what.append(self._small(r.reason))
        row += self._cell(what)
        row += self._side(r.seed, f"{r.record}, {r.seed.machine}", "; ".join(r.seed.sources))
        if r.ours:
            why = ("; ".join(r.ours.cells)
                   + " (a median, then the min–max over the rounds, where the file has them)")
            row += self._side(r.ours, r.ours.machine, why)
        else:
            row += self._cell([self._small("not measured here"), nodes.paragraph(text=r.reason)])
        verdict_text = nodes.paragraph()
        verdict_text += nodes.abbreviation(r.verdict, r.verdict, explanation=r.detail or r.reason,
                                           classes=["name", "headline-verdict"])
        parts = [verdict_text]
        aside = verdict_aside(r)
        if aside:
            parts.append(self._small(aside))
        row += self._cell(parts, classes=[f"verdict-{r.verdict.replace(' ', '-')}"])
        return row


def check_shown(app, env) -> None:
    """Every row of a TOML file some headline-table reads is shown by one of them: a seed
    pair split off into a table by ``:records:`` cannot fall out of the book."""
    for toml, pages in getattr(env, "headline_shown", {}).items():
        seen = {name for names in pages.values() for name in names}
        try:
            missing = [e["name"] for e in load_entries(toml) if e["name"] not in seen]
        except CellError:
            continue  # the directive has said why already
        if missing:
            logger.warning(f"headline-table: no table shows the rows {', '.join(missing)} of {toml} "
                           f"(give their record a :records: table)", type="results", subtype="headline")


def purge(app, env, docname) -> None:
    for pages in getattr(env, "headline_shown", {}).values():
        pages.pop(docname, None)


def merge(app, env, docnames, other) -> None:
    for toml, pages in getattr(other, "headline_shown", {}).items():
        env.headline_shown = getattr(env, "headline_shown", {})
        env.headline_shown.setdefault(toml, {}).update(pages)


def setup(app):
    app.add_directive("headline-table", HeadlineTable)
    app.connect("env-check-consistency", check_shown)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
