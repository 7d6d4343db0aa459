"""harness/results/headline: the seeds' before/after claims beside ours, each with a verdict (chapter 06).

Role: the one home of the book's last table. Each entry of ``book/headline.toml`` names a
pair of seed figures (a before and an after, two ids of ``book/seeds.csv``), says what they
compare and which direction is better, and names our figures for the same comparison as
cells of the book's cell syntax (``FILE: column[key=value, ...]``, harness/results/rc.py),
or says why we have none (``not_measured``). Nothing is typed: the seed's figures, unit and
machine come from the seeds table, ours (median and min–max over the rounds) from the
results and our machine from the record (.json) beside each results file. The cells are
read with the roles' own parser and loader (harness.results.cells), and our after is judged against our before
by the project's one verdict rule (harness/results/verdict.py, through rounds.judge, as
the ``verdict`` role judges), so this table and a sentence cannot disagree.

The verdict of a row, from the seed's direction (its after better or worse than its
before) and the rule's word for our after against our before:

- ``reproduced``: ours is ahead where the seed's after was better, or behind where it was
  worse (a cost the seed reported, such as the call_soon chain's): the interval of our
  paired ratio lies wholly beyond the margin on the seed's side;
- ``reversed``: ours is ahead or behind on the other side;
- ``level``: our interval lies wholly inside the margin: no difference worth naming here;
- ``undecided``: neither; the cell says how many rounds would decide it, or that the
  record keeps no rounds;
- ``needs``: undecided, and the entry's ``needs`` says what this machine lacks to decide it;
- ``not measured``: no figure of ours is the same comparison; the entry says why.

A cell with no ``_min``/``_max`` columns and no total is an exact count of a deterministic
run (callbacks before a socket), compared as it stands. ``FILE: column[keys] * N`` shows a
per-request count per N requests. An entry's ``ours_of`` cells make each of our figures a
count out of a total ("25 of 40"), judged as two proportions (Newcombe's interval); the
ratio is then one of the fractions, as the seed's "2 of 10" is. No two entries read the
same cells.

The book's ``headline-table`` directive (book/_ext/headline_table.py) renders the rows
computed here.
``bench.py compare`` ends its report with the same rows in Markdown (``report``), read
from the new results, each verdict beside the committed results' one. A missing file, row,
column or seed id fails the ``-W`` build with the entry's name.
"""


from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field

from harness import REPO_ROOT
from harness.results import cells as rc  # the roles' cell parser and loader
from harness.results import rounds
from harness.results import verdict as vd

HEADLINE = os.path.join(REPO_ROOT, "book", "headline.toml")
TIME_UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
VERDICT_WORDS = ("reproduced", "reversed", "level", "undecided", "not measured", "needs")


@dataclass
class Side:
    """One side of a row: two figures, as shown, and the numbers the verdict reads."""
    before: str
    after: str
    unit: str
    machine: str
    ratio: float | None
    spans: tuple[tuple[float, float], tuple[float, float]] | None = None   # the seed's: its direction
    sources: list[str] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)     # ours: the cells, as the TOML names them
    quick: bool = False                                 # ours: read from a quick-mode record
    judged: object = None                               # ours: verdict.py's Verdict, after against before


@dataclass
class Row:
    name: str
    compared: str
    better: str
    seed: Side
    record: str
    ours: Side | None
    verdict: str
    reason: str = ""       # why not measured, or a caveat on the mapping
    detail: str = ""       # the rule's words: ratio, interval, margin, rounds (verdict.Verdict.text)


