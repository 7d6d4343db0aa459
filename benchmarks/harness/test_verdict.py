"""harness/test_verdict: the verdict rule's promises, checked by simulation (chapter 01).

Role: unit tests of harness/results/verdict.py and harness/results/rounds.py, seeded and deterministic:
equal arms are called apart no more often than the stated rate (1 - CONFIDENCE), a known
shift with ten rounds is called, a count out of a total is a proportion with an interval,
and a record that keeps no rounds says so. Run: python3 -m unittest test_verdict (from
benchmarks/harness), or ctest -R harness.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import unittest

from harness.results import rounds
from harness.results import summary
from harness.results import verdict
from harness.run import runner
from harness.run import specfile

TRIALS = 1000


def null_rate(rule, n: int, seed: int) -> float:
    """How often `rule(ratios)` calls two equal arms apart: both arms' rounds drawn from one
    log-normal distribution (a 5% spread), TRIALS times."""
    rng = random.Random(seed)
    called = 0
    for _ in range(TRIALS):
        ratios = [rng.lognormvariate(0, 0.05) / rng.lognormvariate(0, 0.05) for _ in range(n)]
        called += rule(ratios) in ("ahead", "behind")
    return called / TRIALS


def all_rounds_one_way(ratios: list[float]) -> str:
    """The rule this module replaced (every round better, or every round worse): a control
    the null test must reject at three rounds."""
    if all(r < 1 for r in ratios):
        return "ahead"
    if all(r > 1 for r in ratios):
        return "behind"
    return "level"


class Rule(unittest.TestCase):
    # The stated rate, with three standard errors of TRIALS draws for the simulation's own noise.
    ALLOWED = (1 - verdict.CONFIDENCE) + 3 * ((1 - verdict.CONFIDENCE) * verdict.CONFIDENCE / TRIALS) ** 0.5

    def test_equal_arms_are_called_apart_no_more_often_than_the_stated_rate(self):
        for n in (3, 5, 10, 20):
            for margin in (0.0, 0.03):   # a zero margin is the hardest case
                rate = null_rate(lambda r: verdict.paired(r, False, margin).word, n, seed=n)
                with self.subTest(rounds=n, margin=margin):
                    self.assertLessEqual(rate, self.ALLOWED)

    def test_the_null_simulation_catches_a_rule_that_calls_equal_arms_apart_too_often(self):
        # Three rounds all one way happen by chance one time in four (either way).
        self.assertGreater(null_rate(all_rounds_one_way, 3, seed=3), self.ALLOWED)

    def test_a_ten_percent_shift_with_ten_rounds_is_called(self):
        rng = random.Random(10)
        words = []
        for _ in range(500):
            ratios = [0.9 * rng.lognormvariate(0, 0.03) / rng.lognormvariate(0, 0.03)
                      for _ in range(10)]
            words.append(verdict.paired(ratios, False, 0.03).word)
        self.assertGreaterEqual(words.count("ahead") / len(words), 0.95)
        self.assertEqual(words.count("behind"), 0)
        # Higher is better: the same rounds are behind.
        self.assertEqual(verdict.paired([0.9] * 10, True, 0.03).word, "behind")

    def test_level_is_an_equivalence_and_undecided_says_how_many_rounds_would_decide(self):
        tight = [1.0 + 0.004 * ((i % 3) - 1) for i in range(10)]
        self.assertEqual(verdict.paired(tight, False, 0.03).word, "level")
        loose = [0.95, 1.04, 0.97, 1.05, 0.99, 1.02, 0.96, 1.03]
        v = verdict.paired(loose, False, 0.03)
        self.assertEqual(v.word, "undecided")
        self.assertGreater(v.rounds_to_decide, len(loose))
        self.assertIn(f"about {v.rounds_to_decide} rounds would decide it", v.text())
        # Three rounds have no interval at 90%, however tidy: undecided, with the rounds it takes.
        few = verdict.paired([0.8, 0.81, 0.8], False, 0.03)
        self.assertEqual((few.word, few.rounds_to_decide), ("undecided", verdict.min_rounds()))
        self.assertEqual(verdict.min_rounds(), 5)

    def test_the_interval_is_the_exact_signed_rank_one(self):
        # n = 10 at 90%: the 11th smallest and largest of the 55 Walsh averages (Hollander and
        # Wolfe's table: P(T+ <= 10) = 0.042, P(T+ <= 11) = 0.053).
        d = list(range(1, 11))
        est, lo, hi = verdict.signed_rank_interval(d, 0.90)
        walsh = sorted((d[i] + d[j]) / 2 for i in range(10) for j in range(i, 10))
        self.assertEqual((est, lo, hi), (5.5, walsh[10], walsh[44]))

    def test_counts_are_proportions_with_an_interval(self):
        # 1 of 40 against 0 of 40 is not a difference anyone can name.
        self.assertEqual(verdict.proportions(1, 40, 0, 40, False).word, "undecided")
        # 25 of 40 against 2 of 40 is; fewer stalls are better.
        self.assertEqual(verdict.proportions(2, 40, 25, 40, False).word, "ahead")
        self.assertEqual(verdict.proportions(25, 40, 2, 40, False).word, "behind")
        self.assertEqual(verdict.proportions(0, 4000, 0, 4000, False).word, "level")
        # Newcombe's paper, example (a): 56/70 - 48/80, 95%: 0.0524 to 0.3339.
        _, lo, hi = verdict.newcombe(56, 70, 48, 80, 0.95)
        self.assertAlmostEqual(lo, 0.0524, places=3)
        self.assertAlmostEqual(hi, 0.3339, places=3)

    def test_margins_come_from_the_spec_else_the_documented_default(self):
        self.assertEqual(verdict.margin_for("loop_us_per_req"), 0.03)
        self.assertEqual(verdict.margin_for("rps_median"), 0.05)
        self.assertEqual(verdict.margin_for("p99_us"), 0.05)
        self.assertEqual(verdict.margin_for("rps", {"rps": 0.1}), 0.1)
        with self.assertRaises(specfile.SpecError):
            specfile._margins({"rps": 5}, {"rps": None})
        with self.assertRaises(specfile.SpecError):
            specfile._margins({"nonsense": 0.1}, {"rps": None})


class Records(unittest.TestCase):
    def _record(self, tmp: str, doc: dict) -> str:
        path = os.path.join(tmp, "t.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return os.path.join(tmp, "t.csv")

    def test_a_spec_record_pairs_its_cells_by_round(self):
        cells = [{"round": r, "row": "c16", "arm": arm, "ok": True, "metrics": {"rps": v}}
                 for r in range(6) for arm, v in (("a", 110.0 + r), ("b", 100.0 + r))]
        with tempfile.TemporaryDirectory() as tmp:
            path = self._record(tmp, {"cells": cells})
            v = rounds.judge(path, ("rps_median", {"row": "c16", "arm": "a"}),
                             ("rps_median", {"row": "c16", "arm": "b"}), True)
            self.assertEqual((v.word, v.n), ("ahead", 6))

    def test_a_record_that_keeps_no_rounds_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = self._record(tmp, {"results": [{"arm": "a", "rps": {"median": 1}}]})
            v = rounds.judge(path, ("rps_median", {"arm": "a"}), ("rps_median", {"arm": "b"}), True)
            self.assertEqual(v.text(), "undecided: no rounds kept")


class RoundsChosenByTheData(unittest.TestCase):
    """runner.more_rounds: past the mode's rounds, another round while a verdict is undecided
    and max_rounds and the time budget allow."""
    SPEC = """
