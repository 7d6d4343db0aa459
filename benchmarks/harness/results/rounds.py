"""harness/results/rounds: the rounds behind a results file's cell, and its verdict from them (chapter 01).

Role: a results CSV keeps each cell's median and min-max; the verdict (harness/results/verdict.py)
needs each round's value, paired with the other arm's value of the same round. This module
finds them in the record the harness wrote beside the CSV (the .json of the same name) and
asks verdict.py for the word, so that the book's roles, the headline table and the reproduce
report judge a comparison from the same rounds as the harness's own columns:

- a spec's record (harness/run/runner.py) keeps every cell, {"round", "row", "arm", "metrics"}:
  a cell named [row=R, arm=A] is that (row, arm)'s metric in each round
  (summary.round_values, as the harness's verdict columns read it);
- a probe's record (harness/records/probe_rounds.py) keeps the same cells, each with its
  result's "line" too: a cell named by any of its line's columns ([arm=A], [mechanism=M,
  waiters=2]) is that line's metric in each round;
- the loop profile's record (harness/records/loop_profile.py) keeps each round's samples by
  category: a cell named [arm=A, category=C] is A's samples of C per 1000 requests (or their
  share of the loop's samples) in each round (profile_figures);
- the loop peers' record (harness/records/loop_peers.py) keeps every round's report of every peer:
  a cell named [loop=L, workload=W] is L's median on W in each round.

A probe's record also says which rule judges a column (its "verdict_rules"): a count out of
a total is a proportion (verdict.proportions, from the two lines' count and total), a count of
a deterministic run is exact (verdict.exact). Any other record keeps no rounds (a tool's
medians): a verdict on its cells says "undecided: no rounds kept". The margin of a metric
comes from the spec named in the record (its [margins] table), else verdict.py's default for
the metric's kind.
"""

from __future__ import annotations

import csv
import functools
import glob
import json
import os
import tomllib

from harness import REPO_ROOT
from harness.results import summary, verdict



def base_column(column: str) -> str:
    for suffix in ("_median", "_min", "_max"):
        if column.endswith(suffix):
            return column[: -len(suffix)]
    return column


@functools.lru_cache(maxsize=64)
def _record(json_path: str, mtime: float) -> dict:
    with open(json_path, encoding="utf-8") as f:
        return json.load(f)


def record_of(csv_path: str) -> dict | None:
    """The record beside a results CSV, or None when there is none."""
    json_path = csv_path[: -len(".csv")] + ".json" if csv_path.endswith(".csv") else csv_path
    if not os.path.isfile(json_path):
        return None
    return _record(json_path, os.path.getmtime(json_path))


def loop_peer_rounds(per_round: list[dict], loop: str, workload: str, figure: str
                     ) -> dict[int, float]:
    """{round: L's value of the figure on W} from the loop peers' rounds."""
    out = {}
    for i, rnd in enumerate(per_round):
        for r in rnd.get("reports", {}).get(loop, {}).get("results", []):
            value = (r.get(figure) or {}).get("median") if r.get("workload") == workload else None
            if value is not None:
                out[i] = value
    return out


PROFILE_ALL = "all"   # the loop profile's line of every sample, whatever its category


def profile_figures(cell: dict, category: str) -> dict[str, float]:
    """One loop-profile round's figures for a category (PROFILE_ALL: every sample): samples
    per 1000 requests and their share of the loop's samples, in percent."""
    n = cell["samples"] if category == PROFILE_ALL else cell["by_category"][category]
    return {"samples_per_kreq": 1000.0 * n / cell["requests"],
            "share_pct": 100.0 * n / cell["samples"]}


def line_rounds(cells: list[dict], keys: dict[str, str], metric: str) -> dict[int, float] | None:
    """{round: value} of the one line of a probe's cells that every key names, or None
    when none or several lines match."""
    found = [c for c in cells if all(c["line"].get(k) == v for k, v in keys.items())]
    if len({(c["row"], c["arm"]) for c in found}) != 1:
        return None
    return summary.round_values(found, (found[0]["row"], found[0]["arm"]), metric) or None


def cell_rounds(record: dict | None, column: str, keys: dict[str, str]) -> dict[int, float] | None:
    """{round: value} of the cell column[keys] (each key one value), or None when the
    record keeps no rounds for it."""
    if not record:
        return None
    metric = base_column(column)
    cells = record.get("cells") or []
    if cells and all("line" in c for c in cells):
        return line_rounds(cells, keys, metric)
    if cells and set(keys) == {"arm", "category"} and all("by_category" in c for c in cells):
        return {c["round"]: profile_figures(c, keys["category"])[metric] for c in cells
                if c["arm"] == keys["arm"] and c.get("ok") and c.get("requests") and c.get("samples")
                and metric in ("samples_per_kreq", "share_pct")} or None
    if cells and set(keys) == {"row", "arm"}:
        if not any(metric in (c.get("metrics") or {}) for c in cells):
            return None
        return summary.round_values(cells, (keys["row"], keys["arm"]), metric)
    if isinstance(record.get("rounds"), list) and set(keys) == {"loop", "workload"}:
        return loop_peer_rounds(record["rounds"], keys["loop"], keys["workload"], metric) or None
    return None


