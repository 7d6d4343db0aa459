"""book/_ext/results_table: the book's view of benchmarks/results/ (chapter 01).

Role: a Sphinx extension with two directives, so that no measured number is typed into
the book by hand.

``results-table`` renders a CSV the harness wrote (benchmarks/harness/bench.py), then a
line with the command that regenerates it and the machine it came from, both read
from the sibling .json::

    ```{results-table} 01-baseline/server.csv
    :columns: row=connections, arm, rps=requests/s, loop_us_per_req=loop µs/request
    :where: row=c16
    :caption: Chapter 01 baseline, 16 connections
    ```

``:columns:`` picks and renames columns (``name`` or ``name=Heading``, comma
separated; ``name*1000`` shows a column times 1,000, a per-request count per 1,000
requests), in the order given; without it a default set is shown. Any column of the
CSV may be named, so the counter columns are shown the same way
(``loop_sleeps_per_req=loop sleeps/req, parks_per_req=parks/req``). A name the CSV
lacks but whose ``name_median``/``name_min``/``name_max`` columns it has shows as
"median (min–max)"; an empty cell (a peer has no /stats counters, an inline arm no
pool) shows as "–". ``:where:`` keeps only lines whose column equals a value
(``col=value``, comma separated, all must hold); ``col=a|b`` accepts either value
(``arm=ring|dgram``). ``:record:`` names the .json in the same folder for a CSV that has
no sibling of its own (a spec's per-run ``NAME-runs.csv`` belongs to ``NAME.json``).

A table too wide for the book's column (book/tools/check_widths.py fails the build on one)
is split with ``|`` in ``:columns:``: the columns before the first ``|`` are the keys,
repeated at the left of every part, and each later group is one part, a table of its own
under the same caption (numbered "1 of 2", ...) with the provenance line once, after the
last::

    :columns: row=connections, arm | rps=requests/s, server_us_per_req=server µs
              | pg_sessions_per_req*1000=new sessions/1k, pg_opened_per_req*1000=opened/1k

A median's range is kept on one line ("(2200–2400)" never breaks inside), so a narrow
column shows the median above its range.

``results-figure`` shows a PNG the harness drew, captioned with the same command and
machine line::

    ```{results-figure} 01-baseline/server-loop_us_per_req.png
    :caption: Loop CPU per request
    ```

The results directory is the ``results_root`` setting, else the environment variable
HANDOFF_RESULTS_DIR, else benchmarks/results beside the book. A missing CSV, JSON or
PNG, or an unknown column, is an error (it fails a ``-W`` build) rather than an empty
table: a table that cannot be regenerated must not quietly vanish from the book.
"""

from __future__ import annotations

import csv
import json
import os

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from table_frame import frame

__version__ = "1"

DEFAULT_COLUMNS = [
    ("row", "row"), ("arm", "arm"), ("rps", "requests/s"),
    ("loop_us_per_req", "loop µs/req"), ("pool_us_per_req", "pool µs/req"),
    ("server_us_per_req", "server µs/req"), ("p50_us", "p50 µs"), ("p99_us", "p99 µs"),
    ("busy_rounds", "busy rounds"),
]


def results_root(env) -> str:
    configured = env.config.results_root
    if configured:
        return os.path.abspath(configured)
    from_env = os.environ.get("HANDOFF_RESULTS_DIR")
    if from_env:
        return os.path.abspath(from_env)
    return os.path.abspath(os.path.join(env.app.confdir, "..", "benchmarks", "results"))


def parse_pairs(text: str | None) -> list[tuple[str, str]]:
    """'a, b=Heading B' -> [('a', 'a'), ('b', 'Heading B')]."""
    out = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        key, _, label = part.partition("=")
        out.append((key.strip(), label.strip() or key.strip()))
    return out


def scaled(text: str, factor: float | None) -> str:
    """A cell's number times `factor` (None: the text as written), to four significant
    digits: per request read as per 1,000 requests (``pg_sessions_per_req*1000``)."""
    if factor is None or not text:
        return text
    return f"{float(text) * factor:.4g}"


def cell_text(line: dict, key: str) -> str | None:
    """The text of one cell, or None when the CSV has no such column. ``name*N`` shows the
    column times the plain number N."""
    key, star, factor_text = key.partition("*")
    factor = float(factor_text) if star else None
    if key in line:
        return scaled(line[key], factor) or "–"
    med, lo, hi = (line.get(f"{key}_{s}") for s in ("median", "min", "max"))
    if med is None:
        return None
    if not med:
        return "–"
    med, lo, hi = (scaled(x, factor) if x else x for x in (med, lo, hi))
    if lo and hi and (lo != med or hi != med):
        return f"{med} ({lo}–{hi})"
    return med


