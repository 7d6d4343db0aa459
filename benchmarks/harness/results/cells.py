"""harness/results/cells: the cells, ranges, counts, verdicts, seed figures and parameters the book's roles read (chapter 01).

Role: the one reader of a figure the book's prose quotes, without Sphinx. The book's roles
(book/_ext/results_cell.py, where the syntax of each is documented), the reproduce report
(harness/results/book_figures.py), the headline table (harness/results/headline.py) and the
book's figure refresh (book/tools/refresh_figures.py) all read through these functions, so
that a sentence, a report and a table cannot read one cell two ways. A cell is
``FILE: column[key=value, ...]`` in a results CSV; a verdict is the one rule's word
(harness/results/verdict.py, from the rounds harness/results/rounds.py reads); a seed figure
comes from the table book/seeds.csv (data the book keeps; read here, not imported); a
parameter from the constant in the code that sets it. Anything that cannot be read is a
CellError whose message says which and why.
"""

from __future__ import annotations

import ast
import csv
import operator
import os
import re

from harness import REPO_ROOT
from harness.results import rounds
from harness.results import verdict as vd

CELL = re.compile(r"\s*([A-Za-z0-9_.%-]+)\s*\[([^\]]*)\]\s*")
CONSTANT = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*$")
OPERATORS = {
    "/": lambda a, b: a / b,
    "-": lambda a, b: a - b,
    "+": lambda a, b: a + b,
    "*": lambda a, b: a * b,
}
# A Python format specification, then whatever unit follows it.
FORMAT = re.compile(r"^([<>=^]?[+\- ]?#?0?\d*[,_]?(?:\.\d+)?[bcdeEfFgGnoX%]?)(.*)$")
VERDICTS = vd.WORDS
SEEDS_TABLE = os.path.join(REPO_ROOT, "book", "seeds.csv")


class CellError(Exception):
    """A figure the role cannot read; the message says which and why."""


def parse_keys(text: str) -> dict[str, tuple[str, set[str]]]:
    """'k=v, j!=a|b' -> {'k': ('=', {'v'}), 'j': ('!=', {'a', 'b'})}."""
    keys = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        m = re.fullmatch(r"([^!=]+?)\s*(!=|=)\s*(.*)", pair)
        if not m:
            raise CellError(f"{pair!r}: a row key is key=value (or key!=value)")
        keys[m.group(1).strip()] = (m.group(2), {v.strip() for v in m.group(3).split("|")})
    return keys


def keys_text(keys) -> str:
    return ", ".join(f"{k}{op}{'|'.join(sorted(vs))}" for k, (op, vs) in keys.items())


def split_format(fmt: str | None) -> tuple[str | None, str]:
    """'.1f µs' -> ('.1f', ' µs'); '×' -> ('×', '')."""
    if fmt is None:
        return None, ""
    if fmt.strip() == "×":
        return "×", ""
    m = FORMAT.match(fmt)
    spec, unit = m.group(1), m.group(2)
    return (spec or None), unit


def render_number(value: float, fmt: str | None) -> str:
    spec, unit = split_format(fmt)
    if spec == "×":
        return format(value, ".0f" if abs(value) >= 10 else ".1f") + "×"
    try:
        text = format(value, spec or ".2f")
    except ValueError as e:
        raise CellError(f"format {fmt!r}: {e}") from None
    return text + with_unit(unit)


def with_unit(unit: str) -> str:
    """A unit after a number: a leading space becomes a no-break space."""
    if unit.startswith(" "):
        return "\u00a0" + unit.strip()
    return unit.rstrip()


def parse_cells(expr: str) -> tuple[list[tuple[str | None, dict]], str | None]:
    """'a[k=v] / b[k=w]' -> ([('a', keys), ('b', keys)], '/')."""
    cells, op, pos = [], None, 0
    while True:
        c = CONSTANT.match(expr, pos) if cells else None
        if c:
            cells.append((None, {"": c.group(1)}))  # a plain number, after an operator
            break
        m = CELL.match(expr, pos)
        if not m:
            raise CellError(f"{expr.strip()!r}: expected column[key=value, ...] at {expr[pos:].strip()!r}")
        keys = parse_keys(m.group(2))
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
    return cells, op