def csv_line(csv_path: str, keys: dict[str, str]) -> dict[str, str] | None:
    """The one line of a results CSV that every key names, or None."""
    with open(csv_path, encoding="utf-8", newline="") as f:
        found = [line for line in csv.DictReader(f)
                 if all(line.get(k) == v for k, v in keys.items())]
    return found[0] if len(found) == 1 else None


def judge_counts(csv_path: str, record: dict, a: tuple[str, dict[str, str]],
                 b: tuple[str, dict[str, str]], higher_is_better: bool) -> verdict.Verdict | None:
    """The verdict of a column the record's "verdict_rules" judge as a proportion (its count
    of its total column, each side's line of the CSV) or as an exact count; None for any other."""
    rules = record.get("verdict_rules") or {}
    column = base_column(a[0])
    if column not in rules.get("proportion", {}) and column not in rules.get("exact", []):
        return None
    la, lb = csv_line(csv_path, a[1]), csv_line(csv_path, b[1])
    if la is None or lb is None:
        return verdict.no_rounds(verdict.COUNT_MARGIN, "no single line for a side")
    if column in rules.get("exact", []):
        return verdict.exact(float(la[a[0]]), float(lb[b[0]]), higher_is_better)
    total = rules["proportion"][column]
    return verdict.proportions(int(la[a[0]]), int(la[total]), int(lb[b[0]]), int(lb[total]),
                               higher_is_better,
                               float(rules.get("proportion_margin", verdict.COUNT_MARGIN)))


# Records that compare no arms: one run of a system through its phases (failover, the
# panel) and the flame graphs of a profile.
NO_ARMS = ("failover.json", "panel.json", "flame-")


def keeps(record: dict) -> str | None:
    """What a record keeps to judge its arms by: "rounds" (cells with each round's figures,
    the loop profile's samples, the loop peers' reports), "counts" (its verdict_rules judge
    counts as proportions or exactly), or None: no verdict can be computed from it."""
    cells = record.get("cells") or []
    if any(c.get("metrics") or c.get("by_category") for c in cells) or record.get("rounds") and \
            isinstance(record["rounds"], list):
        return "rounds"
    rules = record.get("verdict_rules") or {}
    return "counts" if rules.get("proportion") or rules.get("exact") else None


def without_rounds(out_dir: str) -> list[str]:
    """Every record under OUT/<chapter>/ that compares arms and keeps neither rounds nor
    counts, as CHAPTER/NAME.json."""
    out = []
    for path in sorted(glob.glob(os.path.join(out_dir, "*", "*.json"))):
        name = os.path.basename(path)
        if name.endswith(".raw.json") or name.startswith(NO_ARMS):
            continue
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
        if isinstance(record, dict) and keeps(record) is None:
            out.append(os.path.relpath(path, out_dir))
    return out


def record_margins(record: dict | None) -> dict[str, float]:
    """The [margins] of the spec the record names: the spec file as it stands in the
    repository, else the spec text the record kept; {} when neither has one."""
    spec = (record or {}).get("spec")
    if not isinstance(spec, dict):
        return {}
    path = os.path.join(REPO_ROOT, spec.get("path", ""))
    try:
        with open(path, "rb") as f:
            return tomllib.load(f).get("margins", {})
    except (OSError, tomllib.TOMLDecodeError):
        pass
    try:
        return tomllib.loads(spec.get("text", "")).get("margins", {})
    except tomllib.TOMLDecodeError:
        return {}


def harness_text(record: dict | None, column: str, keys: dict[str, str]) -> str | None:
    """The harness's own account of a verdict column verdict_M_vs_B[row=R, arm=A] (the
    record's comparisons, each with verdict.Verdict.text()), or None."""
    for c in (record or {}).get("comparisons", []):
        a, within = (keys.get("arm"), keys.get("row")) if c.get("over") == "arms" else \
            (keys.get("row"), keys.get("arm"))
        if (column == f"verdict_{c.get('metric')}_vs_{c.get('b')}" and c.get("a") == a
                and c.get("within") == within):
            return c.get("verdict_text")
    return None


def judge(csv_path: str, a: tuple[str, dict[str, str]], b: tuple[str, dict[str, str]],
          higher_is_better: bool) -> verdict.Verdict:
    """The verdict of cell a against cell b of one results file, from their rounds."""
    record = record_of(csv_path)
    counted = judge_counts(csv_path, record, a, b, higher_is_better) if record else None
    if counted is not None:
        return counted
    margin = verdict.margin_for(base_column(a[0]), record_margins(record))
    ra, rb = cell_rounds(record, *a), cell_rounds(record, *b)
    if ra is None or rb is None:
        return verdict.no_rounds(margin)
    return verdict.of_rounds(ra, rb, higher_is_better, margin)