def load_entries(path: str = HEADLINE) -> list[dict]:
    if not os.path.isfile(path):
        raise rc.CellError(f"the headline table {path} does not exist")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise rc.CellError(f"{path}: {e}") from None
    entries = data.get("row", [])
    if not entries:
        raise rc.CellError(f"{path} has no [[row]] entries")
    for e in entries:
        name = e.get("name", "?")
        for key in ("name", "seed", "compared", "better"):
            if key not in e:
                raise rc.CellError(f"{path}: entry {name!r} has no {key!r}")
        if e["better"] not in ("lower", "higher"):
            raise rc.CellError(f"{path}: entry {name!r}: better is 'lower' or 'higher', not {e['better']!r}")
        if len(e["seed"]) != 2:
            raise rc.CellError(f"{path}: entry {name!r}: seed is [before, after]")
        if ("ours" in e) == ("not_measured" in e):
            raise rc.CellError(f"{path}: entry {name!r}: give either ours = [before, after] or not_measured = \"why\"")
        if "ours" in e and len(e["ours"]) != 2:
            raise rc.CellError(f"{path}: entry {name!r}: ours is [before, after]")
        if "needs" in e and "ours" not in e:
            raise rc.CellError(f"{path}: entry {name!r}: needs says what would decide our figures; "
                               f"without ours, say not_measured")
    # One row per comparison: two rows on the same cells would count one comparison twice.
    seen: dict[tuple, str] = {}
    for e in entries:
        if "ours" in e:
            key = (tuple(" ".join(c.split()) for c in e["ours"]), tuple(e.get("ours_of", [])))
            if key in seen:
                raise rc.CellError(f"{path}: entries {seen[key]!r} and {e['name']!r} read the same "
                                   f"cells: one comparison is one row (name the other seed pair "
                                   f"in its note)")
            seen[key] = e["name"]
    return entries


def seed_value(row: dict[str, str]) -> float:
    """'2 of 10' -> 0.2 (a count out of a total); otherwise rc.seed_number."""
    text = row["value"].removeprefix("about ").strip()
    if " of " in text:
        n, total = (rc.number(p.strip().replace(",", ""), row["id"]) for p in text.split(" of ", 1))
        return n / total
    return rc.seed_number(row)


def seed_side(ids: list[str], seeds: dict[str, dict[str, str]]) -> tuple[Side, str]:
    rows = []
    for i in ids:
        if i not in seeds:
            raise rc.CellError(f"no figure {i!r} in the seeds table (book/seeds.csv)")
        rows.append(seeds[i])
    a, b = rows
    if a["record"] != b["record"]:
        raise rc.CellError(f"{ids[0]} and {ids[1]} are figures of two records ({a['record']}, {b['record']})")
    va, vb = seed_value(a), seed_value(b)
    ua, ub = a["unit"].strip(), b["unit"].strip()
    if ua != ub:  # "280–578 ms -> 67–88 µs": one unit for the ratio and the direction
        if ua not in TIME_UNITS or ub not in TIME_UNITS:
            raise rc.CellError(f"{ids[0]} and {ids[1]} have units {ua!r} and {ub!r}, not one quantity")
        va, vb = va * TIME_UNITS[ua], vb * TIME_UNITS[ub]
    ratio = vb / va if va else None
    machine = a["machine"] if a["machine"] == b["machine"] else f"{a['machine']}; {b['machine']}"
    sources = [f"{r['record']}, {r['file']} line {r['line']}: “{r['quote']}”" for r in rows]
    before, after = a["value"], b["value"]
    if ua != ub:
        before, after = before + rc.with_unit(a["unit"]), after + rc.with_unit(b["unit"])
    side = Side(before, after, ua if ua == ub else "", machine or "machine not named", ratio,
                spans=((va, va), (vb, vb)), sources=sources)
    return side, a["record"]


def machine_short(record: dict) -> str:
    m = record.get("machine", {})
    parts = [m.get("cpu_model") or "unknown CPU", f"{m.get('cores', '?')} cores"]
    if str(m.get("virtualised", "")).startswith("yes"):
        parts.append("virtual machine")
    return ", ".join(parts)


def read_record(csv_path: str) -> dict:
    json_path = csv_path[: -len(".csv")] + ".json"
    if not os.path.isfile(json_path):
        raise rc.CellError(f"the record {json_path} beside the results is missing (our machine comes from it)")
    with open(json_path, encoding="utf-8") as f:
        return json.load(f)


