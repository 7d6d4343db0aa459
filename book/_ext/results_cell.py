"""book/_ext/results_cell: every figure in a sentence, read from where it lives (chapter 01).

Role: the one way a figure enters the book's prose. Six MyST/Sphinx roles share one parser
and one set of errors (harness.results.cells, on the measuring side: benchmarks/harness,
which book/conf.py puts on the path), so that when the harness rewrites a results file the sentence
follows, and when a file, a row, a column, a seed figure or a constant is gone, or a
sentence's verdict no longer holds, the ``-W`` build fails. ``figure_check``
(book/_ext/figure_check.py) fails the build on a figure typed outside these roles.

Each role is written in the title form, ``TEXT <SOURCE>``: the figure as the role renders
it, then its source (the forms below), so that a note read raw (on a forge) reads as prose::

    {result}`3.82 <01-baseline/server.csv: client_us_per_req_median[row=c16, arm=inline]>`

The build checks TEXT against the figure (spaces and a unit's no-break space alike): from the
committed results a different figure fails it; from a reader's folder the sentence is marked
(below). book/tools/refresh_figures.py writes every TEXT from the data. The form without text,
SOURCE alone, is an error when the setting ``figure_text_required`` is on.

``result``: one measured number, or two combined::

    {result}`02-ring-handoff/server.csv: loop_us_per_req_median[row=c16, arm=ring]`
    {result}`02-ring-handoff/server.csv: loop_us_per_req_median[row=c16, arm=ring] / loop_us_per_req_median[row=c16, arm=dgram]; .2f`
    {result}`04-turn-shape/loop-peers.csv: cpu_us_per_op_median[workload=x, loop=a] / cpu_us_per_op_median[workload=x, loop=b]; ×`

``FILE`` is relative to the results directory (the same one ``results-table`` reads). A
*cell* is ``column[key=value, ...]``: the keys must select exactly one line of the CSV.
An expression is one cell, or two cells joined by ``/``, ``-``, ``+`` or ``*``, or a cell
and a plain number (``pg_sessions_per_req[row=c16, arm=drain] * 1000``: per 1,000).
``FORMAT`` is a Python format specification (``.2f``, ``.0%``, ``,.0f``) followed by an
optional unit (``.1f µs``, ``.0f%``, ``.1f×``); ``×`` alone formats a ratio as "12×" or
"1.3×" (no decimal from 10 up). Without a format, a single cell prints as the CSV has it and
a computed value with two decimals. A harness verdict column (``verdict_*``) is not a
``result``: a verdict in a sentence is a claim, and goes through ``verdict``.

``range``: a cell's min–max over the rounds, from its ``_min`` and ``_max`` columns::

    {range}`03-lost-wakes/server.csv: p99_us[row=c256, arm=elastic-u8]; .0f µs`   -> 543–592 µs

``verdict``: the word the project's one verdict rule (benchmarks/harness/results/verdict.py) gives
for two cells, checked against the word the author wrote. ``lower`` or ``higher`` says which
is better. The rule reads each round's A/B from the record beside the CSV
(benchmarks/harness/results/rounds.py): ``ahead`` or ``behind`` when the ratio's interval lies
wholly beyond the metric's margin on A's better or worse side, ``level`` when wholly inside
it, ``undecided`` otherwise (and for a record that keeps no rounds). ``expected=`` is
required, and a different computed word fails the build; ``words=`` renders the outcomes as
phrases, three (``ahead of|level with|behind``) or four (a fourth for ``undecided``);
``show=detail`` renders the rule's whole answer instead ("ahead: a/b 0.866 (0.857–0.874 at
90%, margin ±3%, 15 rounds)")::

    {verdict}`04-turn-shape/loop-peers.csv: cpu_us_per_op[workload=tcp_echo, loop=ourloop] vs cpu_us_per_op[workload=tcp_echo, loop=libuv]; lower; expected=ahead`

A harness verdict column, which the harness wrote with the same rule, is read as it stands:
``{verdict}`01-baseline/server.csv: verdict_server_us_per_req_vs_nginx[row=c16, arm=inline]; expected=level```.
The rendered word's title gives the ratio, its interval, the margin and the rounds.

The book is built from the committed results (benchmarks/results) or from a reader's folder
(``HANDOFF_RESULTS_DIR``, as ``bench.py reproduce`` writes it). From the committed ones a
claim the data does not bear fails the build. From a reader's folder the build never fails
on the data: each figure is read from both folders, and where the two differ the sentence
shows the reader's figure and a mark, "the book's machine: ahead; yours: level"
(``reader_mark``; the reproduce report lists the same marks), the book's figure being the
sentence's TEXT (or, without one, the committed results' figure).

``count``: how many lines match, or how many rows a comparison gives a verdict for::

    {count}`04-turn-shape/loop-peers.csv: [loop=ourloop]`                       -> 5
    {count}`04-turn-shape/loop-peers.csv: cpu_us_per_op[loop=ourloop] vs cpu_us_per_op[loop=libuv] and cpu_us_per_op[loop=boost-asio]; lower; by=workload; verdict!=ahead`

A key may be ``key!=value`` or ``key=a|b``. With ``by=``, each value of that column is one
row; with several arms after ``vs`` (joined by ``and``) a row is ahead only when it is
ahead of every one, behind only when behind every one.

``seed``: a figure from a seed record or a background fact, from the one table
``book/seeds.csv`` (record, id, value, unit, machine, file, line, quote). It renders the
value, its unit and, always, whose figure it is: "7.4 µs (seed 000, Apple M4)". Two ids
joined by ``->`` render "7.4 → 6.3 µs (seed 000, Apple M4)" (same record and unit); ``;
short`` drops the machine when the sentence has just named it. An id the table lacks
fails the build, so a figure no seed holds cannot be quoted as one's.
``book/tools/check_seeds.py`` checks every row against the seed files' lines.

``param``: a configuration value rendered from the constant in the code that sets it::

    {param}`code/pool/spin_then_park.h: kDefaultSpinNs / 1000; .0f µs`
    {param}`code/server/core_flags.cpp: /"--max-pipeline".*?default_val\((\d+)\)/`

``NAME`` is a C++ name whose initializer (``NAME = 10'000;``, ``NAME{1 << 20}``,
``NAME(std::chrono::milliseconds(300))``) is a constant expression of integers; ``/REGEX/``
takes the regex's first group from the file instead. The path is relative to the
repository root (the book's source directory).

Every rendered figure is an ``<abbr>`` whose title names its source. Anything that cannot
be read is a warning at the role's line, which the book's ``-W`` build turns into a failure.
"""