def parse(text: str) -> tuple[str, list[tuple[str | None, dict]], str | None, str | None]:
    """'F: a[k=v] / b[k=w]; .2f' -> ('F', [('a', keys), ('b', keys)], '/', '.2f')."""
    file_part, sep, rest = text.partition(":")
    if not sep or not file_part.strip():
        raise CellError(f"{text!r}: expected 'FILE: column[key=value, ...]'")
    expr, _, fmt = rest.partition(";")
    fmt = fmt.strip() or None
    cells, op = parse_cells(expr)
    return file_part.strip(), cells, op, fmt


EXPECT = re.compile(r"\s*;?\s*expect\s*(<=|>=|<|>)\s*(-?[0-9.]+)\s*$")
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def split_expect(text: str) -> tuple[str, tuple[str, float] | None]:
    """'F: a[k] / b[k]; .2f; expect<=0.75' -> ('F: a[k] / b[k]; .2f', ('<=', 0.75))."""
    m = EXPECT.search(text)
    if not m:
        return text, None
    return text[: m.start()], (m.group(1), float(m.group(2)))


def load(root: str, rel: str) -> tuple[list[dict[str, str]], str]:
    path = os.path.normpath(os.path.join(root, rel))
    if os.path.commonpath([path, root]) != root:
        raise CellError(f"{rel!r} is outside the results directory {root}")
    if not os.path.isfile(path):
        raise CellError(f"results file {path} does not exist")
    with open(path, encoding="utf-8", newline="") as f:
        lines = list(csv.DictReader(f))
    if not lines:
        raise CellError(f"{rel} has no rows")
    return lines, path


def matches(line: dict[str, str], keys) -> bool:
    for k, (op, vs) in keys.items():
        if (line[k] in vs) != (op == "="):
            return False
    return True


def select(lines, rel: str, keys, columns=()) -> list[dict[str, str]]:
    for key in [*keys, *columns]:
        if key not in lines[0]:
            raise CellError(f"{rel} has no column {key!r}")
    return [ln for ln in lines if matches(ln, keys)]


def read_cell(lines: list[dict[str, str]], rel: str, column: str, keys) -> str:
    hits = select(lines, rel, keys, [column])
    where = keys_text(keys)
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


def cell_number(lines, rel, column, keys) -> float:
    return number(read_cell(lines, rel, column, keys), f"{column}[{keys_text(keys)}]")


def evaluate(root: str, text: str) -> tuple[str, str]:
    """The rendered value of a ``result`` and the path of the file it came from."""
    text, expect = split_expect(text)
    rel, cells, op, fmt = parse(text)
    for column, _ in cells:
        if column and column.startswith("verdict_"):
            raise CellError(f"{column} is a verdict: quote it with the verdict role and the word "
                            f"the sentence expects (expected=ahead|level|behind)")
    lines, path = load(root, rel)
    values = [keys[""] if column is None else read_cell(lines, rel, column, keys)
              for column, keys in cells]
    if op is None and fmt is None and expect is None:
        return values[0], path
    nums = [number(v, "the constant" if c is None else f"{c}[{keys_text(keys)}]")
            for v, (c, keys) in zip(values, cells)]
    try:
        result = OPERATORS[op](*nums) if op else nums[0]
    except ZeroDivisionError:
        raise CellError(f"{text!r} divides by zero") from None
    if expect and not COMPARE[expect[0]](result, expect[1]):
        raise CellError(f"the sentence expects {expect[0]} {expect[1]:g} but the data gives "
                        f"{result:g}: {text.strip()}")
    if op is None and fmt is None:
        return values[0], path
    return render_number(result, fmt), path


def base_column(column: str) -> str:
    for suffix in ("_median", "_min", "_max"):
        if column.endswith(suffix):
            return column[: -len(suffix)]
    return column


def cell_range(lines, rel, column, keys) -> tuple[float, float]:
    base = base_column(column)
    if f"{base}_min" not in lines[0] or f"{base}_max" not in lines[0]:
        raise CellError(f"{rel} has no {base}_min and {base}_max columns: a range needs both")
    return (cell_number(lines, rel, f"{base}_min", keys), cell_number(lines, rel, f"{base}_max", keys))