def machine_text(m: dict) -> str:
    rev = (m.get("git_rev") or "?") + ("+dirty" if m.get("git_dirty") else "")
    parts = [m.get("cpu_model") or "unknown CPU",
             f"{m.get('cores', '?')} cores",
             # recorded since the harness reads the CPU's hypervisor flag; older records say nothing
             "virtual machine (the CPU's hypervisor flag)" if str(m.get("virtualised", "")).startswith("yes") else "",
             m.get("kernel", ""),
             " ".join(x for x in (m.get("compiler", ""), m.get("cxx_flags", "")) if x),
             f"revision {rev}",
             (m.get("date") or "")[:10]]
    return ", ".join(p for p in parts if p)


class _ResultsDirective(SphinxDirective):
    required_arguments = 1
    has_content = False

    def locate(self, rel: str, what: str) -> str:
        root = results_root(self.env)
        path = os.path.normpath(os.path.join(root, rel))
        if os.path.commonpath([path, root]) != root:
            raise self.error(f"{self.name}: {rel!r} is outside the results directory {root}")
        if not os.path.isfile(path):
            raise self.error(
                f"{self.name}: {what} {path} does not exist; regenerate it with "
                f"`/usr/bin/python3 benchmarks/harness/bench.py all --mode full --build-dir "
                f"build/release`")
        self.env.note_dependency(path)
        return path

    def load_record(self, json_path: str) -> dict:
        if not os.path.isfile(json_path):
            raise self.error(f"{self.name}: the record {json_path} beside the results is "
                             f"missing (the command and the machine come from it)")
        self.env.note_dependency(json_path)
        try:
            with open(json_path, encoding="utf-8") as f:
                return json.load(f)
        except ValueError as e:
            raise self.error(f"{self.name}: {json_path}: {e}") from e

    def provenance(self, record: dict, extra: str = "") -> nodes.paragraph:
        """'Regenerate: <command>. Measured on <machine> (<mode> mode, ...).'"""
        para = nodes.paragraph(classes=["results-provenance"])
        para += nodes.Text("Regenerate: ")
        para += nodes.literal(text=record.get("reproduce") or record.get("command", "?"))
        settings = record.get("settings", {})
        mode = record.get("mode", "?")
        how = [f"{mode} mode"]
        # rounds_run: the rounds a spec that continues while verdicts are undecided ran in
        # the end; rounds is the mode's first batch (and all there is in an older record).
        ran = settings.get("rounds_run", settings.get("rounds"))
        if ran is not None:
            how.append(f"{ran} round{'s' if ran != 1 else ''}")
        if "duration_s" in settings:
            how.append(f"{settings['duration_s']:g} s per cell")
        if "order" in settings:
            how.append("arms alternated, order rotated every round")
        para += nodes.Text(f". Measured on {machine_text(record.get('machine', {}))} "
                           f"({', '.join(how)}){extra}.")
        if mode != "full":
            para += nodes.Text(" Quick-mode numbers: a pipeline check, not a result.")
        if record.get("machine", {}).get("git_dirty"):
            para += nodes.Text(" Measured on a tree with uncommitted changes (--allow-dirty):"
                               " the revision named is not exactly the code measured.")
        return para


