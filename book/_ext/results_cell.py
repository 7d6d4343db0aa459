"""book/_ext/results_cell: one measured number in a sentence, read from a results CSV.

Role: a MyST/Sphinx role, ``result``, so that prose can quote and combine measurements
without typing them in; when the harness rewrites a results file the sentence follows,
and when the file, the row or the column is gone the ``-W`` build fails.

The role's text is ``FILE: EXPRESSION`` with an optional ``; FORMAT``::

    {result}`02-ring-handoff/server.csv: loop_us_per_req_median[row=c16, arm=ring]`
    {result}`02-ring-handoff/server.csv: loop_us_per_req_median[row=c16, arm=ring] / loop_us_per_req_median[row=c16, arm=dgram]; .2f`
    {result}`01-baseline/server.csv: loop_us_per_req_median[row=c16, arm=pool] - loop_us_per_req_median[row=c16, arm=inline]; .1f`

``FILE`` is relative to the results directory (the same one ``results-table`` reads).
A *cell* is ``column[key=value, ...]``: the keys must select exactly one line of the CSV.
An expression is one cell, or two cells joined by ``/``, ``-``, ``+`` or ``*``, or a cell
and a plain number (``pg_sessions_per_req[row=c16, arm=drain] * 1000``: per 1,000). ``FORMAT``
is a Python format specification (``.2f``, ``.0%``, ``,.0f``); without one, a single cell
prints as the CSV has it and a computed value with two decimals. The rendered number is an
``<abbr>`` whose title names the file and the expression, so a reader can find its source.

Anything that cannot be read (no file, no such column, no line or more than one line for
the keys, an empty or non-numeric cell where arithmetic needs a number, a division by
zero) is a warning at the role's line, which the book's ``-W`` build turns into a failure.
"""

from __future__ import annotations

import csv
import os
import re

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

__version__ = "1"

logger = logging.getLogger(__name__)

CELL = re.compile(r"\s*([A-Za-z0-9_.%-]+)\s*\[([^\]]*)\]\s*")
CONSTANT = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*$")
OPERATORS = {
    "/": lambda a, b: a / b,
    "-": lambda a, b: a - b,
    "+": lambda a, b: a + b,
    "*": lambda a, b: a * b,
}


class CellError(Exception):
    """A cell the role cannot read; the message says which and why."""


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


def parse(text: str) -> tuple[str, list[tuple[str, dict[str, str]]], str | None, str | None]:
    """'F: a[k=v] / b[k=w]; .2f' -> ('F', [('a', {'k': 'v'}), ('b', {'k': 'w'})], '/', '.2f')."""
    file_part, sep, rest = text.partition(":")
    if not sep or not file_part.strip():
        raise CellError(f"{text!r}: expected 'FILE: column[key=value, ...]'")
    expr, _, fmt = rest.partition(";")
    fmt = fmt.strip() or None
    cells, op, pos = [], None, 0
    while True:
        c = CONSTANT.match(expr, pos) if cells else None
        if c:
            cells.append((None, {"": c.group(1)}))  # a plain number, after an operator
            break
        m = CELL.match(expr, pos)
        if not m:
            raise CellError(f"{expr.strip()!r}: expected column[key=value, ...] at {expr[pos:].strip()!r}")
        keys = {}
        for pair in filter(None, (p.strip() for p in m.group(2).split(","))):
            key, eq, value = pair.partition("=")
            if not eq:
                raise CellError(f"{pair!r}: a row key is key=value")
            keys[key.strip()] = value.strip()
        if not keys:
            raise CellError(f"{m.group(0).strip()!r}: name the row with at least one key=value")
        cells.append((m.group(1), keys))
        pos = m.end()
        if pos == len(expr):
            break
        if len(cells) == 2 or expr[pos] not in OPERATORS:
            raise CellError(f"{expr.strip()!r}: an expression is one cell, or two joined by / - + *")
        op = expr[pos]
        pos += 1
    if len(cells) == 2 and op is None:
        raise CellError(f"{expr.strip()!r}: two cells need an operator")
    return file_part.strip(), cells, op, fmt


def read_cell(lines: list[dict[str, str]], rel: str, column: str, keys: dict[str, str]) -> str:
    if not lines:
        raise CellError(f"{rel} has no rows")
    for key in [*keys, column]:
        if key not in lines[0]:
            raise CellError(f"{rel} has no column {key!r}")
    hits = [ln for ln in lines if all(ln[k] == v for k, v in keys.items())]
    where = ", ".join(f"{k}={v}" for k, v in keys.items())
    if not hits:
        raise CellError(f"{rel} has no line with {where}")
    if len(hits) > 1:
        raise CellError(f"{rel} has {len(hits)} lines with {where}; add keys until one is left")
    value = hits[0][column]
    if value == "":
        raise CellError(f"{rel}: {column}[{where}] is empty")
    return value


def number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CellError(f"{what} is {text!r}, not a number") from None


def evaluate(root: str, text: str) -> tuple[str, str]:
    """The rendered value and the path of the file it came from."""
    rel, cells, op, fmt = parse(text)
    path = os.path.normpath(os.path.join(root, rel))
    if os.path.commonpath([path, root]) != root:
        raise CellError(f"{rel!r} is outside the results directory {root}")
    if not os.path.isfile(path):
        raise CellError(f"results file {path} does not exist")
    with open(path, encoding="utf-8", newline="") as f:
        lines = list(csv.DictReader(f))
    values = [keys[""] if column is None else read_cell(lines, rel, column, keys)
              for column, keys in cells]
    if op is None and fmt is None:
        return values[0], path
    nums = [number(v, f"{c}[{', '.join(f'{k}={x}' for k, x in keys.items())}]")
            for v, (c, keys) in zip(values, cells)]
    try:
        result = OPERATORS[op](*nums) if op else nums[0]
    except ZeroDivisionError:
        raise CellError(f"{text!r} divides by zero") from None
    try:
        return format(result, fmt or ".2f"), path
    except ValueError as e:
        raise CellError(f"format {fmt!r}: {e}") from None


class ResultRole(SphinxRole):
    def run(self):
        try:
            value, path = evaluate(results_root(self.env), self.text)
        except CellError as e:
            logger.warning(f"result: {e}", location=self.get_location(), type="results", subtype="cell")
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        self.env.note_dependency(path)
        return [nodes.abbreviation(value, value, explanation=self.text.strip(), classes=["result-cell"])], []


def setup(app):
    app.add_role("result", ResultRole())
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