def our_cell(root: str, text: str):
    """'F: col[keys] * 1000' -> (file path, (median, min, max), their texts, the record, the
    cell as (column, {key: value}), whether it is a count with no range). The texts are the
    CSV's own, or for a scaled cell the product to four significant digits (results_table's
    ``name*1000``)."""
    rel, cells, op, fmt = rc.parse(text)
    if fmt:
        raise rc.CellError(f"{text!r}: a headline cell takes no format")
    scale = None
    if len(cells) == 2:
        if op != "*" or cells[1][0] is not None:
            raise rc.CellError(f"{text!r}: a headline cell is one cell, or one cell * a number")
        scale = float(cells[1][1][""])
    column, keys = cells[0]
    lines, path = rc.load(root, rel)
    base = rc.base_column(column)
    columns = [column]
    if f"{base}_min" in lines[0] and f"{base}_max" in lines[0]:
        columns += [f"{base}_min", f"{base}_max"]
    raw = [rc.read_cell(lines, rel, c, keys) for c in columns]
    values = [rc.number(t, f"{c}[{rc.keys_text(keys)}]") for t, c in zip(raw, columns)]
    if scale is not None:
        values = [v * scale for v in values]
        raw = [scaled(v) for v in values]
    count = len(values) == 1
    if count:                     # a count over the whole run: its own range
        values, raw = values * 3, raw * 3
    return path, tuple(values), tuple(raw), read_record(path), rc.one_line(cells[0], rel), count


def scaled(x: float) -> str:
    """Four significant digits, never in exponent form."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def figure_text(texts: tuple[str, str, str]) -> str:
    med, lo, hi = texts
    if lo == hi == med:
        return med
    return f"{med} ({lo}–{hi})"


def our_side(root: str, entry: dict) -> Side:
    cells = [our_cell(root, t) for t in entry["ours"]]
    totals = [our_cell(root, t) for t in entry["ours_of"]] if "ours_of" in entry else None
    machines = []
    for cell in cells:
        m = machine_short(cell[3])
        if m not in machines:
            machines.append(m)
    quick = any(cell[3].get("mode") != "full" for cell in cells)
    (pa, va, xa, _, ca, count_a), (pb, vb, xb, _, cb, count_b) = cells
    higher = entry["better"] == "higher"
    if totals:
        texts = [f"{xa[0]} of {totals[0][2][0]}", f"{xb[0]} of {totals[1][2][0]}"]
        fa = va[0] / totals[0][1][0] if totals[0][1][0] else 0.0
        fb = vb[0] / totals[1][1][0] if totals[1][1][0] else 0.0
        ratio = fb / fa if fa else None
        judged = vd.proportions(round(vb[0]), round(totals[1][1][0]), round(va[0]),
                                   round(totals[0][1][0]), higher)
    else:
        texts = [figure_text(xa), figure_text(xb)]
        ratio = vb[0] / va[0] if va[0] else None
        if count_a and count_b:
            judged = vd.exact(vb[0], va[0], higher)
        elif pa != pb:
            judged = vd.no_rounds(vd.margin_for(cb[0]), "the two cells are in two records: "
                                     "no rounds to pair")
        else:
            judged = rounds.judge(pa, cb, ca, higher)   # after against before
    return Side(texts[0], texts[1], entry.get("unit", ""), "; ".join(machines), ratio,
                sources=list(dict.fromkeys([pa, pb])),
                cells=list(entry["ours"]) + list(entry.get("ours_of", [])), quick=quick,
                judged=judged)


def verdict(seed: Side, ours: Side, better: str) -> str:
    """The seed's direction (after against before), then ours against it: our after judged
    against our before by the one rule (harness/results/verdict.py, ours.judged). Reproduced when it
    is ahead or behind on the side the seed's after lay; reversed on the other side; else
    the rule's own word (level, undecided)."""
    (sa, _), (sb, _) = seed.spans
    if sa == sb:
        raise rc.CellError("the seed's before and after are equal: nothing to reproduce")
    seed_word = "ahead" if (sb < sa) == (better == "lower") else "behind"
    ours_word = ours.judged.word
    if ours_word in ("level", "undecided"):
        return ours_word
    return "reproduced" if ours_word == seed_word else "reversed"