class ResultsTable(_ResultsDirective):
    option_spec = {
        "columns": directives.unchanged_required,
        "where": directives.unchanged_required,
        "caption": directives.unchanged,
        "record": directives.unchanged_required,
    }

    def run(self):
        rel = self.arguments[0]
        if not rel.endswith(".csv"):
            raise self.error(f"results-table: {rel!r} is not a .csv file")
        path = self.locate(rel, "results file")
        # The record: the sibling .json, or :record: (a file in the same folder), for a CSV
        # that a run writes beside its main one (server-runs.csv belongs to server.json).
        record = self.load_record(os.path.join(os.path.dirname(path), self.options["record"])
                                  if "record" in self.options else path[:-len(".csv")] + ".json")
        with open(path, encoding="utf-8", newline="") as f:
            lines = list(csv.DictReader(f))
        if not lines:
            raise self.error(f"results-table: {path} has no rows")
        for key, value in parse_pairs(self.options.get("where")):
            if key not in lines[0]:
                raise self.error(f"results-table: :where: names unknown column {key!r}")
            accepted = {v.strip() for v in value.split("|")}
            lines = [ln for ln in lines if ln[key] in accepted]
        if not lines:
            raise self.error(f"results-table: no line of {rel} matches :where:")
        parts = [parse_pairs(g) for g in self.options["columns"].split("|")] \
            if "columns" in self.options \
            else [[(k, h) for k, h in DEFAULT_COLUMNS if cell_text(lines[0], k) is not None]]
        if len(parts) > 1 and not all(parts[1:]):
            raise self.error("results-table: :columns: has an empty part between '|'")
        for key, _ in (c for part in parts for c in part):
            if cell_text(lines[0], key) is None:
                raise self.error(f"results-table: {rel} has no column {key!r} "
                                 f"(nor {key}_median)")
        keys, groups = (parts[0], parts[1:]) if len(parts) > 1 else ([], parts)
        tables = [self._table(lines, keys + group,
                              self.options.get("caption"),
                              f"{i + 1} of {len(groups)}" if len(groups) > 1 else "")
                  for i, group in enumerate(groups)]

        busy = sum(int(ln.get("busy_rounds") or 0) for ln in lines)
        failed = sum(int(ln.get("failed_rounds") or 0) for ln in lines)
        extra = ""
        if busy:
            threshold = record.get("settings", {}).get("busy_threshold_pct", "?")
            extra += (f"; {busy} cell(s) ran while the rest of the machine used more than "
                      f"{threshold}% of a core")
        if failed:
            extra += f"; {failed} cell(s) failed and are left out"
        return [*tables, self.provenance(record, extra)]

    def _table(self, lines, columns, caption, part):
        title = None
        if caption:
            title = nodes.title(text=caption)
            if part:  # "(1 of 3)": the layout's count, not a figure (figure_check skips it)
                title += nodes.inline(text=f" ({part})", classes=["results-part"])
            self.set_source_info(title)
        # A heading may break after a slash ("callbacks/<break>request"), as its words do.
        head = self._row([label.replace("/", "/\u200b") for _, label in columns])
        table, tbody = frame(["results-table"], [1] * len(columns), head, title)
        for line in lines:
            tbody += self._row([cell_text(line, key) for key, _ in columns])
        self.set_source_info(table)
        return table

    @staticmethod
    def _row(texts):
        row = nodes.row()
        for t in texts:
            entry = nodes.entry()
            para = nodes.paragraph()
            median, space, rng = t.partition(" (")
            if space and rng.endswith(")"):
                # "median (min–max)": the range never breaks inside (book.css, .range).
                para += nodes.Text(median + " ")
                para += nodes.inline(text=f"({rng}", classes=["range"])
            elif t and " " not in t and "/" not in t and not t[0].isdigit():
                # One name (an arm, a row): whole on its line, not broken at its hyphens.
                para += nodes.inline(text=t, classes=["name"])
            else:
                para += nodes.Text(t)
            entry += para
            row += entry
        return row


class ResultsFigure(_ResultsDirective):
    option_spec = {
        "caption": directives.unchanged,
        "alt": directives.unchanged,
        "width": directives.length_or_percentage_or_unitless,
        "record": directives.unchanged_required,
    }

    def record_path(self, png: str) -> str:
        """The .json a plot belongs to: the :record: option, else the longest
        dash-separated prefix of the file name that has one (server-rps.png ->
        server.json; handoff-probe-round-trip.png -> handoff-probe.json)."""
        folder, name = os.path.split(png)
        if "record" in self.options:
            return os.path.join(folder, self.options["record"])
        parts = name[:-len(".png")].split("-")
        for n in range(len(parts), 0, -1):
            candidate = os.path.join(folder, "-".join(parts[:n]) + ".json")
            if os.path.isfile(candidate):
                return candidate
        return os.path.join(folder, parts[0] + ".json")

    def run(self):
        rel = self.arguments[0]
        if not rel.endswith(".png"):
            raise self.error(f"results-figure: {rel!r} is not a .png file")
        path = self.locate(rel, "figure")
        record = self.load_record(self.record_path(path))
        srcdir = os.path.abspath(self.env.srcdir)
        if os.path.commonpath([path, srcdir]) == srcdir:
            uri = "/" + os.path.relpath(path, srcdir).replace(os.sep, "/")
        else:
            docdir = os.path.dirname(self.env.doc2path(self.env.docname))
            uri = os.path.relpath(path, docdir).replace(os.sep, "/")
        image = nodes.image(uri=uri, alt=self.options.get("alt", self.options.get("caption", rel)))
        if "width" in self.options:
            image["width"] = self.options["width"]
        figure = nodes.figure(classes=["results-figure"])
        figure += image
        caption = nodes.caption()
        if self.options.get("caption"):
            caption += nodes.Text(self.options["caption"] + " ")
        caption += self.provenance(record).children
        figure += caption
        self.set_source_info(figure)
        return [figure]


def setup(app):
    app.add_config_value("results_root", "", "env")
    app.add_directive("results-table", ResultsTable)
    app.add_directive("results-figure", ResultsFigure)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
