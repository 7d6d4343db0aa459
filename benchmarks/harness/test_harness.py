"""harness/test_harness: unit tests of the harness's own logic (chapter 01).
Changed in chapters 03, 05: the counter columns of chapters 03 and 05.

Role: the arithmetic and bookkeeping the book's tables rest on, checked without
starting a server: verdicts and medians, CPU (schedstat nanoseconds, or ticks when
schedstat is absent) and sleeps from a fake /proc tree, the stage's /stats counters
turned into per-request columns, the rotation of arms, spec checking (including the
refusal of non-loopback targets), the parsing of both clients' reports, the CSV a
results-table renders, the refusal of a full-mode run on a dirty tree, the records
runner's CSV flattening and its handling of a tool not built or a report that is not
whole (with a stand-in tool), the stall view (each run's max, the runs past stall_us, a
stalled run's slowest raw samples kept bounded), and the loop profile's reading of `perf script` (a canned
text), its categories and reduction, and its refusal to write anything without perf. Run by
CTest (label `unit`) as `/usr/bin/python3 -m unittest -v test_harness`.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import glob
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

from harness import cli as bench
from harness.records import failover
from harness.records import loop_peers
from harness.records import loop_profile  # the harness's perf profile of the loop
from harness.records import panel
from harness.records import tools as records
from harness.results import report
from harness.results import summary as sm
from harness.run import clients
from harness.run import peers
from harness.run import postgres
from harness.run import procfs
from harness.run import runner
from harness.run import servers
from harness.run import serverstats
from harness.run import specfile
from harness.run import stalls

TCK = procfs.CLK_TCK


def stat_line(pid: int, comm: str, utime: int, stime: int, ppid: int = 1) -> str:
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    # utime stime cutime cstime ...
    return (f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 100 0 0 0 "
            f"{utime} {stime} 0 0 20 0 1 0 100 1000 100 0\n")


class FakeProc:
    """A /proc tree in a temporary directory: processes, their threads, /proc/stat."""

    def __init__(self) -> None:
        self.root = tempfile.mkdtemp(prefix="fakeproc-")

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def process(self, pid: int, comm: str, ticks: tuple[int, int], ppid: int = 1) -> None:
        os.makedirs(f"{self.root}/{pid}/task", exist_ok=True)
        with open(f"{self.root}/{pid}/stat", "w") as f:
            f.write(stat_line(pid, comm, *ticks, ppid=ppid))

    def thread(self, pid: int, tid: int, comm: str, utime: int, stime: int,
               ns: int | None = None, voluntary: int | None = None,
               involuntary: int = 7) -> None:
        """A thread; `ns` writes its schedstat, `voluntary` (and `involuntary`) its status
        (each file is absent when its value is None, as on a kernel without them)."""
        d = f"{self.root}/{pid}/task/{tid}"
        os.makedirs(d, exist_ok=True)
        with open(f"{d}/stat", "w") as f:
            f.write(stat_line(tid, comm, utime, stime, ppid=1))
        with open(f"{d}/comm", "w") as f:
            f.write(comm + "\n")
        if ns is not None:
            with open(f"{d}/schedstat", "w") as f:
                f.write(f"{ns} 123456 789\n")
        if voluntary is not None:
            with open(f"{d}/status", "w") as f:
                f.write(f"Name:\t{comm}\nState:\tS (sleeping)\n"
                        f"voluntary_ctxt_switches:\t{voluntary}\n"
                        f"nonvoluntary_ctxt_switches:\t{involuntary}\n")

    def drop_thread(self, pid: int, tid: int) -> None:
        shutil.rmtree(f"{self.root}/{pid}/task/{tid}")

    def machine(self, user: int, system: int, idle: int, steal: int = 0) -> None:
        with open(f"{self.root}/stat", "w") as f:
            f.write(f"cpu  {user} 0 {system} {idle} 0 0 0 {steal} 0 0\n"
                    f"cpu0 {user} 0 {system} {idle} 0 0 0 {steal} 0 0\n")


class ParseStat(unittest.TestCase):
    def test_comm_with_spaces_and_parentheses_does_not_shift_fields(self):
        st = procfs.parse_stat(stat_line(42, "a) b (c", 7, 3, ppid=9))
        self.assertEqual((st.comm, st.ppid, st.utime, st.stime, st.ticks),
                         ("a) b (c", 9, 7, 3, 10))

    def test_roles_from_thread_names(self):
        plain = procfs.Target(10)
        self.assertEqual(procfs.role_of("loop-0", 11, plain), "loop")
        self.assertEqual(procfs.role_of("pool-0-1", 12, plain), "pool")
        self.assertEqual(procfs.role_of("floor-0", 13, plain), "floor")
        self.assertEqual(procfs.role_of("handoff-01", 10, plain), "other")
        self.assertEqual(procfs.role_of("loopy", 14, plain), "other")
        self.assertEqual(procfs.role_of("nginx", 20, procfs.Target(20, process_role="worker")),
                         "worker")
        self.assertEqual(procfs.role_of("epoll-floor", 30, procfs.Target(30, main_role="floor")),
                         "floor")
        self.assertEqual(procfs.role_of("epoll-floor", 31, procfs.Target(30, main_role="floor")),
                         "other")

    def test_schedstat_gives_nanoseconds_on_cpu_and_status_gives_voluntary_switches(self):
        self.assertEqual(procfs.parse_schedstat("30278138 41882356 124\n"), 30278138)
        status = ("Name:\tloop-0\nvoluntary_ctxt_switches:\t99\n"
                  "nonvoluntary_ctxt_switches:\t25\n")
        self.assertEqual(procfs.parse_context_switches(status), 99)
        self.assertIsNone(procfs.parse_context_switches("Name:\tx\n"))

    def test_this_kernel_has_schedstat_for_a_thread(self):
        # The harness's CPU columns rest on it; on a kernel without it they fall back to
        # ticks and record so (see the fallback test below).
        with open(f"/proc/self/task/{os.getpid()}/schedstat") as f:
            self.assertGreater(procfs.parse_schedstat(f.read()), 0)


class CpuAccounting(unittest.TestCase):
    def setUp(self):
        self.p = FakeProc()

    def tearDown(self):
        self.p.close()

    def test_per_role_cpu_over_a_window_with_a_thread_born_and_one_gone(self):
        p = self.p
        p.process(100, "handoff-01", (50, 50))
        p.thread(100, 100, "handoff-01", 10, 5)
        p.thread(100, 101, "loop-0", 100, 50)
        p.thread(100, 102, "pool-0-0", 20, 20)
        p.thread(100, 103, "pool-0-1", 1, 1)
        target = [procfs.Target(100)]
        before = procfs.snapshot(target, root=p.root)
        self.assertEqual(len(before.threads), 4)
        # In the window: loop +30 ticks, pool-0-0 +10, pool-0-1 exits, pool-0-2 is born
        # with 4, main unchanged; the whole process moved by 60.
        p.process(100, "handoff-01", (80, 80))
        p.thread(100, 101, "loop-0", 120, 60)
        p.thread(100, 102, "pool-0-0", 25, 25)
        p.drop_thread(100, 103)
        p.thread(100, 104, "pool-0-2", 3, 1)
        after = procfs.snapshot(target, root=p.root)
        d = procfs.delta(before, after)
        us = 1e6 / TCK
        self.assertAlmostEqual(d.per_role_us["loop"], 30 * us)
        self.assertAlmostEqual(d.per_role_us["pool"], 14 * us)
        self.assertAlmostEqual(d.per_role_us["other"], 0.0)
        self.assertEqual(d.process_ticks, 60)
        self.assertEqual(d.lost_threads, 1)
        self.assertAlmostEqual(procfs.group_us(d.per_role_us, procfs.LOOP_ROLES), 30 * us)
        self.assertIsNone(procfs.group_us({"loop": 1.0}, procfs.POOL_ROLES))

    def test_nanosecond_cpu_and_sleeps_per_role_over_a_window(self):
        p = self.p
        p.process(100, "handoff-02", (0, 0))
        p.thread(100, 100, "handoff-02", 0, 0, ns=1_000, voluntary=1)
        p.thread(100, 101, "loop-0", 0, 0, ns=5_000_000, voluntary=10)
        p.thread(100, 102, "pool-0-0", 0, 0, ns=2_000_000, voluntary=20)
        target = [procfs.Target(100)]
        before = procfs.snapshot(target, root=p.root)
        self.assertEqual(before.cpu_source, procfs.SOURCE_SCHEDSTAT)
        # In the window: the loop runs 1.234567 ms and sleeps 300 times, the pool thread
        # runs 0.5 ms and sleeps 1000 times; no tick moves (far below 10 ms), so only a
        # nanosecond source sees any of it.
        p.thread(100, 101, "loop-0", 0, 0, ns=6_234_567, voluntary=310)
        p.thread(100, 102, "pool-0-0", 0, 0, ns=2_500_000, voluntary=1020)
        d = procfs.delta(before, procfs.snapshot(target, root=p.root))
        self.assertEqual(d.cpu_source, procfs.SOURCE_SCHEDSTAT)
        self.assertAlmostEqual(d.per_role_us["loop"], 1234.567)
        self.assertAlmostEqual(d.per_role_us["pool"], 500.0)
        self.assertAlmostEqual(d.threads_us, 1734.567)
        self.assertEqual(d.per_role_sleeps, {"other": 0, "loop": 300, "pool": 1000})
        self.assertEqual(d.process_ticks, 0)

    def test_preemptions_are_the_involuntary_switches_in_the_window_per_role(self):
        p = self.p
        p.process(100, "handoff-06", (0, 0))
        p.thread(100, 101, "loop-0", 0, 0, ns=1_000, voluntary=10, involuntary=4)
        p.thread(100, 102, "pool-0-0", 0, 0, ns=1_000, voluntary=20, involuntary=9)
        target = [procfs.Target(100)]
        before = procfs.snapshot(target, root=p.root)
        p.thread(100, 101, "loop-0", 0, 0, ns=2_000, voluntary=15, involuntary=54)
        p.thread(100, 102, "pool-0-0", 0, 0, ns=2_000, voluntary=20, involuntary=9)
        d = procfs.delta(before, procfs.snapshot(target, root=p.root))
        self.assertEqual(d.per_role_preemptions, {"loop": 50, "pool": 0})
        self.assertEqual(d.per_role_sleeps["loop"], 5)
        m = sm.cell_metrics(requests=100, rps=100.0, latency_us={}, errors_total=0,
                            cpu=d, client_ticks=0, window_s=1.0, busy_pct=0.0)
        self.assertAlmostEqual(m["loop_preemptions_per_req"], 0.5)

    def test_without_schedstat_cpu_falls_back_to_ticks_and_says_so(self):
        p = self.p
        p.process(100, "handoff-01", (0, 0))
        p.thread(100, 101, "loop-0", 100, 50)
        before = procfs.snapshot([procfs.Target(100)], root=p.root)
        p.thread(100, 101, "loop-0", 110, 50)
        d = procfs.delta(before, procfs.snapshot([procfs.Target(100)], root=p.root))
        self.assertEqual(d.cpu_source, procfs.SOURCE_TICKS)
        self.assertAlmostEqual(d.per_role_us["loop"], 10 * 1e6 / TCK)
        self.assertEqual(d.per_role_sleeps, {})   # no status: unknown, not zero

    def test_the_kernel_share_is_stime_over_the_window_ticks_of_the_roles_asked(self):
        p = self.p
        p.process(100, "handoff-06", (0, 0))
        p.thread(100, 101, "loop-0", 100, 50, ns=1_500_000_000)
        p.thread(100, 102, "pool-0-0", 10, 10, ns=200_000_000)
        target = [procfs.Target(100)]
        before = procfs.snapshot(target, root=p.root)
        # In the window: the loop takes 30 user ticks and 10 kernel ticks, the pool
        # thread 5 and 15; the ticks before the window count for nothing.
        p.thread(100, 101, "loop-0", 130, 60, ns=1_900_000_000)
        p.thread(100, 102, "pool-0-0", 15, 25, ns=400_000_000)
        d = procfs.delta(before, procfs.snapshot(target, root=p.root))
        self.assertEqual(d.per_role_preemptions, {})  # no status: unknown, not zero
        self.assertAlmostEqual(d.kernel_share(procfs.LOOP_ROLES), 0.25)
        self.assertAlmostEqual(d.kernel_share(procfs.POOL_ROLES), 0.75)
        self.assertIsNone(d.kernel_share(procfs.BALANCER_ROLES))
        m = sm.cell_metrics(requests=1000, rps=1000.0, latency_us={}, errors_total=0,
                            cpu=d, client_ticks=0, window_s=1.0, busy_pct=0.0)
        self.assertAlmostEqual(m["loop_us_per_req"], 400.0)
        self.assertAlmostEqual(m["loop_kernel_us_per_req"], 100.0)

    def test_nginx_workers_are_found_as_children_and_sampled_as_worker(self):
        p = self.p
        p.process(200, "nginx", (1, 1))
        p.thread(200, 200, "nginx", 1, 1)
        p.process(201, "nginx", (10, 0), ppid=200)
        p.thread(201, 201, "nginx", 10, 0)
        p.process(300, "bash", (0, 0), ppid=1)
        self.assertEqual(procfs.children_of(200, root=p.root), [201])
        snap = procfs.snapshot([procfs.Target(200, process_role="master"),
                                procfs.Target(201, process_role="worker")], root=p.root)
        roles = sorted(t.role for t in snap.threads.values())
        self.assertEqual(roles, ["master", "worker"])

    def test_machine_busy_counts_steal_and_subtracts_what_was_accounted(self):
        p = self.p
        p.machine(user=1000, system=500, idle=5000, steal=0)
        m0 = procfs.machine_times(root=p.root)
        # Over a 2 s window: 300 busy jiffies (incl. 20 steal), of which the arm and the
        # client took 250; the other 50 over 2 s is 25 jiffies/s = 25% of one core.
        p.machine(user=1200, system=580, idle=5100, steal=20)
        m1 = procfs.machine_times(root=p.root)
        self.assertEqual(m1.busy - m0.busy, 300)
        pct = procfs.other_busy_pct(m0, m1, accounted_ticks=250, window_s=2.0)
        self.assertAlmostEqual(pct, 50 / (2.0 * TCK) * 100)
        self.assertEqual(procfs.other_busy_pct(m0, m1, accounted_ticks=400, window_s=2.0), 0.0)


class Metrics(unittest.TestCase):
    def cpu(self, roles: dict[str, float], process_us: float,
            sleeps: dict[str, int] | None = None) -> procfs.CpuDelta:
        return procfs.CpuDelta([], roles, int(round(process_us * TCK / 1e6)), 0,
                               sleeps or {})

    def test_cell_metrics_divide_cpu_by_requests_and_leave_absent_roles_empty(self):
        m = sm.cell_metrics(requests=100_000, rps=50_000.0,
                            latency_us={"p50": 100, "p99": 900},
                            errors_total=0,
                            cpu=self.cpu({"loop": 800_000.0, "other": 200_000.0}, 1_000_000.0),
                            client_ticks=TCK, window_s=2.0, busy_pct=3.0)
        self.assertAlmostEqual(m["loop_us_per_req"], 8.0)
        self.assertIsNone(m["pool_us_per_req"])
        self.assertIsNone(m["pool_cpu_pct"])
        self.assertAlmostEqual(m["loop_cpu_pct"], 40.0)
        self.assertAlmostEqual(m["server_us_per_req"], 10.0)
        self.assertAlmostEqual(m["client_us_per_req"], 10.0)
        self.assertEqual((m["p50_us"], m["p99_us"], m["p99_9_us"]), (100, 900, None))

    def test_server_cpu_is_the_threads_nanosecond_sum_not_the_process_ticks(self):
        # 1.5 ms over 1000 requests, while the whole-process ticks moved by nothing.
        m = sm.cell_metrics(requests=1000, rps=500.0, latency_us={}, errors_total=0,
                            cpu=self.cpu({"loop": 1000.0, "pool": 500.0}, 0.0),
                            client_ticks=0, window_s=2.0, busy_pct=0.0)
        self.assertAlmostEqual(m["server_us_per_req"], 1.5)

    def test_sleeps_and_counters_become_per_request_columns(self):
        counters = {"loop": {"loop_waits": 500, "loop_polls": 250, "syscalls": 4000,
                             "wakes_sent": 100, "age_wakes": 30},
                    "pool": {"parks": 300, "spin_catches": 700, "completion_pokes": 200,
                             "syscalls": 1000, "wakes_sent": 0, "handoff_sends": 1000,
                             "handoff_recvs": 1200, "stolen_pokes": 40, "chained_wakes": 60}}
        m = sm.cell_metrics(requests=1000, rps=500.0, latency_us={}, errors_total=0,
                            cpu=self.cpu({"loop": 1.0, "pool": 1.0}, 0.0,
                                         sleeps={"loop": 400, "pool": 350, "other": 2}),
                            client_ticks=0, window_s=2.0, busy_pct=0.0, counters=counters)
        self.assertAlmostEqual(m["loop_sleeps_per_req"], 0.4)
        self.assertAlmostEqual(m["pool_sleeps_per_req"], 0.35)
        self.assertAlmostEqual(m["server_sleeps_per_req"], 0.752)
        self.assertAlmostEqual(m["parks_per_req"], 0.3)
        self.assertAlmostEqual(m["wakes_sent_per_req"], 0.1)
        self.assertAlmostEqual(m["spin_catches_per_req"], 0.7)
        self.assertAlmostEqual(m["completion_pokes_per_req"], 0.2)
        self.assertAlmostEqual(m["loop_blocking_waits_per_req"], 0.5)
        self.assertAlmostEqual(m["loop_polls_per_req"], 0.25)
        self.assertAlmostEqual(m["loop_syscalls_per_req"], 4.0)
        self.assertAlmostEqual(m["pool_syscalls_per_req"], 1.0)
        self.assertAlmostEqual(m["handoff_syscalls_per_req"], 2.2)
        # Chapter 03's: the pool counts stolen pokes and chained wakes, the loop age wakes.
        self.assertAlmostEqual(m["stolen_pokes_per_req"], 0.04)
        self.assertAlmostEqual(m["chained_wakes_per_req"], 0.06)
        self.assertAlmostEqual(m["age_wakes_per_req"], 0.03)

    def test_a_peer_has_sleeps_but_no_counters_and_an_inline_arm_no_pool_counters(self):
        peer = sm.cell_metrics(requests=10, rps=5.0, latency_us={}, errors_total=0,
                               cpu=self.cpu({"worker": 1.0}, 0.0, sleeps={"worker": 5}),
                               client_ticks=0, window_s=2.0, busy_pct=0.0, counters=None)
        self.assertAlmostEqual(peer["loop_sleeps_per_req"], 0.5)
        self.assertIsNone(peer["pool_sleeps_per_req"])
        for metric in sm.COUNTER_METRICS:
            self.assertIsNone(peer[metric], metric)
        inline = sm.cell_metrics(requests=10, rps=5.0, latency_us={}, errors_total=0,
                                 cpu=self.cpu({"loop": 1.0}, 0.0, sleeps={"loop": 5}),
                                 client_ticks=0, window_s=2.0, busy_pct=0.0,
                                 counters={"loop": {"loop_waits": 3, "syscalls": 40}})
        self.assertAlmostEqual(inline["loop_blocking_waits_per_req"], 0.3)
        self.assertAlmostEqual(inline["loop_syscalls_per_req"], 4.0)
        self.assertIsNone(inline["parks_per_req"])
        self.assertIsNone(inline["age_wakes_per_req"])
        self.assertIsNone(inline["pool_syscalls_per_req"])

    def test_stack_lock_counters_are_the_loops_per_request_columns(self):
        # Chapter 05: each worker's loop counts its own sends' and unlocks' dealings with the
        # stack lock; only the loops' counts are summed (a pool thread's would be ignored).
        counters = {"loop": {"stack_lock_contends": 50, "stack_deferred_work": 900,
                             "stack_lock_wakes": 37, "stack_pool_empty_sends": 48,
                             "stack_lock_handoffs": 2},
                    "pool": {"stack_lock_contends": 1000, "stack_deferred_work": 1000}}
        m = sm.cell_metrics(requests=1000, rps=500.0, latency_us={"max": 850_000.0},
                            errors_total=0, cpu=self.cpu({"loop": 1.0, "pool": 1.0}, 0.0),
                            client_ticks=0, window_s=2.0, busy_pct=0.0, counters=counters)
        self.assertAlmostEqual(m["stack_contends_per_req"], 0.05)
        self.assertAlmostEqual(m["stack_deferred_per_req"], 0.9)
        self.assertAlmostEqual(m["stack_wakes_per_req"], 0.037)
        self.assertAlmostEqual(m["stack_pool_empty_per_req"], 0.048)
        self.assertAlmostEqual(m["stack_handoffs_per_req"], 0.002)
        self.assertEqual(m["max_us"], 850_000.0)
        # An older stage's /stats lacks them: zero, not missing, while its loops exist.
        old = sm.cell_metrics(requests=10, rps=5.0, latency_us={}, errors_total=0,
                              cpu=self.cpu({"loop": 1.0}, 0.0), client_ticks=0, window_s=2.0,
                              busy_pct=0.0, counters={"loop": {"loop_waits": 3}})
        self.assertEqual(old["stack_deferred_per_req"], 0.0)
        for metric in ("max_us", "stack_contends_per_req", "stack_deferred_per_req",
                       "stack_wakes_per_req", "stack_pool_empty_per_req",
                       "stack_handoffs_per_req"):
            self.assertIn(metric, sm.CSV_METRICS)
            self.assertIn(metric, sm.METRICS)

    def test_every_counter_metric_is_a_csv_column_and_names_a_counter_the_stage_has(self):
        names = set(self._counter_names())
        for metric, (counters, role, _) in sm.COUNTER_METRICS.items():
            with self.subTest(metric):
                self.assertIn(metric, sm.CSV_METRICS)
                self.assertLessEqual(set(counters), names)
                self.assertIn(role, ("loop", "pool"))

    @staticmethod
    def _counter_names() -> list[str]:
        # The names code/stats/thread_stats.cpp gives its counters (what /stats serves).
        src = os.path.join(HERE, "..", "..", "code", "stats", "thread_stats.cpp")
        with open(src, encoding="utf-8") as f:
            return re.findall(r'return "(\w+)";', f.read())

    def test_pool_percent_is_of_the_window_and_may_exceed_one_core(self):
        m = sm.cell_metrics(requests=10, rps=5.0, latency_us={}, errors_total=0,
                            cpu=self.cpu({"loop": 1e6, "pool": 3e6}, 4e6),
                            client_ticks=0, window_s=2.0, busy_pct=0.0)
        self.assertAlmostEqual(m["pool_cpu_pct"], 150.0)
        self.assertAlmostEqual(m["pool_us_per_req"], 300_000.0)


class Verdicts(unittest.TestCase):
    def test_median_and_range_over_rounds_skip_missing_values(self):
        r = sm.over_rounds([5.0, None, 1.0, 3.0, 4.0])
        self.assertEqual((r.median, r.lo, r.hi, r.n), (3.5, 1.0, 5.0, 4))
        self.assertIsNone(sm.over_rounds([None, None]))
        self.assertEqual(sm.over_rounds([2.0, 9.0, 4.0]).median, 4.0)

    def _cells(self):
        cells = []
        for r, (a_us, b_us) in enumerate([(5, 9), (6, 10), (5.5, 11), (5, 9.5), (6, 10.5)]):
            for arm, us in (("ring", a_us), ("dgram", b_us)):
                metrics = {m: None for m in sm.METRICS}
                metrics.update(loop_us_per_req=us, rps=1000.0 + r, errors=0.0,
                               busy_pct=40.0 if (arm, r) == ("ring", 1) else 1.0)
                cells.append({"round": r, "row": "c16", "arm": arm, "ok": True,
                              "metrics": metrics})
        cells.append({"round": 5, "row": "c16", "arm": "ring", "ok": False,
                      "error": "boom", "metrics": {}})
        return cells

    def test_summary_and_comparison_of_two_arms(self):
        summ = sm.summarize(self._cells(), ["c16"], ["ring", "dgram"], busy_threshold_pct=25)
        ring = summ[("c16", "ring")]
        self.assertEqual((ring["rounds"], ring["failed_rounds"], ring["busy_rounds"]), (5, 1, 1))
        self.assertEqual(ring["metrics"]["loop_us_per_req"].median, 5.5)
        cmp = specfile.Compare("ring", "dgram", "arms", ("loop_us_per_req", "rps"))
        out = sm.compare(summ, [cmp], ["c16"], ["ring", "dgram"], {}, self._cells())
        by_metric = {c["metric"]: c for c in out}
        self.assertEqual(by_metric["loop_us_per_req"]["verdict"], "ahead")
        self.assertAlmostEqual(by_metric["loop_us_per_req"]["ratio"], 5.5 / 10)
        # Equal rates in every round: level inside the default ±5%.
        self.assertEqual(by_metric["rps"]["verdict"], "level")
        self.assertTrue(by_metric["rps"]["verdict_text"].startswith("level: a/b 1.000"))

    def test_pool_least_share_is_the_idlest_pool_thread_over_the_busiest(self):
        counters = {"per_thread": [
            {"name": "loop-0", "role": "loop", "counters": {"requests": 4000}},
            {"name": "pool-0-0", "role": "pool", "counters": {"requests": 1800}},
            {"name": "pool-0-1", "role": "pool", "counters": {"requests": 900}},
            {"name": "pool-0-2", "role": "pool", "counters": {"requests": 1500}}]}
        self.assertAlmostEqual(sm.pool_least_share(counters), 0.5)
        self.assertIsNone(sm.pool_least_share(None))                       # a peer
        self.assertIsNone(sm.pool_least_share({"per_thread": counters["per_thread"][:1]}))
        # A record measured before the metric existed gets it from its counters; a cell
        # that has it keeps its own.
        old = {"ok": True, "server_counters": counters, "metrics": {"rps": 1.0}}
        self.assertAlmostEqual(sm.with_counter_shares(old)["metrics"]["pool_least_share"], 0.5)
        kept = {"ok": True, "server_counters": counters, "metrics": {"pool_least_share": 0.9}}
        self.assertEqual(sm.with_counter_shares(kept)["metrics"]["pool_least_share"], 0.9)

    def test_verdict_reads_each_round_where_the_ranges_overlap(self):
        # A host that drifts between rounds: every round a beats b by a tenth, but the slow
        # rounds put a's range across b's. The ranges overlap; the paired rounds say ahead.
        cells = []
        for r, scale in enumerate([1.0, 1.6, 1.0, 1.5, 1.0]):
            for arm, us in (("a", 4.5 * scale), ("b", 5.0 * scale)):
                metrics = {m: None for m in sm.METRICS}
                metrics.update(server_us_per_req=us, errors=0.0, busy_pct=1.0)
                cells.append({"round": r, "row": "c16", "arm": arm, "ok": True,
                              "metrics": metrics})
        summ = sm.summarize(cells, ["c16"], ["a", "b"], busy_threshold_pct=25)
        a, b = summ[("c16", "a")]["metrics"]["server_us_per_req"], summ[("c16", "b")]["metrics"]["server_us_per_req"]
        self.assertTrue(a.hi > b.lo)            # the ranges overlap
        cmp = specfile.Compare("a", "b", "arms", ("server_us_per_req",))
        (out,) = sm.compare(summ, [cmp], ["c16"], ["a", "b"], {}, cells)
        self.assertEqual(out["verdict"], "ahead")
        self.assertAlmostEqual(out["paired_ratio"]["max"], 0.9)
        # The spec's margin is the one applied: with ±20% a tenth is no difference worth naming.
        (wide,) = sm.compare(summ, [cmp], ["c16"], ["a", "b"], {"server_us_per_req": 0.2}, cells)
        self.assertEqual(wide["verdict"], "level")

    def test_csv_puts_the_verdict_on_the_first_arms_line(self):
        spec = specfile.parse(MINIMAL.replace('compare = [["b", "a"]]',
                                              'compare = [["ring", "dgram"]]')
                              .replace('"a"', '"ring"').replace('"b"', '"dgram"'))
        summ = sm.summarize(self._cells(), ["c16"], ["ring", "dgram"], 25)
        comparisons = sm.compare(summ, spec.compares, ["c16"], ["ring", "dgram"], spec.margins,
                                 self._cells())
        buf = io.StringIO()
        header = report.csv_header(spec.compares)
        w = csv.DictWriter(buf, fieldnames=header, restval="")
        w.writeheader()
        for line in report.csv_rows(spec, summ, comparisons):
            w.writerow(line)
        rows = list(csv.DictReader(io.StringIO(buf.getvalue())))
        col = sm.verdict_column("loop_us_per_req", "dgram")
        self.assertEqual([(r["arm"], r[col]) for r in rows], [("ring", "ahead"), ("dgram", "")])
        self.assertEqual(rows[0]["loop_us_per_req_median"], "5.50")
        self.assertEqual(rows[0]["pool_us_per_req_median"], "")


class Stalls(unittest.TestCase):
    """Seed 004's stall view: every run's max, the runs past stall_us, and a stalled run's
    slowest raw samples kept small."""

    def _cells(self, maxima):
        cells = []
        for r, mx in enumerate(maxima):
            metrics = {m: None for m in sm.METRICS}
            metrics.update(rps=1000.0, errors=0.0, busy_pct=0.0, p50_us=40.0 + r, max_us=mx)
            cells.append({"round": r, "order": 0, "row": "closed32", "arm": "pool-shared",
                          "ok": True, "metrics": metrics})
        return cells

    def test_stall_runs_count_the_maxima_past_the_threshold_and_list_every_run(self):
        # Rounds out of order, as cells come back; a failed round is neither.
        cells = self._cells([300_000.0, 150.0, 10_000.0, 578_000.0, 210.0])
        cells.reverse()
        cells.append({"round": 5, "row": "closed32", "arm": "pool-shared", "ok": False,
                      "error": "boom", "metrics": {}})
        summ = sm.summarize(cells, ["closed32"], ["pool-shared"], 25)
        s = summ[("closed32", "pool-shared")]
        self.assertEqual(s["stall_runs"], 2)          # 10 ms itself is not past 10 ms
        self.assertEqual(s["max_us_runs"], [300_000.0, 150.0, 10_000.0, 578_000.0, 210.0])
        # The medians with their ranges stay as they were.
        self.assertEqual(s["metrics"]["max_us"].as_dict(),
                         {"median": 10_000.0, "min": 150.0, "max": 578_000.0, "n": 5})
        self.assertEqual(s["metrics"]["p50_us"].median, 42.0)
        tight = sm.summarize(cells, ["closed32"], ["pool-shared"], 25, stall_us=200.0)
        self.assertEqual(tight[("closed32", "pool-shared")]["stall_runs"], 4)

    def test_the_csv_has_the_max_the_stall_count_and_each_runs_max(self):
        spec = specfile.parse(MINIMAL.replace('"a"', '"pool-shared"').replace('"b"', '"x"')
                              .replace('"c16"', '"closed32"'))
        summ = sm.summarize(self._cells([300_000.0, 150.0, 20_000.0]), ["closed32"],
                            ["pool-shared"], 25)
        lines = report.csv_rows(spec, summ, [])
        header = report.csv_header([])
        for col in ("max_us_median", "max_us_min", "max_us_max", "stall_runs", "max_us_runs",
                    "stack_deferred_per_req_median", "stack_handoffs_per_req_max"):
            self.assertIn(col, header)
        line = lines[0]
        self.assertEqual((line["max_us_median"], line["max_us_min"], line["max_us_max"]),
                         ("20000", "150", "300000"))
        self.assertEqual(line["stall_runs"], 2)
        self.assertEqual(line["max_us_runs"], "300000 150 20000")

    def test_the_runs_csv_has_a_line_per_run_with_its_max_and_whether_it_stalled(self):
        cells = self._cells([300_000.0, 150.0])
        cells[0]["stall_samples"] = {"file": "stack-stalls/r0-closed32-pool-shared.csv"}
        cells.append({"round": 2, "order": 1, "row": "closed32", "arm": "pool-shared",
                      "ok": False, "error": "loadgen exited with 3: x\ny", "metrics": {}})
        lines = report.runs_rows(cells)
        self.assertEqual(set().union(*lines) - set(report.RUNS_HEADER), set())
        self.assertEqual([(l["round"], l["max_us"], l.get("stall")) for l in lines],
                         [(0, "300000", 1), (1, "150", 0), (2, "", None)])
        self.assertEqual(lines[0]["stall_samples"], "stack-stalls/r0-closed32-pool-shared.csv")
        self.assertEqual(lines[2]["error"], "loadgen exited with 3: x")

    def _samples(self, path, n):
        # A run of n samples at 10 µs apart with 100 µs latencies, and a stall: 8
        # connections' samples sent between 1000 and 1800 µs end together at 900,000 µs.
        with open(path, "w", encoding="utf-8") as f:
            f.write(",".join(stalls.COLUMNS) + "\n")
            for i in range(n):
                send = 10.0 * i
                conn = i % 32
                latency = 900_000.0 - send if 1000 <= send < 1800 and conn < 8 else 100.0 + i % 7
                f.write(f"{send:.3f},{send:.3f},{latency:.3f},{conn},200\n")

    def test_a_stalled_runs_slowest_samples_are_kept_in_send_order_and_bounded(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "measured-samples.csv")
            self._samples(src, 20_000)
            dest = os.path.join(d, "out", "stack-stalls", "r0-closed32-pool-shared.csv")
            info = stalls.keep(src, dest, stall_us=10_000.0, limit=100)
            with open(dest, encoding="utf-8") as f:
                kept = list(csv.DictReader(f))
        self.assertEqual((info["samples"], info["kept"], len(kept)), (20_000, 100, 100))
        self.assertEqual((info["over_stall_us"], info["over_connections"]), (20, 8))
        self.assertEqual(info["over_first_send_us"], 1000.0)
        self.assertEqual(info["over_last_end_us"], 900_000.0)
        self.assertEqual(info["worst_us"], 899_000.0)
        sends = [float(k["send_time_us"]) for k in kept]
        self.assertEqual(sends, sorted(sends))
        # The 20 stalled samples are all there; the rest are the slowest of the ordinary.
        self.assertEqual(sum(1 for k in kept if float(k["latency_us"]) > 10_000), 20)
        self.assertTrue(all(float(k["latency_us"]) >= 105.0 for k in kept))

    def test_a_file_that_is_not_loadgens_samples_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "x.csv")
            with open(src, "w", encoding="utf-8") as f:
                f.write("a,b\n1,2\n")
            with self.assertRaises(stalls.SamplesError):
                stalls.keep(src, os.path.join(d, "y.csv"), 10_000.0)

    def test_the_header_is_the_one_loadgen_writes(self):
        src = os.path.join(HERE, "..", "loadgen", "report.cpp")
        with open(src, encoding="utf-8") as f:
            self.assertIn('"' + ",".join(stalls.COLUMNS) + '\\n"', f.read())

    def test_loadgen_is_asked_for_raw_samples_only_when_the_spec_keeps_them(self):
        row = specfile.Row("r", model="closed", connections=32)
        plain = clients.loadgen_argv("/b", "http://127.0.0.1:9/", row, 2, "/o.json")
        self.assertNotIn("--raw-samples", plain)
        argv = clients.loadgen_argv("/b", "http://127.0.0.1:9/", row, 2, "/o.json", "/s.csv")
        self.assertEqual(argv[argv.index("--raw-samples") + 1], "/s.csv")
        self.assertEqual(argv[-2:], ["--json", "/o.json"])

    def test_a_stalled_cell_keeps_its_samples_and_a_clean_one_does_not(self):
        spec = specfile.parse(MINIMAL.replace("[spec]", "[spec]\nstall_samples = true"))
        arm, row = spec.arms[0], spec.rows[0]

        def fake_run(row, url, duration_s, bin_dir, workdir, tag, samples_path=None):
            if samples_path:
                self._samples(samples_path, 3000)
            worst = 899_000.0 if tag == "measured" and self.stalled else 120.0
            return clients.ClientResult(argv=["loadgen"], requests=3000, rps=1500.0,
                                        duration_s=2.0, latency_us={"p50": 100.0, "max": worst},
                                        errors={}, errors_total=0, cpu_ticks=0, wall_s=2.0)

        class FakeServer:
            def __init__(self, arm, build_dir, repo_root, workdir, host="127.0.0.1"):
                self.arm, self.workdir, self.proc = arm, workdir, object()
                self.host, self.port, self.argv = "127.0.0.1", 1, ["handoff-01"]
                os.makedirs(workdir, exist_ok=True)
            def start(self): pass
            def url(self, path): return "http://127.0.0.1:1" + path
            def alive(self): return True
            def targets(self): return []
            def stop(self): return 0
            def cleanup(self): shutil.rmtree(self.workdir, ignore_errors=True)

        empty = procfs.CpuDelta([], {}, 0, 0, {})
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(runner.servers, "Server", FakeServer), \
                mock.patch.object(runner.clients, "run", side_effect=fake_run), \
                mock.patch.object(runner, "_read_stats", return_value=None), \
                mock.patch.object(runner.procfs, "snapshot", return_value=None), \
                mock.patch.object(runner.procfs, "delta", return_value=empty), \
                mock.patch.object(runner.procfs, "other_busy_pct", return_value=0.0):
            stall_dir = stalls.dest_dir(d, spec.chapter, spec.name)
            cells = []
            for r, stalled in enumerate((True, False)):
                self.stalled = stalled
                cells.append(runner.measure_cell(spec, arm, row, r, 0, spec.modes["quick"],
                                                 d, HERE, os.path.join(d, "work"), stall_dir))
            kept = sorted(os.listdir(stall_dir))
        self.assertTrue(all(c["ok"] for c in cells), cells)
        self.assertEqual(kept, ["r0-c16-a.csv"])
        self.assertEqual(cells[0]["stall_samples"]["file"], "t-stalls/r0-c16-a.csv")
        self.assertEqual(cells[0]["stall_samples"]["samples"], 3000)
        self.assertNotIn("stall_samples", cells[1])


class ServerStats(unittest.TestCase):
    def test_counts_over_the_window_per_thread_and_per_role(self):
        before = {"threads": [
            {"name": "loop-0", "role": "loop", "counters": {"loop_waits": 10, "syscalls": 100}},
            {"name": "pool-0-0", "role": "pool", "counters": {"parks": 5, "syscalls": 50}}]}
        after = {"threads": [
            {"name": "loop-0", "role": "loop", "counters": {"loop_waits": 15, "syscalls": 180}},
            {"name": "pool-0-0", "role": "pool", "counters": {"parks": 9, "syscalls": 70}},
            {"name": "pool-0-1", "role": "pool", "counters": {"parks": 2, "syscalls": 6}}]}
        d = serverstats.delta(before, after)
        self.assertEqual(d["per_role"], {"loop": {"loop_waits": 5, "syscalls": 80},
                                         "pool": {"parks": 6, "syscalls": 26}})
        self.assertEqual([t["name"] for t in d["per_thread"]], ["loop-0", "pool-0-0", "pool-0-1"])
        self.assertEqual(serverstats.count(d["per_role"], "syscalls"), 106)
        self.assertEqual(serverstats.count(d["per_role"], "syscalls", "pool"), 26)


class DirtyTree(unittest.TestCase):
    """A full-mode run refuses a checkout with uncommitted changes outside build/, the
    build tree and the results being written; --allow-dirty lets it run."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="dirty-")
        self.git("init", "-q")
        os.makedirs(f"{self.root}/code")
        self.write("code/a.cpp", "int a;\n")
        self.write(".gitignore", "")
        self.git("add", ".")
        self.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def git(self, *argv):
        subprocess.run(["git", *argv], cwd=self.root, check=True, capture_output=True)

    def write(self, rel, text):
        os.makedirs(os.path.dirname(f"{self.root}/{rel}"), exist_ok=True)
        with open(f"{self.root}/{rel}", "w") as f:
            f.write(text)

    def args(self, mode="full", allow=False):
        return argparse.Namespace(mode=mode, allow_dirty=allow,
                                  out=f"{self.root}/benchmarks/results",
                                  build_dir=f"{self.root}/out-of-tree-build")

    def refused(self, args) -> bool:
        return bench.refuse_dirty(args, repo_root=self.root, stream=io.StringIO())

    def test_a_clean_tree_runs_and_outputs_do_not_make_it_dirty(self):
        self.write("build/release/x.o", "")
        self.write("out-of-tree-build/y", "")
        self.write("benchmarks/results/02/server.csv", "row\n")
        self.assertEqual(report.dirty_paths(self.root, [self.args().out,
                                                        self.args().build_dir]), [])
        self.assertFalse(self.refused(self.args()))

    def test_a_modified_or_untracked_source_refuses_full_mode_only(self):
        self.write("code/a.cpp", "int a = 1;\n")
        self.write("code/new.h", "")
        self.assertEqual(sorted(report.dirty_paths(self.root)), ["code/a.cpp", "code/new.h"])
        self.assertTrue(self.refused(self.args()))
        self.assertFalse(self.refused(self.args(mode="quick")))
        self.assertFalse(self.refused(self.args(allow=True)))

    def test_a_rename_names_its_new_path(self):
        self.git("mv", "code/a.cpp", "code/b.cpp")
        self.assertEqual(report.dirty_paths(self.root), ["code/b.cpp"])
        self.assertTrue(self.refused(self.args()))

    def test_the_machine_record_says_dirty_and_which_files(self):
        self.write("code/a.cpp", "int a = 2;\n")
        m = report.machine_info(f"{self.root}/out-of-tree-build", self.root,
                                f"{self.root}/benchmarks/results")
        self.assertTrue(m["git_dirty"])
        self.assertEqual(m["git_dirty_paths"], ["code/a.cpp"])
        self.assertTrue(m["git_rev"])


