"""harness/results/verdict: the one rule that calls two arms ahead, behind, level or undecided (chapter 01).

Role: every verdict the project prints (the harness's verdict columns, the book's ``verdict``
and ``count`` roles, the seeds' headline table, ``bench.py compare`` and the reproduce report)
is this module's answer, so two of them cannot disagree on the same cells.

The statistic is the per-round paired ratio a/b: the two arms of a round ran one after the
other, so a drift of the machine between rounds moves both sides of a round's ratio and not
the ratio. Its interval is the exact Wilcoxon signed-rank interval on the log ratios (the
Hodges-Lehmann estimate and the order statistics of the Walsh averages; Hollander and Wolfe,
"Nonparametric Statistical Methods", ch. 3), at CONFIDENCE two-sided. It assumes only that a
round's log ratio is symmetric about its centre; with fewer than MIN_ROUNDS rounds no
interval at that confidence exists, and the verdict is undecided.

Each metric has an equivalence margin m (a spec's ``[margins]``, else DEFAULT_MARGINS): a
ratio inside [1/(1+m), 1+m] is no difference worth naming. The words:

- ahead / behind: the whole interval lies beyond the margin, on A's better / worse side;
- level: the whole interval lies inside the margin (an equivalence, as in two one-sided
  tests at (1 - CONFIDENCE) / 2 each);
- undecided: neither. The verdict says how many rounds the observed spread suggests would
  decide it (its interval's half-width, shrunk as 1/sqrt(rounds), must fit between the
  estimate and the margin's edge), or that the record keeps no rounds at all.

Under equal arms an interval at CONFIDENCE lies wholly on one side of a ratio of 1 at most
(1 - CONFIDENCE) / 2 of the time each way, so ahead or behind is called at most
1 - CONFIDENCE of the time (less, since it must also clear the margin). Anchors: Kalibera and
Jones, "Rigorous Benchmarking in Reasonable Time" (ISMM 2013) on ratios of paired runs;
Georges, Buytaert and Eeckhout, "Statistically Rigorous Java Performance Evaluation"
(OOPSLA 2007) on intervals instead of single runs; Criterion.rs's noise threshold for the
margin.

A count out of a total (stalled runs of runs, lost rounds of rounds) is a proportion: its
verdict reads Newcombe's hybrid score interval for the difference of two proportions
(Newcombe, Statistics in Medicine 17, 1998, method 10), against an absolute margin in
proportion points (COUNT_MARGIN unless the caller says).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

# Two-sided confidence of every interval; the rate at which equal arms may be called apart
# is at most 1 - CONFIDENCE.
CONFIDENCE = 0.90
# The documented default margins, by what a metric measures (first match of its name wins);
# a spec overrides them per metric in its [margins] table (harness/run/specfile.py).
DEFAULT_MARGINS: tuple[tuple[str, float], ...] = (
    ("_us_per_req", 0.03),      # CPU per request (and µs spent in a lock, per request)
    ("_us_per_op", 0.03),       # CPU per operation (the loop peers)
    ("cpu_pct", 0.03),          # CPU as a share of the window
    ("rps", 0.05),              # rates
    ("requests_per_s", 0.05),
    ("_us", 0.05),              # latency percentiles
    ("", 0.05),                 # anything else: counters per request, shares, wall times
)
COUNT_MARGIN = 0.05             # proportions: five points of the total
WORDS = ("ahead", "level", "behind", "undecided")
# An estimate this far from the margin's edge would take more rounds than anyone runs.
MOST_ROUNDS = 1000


def default_margin(metric: str) -> float:
    return next(m for suffix, m in DEFAULT_MARGINS if suffix in metric)


def margin_for(metric: str, margins: dict[str, float] | None = None) -> float:
    """The spec's margin for this metric (its own name, or the base name of a CSV column
    such as rps_median), else the default for its kind."""
    for name in (metric, _base(metric)):
        if margins and name in margins:
            return float(margins[name])
    return default_margin(_base(metric))


def _base(column: str) -> str:
    for suffix in ("_median", "_min", "_max"):
        if column.endswith(suffix):
            return column[: -len(suffix)]
    return column


@dataclass(frozen=True)
class Verdict:
    word: str                       # one of WORDS
    n: int                          # rounds paired (or the smaller total, for a proportion)
    margin: float
    estimate: float | None = None   # ratio a/b (Hodges-Lehmann), or the difference of proportions
    lo: float | None = None         # the interval of the same
    hi: float | None = None
    rounds_to_decide: int | None = None
    why: str = ""                   # "no rounds kept", "too few rounds for an interval"
    kind: str = "ratio"             # ratio | proportion | exact

    def text(self) -> str:
        """One line: 'ahead: a/b 0.86 (0.83–0.89 at 90%, margin ±3%, 15 rounds)'."""
        if self.estimate is None:
            return f"{self.word}: {self.why}" if self.why else self.word
        if self.kind == "exact":
            return f"{self.word}: a/b {self.estimate:.3g}, {self.why}"
        pct = f"{CONFIDENCE:.0%}"
        if self.kind == "proportion":
            body = (f"difference {self.estimate:+.3f} ({self.lo:+.3f} to {self.hi:+.3f} at {pct}, "
                    f"margin ±{self.margin:.3f})")
        else:
            interval = "no interval" if self.lo is None else f"{self.lo:.3f}–{self.hi:.3f} at {pct}"
            body = (f"a/b {self.estimate:.3f} ({interval}, margin ±{self.margin:.0%}, "
                    f"{self.n} round{'' if self.n == 1 else 's'})")
        if self.word == "undecided" and self.rounds_to_decide:
            body += f"; about {self.rounds_to_decide} rounds would decide it"
            if self.rounds_to_decide >= MOST_ROUNDS:
                body = body.replace("about ", "more than ")
        return f"{self.word}: {body}"


def no_rounds(margin: float, why: str = "no rounds kept") -> Verdict:
    """The verdict of a record that keeps medians and ranges but not the rounds behind them:
    no paired ratio can be computed, and the verdict says so instead of guessing."""
    return Verdict("undecided", 0, margin, why=why)


# --- the signed-rank interval ----------------------------------------------------------

def _signed_rank_cdf(n: int) -> list[float]:
    """P(T+ <= t) for t = 0 .. n(n+1)/2 under the null (each rank's sign a fair coin)."""
    top = n * (n + 1) // 2
    ways = [1] + [0] * top
    for rank in range(1, n + 1):
        for t in range(top, rank - 1, -1):
            ways[t] += ways[t - rank]
    total, acc, out = 2 ** n, 0, []
    for w in ways:
        acc += w
        out.append(acc / total)
    return out


def _depth(n: int, confidence: float) -> int:
    """k such that [W_(k), W_(N+1-k)] of the N sorted Walsh averages covers the centre with
    probability at least `confidence`: the largest k with P(T+ <= k-1) <= (1-confidence)/2;
    0 when even k = 1 is too narrow (too few rounds for an interval)."""
    cdf = _signed_rank_cdf(n)
    tail = (1 - confidence) / 2
    k = 0
    while k < len(cdf) and cdf[k] <= tail + 1e-12:
        k += 1
    return k


def min_rounds(confidence: float = CONFIDENCE) -> int:
    """The fewest rounds whose signed-rank interval exists at this confidence (5 at 90%)."""
    n = 1
    while _depth(n, confidence) == 0:
        n += 1
    return n


def signed_rank_interval(d: list[float], confidence: float = CONFIDENCE
                         ) -> tuple[float, float, float] | None:
    """(Hodges-Lehmann estimate, lo, hi) of the centre of d, or None with too few values."""
    n = len(d)
    if n == 0:
        return None
    walsh = sorted((d[i] + d[j]) / 2 for i in range(n) for j in range(i, n))
    estimate = statistics.median(walsh)
    k = _depth(n, confidence)
    if k == 0:
        return estimate, -math.inf, math.inf
    return estimate, walsh[k - 1], walsh[len(walsh) - k]


def _z(confidence: float) -> float:
    return statistics.NormalDist().inv_cdf((1 + confidence) / 2)


def _rounds_to_decide(n: int, half: float | None, spread: float, distance: float,
                      confidence: float) -> int:
    """The rounds at which the interval would fit between the estimate and the margin's edge
    `distance` away, if its half-width shrank as 1/sqrt(rounds): from the interval's own
    half-width at n rounds, or, with too few rounds for one, from the normal approximation
    z * spread / sqrt(rounds). Never fewer than n + 1 nor than min_rounds."""
    floor = max(n + 1, min_rounds(confidence))
    if distance <= 0:
        return MOST_ROUNDS
    if half is not None:
        need = math.ceil(n * (half / distance) ** 2)
    else:
        need = math.ceil((_z(confidence) * spread / distance) ** 2)
    return min(max(need, floor), MOST_ROUNDS)


def _word(lo: float, hi: float, bound: float, higher_is_better: bool) -> str:
    """The word for an interval of log(a/b) against the log margin bound = log(1 + m)."""
    if lo > bound:
        return "ahead" if higher_is_better else "behind"
    if hi < -bound:
        return "behind" if higher_is_better else "ahead"
    if -bound <= lo and hi <= bound:
        return "level"
    return "undecided"


def paired(ratios: list[float], higher_is_better: bool, margin: float,
           confidence: float = CONFIDENCE) -> Verdict:
    """The verdict of A against B from each round's a/b (pairs with a missing or
    non-positive side are the caller's to drop)."""
    if not ratios:
        return no_rounds(margin, "no round measured both arms")
    d = [math.log(r) for r in ratios]
    est, lo, hi = signed_rank_interval(d, confidence)
    bound = math.log1p(margin)
    word = _word(lo, hi, bound, higher_is_better)
    rounds = None
    finite = math.isfinite(lo)
    if word == "undecided":
        spread = statistics.stdev(d) if len(d) > 1 else 0.0
        half = max(est - lo, hi - est) if finite else None
        rounds = _rounds_to_decide(len(d), half, spread, abs(abs(est) - bound), confidence)
    return Verdict(word, len(d), margin, math.exp(est),
                   math.exp(lo) if finite else None, math.exp(hi) if finite else None,
                   rounds, "" if finite else f"fewer than {min_rounds(confidence)} rounds")


def of_rounds(a: dict, b: dict, higher_is_better: bool, margin: float,
              confidence: float = CONFIDENCE) -> Verdict:
    """The verdict from two {round: value} maps, paired by round."""
    ratios = [a[r] / b[r] for r in sorted(a.keys() & b.keys())
              if a[r] is not None and b[r] is not None and a[r] > 0 and b[r] > 0]
    return paired(ratios, higher_is_better, margin, confidence)


# --- proportions ----------------------------------------------------------------------

def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson's score interval for k of n."""
    z = _z(confidence)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(ka: int, na: int, kb: int, nb: int, confidence: float = CONFIDENCE
             ) -> tuple[float, float, float]:
    """(pa - pb, lo, hi): Newcombe's hybrid score interval for a difference of proportions."""
    pa, pb = ka / na, kb / nb
    la, ua = wilson(ka, na, confidence)
    lb, ub = wilson(kb, nb, confidence)
    diff = pa - pb
    lo = diff - math.sqrt((pa - la) ** 2 + (ub - pb) ** 2)
    hi = diff + math.sqrt((ua - pa) ** 2 + (pb - lb) ** 2)
    return diff, lo, hi


def proportions(ka: int, na: int, kb: int, nb: int, higher_is_better: bool,
                margin: float = COUNT_MARGIN, confidence: float = CONFIDENCE) -> Verdict:
    """A's k of n against B's: ahead when the difference's interval lies wholly beyond the
    margin on A's better side, level when wholly inside it."""
    if na <= 0 or nb <= 0:
        return no_rounds(margin, "no runs counted")
    diff, lo, hi = newcombe(ka, na, kb, nb, confidence)
    word = _word(lo, hi, margin, higher_is_better)
    rounds = None
    if word == "undecided":
        half = max(diff - lo, hi - diff)
        rounds = _rounds_to_decide(min(na, nb), half, 0.0, abs(abs(diff) - margin), confidence)
    return Verdict(word, min(na, nb), margin, diff, lo, hi, rounds, kind="proportion")


def exact(a: float, b: float, higher_is_better: bool) -> Verdict:
    """Two counts of one deterministic run each (a program whose count does not vary from run
    to run, such as the callbacks a turn runs before a socket's): compared as they stand."""
    why = "exact counts of a deterministic run"
    ratio = a / b if b else math.inf
    if a == b:
        return Verdict("level", 1, 0.0, 1.0, why=why, kind="exact")
    word = "ahead" if (a > b) == higher_is_better else "behind"
    return Verdict(word, 1, 0.0, ratio, why=why, kind="exact")


def combine(verdicts: list[Verdict]) -> str:
    """A against several: ahead only when ahead of every one, behind only when behind every
    one, level only when level with every one; else undecided."""
    words = {v.word for v in verdicts}
    return words.pop() if len(words) == 1 else "undecided"
