"""harness/results/rounds: the rounds behind a results file's cell, and its verdict from them (chapter 01).

Role: a results CSV keeps each cell's median and min-max; the verdict (harness/results/verdict.py)
needs each round's value, paired with the other arm's value of the same round. This module
finds them in the record the harness wrote beside the CSV (the .json of the same name) and
asks verdict.py for the word, so that the book's roles, the headline table and the reproduce
report judge a comparison from the same rounds as the harness's own columns:

- a spec's record (harness/run/runner.py) keeps every cell, {"round", "row", "arm", "metrics"}:
  a cell named [row=R, arm=A] is that (row, arm)'s metric in each round
  (summary.round_values, as the harness's verdict columns read it);
- the loop peers' record (harness/records/loop_peers.py) keeps every round's report of every peer:
  a cell named [loop=L, workload=W] is L's median on W in each round.

Any other record keeps no rounds (a probe's own summary, a tool's medians): its cells have
no per-round values and a verdict on them says "undecided: no rounds kept". The margin of
a metric comes from the spec named in the record (its [margins] table), else verdict.py's
default for the metric's kind.
"""

from __future__ import annotations

import functools
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


def cell_rounds(record: dict | None, column: str, keys: dict[str, str]) -> dict[int, float] | None:
    """{round: value} of the cell column[keys] (each key one value), or None when the
    record keeps no rounds for it."""
    if not record:
        return None
    metric = base_column(column)
    if record.get("cells") and set(keys) == {"row", "arm"}:
        if not any(metric in (c.get("metrics") or {}) for c in record["cells"]):
            return None
        return summary.round_values(record["cells"], (keys["row"], keys["arm"]), metric)
    if isinstance(record.get("rounds"), list) and set(keys) == {"loop", "workload"}:
        return loop_peer_rounds(record["rounds"], keys["loop"], keys["workload"], metric) or None
    return None


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
    margin = verdict.margin_for(base_column(a[0]), record_margins(record))
    ra, rb = cell_rounds(record, *a), cell_rounds(record, *b)
    if ra is None or rb is None:
        return verdict.no_rounds(margin)
    return verdict.of_rounds(ra, rb, higher_is_better, margin)