def compute_one(root: str, e: dict, seeds: dict[str, dict[str, str]]) -> Row:
    try:
        seed, record = seed_side(e["seed"], seeds)
        detail = ""
        if "ours" in e:
            ours = our_side(root, e)
            if not ours.unit:
                ours.unit = seed.unit
            word = verdict(seed, ours, e["better"])
            reason = e.get("note", "")
            detail = ours.judged.text()
            if word == "undecided" and "needs" in e:   # more rounds here would not decide it
                word, reason = "needs", e["needs"]
        else:
            ours, word, reason = None, "not measured", e["not_measured"]
    except rc.CellError as err:
        raise rc.CellError(f"headline entry {e['name']!r}: {err}") from None
    return Row(e["name"], e["compared"], e["better"], seed, record, ours, word, reason, detail)


def compute(root: str, entries: list[dict], seeds_path: str = rc.SEEDS_TABLE) -> list[Row]:
    """Every row, or the first entry that cannot be read (a CellError naming it)."""
    seeds = rc.load_seeds(seeds_path)
    return [compute_one(root, e, seeds) for e in entries]


def report(committed: str, new: str, toml: str = HEADLINE, seeds_path: str = rc.SEEDS_TABLE) -> list[str]:
    """bench.py compare's section: every row read from the new results, its verdict beside
    the committed one. A row the new results cannot answer (a part not run, quick mode's
    missing columns) says why instead of ending the report."""
    out = ["", "## The seeds' headline table", "",
           "Each seed's before and after (book/headline.toml) beside ours from the new results; "
           "the committed results' verdict beside it.", "",
           "| row | seed: before → after | ratio | new: before → after | ratio | verdict | committed |",
           "|---|---|---|---|---|---|---|"]
    try:
        entries, seeds = load_entries(toml), rc.load_seeds(seeds_path)
    except rc.CellError as e:
        return out[:3] + [f"Not computed: {e}"]
    words: dict[str, int] = {}
    for e in entries:
        got = {}
        for which, root in (("new", new), ("committed", committed)):
            try:
                got[which] = compute_one(os.path.abspath(root), e, seeds)
            except rc.CellError as err:
                got[which] = str(err)
        r = got["new"]
        old = got["committed"].verdict if isinstance(got["committed"], Row) else "unreadable"
        if isinstance(r, Row):
            words[r.verdict] = words.get(r.verdict, 0) + 1
            seed = f"{r.seed.before} → {with_unit(r.seed.after, r.seed.unit)} ({r.record}, {r.seed.machine})"
            ours = (f"{r.ours.before} → {with_unit(r.ours.after, r.ours.unit)} ({r.ours.machine})"
                    if r.ours else f"not measured: {r.reason}")
            aside = verdict_aside(r)
            cells = [e["name"], seed, ratio_text(r.seed.ratio), ours,
                     ratio_text(r.ours.ratio) if r.ours else "–",
                     r.verdict + (f" ({aside})" if aside else ""), old]
        else:
            words["unreadable"] = words.get("unreadable", 0) + 1
            cells = [e["name"], "", "", r, "", "unreadable", old]
        out.append("| " + " | ".join(c.replace("|", "\\|").replace("\u00a0", " ") for c in cells) + " |")
    order = [w for w in (*VERDICT_WORDS, "unreadable") if words.get(w)]
    out += ["", "Rows: " + ", ".join(f"{words[w]} {w}" for w in order) + "."]
    return out


def ratio_text(r: float | None) -> str:
    """after / before: two decimals, or two significant digits below 0.1 ("0.00018×")."""
    if r is None:
        return "–"
    if r == 0:
        return "0×"
    return (f"{r:.2f}" if r >= 0.1 else f"{r:.2g}") + "×"


def with_unit(text: str, unit: str) -> str:
    return f"{text} {unit}" if unit else text


def verdict_aside(r: Row) -> str:
    """The line under a row's verdict: what would decide an undecided row, what a "needs"
    row lacks; nothing for a decided one (its title gives the interval)."""
    if r.verdict == "needs":
        return r.reason
    if r.verdict == "undecided" and r.ours is not None:
        v = r.ours.judged
        if v.rounds_to_decide:
            more = "more than" if v.rounds_to_decide >= vd.MOST_ROUNDS else "about"
            return f"{more} {v.rounds_to_decide} rounds would decide it"
        return v.why
    return ""


def counts(rows: list[Row]) -> dict[str, int]:
    return {w: sum(r.verdict == w for r in rows) for w in VERDICT_WORDS}
