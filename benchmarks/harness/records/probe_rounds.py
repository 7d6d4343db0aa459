"""harness/records/probe_rounds: a probe's per-round figures as the cells the verdict reads (chapter 01).

Role: a probe runs its arms alternated within each round (probes/probe_main.h's
alternate_arms) and reports each figure as {"median", "min", "max", "rounds"}, "rounds" being
the figure in round order (probes/probe_report.h's median_min_max); a figure it reports
pooled over the rounds (a percentile of every round's latencies, a counter per send of all
rounds) keeps its value in each round under the result's "per_round" ({column: [values]},
the column as the CSV names it). This module turns a
report's results into the record's "cells", the shape a spec's record keeps
(harness/run/runner.py) and harness/results/rounds.py reads:
{"round", "row", "arm", "ok", "metrics", "line"}: one cell per (result, round), its metrics
every figure that kept its rounds, "arm" the value of the tool's arm column and "row" the
others (joined by "/"), and "line" the result's plain columns as its CSV line spells them,
so that a book role naming the line by any of its columns finds the line's rounds.

It also writes which rule judges a column (the record's "verdict_rules"): the paired rounds
for a figure with rounds; a count out of a total (sb-litmus's outcomes of its trials, a
probe's lost rounds of its rounds) is a proportion with a binomial interval; a count of a
deterministic run is exact (harness/results/verdict.py).
"""

from __future__ import annotations

ROUNDS = "rounds"
PER_ROUND = "per_round"


def plain(result: dict, cell) -> dict[str, str]:
    """The result's plain columns (not figures), each as `cell` writes it in the CSV."""
    return {k: cell(v) for k, v in result.items() if not isinstance(v, dict)}


def figures_with_rounds(result: dict) -> dict[str, list]:
    """{figure: its values in round order} of every figure of the result that kept them."""
    out = {k: v[ROUNDS] for k, v in result.items()
           if isinstance(v, dict) and isinstance(v.get(ROUNDS), list) and v[ROUNDS]}
    out.update({k: v for k, v in (result.get(PER_ROUND) or {}).items() if isinstance(v, list) and v})
    return out


def cells(results: list[dict], keys: tuple[str, ...], cell) -> list[dict]:
    """The record's cells: one per (result, round) of every result with a figure that kept
    its rounds. keys[0] is the arm's column, the rest name the row."""
    out = []
    for r in results:
        line = plain(r, cell)
        arm = line.get(keys[0], "")
        row = "/".join(line.get(k, "") for k in keys[1:])
        per_round: dict[int, dict[str, float]] = {}
        for figure, values in figures_with_rounds(r).items():
            for i, v in enumerate(values):
                per_round.setdefault(i, {})[figure] = v
        out += [{"round": i, "row": row, "arm": arm, "ok": True, "metrics": m, "line": line}
                for i, m in sorted(per_round.items())]
    return out


def rules(results: list[dict], counts: dict[str, str], exact: tuple[str, ...],
          count_margin: float | None = None) -> dict:
    """The record's "verdict_rules": the figures judged from paired rounds, the counts judged
    as proportions of their totals ({count column: total column}) against count_margin
    (points of the total), the exact counts."""
    paired = sorted({f for r in results for f in figures_with_rounds(r)})
    out = {"paired_rounds": paired, "proportion": dict(counts), "exact": list(exact)}
    if counts and count_margin is not None:
        out["proportion_margin"] = count_margin
    return out


def strip_rounds(result: dict) -> dict:
    """The result without its figures' rounds, for the CSV (the rounds live in the cells)."""
    return {k: ({i: x for i, x in v.items() if i != ROUNDS} if isinstance(v, dict) else v)
            for k, v in result.items() if k != PER_ROUND}