from __future__ import annotations

import os

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

# The cells, the verdict rule and the rounds live with the harness, which writes the
# records; the book reads them from there (never the reverse).
from harness.results.cells import SEEDS_TABLE, CellError, plain, reader_mark, render, split_title

__version__ = "4"

logger = logging.getLogger(__name__)


def committed_root(env) -> str:
    """The results the book's sentences were written against: the ``committed_results``
    setting (relative to the configuration directory), else benchmarks/results."""
    configured = getattr(env.config, "committed_results", "") or os.path.join("..", "benchmarks", "results")
    return os.path.abspath(os.path.join(env.app.confdir, configured))


def readers_folder(env) -> bool:
    """Whether the build reads a reader's results: a folder other than the committed one,
    when the committed one is there to compare with."""
    root, book = results_root(env), committed_root(env)
    return root != book and os.path.isdir(book)


def results_root(env) -> str:
    """The directory results-table reads: its ``results_root`` setting, else the
    environment variable HANDOFF_RESULTS_DIR, else benchmarks/results beside the book."""
    configured = getattr(env.config, "results_root", "")
    if configured:
        return os.path.abspath(configured)
    from_env = os.environ.get("HANDOFF_RESULTS_DIR")
    if from_env:
        return os.path.abspath(from_env)
    return os.path.abspath(os.path.join(env.app.confdir, "..", "benchmarks", "results"))



