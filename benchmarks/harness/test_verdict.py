"""harness/test_verdict: the verdict rule's promises, checked by simulation (chapter 01).

Role: unit tests of harness/results/verdict.py and harness/results/rounds.py, seeded and deterministic:
equal arms are called apart no more often than the stated rate (1 - CONFIDENCE), a known
shift with ten rounds is called, a count out of a total is a proportion with an interval,
a record that keeps no rounds says so, a probe's or the loop profile's rounds give a paired
verdict, and a probe's report that keeps no rounds is refused. Run: python3 -m unittest test_verdict (from
benchmarks/harness), or ctest -R harness.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
import random
import tempfile
import unittest

from harness import REPO_ROOT
from harness.records import loop_profile, micro, probe, probe_rounds, tools
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


class ProbeRecords(unittest.TestCase):
    """A probe's record (harness/records/tools.py, probe.py): each figure's rounds become the
    cells rounds.py reads, a count is judged as a proportion or exactly as the record says,
    and a report with neither rounds nor a declared count is refused."""
    # Two arms' rounds as a probe reports them (probes/probe_report.h, median_min_max).
    # A figure pooled over the rounds (a percentile) keeps each round's value in "per_round".
    RESULTS = [{"arm": arm, "spin_us": spin, "rounds": 6, "lost": lost,
                "rate": {"median": 0, "min": 0, "max": 0,
                         "rounds": [base * (1 + 0.01 * (r % 3)) for r in range(6)]},
                "p99_us": 1e6 / base,
                "per_round": {"p99_us": [1e6 / base * (1 + 0.01 * (r % 2)) for r in range(6)]}}
               for arm, spin, base, lost in (("fast", 0, 130.0, 0), ("slow", 50, 100.0, 6))]

    def write(self, tmp: str, results: list[dict], tool: tools.Tool) -> str:
        """The record and CSV run_tool writes for `results`; the CSV's path."""
        doc = {"results": results, "cells": probe_rounds.cells(results, tool.keys, tools.cell),
               "verdict_rules": probe_rounds.rules(results, tool.counts, tool.exact,
                                                   tool.count_margin)}
        with open(os.path.join(tmp, "t.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f)
        header, lines = tools.csv_lines(results)
        with open(os.path.join(tmp, "t.csv"), "w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, header)
            w.writeheader()
            w.writerows(lines)
        return os.path.join(tmp, "t.csv")

    def test_a_probe_s_rounds_give_a_paired_verdict_by_any_column_of_its_line(self):
        tool = tools.Tool("x", "t", "t", {}, check=False, counts={"lost": "rounds"})
        with tempfile.TemporaryDirectory() as tmp:
            path = self.write(tmp, self.RESULTS, tool)
            for a, b in (({"arm": "fast"}, {"arm": "slow"}), ({"spin_us": "0"}, {"spin_us": "50"})):
                v = rounds.judge(path, ("rate_median", a), ("rate_median", b), True)
                self.assertEqual((v.word, v.n), ("ahead", 6), v.text())
            v = rounds.judge(path, ("p99_us", {"arm": "fast"}), ("p99_us", {"arm": "slow"}), False)
            self.assertEqual((v.word, v.n), ("ahead", 6), v.text())
            v = rounds.judge(path, ("lost", {"arm": "fast"}), ("lost", {"arm": "slow"}), False)
            self.assertEqual((v.word, v.kind), ("ahead", "proportion"), v.text())
            with open(path, encoding="utf-8") as f:
                header = f.readline()   # the rounds live in the cells
            self.assertNotIn("rate_rounds", header)
            self.assertNotIn("per_round", header)

    def test_a_count_is_judged_against_the_record_s_own_margin(self):
        """1 of 1000 against 30 of 1000 is within the default five points, and a difference
        at the litmus test's margin of a tenth of a point."""
        results = [{"variant": "fenced", "trials": 1000, "both_zero": 1},
                   {"variant": "relaxed", "trials": 1000, "both_zero": 30}]
        words = []
        for margin in (verdict.COUNT_MARGIN, 0.001):
            tool = tools.Tool("x", "t", "t", {}, check=False, keys=("variant",),
                              counts={"both_zero": "trials"}, count_margin=margin)
            with tempfile.TemporaryDirectory() as tmp:
                path = self.write(tmp, results, tool)
                words.append(rounds.judge(path, ("both_zero", {"variant": "fenced"}),
                                          ("both_zero", {"variant": "relaxed"}), False).word)
        self.assertEqual(words, ["level", "ahead"])

    def test_an_exact_count_is_compared_as_it_stands(self):
        results = [{"turn": "generation", "before": 1}, {"turn": "drain", "before": 1024}]
        tool = tools.Tool("x", "t", "t", {}, check=False, keys=("turn",), exact=("before",))
        with tempfile.TemporaryDirectory() as tmp:
            path = self.write(tmp, results, tool)
            v = rounds.judge(path, ("before", {"turn": "generation"}), ("before", {"turn": "drain"}), False)
            self.assertEqual((v.word, v.kind), ("ahead", "exact"), v.text())

    def test_a_report_without_rounds_is_refused(self):
        script = ("#!/bin/sh\n"
                  "printf '{\"tool\": \"t\", \"machine\": {}, \"results\": "
                  "[{\"arm\": \"a\", \"rate\": {\"median\": 1, \"min\": 1, \"max\": 1}}]}' > \"$2\"\n")
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "bin"))
            exe = os.path.join(tmp, "bin", "t")
            with open(exe, "w", encoding="utf-8") as f:
                f.write(script)
            os.chmod(exe, 0o755)
            run = lambda tool: tools.run_tool(   # noqa: E731
                tool, build_dir=tmp, out_dir=os.path.join(tmp, "out"), repo_root=tmp,
                mode="quick", argv=[], reproduce_argv=[], stream=io.StringIO())
            with self.assertRaisesRegex(tools.RecordError, "no verdict could be computed"):
                run(tools.Tool("x", "t", "t", {"quick": {}}, check=False))
            # The same report is a record when the tool says its figure is an exact count.
            doc = run(tools.Tool("x", "t", "t", {"quick": {}}, check=False, exact=("rate",)))
            self.assertEqual(doc["verdict_rules"]["exact"], ["rate"])

    def test_bench_rounds_lists_the_records_that_keep_no_rounds(self):
        """rounds.without_rounds, behind `bench.py rounds`: a record of medians alone is listed;
        one with rounds, one whose counts say their rule, and one that compares no arms are not."""
        records = {"probe.json": {"results": [{"arm": "a", "rate": {"median": 1}}]},
                   "spec.json": {"cells": [{"round": 0, "row": "r", "arm": "a", "ok": True,
                                            "metrics": {"rps": 1.0}}]},
                   "litmus.json": {"results": [], "verdict_rules": {"proportion": {"k": "n"}}},
                   "failover.json": {"results": []}}
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "01-x"))
            for name, doc in records.items():
                with open(os.path.join(tmp, "01-x", name), "w", encoding="utf-8") as f:
                    json.dump(doc, f)
            self.assertEqual(rounds.without_rounds(tmp), [os.path.join("01-x", "probe.json")])

    def test_the_loop_profile_s_rounds_are_read_by_arm_and_category(self):
        cells = [{"round": r, "arm": arm, "ok": True, "requests": 1000, "samples": 100,
                  "by_category": {"kernel": k + r % 2}}
                 for r in range(6) for arm, k in (("inline", 50), ("elastic-1", 80))]
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "t.json"), "w", encoding="utf-8") as f:
                json.dump({"cells": cells}, f)
            path = os.path.join(tmp, "t.csv")
            v = rounds.judge(path, ("share_pct_median", {"arm": "elastic-1", "category": "kernel"}),
                             ("share_pct_median", {"arm": "inline", "category": "kernel"}), False)
            self.assertEqual((v.word, v.n), ("behind", 6), v.text())


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

    def test_every_spec_that_compares_can_reach_an_interval_in_full_mode(self):
        """A spec whose full mode stops short of verdict.min_rounds() calls every verdict it
        owns undecided, whatever the data: it must run that many rounds, or go on to them
        (max_rounds)."""
        need = verdict.min_rounds()
        specs = glob.glob(os.path.join(REPO_ROOT, "benchmarks", "specs", "*.toml"))
        self.assertTrue(specs)
        for path in sorted(specs):
            spec = specfile.load(path)
            full = spec.modes["full"]
            if spec.compares:
                with self.subTest(spec=os.path.basename(path)):
                    self.assertGreaterEqual(max(full.rounds, full.max_rounds), need)

    def test_every_record_with_rounds_runs_enough_of_them_in_full_mode(self):
        """The same for the records bench.py files beside the specs: the probes (their rounds
        or runs), the micro-benchmarks, the loop profile."""
        need = verdict.min_rounds()
        for tool in tools.TOOLS:
            full = tool.settings["full"]
            for flag in ("rounds", "runs"):
                if flag in full:
                    with self.subTest(tool=tool.name):
                        self.assertGreaterEqual(full[flag], need)
        self.assertGreaterEqual(probe.SETTINGS["full"][1], need)
        self.assertGreaterEqual(micro.SETTINGS["full"][0], need)
        self.assertGreaterEqual(loop_profile.MODES["full"].rounds, need)


if __name__ == "__main__":
    unittest.main()