def evaluate_range(root: str, text: str) -> tuple[str, str]:
    rel, cells, op, fmt = parse(text)
    if len(cells) != 1:
        raise CellError(f"{text!r}: a range is one cell")
    lines, path = load(root, rel)
    lo, hi = cell_range(lines, rel, *cells[0])
    spec, unit = split_format(fmt)
    lo_text = render_number(lo, spec)
    hi_text = render_number(hi, fmt)
    return f"{lo_text}–{hi_text}" if lo_text != render_number(hi, spec) else hi_text, path


def parse_options(parts: list[str]) -> dict[str, str]:
    """['lower', 'expected=ahead'] -> {'lower': '', 'expected': 'ahead'}."""
    out = {}
    for p in filter(None, (x.strip() for x in parts)):
        m = re.fullmatch(r"([a-z]+)\s*(!=|=)?\s*(.*)", p)
        if not m:
            raise CellError(f"{p!r}: an option is a word or word=value")
        out[m.group(1)] = (m.group(2) or "", m.group(3).strip())
    return out


def parse_comparison(text: str):
    """'F: a[k] vs b[k] and c[k]; lower; ...' -> (file, A, [B...], options)."""
    file_part, sep, rest = text.partition(":")
    if not sep or not file_part.strip():
        raise CellError(f"{text!r}: expected 'FILE: column[keys] vs column[keys]; lower|higher; ...'")
    expr, *opts = rest.split(";")
    sides = re.split(r"\s+vs\s+", expr.strip())
    if len(sides) > 2:
        raise CellError(f"{expr.strip()!r}: one 'vs' per comparison")
    a = parse_cells(sides[0])[0]
    bs = [parse_cells(s)[0] for s in re.split(r"\s+and\s+", sides[1])] if len(sides) == 2 else []
    for cells in [a, *bs]:
        if len(cells) != 1 or cells[0][0] is None:
            raise CellError(f"{expr.strip()!r}: each side of 'vs' is one cell")
    return file_part.strip(), a[0], [b[0] for b in bs], parse_options(opts)


def better_of(options) -> str:
    better = [w for w in ("lower", "higher") if w in options]
    if len(better) != 1:
        raise CellError("say which is better: 'lower' or 'higher'")
    return better[0]


def one_line(cell, rel) -> tuple[str, dict[str, str]]:
    """(column, {key: value}) of a cell that names one line with key=value pairs only."""
    column, keys = cell
    if any(op != "=" or len(vs) != 1 for op, vs in keys.values()):
        raise CellError(f"{column}[{keys_text(keys)}]: a compared cell names one line, key=value")
    return column, {k: next(iter(vs)) for k, (_, vs) in keys.items()}


def judge(lines, rel, path, a, b_cells, better) -> tuple[str, str]:
    """The verdict word of cell A against each of B (verdict.combine) and its explanation,
    from the cells' rounds (rounds.judge). The cells must exist in the CSV."""
    for column, keys in [a, *b_cells]:   # each side names one line of the CSV
        read_cell(lines, rel, column if column in lines[0] else f"{base_column(column)}_median", keys)
    verdicts = [rounds.judge(path, one_line(a, rel), one_line(b, rel), better == "higher")
                for b in b_cells]
    return vd.combine(verdicts), "; ".join(v.text() for v in verdicts)


def verdict_reading(root: str, text: str) -> tuple[str, str, str, dict]:
    """(the word the data gives, its explanation, the file, the role's options); no claim
    is checked here."""
    rel, a, bs, options = parse_comparison(text)
    lines, path = load(root, rel)
    if bs:
        word, why = judge(lines, rel, path, a, bs, better_of(options))
    else:
        column, keys = a
        if not column.startswith("verdict_"):
            raise CellError(f"{column}: compare two cells with 'vs', or read a verdict_ column")
        word = read_cell(lines, rel, column, keys)
        if word not in VERDICTS:
            raise CellError(f"{column}[{keys_text(keys)}] is {word!r}, not a verdict "
                            f"({', '.join(VERDICTS)}): derive it again with bench.py replot")
        told = rounds.harness_text(rounds.record_of(path), column,
                                   {k: next(iter(vs)) for k, (_, vs) in keys.items()})
        why = told or f"{column}[{keys_text(keys)}] in {rel}, as the harness judged it"
    return word, why, path, options


