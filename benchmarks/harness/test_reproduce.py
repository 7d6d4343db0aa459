"""harness/test_reproduce: the pieces of `bench.py reproduce`, checked without a server (chapter 01).

Role: the unit tests of reproduce-then-compare: a spec resumed from its journal of cells
(the interrupted cell and the rest measured, the others kept; a torn last line and a journal
of other settings ignored), the parts a resumed run keeps, the refusal of a folder that is
not fresh, the time left (harness/run/progress.py) on a fake clock, the refusal of a busy machine
from a fake /proc (harness/run/busy.py), and the report (harness/results/book_figures.py) on a tiny
synthetic book and two results folders in which one verdict flips. Run by CTest (label
`unit`) as `/usr/bin/python3 -m unittest -v test_reproduce`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))

from harness import cli as bench
from harness.results import book_figures
from harness.results import summary as sm
from harness.run import busy
from harness.run import journal
from harness.run import procfs
from harness.run import progress
from harness.run import runner
from harness.run import specfile

SPEC = """
[spec]
chapter = "01-baseline"
name = "t"
plots = []
[modes.quick]
rounds = 2
duration_s = 1
warmup_s = 0
[modes.full]
rounds = 5
duration_s = 6
[[arms]]
name = "a"
kind = "stage"
binary = "handoff-01"
[[arms]]
name = "b"
kind = "stage"
binary = "handoff-02"
[[rows]]
name = "c16"
connections = 16
"""


class Interrupted(BaseException):
    """What a Ctrl-C does to the harness mid-cell (not an Exception: nothing catches it)."""


class ResumeSpec(unittest.TestCase):
    """runner.run_spec with measure_cell replaced: 2 arms x 1 row x 2 rounds = 4 cells."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name
        self.spec = specfile.parse(SPEC, "t.toml")
        self.measured = []
        for target, value in (("check_parts", (self.spec.arms, self.spec.rows, [])),
                              ("report.machine_info", {}), ("servers.reap_stale", [])):
            p = mock.patch(f"harness.run.runner.{target}", return_value=value)
            p.start()
            self.addCleanup(p.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def fake_cell(self, spec, arm, row, r, order, *rest, interrupt_at=None):
        if len(self.measured) == interrupt_at:
            raise Interrupted()
        self.measured.append((r, row.name, arm.name))
        metrics = {m: None for m in sm.METRICS}
        metrics.update(rps=1000.0 + r, server_us_per_req=5.0 if arm.name == "a" else 7.0,
                       errors=0.0, busy_pct=0.0)
        return {"round": r, "order": order, "row": row.name, "arm": arm.name, "ok": True,
                "error": None, "server_exit": 0, "busy_machine": False, "metrics": metrics}

    def run_spec(self, interrupt_at=None, rounds=2):
        settings = specfile.ModeSettings(rounds=rounds, duration_s=1, warmup_s=0)
        fake = lambda *a: self.fake_cell(*a, interrupt_at=interrupt_at)  # noqa: E731
        with mock.patch("harness.run.runner.measure_cell", side_effect=fake), \
                contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return runner.run_spec(self.spec, mode="quick", build_dir=self.out, out_dir=self.out,
                                   repo_root=self.out, argv=["bench.py"], reproduce_argv=["bench.py"],
                                   settings=settings, allow_missing=False, resume=True,
                                   stream=io.StringIO())

    def test_an_interrupted_run_resumes_with_the_interrupted_cell_and_keeps_the_finished_ones(self):
        with self.assertRaises(Interrupted):
            self.run_spec(interrupt_at=2)          # two cells done, the third interrupted
        jpath = journal.path_for(self.out, "01-baseline", "t")
        with open(jpath, "a", encoding="utf-8") as f:
            f.write('{"round": 1, "row": "c1')      # killed while writing a line
        first = list(self.measured)
        self.measured.clear()
        doc = self.run_spec()
        self.assertEqual(len(first), 2)
        self.assertEqual(len(self.measured), 2)    # only the interrupted cell and the last
        self.assertFalse(set(first) & set(self.measured))
        self.assertEqual(len(doc["cells"]), 4)
        self.assertEqual(doc["resumed_cells"], 2)
        self.assertEqual({s["rounds"] for s in doc["summary"]}, {2})
        self.assertFalse(os.path.exists(jpath))   # the results hold every cell now

    def test_a_cell_that_failed_is_measured_again(self):
        real = self.fake_cell

        def failing_first(spec, arm, row, r, *rest, **kw):
            cell = real(spec, arm, row, r, *rest, **kw)
            if (r, arm.name) == (0, "a"):
                cell.update(ok=False, error="the server did not start")
            return cell
        self.fake_cell = failing_first
        self.run_spec()
        self.fake_cell = real
        self.measured.clear()
        doc = self.run_spec()
        self.assertEqual(self.measured, [(0, "c16", "a")])   # the failed one only
        self.assertTrue(all(c["ok"] for c in doc["cells"]))

    def test_a_journal_of_other_settings_is_started_over(self):
        with self.assertRaises(Interrupted):
            self.run_spec(interrupt_at=2)
        self.measured.clear()
        doc = self.run_spec(rounds=1)              # another run: nothing of the old one is kept
        self.assertEqual(len(self.measured), 2)
        self.assertEqual(doc["resumed_cells"], 0)


def part(name, calls, estimate_s=10.0, fail=False, interrupt=False):
    def run(on_cell):
        if interrupt:
            raise Interrupted()
        calls.append(name)
        return fail, []
    return bench.Part(name, ["bench.py", name], estimate_s, run)


QUIET = busy.Reading(load1=0.1, cores=2, others_pct=3.0, sample_s=2.0)
BUSY = busy.Reading(load1=3.2, cores=2, others_pct=150.0, sample_s=2.0)


class ResumeParts(unittest.TestCase):
    """cmd_reproduce over fake parts: a part done is kept, the interrupted one runs again."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "new")
        self.against = os.path.join(self.tmp.name, "committed")
        os.makedirs(self.against)
        for p in (mock.patch.dict(os.environ), mock.patch("harness.cli.write_report"),
                  mock.patch("harness.run.busy.sample", return_value=QUIET)):
            p.start()
            self.addCleanup(p.stop)
        os.environ.pop("HANDOFF_REPRODUCE_BUSY", None)

    def tearDown(self):
        self.tmp.cleanup()

    def main(self, *extra):
        os.environ.pop("HANDOFF_REPRODUCE_BUSY", None)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), mock.patch("harness.cli.needs_postgres", return_value=False):
            rc = bench.main(["bench.py", "reproduce", "--mode", "quick", "--build-dir", self.tmp.name,
                             "--out", self.out, "--against", self.against, *extra])
        return rc, err.getvalue()

    def test_a_resumed_run_keeps_the_parts_done_and_runs_the_interrupted_one_again(self):
        calls = []
        with mock.patch("harness.cli.plan", return_value=[part("A", calls), part("B", calls, interrupt=True),
                                                      part("C", calls)]):
            with self.assertRaises(Interrupted):
                self.main()
        self.assertEqual(calls, ["A"])
        with mock.patch("harness.cli.plan", return_value=[part("A", calls), part("B", calls), part("C", calls)]):
            rc, err = self.main()
        self.assertEqual(rc, 0)
        self.assertEqual(calls, ["A", "B", "C"])   # A once: the second run kept it
        self.assertIn("A: done in an earlier run, kept", err)
        self.assertRegex(err, r"reproduce \[part 2/2, cell 0/0\] C done")
        with open(os.path.join(self.out, bench.MANIFEST), encoding="utf-8") as f:
            self.assertEqual(sorted(json.load(f)["done"]), ["A", "B", "C"])

    def test_a_failed_part_is_not_done_and_runs_again(self):
        calls = []
        with mock.patch("harness.cli.plan", return_value=[part("A", calls, fail=True)]):
            self.assertEqual(self.main()[0], 1)
            self.assertEqual(self.main()[0], 1)
        self.assertEqual(calls, ["A", "A"])
        with open(os.path.join(self.out, bench.MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
        self.assertEqual((manifest["done"], manifest["failed"], len(manifest["sessions"])), ({}, ["A"], 2))

    def test_a_folder_that_is_not_fresh_is_refused(self):
        os.makedirs(self.out)
        with open(os.path.join(self.out, "server.csv"), "w", encoding="utf-8") as f:
            f.write("row,arm\n")
        rc, err = self.main()
        self.assertEqual(rc, 2)
        self.assertIn("not empty and no reproduce run started there", err)
        self.out = os.path.join(self.against, "01-baseline")   # inside the committed results
        rc, err = self.main()
        self.assertEqual(rc, 2)
        self.assertIn("is inside) the results it compares with", err)
        self.assertFalse(os.path.exists(self.out))

    def test_a_busy_machine_is_refused_and_says_why_unless_busy_ok(self):
        calls = []
        with mock.patch("harness.run.busy.sample", return_value=BUSY), \
                mock.patch("harness.cli.plan", return_value=[part("A", calls)]):
            rc, err = self.main()
            self.assertEqual((rc, calls), (2, []))
            self.assertIn("the 1-minute load average is 3.20, above 0.5 per core", err)
            self.assertIn("other processes used 150% of a core", err)
            self.assertIn("--busy-ok", err)
            rc, _ = self.main("--busy-ok")
        self.assertEqual((rc, calls), (0, ["A"]))
        with open(os.path.join(self.out, bench.MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
        kept = manifest["sessions"][-1]["busy"]
        self.assertTrue(kept["busy_ok"])
        self.assertEqual(len(kept["reasons"]), 2)
        context = bench.report_context(mock.Mock(out=self.out, against=self.against), manifest)
        self.assertTrue(any("BUSY, measured anyway with --busy-ok" in line for line in context))


class BusyReading(unittest.TestCase):
    """busy.sample from a fake /proc: the load average, and /proc/stat moved by the sleep."""

    def reading(self, load1: str, busy_jiffies_over_1s: int) -> busy.Reading:
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "loadavg"), "w", encoding="ascii") as f:
                f.write(f"{load1} 0.50 0.40 1/200 1234\n")

            def stat(busy_j):
                with open(os.path.join(root, "stat"), "w", encoding="ascii") as f:
                    f.write(f"cpu  {1000 + busy_j} 0 500 90000 10 0 0 0 0 0\n")
            stat(0)
            now = [100.0]

            def sleep(s):
                stat(busy_jiffies_over_1s)
                now[0] += s
            return busy.sample(root, sample_s=1.0, sleep=sleep, cores=2, clock=lambda: now[0])

    def test_a_quiet_machine_gives_no_reason(self):
        r = self.reading("0.20", 5)
        self.assertAlmostEqual(r.others_pct, 5 / procfs.CLK_TCK * 100)
        self.assertEqual(r.reasons(), [])

    def test_a_high_load_average_alone_is_busy(self):
        r = self.reading("1.30", 5)                # above 0.5 x 2 cores
        self.assertEqual(len(r.reasons()), 1)
        self.assertIn("load average is 1.30", r.reasons()[0])

    def test_others_cpu_over_the_sample_alone_is_busy(self):
        r = self.reading("0.20", int(procfs.CLK_TCK * 0.6))   # 60% of a core
        self.assertEqual(len(r.reasons()), 1)
        self.assertIn("other processes used 60% of a core", r.reasons()[0])


class TimeLeft(unittest.TestCase):
    def test_the_estimates_until_something_finishes_then_the_pace_measured(self):
        now = [0.0]
        p = progress.Progress(parts=2, cells=4, estimate_s=100.0, clock=lambda: now[0],
                              stream=io.StringIO())
        self.assertEqual(p.left_s(), 100.0)
        now[0] = 10.0
        self.assertEqual(p.left_s(), 90.0)         # no pace yet: the seconds spent come off
        now[0] = 40.0
        p.finished(20.0, cell=True)                # 20 estimated seconds took 40: pace 2
        self.assertEqual(p.pace(), 2.0)
        self.assertEqual(p.left_s(), 160.0)        # 80 left x 2
        now[0] = 50.0
        self.assertEqual(p.left_s(), 150.0)        # 10 s into the next piece
        self.assertIn("[part 0/2, cell 1/4] x: 50s elapsed, about 2m30s left (at 2.00x", p.line("x"))
        p.kept(30.0)                               # a cell an earlier run measured
        self.assertEqual(p.left_s(), 90.0)         # (100 - 30 - 20) x 2 - 10
        self.assertEqual(p.cells_done, 2)
        now[0] = 1000.0
        self.assertEqual(p.left_s(), 0.0)          # never below zero

    def test_a_part_without_an_estimate_is_named_and_counted_down(self):
        p = progress.Progress(parts=2, cells=0, estimate_s=0.0, unestimated=2, stream=io.StringIO())
        self.assertIn("2 part(s) with no estimate", p.line("x"))
        p.finished(None, part=True)
        self.assertIn("1 part(s) with no estimate", p.line("x"))

    def test_clock_text(self):
        self.assertEqual([progress.clock_text(s) for s in (0, 59.6, 74, 3725)],
                         ["0s", "1m00s", "1m14s", "1h02m"])


CSV_HEADER = "row,arm,p99_us_median,p99_us_min,p99_us_max,rps_median,rps_min,rps_max\n"
COMMITTED = CSV_HEADER + "c16,a,100,90,110,5000,4900,5100\nc16,b,200,190,210,4000,3900,4100\n"
# The new data: a's p99 now overlaps b's (the verdict flips), the rps ratio still above 1.
NEW = CSV_HEADER + "c16,a,180,170,195,4500,4400,4600\nc16,b,190,185,200,4000,3950,4050\n"
# The records beside them: five rounds per arm, which the verdict role pairs by round. In
# the new one a is cheaper than b in every round, but by an interval that crosses the
# margin: undecided.
ROUNDS = {
    "committed": {"a": {"p99_us": [100, 90, 110, 95, 105], "rps": [5000, 4900, 5100, 5050, 4950]},
                  "b": {"p99_us": [200, 190, 210, 195, 205], "rps": [4000, 3900, 4100, 4050, 3950]}},
    "new": {"a": {"p99_us": [180, 170, 195, 175, 185], "rps": [4500, 4400, 4600, 4550, 4450]},
            "b": {"p99_us": [190, 185, 200, 180, 192], "rps": [4000, 3950, 4050, 4020, 3980]}},
}


def record(rounds: dict) -> str:
    return json.dumps({"cells": [{"round": r, "row": "c16", "arm": arm, "ok": True,
                                  "metrics": {m: vs[r] for m, vs in metrics.items()}}
                                 for arm, metrics in rounds.items() for r in range(5)]})
NOTE = """# t

The p99 is {result}`100 µs <01-x/t.csv: p99_us_median[row=c16, arm=a]; .0f µs>`, over
{range}`01-x/t.csv: p99_us[row=c16, arm=a]; .0f µs`; a is
{verdict}`01-x/t.csv: p99_us[row=c16, arm=a] vs p99_us[row=c16, arm=b]; lower; expected=ahead; words=ahead of|level with|behind`
b, and {verdict}`01-x/t.csv: rps[row=c16, arm=a] vs rps[row=c16, arm=b]; higher; expected=ahead` on rate,
{result}`01-x/t.csv: rps_median[row=c16, arm=a] / rps_median[row=c16, arm=b]; .2f; expect>1` as fast.
b's rate is {result}`01-x/t.csv: rps_median[row=c16, arm=b]; .0f`.
A literal `` {result}`01-x/t.csv: rps_median[row=c16, arm=z]` `` is not a figure.

```
{result}`01-x/t.csv: rps_median[row=c16, arm=z]`
```
"""


class Report(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = self.tmp.name
        os.makedirs(os.path.join(root, "book", "chapters", "01-x"))
        with open(os.path.join(root, "book", "chapters", "01-x", "note.md"), "w", encoding="utf-8") as f:
            f.write(NOTE)
        for name, text in (("committed", COMMITTED), ("new", NEW)):
            os.makedirs(os.path.join(root, name, "01-x"))
            with open(os.path.join(root, name, "01-x", "t.csv"), "w", encoding="utf-8") as f:
                f.write(text)
            with open(os.path.join(root, name, "01-x", "t.json"), "w", encoding="utf-8") as f:
                f.write(record(ROUNDS[name]))
        self.rows = book_figures.compare(os.path.join(root, "committed"), os.path.join(root, "new"),
                                         repo_root=os.path.join(root, "book"))

    def tearDown(self):
        self.tmp.cleanup()

    def test_every_figure_is_read_from_both_and_the_one_verdict_that_flips_is_named(self):
        self.assertEqual([(r.use.line, r.use.role) for r in self.rows],
                         [(3, "result"), (4, "range"), (5, "verdict"), (6, "verdict"), (7, "result"),
                          (8, "result")])
        p99, p99_range, flip, holds, ratio, rate = self.rows
        # The title form: the text the sentence carries, then its source.
        self.assertEqual((p99.use.title, p99.use.text), ("100 µs", "01-x/t.csv: p99_us_median[row=c16, arm=a]; .0f µs"))
        self.assertEqual((p99.old.value, p99.old.range), ("100\u00a0µs", "90–110\u00a0µs"))
        self.assertEqual((p99.new.value, p99.new.range), ("180\u00a0µs", "170–195\u00a0µs"))
        self.assertEqual(p99.status(), "changed, outside the committed range")
        self.assertEqual(p99_range.status(), "changed, outside the committed range")
        self.assertEqual((rate.old.value, rate.new.value), ("4000", "4000"))
        self.assertEqual(rate.status(), "changed, within the committed range")  # its range moved
        self.assertEqual((flip.old.value, flip.new.value, flip.new.claim), ("ahead", "undecided", "ahead"))
        self.assertEqual([r.use.line for r in self.rows if r.flips()], [5])
        self.assertEqual(flip.status(), "FLIPS: the sentence says ahead, the new data says undecided")
        self.assertEqual((holds.old.value, holds.new.value, holds.status()), ("ahead", "ahead", "same"))
        self.assertEqual((ratio.old.holds, ratio.new.holds, ratio.new.value), (True, True, "1.12"))
        self.assertEqual(ratio.status(), "changed, still holds")   # a ratio has no range
        text = book_figures.render(self.rows, ["context line"])
        flips = text.split("## Claims that flip")[1].split("##")[0]
        self.assertIn("note.md:5: FLIPS", flips)
        self.assertEqual(flips.count("FLIPS"), 1)
        self.assertIn("- context line", text)
        # The marks the book built from the new folder shows, listed with the rule's reading.
        marks = text.split("## Sentences the book marks")[1].split("\n## ")[0]
        # As the book shows it: the sentence's phrase (words=), not the bare word.
        self.assertIn("note.md:5: the book's machine: ahead of; yours: undecided (undecided: a/b", marks)
        self.assertIn("note.md:3: the book's machine: 100 µs; yours: 180 µs", marks)
        self.assertNotIn("note.md:6:", marks)      # the rate verdict holds: no mark

    def test_a_file_missing_from_the_new_results_is_not_read_not_a_flip(self):
        os.unlink(os.path.join(self.tmp.name, "new", "01-x", "t.csv"))
        rows = book_figures.compare(os.path.join(self.tmp.name, "committed"),
                                    os.path.join(self.tmp.name, "new"),
                                    repo_root=os.path.join(self.tmp.name, "book"))
        self.assertFalse(any(r.flips() for r in rows))
        self.assertTrue(all(r.status().startswith("not read: results file") for r in rows))


if __name__ == "__main__":
    unittest.main()