compare = [["a", "b"]]
[spec]
chapter = "x"
name = "y"
verdict_metrics = ["rps"]
[modes.quick]
rounds = 1
duration_s = 1
[modes.full]
rounds = 5
duration_s = 1
max_rounds = 15
budget_s = 100
[[arms]]
name = "a"
kind = "floor"
[[arms]]
name = "b"
kind = "floor"
[[rows]]
name = "c16"
connections = 16
"""

    def cells(self, ratios: list[float]) -> list[dict]:
        out = []
        for r, ratio in enumerate(ratios):
            for arm, rps in (("a", 1000.0 * ratio), ("b", 1000.0)):
                metrics = {m: None for m in summary.METRICS}
                metrics.update(rps=rps, errors=0.0, busy_pct=0.0)
                out.append({"round": r, "row": "c16", "arm": arm, "ok": True, "metrics": metrics})
        return out

    def test_more_rounds_while_undecided_within_the_limits(self):
        spec = specfile.parse(self.SPEC)
        full = spec.modes["full"]
        noisy = [1.15, 1.02, 1.18, 1.05, 1.16, 1.1]    # ahead by the median, not yet by the interval
        self.assertEqual(runner.more_rounds(spec, self.cells(noisy[:3]), 3, full, 30)[0], True)
        more, why = runner.more_rounds(spec, self.cells(noisy[:5]), 5, full, 50)
        self.assertTrue(more, why)
        self.assertIn("undecided", why)
        # Decided: no more. Out of rounds or out of time: no more, and it says which.
        decided = [1.3, 1.31, 1.29, 1.3, 1.32]
        more, why = runner.more_rounds(spec, self.cells(decided), 5, full, 50)
        self.assertEqual((more, "every verdict decided" in why), (False, True), why)
        more, why = runner.more_rounds(spec, self.cells((noisy * 3)[:15]), 15, full, 60)
        self.assertEqual((more, "max_rounds" in why), (False, True), why)
        more, why = runner.more_rounds(spec, self.cells(noisy[:5]), 5, full, 90)
        self.assertEqual((more, "budget" in why), (False, True), why)
        # Without max_rounds, the mode's rounds and no more.
        self.assertFalse(runner.more_rounds(spec, self.cells(noisy[:1]), 1, spec.modes["quick"], 1)[0])


if __name__ == "__main__":
    unittest.main()