def expected_word(text: str, options: dict) -> str:
    op, expected = options.get("expected", ("", ""))
    if op != "=" or expected not in VERDICTS:
        raise CellError(f"{text!r}: write the verdict the sentence claims, "
                        f"expected={'|'.join(VERDICTS)}")
    return expected


def verdict_phrase(word: str, options: dict) -> str:
    if "words" not in options:
        return word
    phrases = options["words"][1].split("|")
    if len(phrases) not in (3, 4):
        raise CellError("words= gives three phrases (ahead|level|behind) or four (and undecided)")
    if word == "undecided" and len(phrases) == 3:
        raise CellError("the data says 'undecided': give words= a fourth phrase for it")
    return phrases[VERDICTS.index(word)]


def explain_verdict(root: str, text: str, check: bool = True) -> tuple[str, str, str]:
    """(the rendered word or phrase, the rule's explanation, the file). With check, a word
    other than the sentence's expected= one is an error."""
    word, why, path, options = verdict_reading(root, text)
    expected = expected_word(text, options)
    if options.get("show", ("", ""))[1] == "detail":   # the rule's whole answer, as the title gives it
        word_shown = why
    else:
        word_shown = None
    if not check:   # a reader's data: the word as it falls, in the sentence's phrase if it has one
        try:
            return word_shown or verdict_phrase(word, options), why, path
        except CellError:
            return word, why, path
    if word != expected:
        raise CellError(f"the sentence says {expected!r} but the data says {word!r} ({why}): "
                        f"{text.strip()}")
    return word_shown or verdict_phrase(word, options), why, path


def evaluate_count(root: str, text: str) -> tuple[str, str]:
    file_part, sep, rest = text.partition(":")
    if not sep or not file_part.strip():
        raise CellError(f"{text!r}: expected 'FILE: [key=value, ...]' or a comparison")
    rel = file_part.strip()
    m = re.fullmatch(r"\s*\[([^\]]*)\]\s*", rest)
    if m:
        lines, path = load(root, rel)
        return str(len(select(lines, rel, parse_keys(m.group(1))))), path
    rel, a, bs, options = parse_comparison(text)
    if not bs:
        raise CellError(f"{text!r}: a counted comparison needs 'vs'")
    if "by" not in options or "verdict" not in options:
        raise CellError(f"{text!r}: a counted comparison needs by=COLUMN and verdict=WORD (or verdict!=WORD)")
    op, want = options["verdict"]
    if want not in VERDICTS:
        raise CellError(f"verdict{op}{want}: not one of {', '.join(VERDICTS)}")
    by = options["by"][1]
    lines, path = load(root, rel)
    select(lines, rel, {by: ("=", set())})  # the column must exist
    a_column, a_keys = a
    rows = sorted({ln[by] for ln in select(lines, rel, a_keys)})
    if not rows:
        raise CellError(f"{rel} has no line with {keys_text(a_keys)}")
    better = better_of(options)
    n = 0
    for row in rows:
        pin = {by: ("=", {row})}
        word, _ = judge(lines, rel, path, (a_column, {**a_keys, **pin}),
                        [(c, {**k, **pin}) for c, k in bs], better)
        n += (word == want) == (op == "=")
    return str(n), path


# --- seeds --------------------------------------------------------------------------

def load_seeds(path: str = SEEDS_TABLE) -> dict[str, dict[str, str]]:
    if not os.path.isfile(path):
        raise CellError(f"the seeds table {path} does not exist")
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    seeds = {}
    for row in rows:
        if row["id"] in seeds:
            raise CellError(f"the seeds table names {row['id']!r} twice")
        seeds[row["id"]] = row
    return seeds


def seed_number(row: dict[str, str]) -> float:
    """A seed value as a number: '1,618' -> 1618, '155k' -> 155000, a range '118–123k' -> its midpoint."""
    text = row["value"].replace(",", "").removeprefix("about ").strip()
    scale = 1000 if text.endswith("k") else 1
    parts = text.rstrip("k").split("–")
    return sum(number(p, row["id"]) for p in parts) / len(parts) * scale