class Rotation(unittest.TestCase):
    def test_each_round_starts_one_arm_later(self):
        arms = ["A", "B", "C"]
        self.assertEqual([specfile.rotation(arms, r) for r in range(4)],
                         [["A", "B", "C"], ["B", "C", "A"], ["C", "A", "B"], ["A", "B", "C"]])
        self.assertEqual(specfile.rotation([], 3), [])

    def test_every_arm_goes_first_equally_often_over_a_multiple_of_rounds(self):
        arms = ["A", "B", "C", "D"]
        firsts = [specfile.rotation(arms, r)[0] for r in range(8)]
        self.assertEqual(sorted(firsts), sorted(arms * 2))


MINIMAL = """
compare = [["b", "a"]]
[spec]
chapter = "01-baseline"
name = "t"
[modes.quick]
rounds = 1
duration_s = 1
[modes.full]
rounds = 5
duration_s = 6
[[arms]]
name = "a"
kind = "stage"
binary = "handoff-01"
args = ["--dispatch", "inline"]
[[arms]]
name = "b"
kind = "nginx"
[[rows]]
name = "c16"
connections = 16
"""


class Peers(unittest.TestCase):
    """harness/peers: every peer's template is there and has the placeholders the harness
    fills; a balancer's @SERVERS@ line becomes one line per backend; a balancer's threads are
    sampled apart from its backends'."""

    def test_every_template_exists_and_is_filled_completely(self):
        for peer in peers.PEERS.values():
            path = os.path.join(REPO, peer.template)
            self.assertTrue(os.path.isfile(path), path)
            if not peer.needs_conf:
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            self.assertIn("@PORT@", text, peer.kind)
            filled = peers.fill(text, port=4242, prefix="/p", repo_root=REPO,
                                servers=[("127.0.0.1", 1), ("127.0.0.1", 2)])
            self.assertNotRegex(filled, r"@[A-Z_]+@", peer.kind)
            self.assertIn("4242", filled)

    def test_the_servers_line_is_one_line_per_backend_with_its_options(self):
        text = "backend b\n    @SERVERS@ check inter 100ms\nend\n"
        got = peers.fill(text, port=1, prefix="/p", repo_root="/r",
                         servers=[("127.0.0.1", 7001), ("127.0.0.1", 7002)])
        self.assertEqual(got, "backend b\n    server b0 127.0.0.1:7001 check inter 100ms\n"
                              "    server b1 127.0.0.1:7002 check inter 100ms\nend\n")

    def test_the_docroot_bodies_are_the_stage_s_own(self):
        with open(os.path.join(REPO, "code/app/demo_routes.cpp"), encoding="utf-8") as f:
            routes = f.read()
        for name in ("hello.txt", "json"):
            with open(os.path.join(REPO, peers.DOCROOT, name), encoding="utf-8") as f:
                body = f.read()
            self.assertIn(body, routes, name)   # the same bytes our stage sends

    def test_the_asyncio_peer_answers_a_pipeline_in_order_and_refuses_after_it(self):
        # The blocking route goes through the executor and finishes last; its answer must
        # still come first, and a bad request after it is answered 400 only once the answers
        # before it are out, then the connection closes.
        import socket
        proc = subprocess.Popen([sys.executable, os.path.join(REPO, "benchmarks/peers/asyncio_http.py"),
                                 "--port", "0", "--blocking-threads", "2"],
                                stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            port = int(line.rsplit(":", 1)[1])
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(b"GET /sleep?ms=30 HTTP/1.1\r\n\r\nGET /json HTTP/1.1\r\n\r\n"
                          b"GET /sleep HTTP/1.1\r\n\r\nPUT / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n")
                got = b""
                while chunk := s.recv(65536):
                    got += chunk
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        bodies = [part.split(b"\r\n\r\n", 1)[1] for part in got.split(b"HTTP/1.1 ")[1:]]
        self.assertEqual(bodies, [b"slept 30 ms", b'{"message":"Hello, World!"}', b"slept 0 ms",
                                  b"bad request"])

    def test_a_balancer_stopped_its_own_way_is_clean_and_a_backend_crash_is_not(self):
        arm = specfile.Arm(name="lb", kind="haproxy", binary="handoff-06", backends=1)
        lb = servers.Server(arm, "/b", REPO, "/w")
        lb.proc = mock.Mock(pid=500)
        back = mock.Mock()
        lb.backends = [back]
        with mock.patch.object(servers, "stop", return_value=-signal.SIGTERM) as stop:
            back.stop.return_value = 0
            self.assertEqual(lb.stop(), 0)            # HAProxy's hard stop is its clean one
            self.assertEqual(stop.call_args.kwargs["sig"], signal.SIGTERM)
            back.stop.return_value = -signal.SIGSEGV
            self.assertEqual(lb.stop(), -signal.SIGSEGV)   # ours crashing at stop is a finding
        with mock.patch.object(servers, "stop", return_value=-signal.SIGSEGV):
            back.stop.return_value = 0
            self.assertEqual(lb.stop(), -signal.SIGSEGV)   # and so is the balancer crashing

    def test_a_balancer_is_sampled_apart_from_its_backends(self):
        arm = specfile.Arm(name="lb", kind="haproxy", binary="handoff-06", backends=1)
        lb = servers.Server(arm, "/b", REPO, "/w")
        lb.proc = mock.Mock(pid=500)
        back = servers.Server(lb.backend_arm(0), "/b", REPO, "/w/b0")
        back.proc = mock.Mock(pid=600)
        lb.backends = [back]
        self.assertEqual(lb.targets(), [procfs.Target(500, process_role="balancer"),
                                        procfs.Target(600, main_role=None)])
        cpu = procfs.CpuDelta(per_thread=[], per_role_us={"balancer": 30.0, "loop": 50.0},
                              process_ticks=0, lost_threads=0)
        m = sm.cell_metrics(requests=10, rps=1.0, latency_us={}, errors_total=0, cpu=cpu,
                                 client_ticks=0, window_s=1.0, busy_pct=0.0)
        self.assertEqual((m["balancer_us_per_req"], m["loop_us_per_req"], m["other_us_per_req"]),
                         (3.0, 5.0, 0.0))


class Failover(unittest.TestCase):
    """harness/failover's account of a run, from two statistics snapshots of HAProxy."""

    @staticmethod
    def stats(front_req, front_ereq, served, abrt=0, redis=0):
        rows = {"fleet/FRONTEND": {"req_tot": str(front_req), "ereq": str(front_ereq)},
                "stages/BACKEND": {"srv_abrt": str(abrt), "wredis": str(redis), "wretr": "0"}}
        for name, n in served.items():
            rows[f"stages/{name}"] = {"hrsp_2xx": str(n)}
        return rows

    def test_every_request_is_accounted_and_the_checks_are_timed_from_the_polls(self):
        before = self.stats(1, 0, {"b0": 1, "b1": 0})
        after = self.stats(111, 1, {"b0": 71, "b1": 35}, abrt=4, redis=9)
        polls = [{"t": 0.9, "status": {"b1": "UP"}}, {"t": 1.2, "status": {"b1": "DOWN"}},
                 {"t": 2.0, "status": {"b1": "DOWN 1/2"}}, {"t": 2.3, "status": {"b1": "UP"}}]
        got = failover.summarize(before, after, polls, 1.0, 2.1,
                                 {"requests": 104, "errors": {"read": 4, "parse": 0}},
                                 ["b0", "b1"], "b1")
        self.assertEqual((got["backends_responses"], got["aborted_in_flight"],
                          got["balancer_refused"], got["unaccounted"]), (105, 4, 1, 0))
        self.assertEqual((got["failed_over"], got["answered_twice"]), (9, 0))
        self.assertAlmostEqual(got["out_s"], 0.2)
        self.assertAlmostEqual(got["back_s"], 0.2)   # "DOWN 1/2" is still down

    def test_a_request_lost_between_balancer_and_backends_is_unaccounted(self):
        got = failover.summarize(self.stats(0, 0, {"b0": 0}), self.stats(10, 0, {"b0": 9}), [],
                                 0.0, 0.0, {"requests": 9, "errors": {}}, ["b0"], "b0")
        self.assertEqual(got["unaccounted"], 1)
        self.assertIsNone(got["out_s"])


class Panel(unittest.TestCase):
    """harness/panel's figure for a phase: the scraped rate once a rate's window no longer
    reaches into the phase before."""

    def test_a_phase_skips_the_samples_whose_window_holds_the_phase_before(self):
        phases = [{"name": "heavier", "load": {}, "start": 100.0, "end": 110.0},
                  {"name": "steady", "load": {}, "start": 110.0, "end": 115.0}]
        # 1000/s, then 500/s from 110: a rate's window reaches back WINDOW_S, so the
        # scraped rate falls over the steady phase's first WINDOW_S.
        def rate(t):
            return 1000.0 if t <= 110 else max(500.0, 1000.0 - (t - 110) * 500 / panel.WINDOW_S)
        points = [[float(t), rate(t)] for t in range(100, 116)]
        series = {"requests": [{"thread": "pool-0-0", "role": "pool", "points": points}]}
        self.assertEqual(panel.phase_figures(phases, series)[0], "requests_pool")
        self.assertEqual(phases[1]["requests_pool"], 500.0)
        self.assertEqual(phases[0]["requests_pool"], 1000.0)

    def test_the_chapter_file_changes_only_target_and_intervals(self):
        from harness.run import prometheus
        with open(prometheus.CONFIG, encoding="utf-8") as f:
            text = f.read()
        got = prometheus.scrape_config(text, "127.0.0.1:5")
        self.assertIn('"127.0.0.1:5"', got)
        self.assertEqual(len(got.splitlines()), len(text.splitlines()))
        with self.assertRaises(prometheus.PrometheusError):
            prometheus.scrape_config(text.replace("15s", "10s"), "127.0.0.1:5")


class PostgresSessions(unittest.TestCase):
    """harness/postgres.SessionCounter against a scripted psql: PostgreSQL publishes a
    session's count when the backend exits, so each of the counter's own reads shows up in
    the next one and the last read's does not."""

    def run_counter(self, answers):
        replies = iter(answers)
        with mock.patch.object(postgres, "_psql", side_effect=lambda sql: next(replies)), \
                mock.patch.object(postgres.time, "sleep"):
            c = postgres.SessionCounter()
            c.start()
            return c.stop()

    def test_the_counters_own_reads_are_subtracted(self):
        # before: 10; the server opened 7; the first after-read still sees 2 backends (the
        # server's last one and the before-read's), the second sees none and 10+7+2 = 19.
        self.assertEqual(self.run_counter(["10", "2|17", "0|19"]), 7)
        self.assertEqual(self.run_counter(["10", "0|11"]), 0)

    def test_backends_that_never_leave_are_an_error_not_a_count(self):
        replies = ["10"] + ["1|11"] * 1000
        with mock.patch.object(postgres.time, "monotonic", side_effect=[0.0, 0.0, 100.0]):
            with self.assertRaises(TimeoutError):
                self.run_counter(replies)


class Specs(unittest.TestCase):
    def test_a_minimal_spec_parses_with_defaults(self):
        s = specfile.parse(MINIMAL)
        self.assertEqual([a.name for a in s.arms], ["a", "b"])
        self.assertEqual(s.rows[0].client, "loadgen")
        self.assertEqual(s.compares[0].over, "arms")
        self.assertEqual(s.modes["full"].rounds, 5)
        self.assertEqual(s.arms[1].template, "")   # "": the peer's own (harness/run/peers.py)
        server = servers.Server(s.arms[1], "/b", REPO, "/w")
        self.assertEqual(server._template_path(), os.path.join(REPO, "benchmarks/peers/nginx.conf.in"))

    def test_a_balancer_arm_and_only_one_has_backends(self):
        base = MINIMAL.replace('kind = "nginx"', 'kind = "haproxy"\nbinary = "handoff-06"')
        self.assertEqual(specfile.parse(base.replace('kind = "haproxy"', 'kind = "haproxy"\nbackends = 2'))
                         .arms[1].backends, 2)
        for bad in (base, MINIMAL.replace('kind = "nginx"', 'kind = "nginx"\nbackends = 2'),
                    base.replace('\nbinary = "handoff-06"', '\nbackends = 2')):
            with self.assertRaises(specfile.SpecError):
                specfile.parse(bad)

    def test_mistakes_are_refused_before_anything_runs(self):
        bad = {
            "unknown key": MINIMAL.replace('connections = 16', 'conections = 16'),
            "non-loopback host": MINIMAL.replace('"--dispatch", "inline"',
                                                 '"--host", "10.0.0.1"'),
            "wrk open loop": MINIMAL + 'client = "wrk"\nmodel = "open"\nrate = 1000\n',
            "compare arm with row": MINIMAL.replace('[["b", "a"]]', '[["b", "c16"]]'),
            "unknown metric": MINIMAL.replace("[spec]", "[spec]\nplots = [\"speed\"]"),
            "paced without rate": MINIMAL + 'model = "paced"\n',
            "binary as a path": MINIMAL.replace('"handoff-01"', '"/bin/sh"'),
            "unknown service": MINIMAL.replace("[spec]", "[spec]\nneeds = [\"mysql\"]"),
        }
        for what, text in bad.items():
            with self.subTest(what), self.assertRaises(specfile.SpecError):
                specfile.parse(text)

    def test_stall_settings_parse_and_are_checked(self):
        s = specfile.parse(MINIMAL)
        self.assertEqual((s.stall_us, s.stall_samples), (10_000.0, False))
        s = specfile.parse(MINIMAL.replace("[spec]", "[spec]\nstall_us = 5000\nstall_samples = true"))
        self.assertEqual((s.stall_us, s.stall_samples), (5000.0, True))
        for bad in ("stall_us = 0", "stall_us = \"10ms\"", "stall_samples = 1"):
            with self.subTest(bad), self.assertRaises(specfile.SpecError):
                specfile.parse(MINIMAL.replace("[spec]", f"[spec]\n{bad}"))

    def test_the_stack_spec_runs_every_arm_on_stage_05_with_four_inline_workers(self):
        s = specfile.load(os.path.join(HERE, "..", "specs", "05-stack.toml"))
        self.assertEqual((s.chapter, s.name), ("05-stack-lock", "stack"))
        self.assertEqual([a.name for a in s.arms],
                         ["pool-shared", "pool-buzz-long", "pool-buzz-forever", "pool-handoff",
                          "pool-per-worker", "shard"])
        for a in s.arms:
            with self.subTest(a.name):
                self.assertEqual(a.binary, "handoff-05")
                flags = dict(zip(a.args[::2], a.args[1::2]))
                self.assertEqual((flags["--workers"], flags["--dispatch"]), ("4", "inline"))
        self.assertEqual({r.model for r in s.rows}, {"closed", "paced", "open"})
        self.assertTrue(s.stall_samples)
        self.assertGreaterEqual(s.modes["full"].rounds, 5)
        full = s.modes["full"]
        cells = len(s.arms) * len(s.rows) * full.rounds
        self.assertLess(cells * (full.duration_s + full.warmup_s + 1.5), 12 * 60)
        for m in ("p50_us", "p99_us", "max_us", "rps", "server_us_per_req",
                  "stack_deferred_per_req", "stack_handoffs_per_req"):
            self.assertIn(m, s.verdict_metrics)

    def test_a_spec_that_needs_postgres_is_skipped_outside_a_cluster(self):
        s = specfile.parse(MINIMAL.replace("[spec]", "[spec]\nneeds = [\"postgres\"]"))
        self.assertEqual(s.needs, ("postgres",))
        with mock.patch.dict(os.environ, {postgres.MARK: ""}), \
                mock.patch.object(runner, "check_parts", return_value=(s.arms, s.rows, [])):
            with self.assertRaises(runner.MissingParts):
                runner.run_spec(s, mode="quick", build_dir="/nonexistent", out_dir="/x",
                                repo_root=HERE, argv=[], reproduce_argv=[],
                                settings=s.modes["quick"], allow_missing=False)

    def test_host_override_reaches_the_server_and_the_reproduce_line(self):
        srv = servers.Server(specfile.Arm("a", "stage", binary="handoff-01"), "/b", HERE, "/w", "[::1]")
        self.assertEqual(srv.host, "::1")
        srv.port = 8080
        self.assertEqual(srv.url("/x"), "http://[::1]:8080/x")
        spec = specfile.parse(MINIMAL)
        args = argparse.Namespace(mode="quick", build_dir="/b", out=bench.DEFAULT_OUT, host="::1")
        self.assertEqual(bench.reproduce_argv(spec, args)[-2:], ["--host", "::1"])
        args.host = specfile.LOOPBACK_HOST
        self.assertNotIn("--host", bench.reproduce_argv(spec, args))
        with self.assertRaises(specfile.SpecError):
            servers.Server(specfile.Arm("a", "stage"), "/b", HERE, "/w", "10.0.0.1")

    def test_only_loopback_targets_are_accepted(self):
        for ok in ("127.0.0.1", "127.0.0.2", "::1", "[::1]"):
            self.assertEqual(specfile.check_loopback(ok), ok)
        for bad in ("10.0.0.1", "example.com", "0.0.0.0", "localhost.evil"):
            with self.subTest(bad), self.assertRaises(specfile.SpecError):
                specfile.check_loopback(bad)
        with self.assertRaises(Exception):
            clients.loadgen_argv("/b", "http://192.168.1.1:80/", specfile.Row("r"), 1, "/x")

    def test_each_chapter_has_one_headline_spec_and_together_they_fit_command_1s_budget(self):
        specs = [specfile.load(p) for p in glob.glob(os.path.join(HERE, "..", "specs", "*.toml"))]
        chapters = sorted({s.chapter for s in specs if s.in_all and s.chapter[:2].isdigit()})
        heads = [s for s in specs if s.headline]
        self.assertEqual(sorted(s.chapter for s in heads), chapters)  # one each, no more
        with open(os.path.join(HERE, "..", "..", ".ci", "main"), encoding="utf-8") as f:
            budget = float(re.search(r"--budget-s (\d+)", f.read()).group(1))
        self.assertLessEqual(sum(s.estimate_s("quick") for s in heads), budget)

    def test_every_committed_spec_parses(self):
        paths = glob.glob(os.path.join(HERE, "..", "specs", "*.toml"))
        self.assertTrue(paths)
        for p in paths:
            with self.subTest(os.path.basename(p)):
                specfile.load(p)


class ClientReports(unittest.TestCase):
    def test_loadgen_report_is_read_to_the_contract(self):
        doc = {"requests": 1000, "duration_s": 2.0, "rps": 500.0,
               "errors": {"connect": 0, "read": 1, "timeout": 0, "parse": 0,
                          "status_4xx": 2, "status_5xx": 0},
               "latency_us": {"p50": 10, "p90": 20, "p99": 30, "p99_9": 40, "max": 50,
                              "mean": 12.5, "min": 1},
               "worst_per_connection_us": 50}
        r = clients.parse_loadgen(doc)
        self.assertEqual((r["requests"], r["errors_total"], r["latency_us"]["p99_9"]),
                         (1000, 3, 40.0))
        del doc["rps"]
        with self.assertRaises(clients.ClientError):
            clients.parse_loadgen(doc)

    def test_wrk_summary_line_is_found_among_wrks_own_output(self):
        out = ("Running 2s test @ http://127.0.0.1:1/\n  1 threads and 16 connections\n"
               'WRK-JSON {"requests":300000,"bytes":1,"duration_us":2000000,'
               '"errors":{"connect":0,"read":0,"write":0,"status":4,"timeout":1},'
               '"latency_us":{"min":5,"max":900,"mean":80.5,"stdev":3.0,'
               '"p50":70,"p90":120,"p99":400,"p99_9":800}}\n'
               "Requests/sec: 150000.00\n")
        r = clients.parse_wrk(out)
        self.assertEqual((r["requests"], r["rps"], r["errors_total"]), (300000, 150000.0, 5))
        self.assertEqual(r["latency_us"]["p99"], 400.0)
        with self.assertRaises(clients.ClientError):
            clients.parse_wrk("Requests/sec: 1\n")

    def test_client_command_lines(self):
        row = specfile.Row("r", path="/x", model="paced", connections=8, rate=1000)
        argv = clients.loadgen_argv("/b", "http://127.0.0.1:9/x", row, 1.5, "/o.json")
        self.assertEqual(argv[:3], ["/b/loadgen", "--url", "http://127.0.0.1:9/x"])
        self.assertIn("--warmup", argv)
        self.assertEqual(argv[argv.index("--warmup") + 1], "0")
        self.assertEqual(argv[argv.index("--rate") + 1], "1000")
        self.assertEqual(argv[-2:], ["--json", "/o.json"])
        self.assertEqual(clients.wrk_seconds(1.5), 2)
        self.assertEqual(clients.wrk_seconds(0.2), 1)
        self.assertEqual(clients.wrk_seconds(2.0), 2)

    def test_ready_line(self):
        m = servers.READY_RE.search(b"starting\nhandoff: listening on http://127.0.0.1:40123\n")
        self.assertEqual((m.group(1), m.group(2)), (b"127.0.0.1", b"40123"))
        self.assertIsNone(servers.READY_RE.search(b"handoff: listening on 127.0.0.1:1\n"))


# A stand-in tool for the records runner: writes the report its arguments ask for, and
# judges a file with --check by the flag the report carries.
FAKE_TOOL = """#!/usr/bin/python3
import json, sys
args = sys.argv[1:]
if args[0] == "--check":
    doc = json.load(open(args[1]))
    sys.exit(0 if doc["whole"] else 1)
path = args[args.index("--json") + 1]
doc = {"tool": "fake", "machine": {"cpu": "x"}, "whole": "--broken" not in args,
       "results": [{"variant": "relaxed", "trials": 10, "rate": 0.125, "pinned": True,
                    "outcomes": {"00": 3, "11": 7}, "cpus": [0, 1]},
                   {"variant": "seq_cst", "trials": 10, "rate": 1.5e-07, "pinned": False,
                    "outcomes": {"00": 0, "01": 10}}]}
if "--no-results" in args:
    del doc["results"]
json.dump(doc, open(path, "w"))
print("fake: done")
"""


class Records(unittest.TestCase):
    """The runner of the JSON-writing probes (harness/records/tools.py): the CSV contract, a tool not
    built, and a report that breaks the contract or fails its own check."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="records-")
        self.build = f"{self.root}/build"
        self.out = f"{self.root}/out"
        os.makedirs(f"{self.build}/bin")

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def fake(self, name="fake-tool"):
        path = f"{self.build}/bin/{name}"
        with open(path, "w") as f:
            f.write(FAKE_TOOL)
        os.chmod(path, 0o755)

    def run_tools(self, tools):
        return records.run_records(build_dir=self.build, out_dir=self.out, repo_root=self.root,
                                   mode="quick", argv=["bench.py", "records"], tools=tools,
                                   reproduce_argv=lambda name: ["bench.py", "records", "--only", name],
                                   stream=io.StringIO())

    @staticmethod
    def tool(*flags, check=True):
        # A litmus-like report: counts of outcomes out of its trials, no rounds.
        return records.Tool("03-lost-wakes", "fake", "fake-tool",
                            {"quick": {"trials": 10, **{f: "" for f in flags}}, "full": {}},
                            check=check, keys=("variant",), counts={"outcomes_00": "trials"})

    def test_nested_objects_flatten_one_level_into_outer_inner_columns(self):
        header, lines = records.csv_lines([
            {"variant": "relaxed", "trials": 2_000_000, "rate": 0.000123456789, "pinned": True,
             "outcomes": {"00": 3, "01": 5}, "cpus": [0, 1], "wall_us": {"median": 12.3456789}},
            {"variant": "seq_cst", "skipped": True, "outcomes": {"00": 0, "10": 2}}])
        self.assertEqual(header, ["variant", "trials", "rate", "pinned", "outcomes_00",
                                  "outcomes_01", "cpus", "wall_us_median", "skipped",
                                  "outcomes_10"])
        self.assertEqual(lines[0], {"variant": "relaxed", "trials": "2000000",
                                    "rate": "0.0001235", "pinned": "true",
                                    "outcomes_00": "3", "outcomes_01": "5", "cpus": "0 1",
                                    "wall_us_median": "12.35"})
        self.assertEqual(lines[1], {"variant": "seq_cst", "skipped": "true", "outcomes_00": "0",
                                    "outcomes_10": "2"})
        self.assertEqual(records.cell(12345678.9), "12345679")
        self.assertEqual(records.cell(1234.56), "1235")
        self.assertEqual(records.cell(False), "false")
        self.assertEqual(records.cell(None), "")

    def test_a_tool_runs_its_check_and_its_record_and_csv_are_written(self):
        self.fake()
        missing, failures = self.run_tools([self.tool()])
        self.assertEqual((missing, failures), ([], []))
        base = f"{self.out}/03-lost-wakes/fake"
        with open(base + ".json") as f:
            doc = json.load(f)
        for key in ("machine", "command", "reproduce", "mode", "settings", "tool_command"):
            self.assertIn(key, doc)
        self.assertEqual((doc["mode"], doc["settings"], doc["tool"]),
                         ("quick", {"trials": 10}, "fake"))
        self.assertEqual(doc["reproduce"], "/usr/bin/python3 bench.py records --only fake")
        self.assertEqual(len(doc["results"]), 2)
        with open(base + ".csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["variant"], r["outcomes_00"], r["pinned"]) for r in rows],
                         [("relaxed", "3", "true"), ("seq_cst", "0", "false")])
        self.assertEqual(rows[1]["rate"], "1.5e-07")
        self.assertFalse(os.path.exists(base + ".raw.json"))

    def test_a_tool_not_built_is_listed_as_missing_and_nothing_is_written(self):
        missing, failures = self.run_tools([self.tool()])
        self.assertEqual(failures, [])
        self.assertEqual(len(missing), 1)
        self.assertIn("fake-tool not built", missing[0])
        self.assertFalse(os.path.exists(f"{self.out}/03-lost-wakes/fake.json"))

    def test_a_report_that_fails_its_own_check_or_breaks_the_contract_is_not_filed(self):
        self.fake()
        for flag, said in (("broken", "--check rejected"), ("no-results", 'no "results"')):
            with self.subTest(flag):
                missing, failures = self.run_tools([self.tool(flag)])
                self.assertEqual(missing, [])
                self.assertEqual(len(failures), 1)
                self.assertIn(said, failures[0])
                self.assertFalse(os.path.exists(f"{self.out}/03-lost-wakes/fake.json"))

    def test_every_registered_tool_has_both_modes_and_a_unique_name(self):
        names = [t.name for t in records.TOOLS]
        self.assertEqual(len(names), len(set(names)))
        self.assertLessEqual({"sb-litmus", "herd-probe"}, set(names))
        for t in records.TOOLS:
            with self.subTest(t.name):
                self.assertEqual(set(t.settings), set(specfile.MODES))
                self.assertNotIn("--json", records.tool_argv(t, "quick"))


# `perf script -F tid,event,ip,sym,dso` of a -g recording of a loop thread, trimmed: one
# sample per category rule (see loop_profile.py's header).
PERF_SCRIPT = """\
17566 cpu-clock:pppH: \n\
\t          a1b2c3 _int_malloc (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          a1b000 malloc (/usr/lib/x86_64-linux-gnu/libc.so.6)

  5242 cpu-clock:pppH: \n\
\tffffffff82203249 _raw_spin_unlock_irqrestore ([kernel.kallsyms])
\tffffffff8140c0de try_to_wake_up ([kernel.kallsyms])
\tffffffff81000130 entry_SYSCALL_64_after_hwframe ([kernel.kallsyms])
\t           91e2f __lll_lock_wake_private (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t           a1b000 malloc (/usr/lib/x86_64-linux-gnu/libc.so.6)

17566 cpu-clock:pppH: \n\
\tffffffff82203249 _raw_spin_unlock_irqrestore ([kernel.kallsyms])
\tffffffff81000130 entry_SYSCALL_64_after_hwframe ([kernel.kallsyms])
\t          10ac4d __libc_sendmsg (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t            3f00 handoff::pool::ElasticPool::submit (/b/bin/handoff-03)

17566 cpu-clock:pppH: \n\
\tffffffff81e695bb net_rx_action ([kernel.kallsyms])

17566 cpu-clock:pppH: \n\
\t            3f00 handoff::pool::ElasticPool::submit (/b/bin/handoff-03)

17566 cpu-clock:pppH: \n\
\t            4100 handoff::sync::WakeChannel::wake (/b/bin/handoff-03)

17566 cpu-clock:pppH: \n\
\t            5200 handoff::http::RequestParser::feed (/b/bin/handoff-03)

17566 cpu-clock:pppH: \n\
\t           74770 llhttp__internal__run (/b/bin/handoff-03)

17566 cpu-clock:pppH: \n\
\t            6300 std::_Hashtable<unsigned long, std::pair<unsigned long const, int> >::find (/b/bin/handoff-03)

17566 cpu-clock:pppH: \n\
\t            7400 handoff::server::Connection::apply (/b/bin/handoff-03)

17566 cpu-clock:pppH: \n\
\t           2d4e0 tcache_get (/usr/lib/x86_64-linux-gnu/libc.so.6)

17566 cpu-clock:pppH: \n\
\t               0 [unknown] ([unknown])
"""


class LoopProfile(unittest.TestCase):
    """loop_profile.py: `perf script` parsed, each sample's category, the reduction over rounds,
    and nothing written without perf."""

    def test_perf_script_samples_are_parsed_leaf_first(self):
        samples = loop_profile.parse_script(PERF_SCRIPT)
        self.assertEqual(len(samples), 12)
        self.assertEqual(samples[0][0], loop_profile.Frame("_int_malloc",
                                                      "/usr/lib/x86_64-linux-gnu/libc.so.6"))
        self.assertEqual([f.symbol for f in samples[1]],
                         ["_raw_spin_unlock_irqrestore", "try_to_wake_up",
                          "entry_SYSCALL_64_after_hwframe", "__lll_lock_wake_private", "malloc"])
        self.assertTrue(samples[1][0].kernel)
        self.assertFalse(samples[1][3].kernel)
        self.assertEqual(samples[8][0].symbol,
                         "std::_Hashtable<unsigned long, std::pair<unsigned long const, int> >::find")
        self.assertEqual(loop_profile.script_event(PERF_SCRIPT), "cpu-clock:pppH")

    def test_each_sample_falls_in_the_category_its_frames_name(self):
        got = [loop_profile.categorise(f) for f in loop_profile.parse_script(PERF_SCRIPT)]
        self.assertEqual(got, [
            "allocator",   # _int_malloc
            "allocator",   # kernel, under __lll_lock_wake_private: the allocator's lock
            "kernel",      # kernel, under sendmsg (the pool's frame above it does not count)
            "kernel",      # kernel with no user frame
            "hand-off", "hand-off", "http", "http",
            "other",       # the connection table
            "other",       # the server's bookkeeping
            "allocator",   # tcache_*
            "other",       # [unknown]
        ])

    def test_tally_counts_categories_and_keys_symbols_by_space_and_category(self):
        t = loop_profile.tally(loop_profile.parse_script(PERF_SCRIPT))
        self.assertEqual(t.samples, 12)
        self.assertEqual(t.by_category, {"allocator": 3, "kernel": 2, "hand-off": 2, "http": 2,
                                         "other": 3})
        self.assertEqual(t.by_symbol[("_raw_spin_unlock_irqrestore", "[k]", "allocator")], 1)
        self.assertEqual(t.by_symbol[("_raw_spin_unlock_irqrestore", "[k]", "kernel")], 1)

    def _cell(self, arm, requests, cats, syms):
        return {"arm": arm, "ok": True, "requests": requests, "samples": sum(cats.values()),
                "loop_cpu_us_per_req": 1.0,
                "by_category": {c: cats.get(c, 0) for c in loop_profile.CATEGORIES},
                "by_symbol": [{"symbol": s, "space": "[.]", "category": c, "samples": n}
                              for s, c, n in syms]}

    def test_rounds_reduce_to_median_min_max_per_thousand_requests_and_share(self):
        cells = [
            self._cell("a", 10_000, {"allocator": 20, "kernel": 80}, [("malloc", "allocator", 20)]),
            self._cell("a", 20_000, {"allocator": 30, "kernel": 170}, [("malloc", "allocator", 30)]),
            self._cell("a", 10_000, {"allocator": 10, "kernel": 90}, [("malloc", "allocator", 10)]),
            {"arm": "a", "ok": False, "error": "failed"},
            self._cell("b", 1_000, {"other": 5}, [("f", "other", 5)]),
        ]
        lines, tops = loop_profile.summarize(cells, ["a", "b", "never-ran"])
        by = {(x["arm"], x["category"]): x for x in lines}
        self.assertEqual(len(lines), 2 * (len(loop_profile.CATEGORIES) + 1))
        alloc = by[("a", "allocator")]
        self.assertEqual(alloc["rounds"], 3)
        self.assertEqual(alloc["samples_per_kreq"], {"median": 1.5, "min": 1.0, "max": 2.0})
        self.assertEqual(alloc["share_pct"], {"median": 15.0, "min": 10.0, "max": 20.0})
        self.assertEqual(by[("a", "all")]["samples_per_kreq"]["median"], 10.0)
        self.assertEqual(by[("b", "other")]["share_pct"]["median"], 100.0)
        self.assertEqual(tops["a"][0]["samples"], 60)
        self.assertAlmostEqual(tops["a"][0]["samples_per_kreq"], 1.5)
        self.assertAlmostEqual(tops["a"][0]["share_pct"], 15.0)
        rows = loop_profile.csv_lines(lines)
        self.assertEqual(set(rows[0]), set(loop_profile.CSV_HEADER))
        self.assertEqual(rows[0]["samples_per_kreq_median"], "1.50")

    def test_the_arms_are_the_server_specs_own(self):
        arms, row = loop_profile.arms_and_row(bench.REPO_ROOT)
        self.assertEqual([a.name for a in arms], ["inline", "elastic-1", "ring-1"])
        self.assertEqual(row.connections, 256)
        wake = {a.name: a.args[a.args.index("--pool-wake") + 1] for a in arms
                if "--pool-wake" in a.args}
        self.assertEqual(wake, {"elastic-1": "elastic", "ring-1": "shared"})
        self.assertIn("inline", arms[0].args)

    def test_perf_is_refused_without_root_above_paranoid_level_one(self):
        with tempfile.NamedTemporaryFile("w", suffix="paranoid") as f:
            f.write("2\n")
            f.flush()
            self.assertIn("perf_event_paranoid is 2",
                          loop_profile.perf_refusal("/usr/bin/perf", f.name, euid=1000))
            self.assertIsNone(loop_profile.perf_refusal("/usr/bin/perf", f.name, euid=0))
            f.seek(0)
            f.write("1\n")
            f.flush()
            self.assertIsNone(loop_profile.perf_refusal("/usr/bin/perf", f.name, euid=1000))
        self.assertIn("not found", loop_profile.perf_refusal(None))

    def test_without_perf_the_profile_is_not_measured_and_writes_nothing(self):
        root = tempfile.mkdtemp(prefix="profile-")
        self.addCleanup(shutil.rmtree, root, ignore_errors=True)
        out = os.path.join(root, "out")
        err = io.StringIO()
        with mock.patch.object(loop_profile, "perf_path", return_value=None), \
                contextlib.redirect_stderr(err):
            code = bench.main(["bench.py", "profile", "--mode", "quick", "--build-dir", root,
                               "--out", out])
            self.assertIn("not found", loop_profile.missing_parts(root, bench.REPO_ROOT))
        self.assertEqual(code, 1)
        self.assertIn("bench profile: not measured: perf not found", err.getvalue())
        self.assertFalse(os.path.exists(out))


class Reproduce(unittest.TestCase):
    def test_paths_inside_the_repository_become_relative(self):
        root = "/src/handoff"
        cmd = report.reproduce_command(
            [f"{root}/benchmarks/harness/bench.py", "run",
             f"{root}/benchmarks/specs/x.toml", "--build-dir", f"{root}/build/release",
             "--out", "/tmp/r s"], root)
        self.assertEqual(cmd, "/usr/bin/python3 benchmarks/harness/bench.py run "
                              "benchmarks/specs/x.toml --build-dir build/release "
                              "--out '/tmp/r s'")

    def test_a_recorded_command_names_no_checkout(self):
        root = "/src/handoff"
        recorded = report.repo_relative(
            [f"{root}/benchmarks/harness/bench.py", "all", "--build-dir", f"{root}/build/release",
             f"{root}/build/release/bin/handoff-probe", "--rounds", "5"], root)
        self.assertEqual(recorded, "benchmarks/harness/bench.py all --build-dir build/release "
                                   "build/release/bin/handoff-probe --rounds 5")
        self.assertNotIn(root, recorded)


class LoopPeers(unittest.TestCase):
    """The loop peers' runner: the rotation, the merge over rounds, the peers not built."""

    def test_each_round_starts_one_peer_later(self):
        peers = ["libuv", "asio", "asyncio"]
        self.assertEqual([loop_peers.rotation(peers, i)[0] for i in range(4)],
                         ["libuv", "asio", "asyncio", "libuv"])
        self.assertEqual(loop_peers.rotation(peers, 1), ["asio", "asyncio", "libuv"])
        self.assertEqual(loop_peers.rotation([], 3), [])

    def test_verdicts_pair_our_rounds_with_each_target_peers_per_workload(self):
        # Five rounds of per-op CPU: ours against libuv and Asio on w, ours against libuv on x.
        per_round_values = {("ourloop", "w"): [2, 2.1, 1.9, 2, 2.2], ("libuv", "w"): [5, 5.2, 4.8, 5, 5.1],
                            ("boost-asio", "w"): [2, 2.1, 1.8, 2.1, 2.2],
                            ("ourloop", "x"): [10, 11, 10, 9, 10], ("libuv", "x"): [2, 2, 3, 2, 2]}
        per_round = [{"reports": {}} for _ in range(5)]
        for (loop, workload), values in per_round_values.items():
            for i, v in enumerate(values):
                per_round[i]["reports"].setdefault(loop, {"results": []})["results"].append(
                    {"workload": workload, "cpu_us_per_op": {"median": v, "min": v, "max": v}})
        def line(loop, workload):
            vs = sorted(per_round_values[(loop, workload)])
            return {"loop": loop, "workload": workload, "rounds": 5,
                    "cpu_us_per_op": {"median": vs[2], "min": vs[0], "max": vs[-1]}}
        results = [line("ourloop", "w"), line("libuv", "w"), line("boost-asio", "w"),
                   line("ourloop", "x"), line("libuv", "x")]
        loop_peers.add_verdicts(results, per_round)
        self.assertEqual(results[0]["verdict_cpu_us_per_op_vs_libuv"], "ahead")
        self.assertEqual(results[0]["verdict_cpu_us_per_op_vs_boost-asio"], "undecided")
        self.assertAlmostEqual(results[0]["ratio_cpu_us_per_op_vs_libuv"], 0.4)
        self.assertEqual(results[3]["verdict_cpu_us_per_op_vs_libuv"], "behind")
        self.assertEqual(results[3]["verdict_cpu_us_per_op_vs_boost-asio"], "undecided")  # Asio ran no x
        self.assertNotIn("verdict_cpu_us_per_op_vs_libuv", results[1])  # only our loops' lines

    def test_merge_takes_median_min_max_over_rounds_per_loop_and_workload(self):
        def one(loop, workload, cpu, sleeps=None):
            r = {"loop": loop, "workload": workload, "ops": 10, "rounds": 1,
                 "cpu_us_per_op": {"median": cpu, "min": cpu, "max": cpu},
                 "wall_us_per_op": {"median": cpu * 2, "min": cpu * 2, "max": cpu * 2}}
            if sleeps is not None:
                r["wake_check_sleeps"] = sleeps
            return r
        merged = loop_peers.merge([
            [one("libuv", "chain", 3.0), one("libuv", "timer", 1.0, sleeps=1),
             one("libuv", "chain", 1.0), one("libuv", "timer", 2.0, sleeps=2),
             one("libuv", "chain", 2.0), one("libuv", "timer", 9.0, sleeps=1)],
            [one("asyncio", "chain", 5.0)]])
        self.assertEqual([(m["loop"], m["workload"], m["rounds"]) for m in merged],
                         [("libuv", "chain", 3), ("libuv", "timer", 3), ("asyncio", "chain", 1)])
        self.assertEqual(merged[0]["cpu_us_per_op"], {"median": 2.0, "min": 1.0, "max": 3.0})
        self.assertEqual(merged[0]["wall_us_per_op"], {"median": 4.0, "min": 2.0, "max": 6.0})
        self.assertEqual(merged[1]["wake_check_sleeps_max"], 2)
        self.assertNotIn("wake_check_sleeps_max", merged[0])

    def test_a_workload_not_supported_is_merged_and_printed_without_figures(self):
        lacking = {"loop": "ourloop", "workload": "executor_round_trip", "ops": 10, "rounds": 1,
                   "not_supported": "not written yet"}
        merged = loop_peers.merge([[lacking], [dict(lacking)]])
        self.assertEqual(merged, [{"loop": "ourloop", "workload": "executor_round_trip", "ops": 10,
                                   "rounds": 2, "not_supported": "not written yet"}])

    def test_a_binary_peer_gets_its_arguments_before_the_shared_ones(self):
        peer = loop_peers.Peer("ourloop-coord", binary="loop-peer-ourloop",
                               args=("--hand-in", "coordinator"))
        self.assertEqual(loop_peers.peer_argv(peer, "/b", "/r"),
                         ["/b/bin/loop-peer-ourloop", "--hand-in", "coordinator"])

    def test_against_runs_our_loop_from_both_builds_beside_the_controls(self):
        peers = loop_peers.against_peers("/other")
        self.assertEqual([p.loop for p in peers], ["ourloop", "ourloop-against", "libuv", "boost-asio"])
        self.assertEqual(loop_peers.peer_argv(peers[0], "/b", "/r"),
                         ["/b/bin/loop-peer-ourloop", "--hand-in", "direct"])
        self.assertEqual(loop_peers.peer_argv(peers[1], "/b", "/r"),
                         ["/other/bin/loop-peer-ourloop", "--hand-in", "direct"])
        self.assertEqual(loop_peers.peer_argv(peers[2], "/b", "/r"), ["/b/bin/loop-peer-libuv"])

    def test_the_other_builds_results_are_named_by_its_peer_and_not_pooled_with_ours(self):
        peers = loop_peers.against_peers("/other")
        def report():
            return {"results": [{"loop": "ourloop", "workload": "w", "ops": 1,
                                 "cpu_us_per_op": {"median": 1.0, "min": 1.0, "max": 1.0}}]}
        ours = loop_peers.labelled(report(), peers[0])["results"]
        theirs = loop_peers.labelled(report(), peers[1])["results"]
        merged = loop_peers.merge([ours, theirs])
        self.assertEqual([(m["loop"], m["rounds"]) for m in merged],
                         [("ourloop", 1), ("ourloop-against", 1)])

    def test_against_judges_our_loop_against_the_other_build_and_not_itself(self):
        values = {"ourloop": [1.0] * 6, "ourloop-against": [2.0] * 6, "libuv": [1.0] * 6}
        per_round = [{"reports": {loop: {"results": [
            {"workload": "w", "cpu_us_per_op": {"median": v[i], "min": v[i], "max": v[i]}}]}
            for loop, v in values.items()}} for i in range(6)]
        results = [{"loop": loop, "workload": "w", "cpu_us_per_op": {"median": v[0]}}
                   for loop, v in values.items()]
        loop_peers.add_verdicts(results, per_round, ("ourloop-against", "libuv", "boost-asio"))
        self.assertEqual(results[0]["verdict_cpu_us_per_op_vs_ourloop-against"], "ahead")
        self.assertEqual(results[1]["verdict_cpu_us_per_op_vs_libuv"], "behind")
        self.assertNotIn("verdict_cpu_us_per_op_vs_ourloop-against", results[1])

    def test_a_build_trees_revision_is_read_from_its_cache(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(report.build_revision(tmp), "unknown")  # no CMakeCache.txt
            with open(os.path.join(tmp, "CMakeCache.txt"), "w", encoding="utf-8") as f:
                f.write(f"CMAKE_HOME_DIRECTORY:INTERNAL={REPO}\n")
            head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                  capture_output=True, text=True).stdout.strip()
            self.assertEqual(report.build_revision(tmp).split("+")[0], head)
            with open(os.path.join(tmp, "CMakeCache.txt"), "w", encoding="utf-8") as f:
                f.write(f"CMAKE_HOME_DIRECTORY:INTERNAL={tmp}\n")  # not a git tree
            self.assertEqual(report.build_revision(tmp), "unknown")

    def test_against_a_build_without_our_loop_fails_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing, failures = loop_peers.run_loop_peers(
                build_dir=tmp, out_dir=tmp, repo_root=tmp, mode="quick", argv=["bench.py"],
                reproduce_argv=["bench.py"], against=os.path.join(tmp, "no-such-build"),
                stream=io.StringIO())
            self.assertEqual(len(failures), 1)
            self.assertIn("nothing to compare with", failures[0])
            self.assertTrue(any("ourloop-against" in m for m in missing))
            self.assertEqual(glob.glob(os.path.join(tmp, "**", "*.json"), recursive=True), [])

    def test_a_peer_not_built_is_not_measured_and_nothing_is_written(self):
        with tempfile.TemporaryDirectory() as tmp:
            peer = loop_peers.Peer("nothing", binary="no-such-peer")
            missing, failures = loop_peers.run_loop_peers(
                build_dir=tmp, out_dir=tmp, repo_root=tmp, mode="quick", argv=["bench.py"],
                reproduce_argv=["bench.py"], peers=[peer], stream=io.StringIO())
            self.assertEqual(failures, [])
            self.assertEqual(len(missing), 1)
            self.assertIn("no-such-peer not built", missing[0])
            self.assertFalse(os.path.exists(os.path.join(tmp, "04-turn-shape", "loop-peers.json")))


class ReadablePlots(unittest.TestCase):
    """The plots are drawn to be read in the book's column: at most six arms a
    panel, the smallest text recorded in the PNG for the browser check, a cut label refused,
    and `bench.py replot` redraws a committed record without measuring."""

    def test_arms_in_panels_of_six_families_kept_together(self):
        arms = [f"{f}-{n}" for f in ("shared", "chained", "elastic") for n in (1, 2, 4, 8)] + ["inline"]
        self.assertEqual(report.arm_panels(arms), [arms[0:4], arms[4:8], arms[8:13]])
        self.assertEqual(report.arm_panels(["a", "b", "c"]), [["a", "b", "c"]])
        self.assertTrue(all(len(p) <= 6 for p in report.arm_panels([f"x-{i}" for i in range(14)])))

    def test_records_its_smallest_text_and_refuses_a_cut_label(self):
        from PIL import Image   # the chunk as any PNG reader sees it (the book's width check too)
        with tempfile.TemporaryDirectory() as tmp:
            fig, (ax,) = report.readable_figure()
            ax.bar([0, 1], [1, 2])
            px = report.save_readable(fig, os.path.join(tmp, "ok.png"), {"cpu_model": "test"})
            self.assertAlmostEqual(px, report.PLOT_FONT_PT * report.PLOT_DPI / 72, places=3)
            with Image.open(os.path.join(tmp, "ok.png")) as im:
                im.load()   # the text chunks after the image data are read with it
                meta = dict(im.text)
            self.assertAlmostEqual(float(meta[report.TEXT_KEY]), px, places=1)
            self.assertIn("test", meta["Description"])
            fig, (ax,) = report.readable_figure()
            ax.bar([0, 1], [1, 2])
            fig.text(0.7, 0.5, "a label far too long to fit on the right of this canvas")
            with self.assertRaises(report.PlotError):
                report.save_readable(fig, os.path.join(tmp, "cut.png"), {})

    def test_replot_redraws_a_committed_record(self):
        src = os.path.join(bench.DEFAULT_OUT, "04-turn-shape", "churn.json")
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(src, os.path.join(tmp, "churn.json"))
            written = bench.replot_one(os.path.join(tmp, "churn.json"))
            self.assertEqual(sorted(os.path.basename(w) for w in written),
                             ["churn-pg_opened_per_req.png", "churn-rps.png",
                              "churn-server_us_per_req.png", "churn.csv", "churn.json"])
            # The CSV derived again from the cells says what the committed one says, column
            # for column (a column the harness has since learned to derive may be added).
            with open(src[:-len(".json")] + ".csv", encoding="utf-8") as f:
                committed = list(csv.DictReader(f))
            with open(os.path.join(tmp, "churn.csv"), encoding="utf-8") as f:
                derived = list(csv.DictReader(f))
            self.assertEqual(len(derived), len(committed))
            for old, new in zip(committed, derived):
                self.assertEqual({k: new[k] for k in old}, old)


# A stand-in for valgrind --tool=callgrind over a loop peer: it writes the peer's one-result
# report (the workload's count: --ops, a tenth for the echo) and a callgrind file whose total
# is a fixed cost plus PER_OP instructions for every operation the peer runs, its warm-up
# at a tenth of the count included, as the real peers do.
FAKE_VALGRIND = """#!/usr/bin/python3
import json, os, sys
args = sys.argv[1:]
out = next(a.split("=", 1)[1] for a in args if a.startswith("--callgrind-out-file="))
peer = next(a for a in args if "/bin/" in a)
loop = os.path.basename(peer).replace("loop-peer-", "") + ("-callclock" if "--timer-clock" in args else "")
workload = args[args.index("--only") + 1]
ops = int(args[args.index("--ops") + 1])
ops = ops // 10 if workload == "tcp_echo" else ops
PER_OP = {"ourloop": 200, "ourloop-callclock": 230, "libuv": 250}
run = ops + max(1, ops // 10)
with open(out, "w") as f:
    f.write("events: Ir\\ntotals: %d\\n" % (5_000_000 + PER_OP[loop] * run))
json.dump({"tool": "fake", "machine": {}, "results": [{"loop": loop, "workload": workload, "ops": ops}]},
          open(args[args.index("--json") + 1], "w"))
"""


class CallgrindSlope(unittest.TestCase):
    """harness/callgrind_slope (chapter 04): instructions per operation are the slope between
    two counts' totals, with the peers' warm-up counted, and nothing is filed without valgrind."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="callgrind-")
        self.build, self.out = f"{self.root}/build", f"{self.root}/out"
        os.makedirs(f"{self.build}/bin")
        for name in ("loop-peer-ourloop", "loop-peer-libuv"):
            with open(f"{self.build}/bin/{name}", "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(f"{self.build}/bin/{name}", 0o755)
        self.valgrind = f"{self.root}/valgrind"
        with open(self.valgrind, "w") as f:
            f.write(FAKE_VALGRIND)
        os.chmod(self.valgrind, 0o755)

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def run_slope(self, valgrind):
        from harness.records import callgrind_slope
        with mock.patch.object(callgrind_slope.shutil, "which", return_value=valgrind):
            return callgrind_slope.run_callgrind(
                build_dir=self.build, out_dir=self.out, repo_root=self.root, mode="full",
                argv=["bench.py", "loop-instructions"], reproduce_argv=["bench.py", "loop-instructions"],
                stream=io.StringIO())

    def test_the_slope_is_the_instructions_of_one_operation_warm_up_included(self):
        self.assertEqual(self.run_slope(self.valgrind), ([], []))
        with open(f"{self.out}/04-turn-shape/loop-instructions.csv", encoding="utf-8") as f:
            lines = {(r["loop"], r["workload"]): r for r in csv.DictReader(f)}
        self.assertEqual(len(lines), 7)   # 3 workloads x (ourloop, libuv), the clock arm's timer
        for (loop, workload), want in {("ourloop", "cancelled_timer"): 200,
                                       ("ourloop", "tcp_echo"): 200,
                                       ("ourloop-callclock", "cancelled_timer"): 230,
                                       ("libuv", "call_soon_chain"): 250}.items():
            line = lines[(loop, workload)]
            self.assertAlmostEqual(float(line["instructions_per_op_median"]), want, delta=0.05)
            self.assertLessEqual(float(line["instructions_per_op_min"]),
                                 float(line["instructions_per_op_max"]))
        self.assertEqual(lines[("libuv", "tcp_echo")]["ops_small"], "2200")
        with open(f"{self.out}/04-turn-shape/loop-instructions.json", encoding="utf-8") as f:
            doc = json.load(f)
        self.assertIn("git_rev", doc["machine"])
        self.assertEqual(len(doc["results"][0]["runs"]["small"]), 2)

    def test_without_valgrind_nothing_is_measured_or_filed(self):
        missing, failures = self.run_slope(None)
        self.assertEqual(failures, [])
        self.assertIn("valgrind is not installed", missing[0])
        self.assertFalse(os.path.exists(f"{self.out}/04-turn-shape/loop-instructions.csv"))


if __name__ == "__main__":
    unittest.main()