class _FigureRole(SphinxRole):
    """One figure role: its content is ``TEXT <SOURCE>`` (the title form: the figure as it
    renders, so that the raw note reads as prose) or, where ``figure_text_required`` is off,
    ``SOURCE`` alone. The figure is rendered from SOURCE (harness.results.cells.render);
    TEXT is checked against it."""
    name = ""

    def seeds_table(self) -> str:
        configured = getattr(self.env.config, "seeds_table", "")
        return os.path.join(self.env.app.confdir, configured) if configured else SEEDS_TABLE

    def figure(self, root: str, check: bool = True) -> tuple[str, str, str]:
        """(the rendered figure, the file it came from, its explanation). With check, a
        claim the data does not bear (expected=, expect<=) is a CellError."""
        return render(self.name, self.target, root, self.env.srcdir, self.seeds_table(), check)

    def _problem(self, message: str):
        logger.warning(f"{self.name}: {message}", location=self.get_location(), type="results", subtype="cell")
        return [nodes.problematic(self.rawtext, self.rawtext)], []

    def run(self):
        self.title, self.target = split_title(self.text)
        if self.title is None and getattr(self.env.config, "figure_text_required", False):
            return self._problem(f"{self.text.strip()!r}: write the figure's text before its source, "
                                 f"TEXT <SOURCE> (python3 book/tools/refresh_figures.py writes it)")
        root, book = results_root(self.env), committed_root(self.env)
        if readers_folder(self.env):
            return self._reader(root, book)
        try:
            value, path, why = self.figure(root)
        except CellError as e:
            return self._problem(str(e))
        if self.title is not None and plain(self.title) != plain(value):
            return self._problem(f"the text says {plain(self.title)!r} but the data gives {plain(value)!r} "
                                 f"(python3 book/tools/refresh_figures.py rewrites it): {self.target.strip()}")
        self.env.note_dependency(path)
        return [self._abbr(value, why)], []

    def _abbr(self, value: str, why: str) -> nodes.Node:
        return nodes.abbreviation(value, value, explanation=why,
                                  classes=["result-cell", f"{self.name}-figure"])

    def _reader(self, root: str, book: str):
        """A reader's folder: the reader's figure, and where the book's differs, a mark. The
        book's figure is the text the sentence carries, else the committed results' figure."""
        readings = []
        for where in (root, book):
            try:
                readings.append(self.figure(where, check=False))
            except CellError as e:
                readings.append(e)
        mine, theirs = readings
        if isinstance(mine, CellError) and isinstance(theirs, CellError):
            return self._problem(str(theirs))
        shown = theirs if isinstance(mine, CellError) else mine
        self.env.note_dependency(shown[1])
        out = [self._abbr(shown[0], shown[2])]
        yours = f"not read ({mine})" if isinstance(mine, CellError) else mine[0]
        if self.title is not None:
            ours = self.title
        else:
            ours = f"not read ({theirs})" if isinstance(theirs, CellError) else theirs[0]
        if plain(yours) != plain(ours):
            mark = reader_mark(plain(ours), plain(yours))
            out += [nodes.Text(" "), nodes.inline("", f"[{mark}]", classes=["reader-mark"])]
            logger.info(f"{self.get_location()}: {mark}")
        return out, []


class ResultRole(_FigureRole):
    name = "result"


class RangeRole(_FigureRole):
    name = "range"


class VerdictRole(_FigureRole):
    name = "verdict"


class CountRole(_FigureRole):
    name = "count"


class ParamRole(_FigureRole):
    name = "param"


class SeedRole(_FigureRole):
    """A seed's figure and whose it is: the value, then "(seed 000, Apple M4)"."""
    name = "seed"

    def _abbr(self, value: str, why: str) -> nodes.Node:
        figure, _, label = value.partition("\u00a0(")
        span = nodes.inline(classes=["seed-figure"])
        span += nodes.abbreviation(figure, figure, explanation=why, classes=["result-cell", "seed-value"])
        span += nodes.inline("", f"\u00a0({label}", classes=["seed-label"])
        return span


def setup(app):
    app.add_config_value("seeds_table", "", "env")
    app.add_config_value("committed_results", "", "env")
    # Whether every figure role must carry its text (the title form); the form without text
    # is accepted while this is off.
    app.add_config_value("figure_text_required", False, "env")
    app.add_role("result", ResultRole())
    app.add_role("range", RangeRole())
    app.add_role("verdict", VerdictRole())
    app.add_role("count", CountRole())
    app.add_role("param", ParamRole())
    app.add_role("seed", SeedRole())
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