def evaluate_seed(text: str, path: str = SEEDS_TABLE) -> tuple[str, str, str]:
    """(rendered figure, label, the explanation for its title)."""
    body, *opts = text.split(";")
    seeds = load_seeds(path)
    if "/" in body:  # a ratio of two of one record's figures
        ids = [i.strip() for i in body.split("/")]
        fmt = next((o.strip() for o in opts if o.strip() not in ("short", "")), "×")
        rows = []
        for i in ids:
            if i not in seeds:
                raise CellError(f"no figure {i!r} in the seeds table (book/seeds.csv)")
            rows.append(seeds[i])
        if len(ids) != 2 or rows[0]["record"] != rows[1]["record"]:
            raise CellError(f"{body.strip()!r}: a ratio is two figures of one record")
        a, b = (seed_number(r) for r in rows)
        record, machine = rows[0]["record"], rows[0]["machine"]
        label = record if any(o.strip() == "short" for o in opts) or not machine else f"{record}, {machine}"
        why = "; ".join(f"{r['record']}, {r['file']} line {r['line']}: “{r['quote']}”" for r in rows)
        return render_number(a / b, fmt), label, why
    options = parse_options(opts)
    ids = [i.strip() for i in body.split("->")]
    rows = []
    for i in ids:
        if i not in seeds:
            raise CellError(f"no figure {i!r} in the seeds table (book/seeds.csv): a figure no "
                            f"seed holds cannot be quoted as a seed's")
        rows.append(seeds[i])
    if len({(r["record"], r["unit"], r["machine"]) for r in rows}) != 1:
        raise CellError(f"{body.strip()!r}: figures joined by -> share one record, unit and machine")
    unit = rows[0]["unit"]
    value = " → ".join(r["value"] for r in rows) + with_unit(unit)
    record, machine = rows[0]["record"], rows[0]["machine"]
    label = record if "short" in options or not machine else f"{record}, {machine}"
    why = "; ".join(f"{r['record']}, {r['file']} line {r['line']}: “{r['quote']}”" for r in rows)
    return value, label, why


# --- parameters -----------------------------------------------------------------------

_SAFE = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
         ast.Div: operator.truediv, ast.LShift: operator.lshift, ast.FloorDiv: operator.floordiv}


def const_eval(expr: str) -> float:
    """An integer constant expression as C++ writes it: 10'000, 1 << 20, 64u, 2 * 1024."""
    text = re.sub(r"std::[\w:]+\s*[({]", "(", expr)             # a duration or a typed 1: its count
    text = re.sub(r"(?<=\d)'(?=\d)", "", text)                   # digit separators
    text = re.sub(r"(?<=\d)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU])\b", "", text)  # integer suffixes
    text = re.sub(r"\bstatic_cast<[^>]*>", "", text)
    text = text.replace("{", "(").replace("}", ")")

    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _SAFE:
            return _SAFE[type(node.op)](walk(node.left), walk(node.right))
        raise CellError(f"{expr.strip()!r} is not a constant expression of numbers")
    try:
        return walk(ast.parse(text.strip(), mode="eval"))
    except SyntaxError:
        raise CellError(f"{expr.strip()!r} is not a constant expression of numbers") from None


def evaluate_param(srcdir: str, text: str) -> tuple[str, str]:
    file_part, sep, rest = text.partition(":")
    if not sep or not file_part.strip():
        raise CellError(f"{text!r}: expected 'FILE: NAME [op number]; FORMAT'")
    rel = file_part.strip()
    path = os.path.normpath(os.path.join(srcdir, rel))
    if os.path.commonpath([path, os.path.abspath(srcdir)]) != os.path.abspath(srcdir) or not os.path.isfile(path):
        raise CellError(f"source file {rel} does not exist")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    expr, _, fmt = rest.partition(";")
    expr = expr.strip()
    m = re.fullmatch(r"/(.+)/\s*(?:([*/])\s*([0-9.]+))?", expr)
    if m:
        found = re.search(m.group(1), source, re.S)
        if not found or not found.groups():
            raise CellError(f"{rel}: the pattern /{m.group(1)}/ matches nothing (or has no group)")
        value = const_eval(found.group(1))
        scale = m.group(2, 3)
    else:
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*(?:([*/])\s*([0-9.]+))?", expr)
        if not m:
            raise CellError(f"{expr!r}: expected NAME or /REGEX/, optionally * or / a number")
        name = m.group(1)
        found = None
        for pattern in (rf"\b{name}\b\s*=\s*([^;\n]+?)\s*(?:;|$)",                      # NAME = value;
                        rf"\b{name}\b\s*\{{([^;{{}}]*(?:\{{[^{{}}]*\}}[^;{{}}]*)*)\}}\s*[;,)]",  # NAME{value};
                        rf"\b{name}\b\s*\(([^;]+?)\)\s*;"):                               # NAME(value);
            found = re.search(pattern, source, re.M)
            if found:
                break
        if not found:
            raise CellError(f"{rel} defines no constant {name!r} (NAME = value; or NAME{{value}})")
        value = const_eval(next(g for g in found.groups() if g is not None))
        scale = m.group(2, 3)
    if scale[0]:
        value = value * float(scale[1]) if scale[0] == "*" else value / float(scale[1])
    fmt = fmt.strip() or None
    spec, unit = split_format(fmt)
    if spec is None:
        text_value = f"{value:g}" if isinstance(value, float) else str(value)
        return text_value + with_unit(unit), path
    return render_number(value, fmt), path


# --- one role's figure, and the text a note carries for it ------------------------------

ROLES = ("result", "range", "verdict", "count", "param", "seed")
# The title form: the figure as the role renders it, then the source in angle brackets:
# {result}`12.3 µs <01-baseline/server.csv: p50_us_median[row=c16, arm=inline]; .1f µs>`.
TITLED = re.compile(r"(?P<text>[^<>`]*?\S)\s+<(?P<target>[^`]+)>\s*", re.S)


def split_title(body: str) -> tuple[str | None, str]:
    """A role's content as (the text it carries, its source): '12.3 µs <F: c[k]>' ->
    ('12.3 µs', 'F: c[k]'); the form without text, 'F: c[k]', -> (None, 'F: c[k]')."""
    m = TITLED.fullmatch(body)
    if not m:
        return None, body
    return m.group("text"), m.group("target")


def plain(text: str) -> str:
    """A figure's text as a reader of the Markdown sees it: each run of spaces (a unit's
    no-break space, a line break) one space."""
    return " ".join(text.replace("\u00a0", " ").split())


def titled(role: str, text: str, target: str) -> str:
    """The role written in the title form, its text as plain() gives it."""
    shown = plain(text)
    if any(c in shown for c in "<>`"):
        raise CellError(f"{shown!r} has a character (< > `) the title form cannot carry")
    return f"{{{role}}}`{shown} <{target.strip()}>`"


def render(role: str, target: str, root: str, srcdir: str = REPO_ROOT,
           seeds: str = SEEDS_TABLE, check: bool = True) -> tuple[str, str, str]:
    """(the figure as the role renders it, the file it came from, its explanation) for one
    role's source (without its text). With check, a claim the data does not bear (a
    verdict's expected=, a result's expect<=) is a CellError; without, the figure as the
    data gives it. The book's roles and the figure refresh both render through this."""
    if role == "result":
        value, path = evaluate(root, target if check else split_expect(target)[0])
        return value, path, target.strip()
    if role == "range":
        return (*evaluate_range(root, target), target.strip())
    if role == "verdict":
        shown, why, path = explain_verdict(root, target, check)
        return shown, path, f"{target.strip()} — {why}"
    if role == "count":
        return (*evaluate_count(root, target), target.strip())
    if role == "param":
        return (*evaluate_param(srcdir, target), target.strip())
    if role == "seed":
        value, label, why = evaluate_seed(target, seeds)
        return f"{value}\u00a0({label})", os.path.abspath(seeds), why
    raise CellError(f"{role!r} is not a figure role ({', '.join(ROLES)})")


def reader_mark(book: str, yours: str) -> str:
    """The mark beside a sentence whose figure or verdict differs on the reader's results."""
    return f"the book's machine: {book}; yours: {yours}"
