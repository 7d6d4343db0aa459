"""harness/results/summary: per-cell metrics, medians over rounds, and verdicts (chapter 01).
Changed in chapters 03, 04, 05: each chapter's counter columns.

Role: the arithmetic between raw samples and the book's tables. A cell is one
(round, row, arm) run; its metrics come from the client's counts and the CPU the
server's threads spent in the measured window. Over rounds each metric becomes a
median with its min-max range, and a comparison of two arms (or two rows) gets
harness/results/verdict.py's verdict (ahead, behind, level or undecided) from its rounds' paired
ratios. Beside the medians, each (row, arm) keeps
every run's max latency and how many runs stalled (max past stall_us, seed 004).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from harness.results import verdict
from harness.run import procfs

# name -> (higher is better, label, format). One table, used by the spec checker,
# the CSV writer, the plots and the stdout table.
METRICS: dict[str, tuple[bool, str, str]] = {
    "rps": (True, "requests/s", "{:.0f}"),
    "loop_us_per_req": (False, "loop CPU µs/request", "{:.2f}"),
    # The part of it the kernel was charged with (procfs: stime's share of the loop's ticks).
    "loop_kernel_us_per_req": (False, "loop CPU in the kernel µs/request", "{:.2f}"),
    "pool_us_per_req": (False, "pool CPU µs/request", "{:.2f}"),
    "other_us_per_req": (False, "other threads' CPU µs/request", "{:.2f}"),
    "server_us_per_req": (False, "server CPU µs/request (all threads)", "{:.2f}"),
    "balancer_us_per_req": (False, "balancer CPU µs/request (HAProxy's thread)", "{:.2f}"),
    "loop_cpu_pct": (False, "loop CPU % of window", "{:.1f}"),
    "pool_cpu_pct": (False, "pool CPU % of window", "{:.1f}"),
    "client_us_per_req": (False, "client CPU µs/request", "{:.2f}"),
    "p50_us": (False, "p50 latency µs", "{:.0f}"),
    "p90_us": (False, "p90 latency µs", "{:.0f}"),
    "p99_us": (False, "p99 latency µs", "{:.0f}"),
    "p99_9_us": (False, "p99.9 latency µs", "{:.0f}"),
    "max_us": (False, "max latency µs", "{:.0f}"),
    "errors": (False, "errors", "{:.0f}"),
    "busy_pct": (False, "rest of machine, % of a core", "{:.1f}"),
    # Sleeps, from /proc (every server, peers included): voluntary context switches,
    # the times a thread blocked and the scheduler switched it out.
    "loop_sleeps_per_req": (False, "loop sleeps (voluntary context switches)/request", "{:.3f}"),
    "loop_preemptions_per_req": (False, "loop preemptions (involuntary context switches)/request",
                                 "{:.3f}"),
    "pool_sleeps_per_req": (False, "pool sleeps (voluntary context switches)/request", "{:.3f}"),
    "server_sleeps_per_req": (False, "server sleeps (all threads)/request", "{:.3f}"),
    # The stage's own counters, from GET /stats (stages only; empty for the peers).
    "parks_per_req": (False, "pool parks/request", "{:.3f}"),
    "wakes_sent_per_req": (False, "wakes sent to parked pool threads/request", "{:.3f}"),
    "spin_catches_per_req": (True, "jobs caught by a spinning pool thread/request", "{:.3f}"),
    "completion_pokes_per_req": (False, "completion pokes to the loop/request", "{:.3f}"),
    "stolen_pokes_per_req": (False, "pokes read by a pool thread that was not parked/request",
                             "{:.3f}"),
    "chained_wakes_per_req": (False, "wakes a pool thread passed on to a parked sibling/request",
                              "{:.3f}"),
    "age_wakes_per_req": (False, "wakes the loop sent for jobs standing past T/request",
                          "{:.3f}"),
    "loop_blocking_waits_per_req": (False, "loop epoll_waits allowed to block/request",
                                    "{:.3f}"),
    "loop_polls_per_req": (False, "loop zero-timeout epoll_waits/request", "{:.3f}"),
    "loop_callbacks_per_req": (False, "callbacks the loop's event loop ran/request", "{:.3f}"),
    # Chapter 04, part 2: the workers' upstream pools (GET /db), as the pools count them.
    "pg_opened_per_req": (False, "upstream connections the pools opened (each a new PostgreSQL "
                          "session)/request", "{:.4f}"),
    "pg_closed_on_checkin_per_req": (False, "upstream connections closed at check-in (idle "
                                     "queue full)/request", "{:.4f}"),
    "pg_waits_per_req": (False, "checkouts that waited for a connection/request", "{:.3f}"),
    "pg_checkin_turns_per_req": (False, "loop turns with a check-in/request (its inverse: "
                                 "check-ins per such turn)", "{:.3f}"),
    "pg_burst_checkins_per_req": (False, "check-ins after pool_size others in their turn"
                                  "/request", "{:.4f}"),
    # PostgreSQL's own count (pg_stat_database.sessions) over the server's life, warm-up
    # included, per request served in it (specs that need postgres; harness/run/postgres.py).
    "pg_sessions_per_req": (False, "new PostgreSQL sessions (its own count, server's life)"
                            "/request", "{:.4f}"),
    # How evenly the pool's threads shared the work: the least-served pool thread's requests
    # over the most-served one's, from /stats per thread (1: even; a thread that parked and
    # was not woken for part of the window shows here and in no per-request column).
    "pool_least_share": (True, "least-served pool thread's requests / most-served's", "{:.2f}"),
    "handoff_syscalls_per_req": (False, "hand-off sends and receives (system calls)/request",
                                 "{:.2f}"),
    "loop_syscalls_per_req": (False, "loop system calls/request", "{:.2f}"),
    "pool_syscalls_per_req": (False, "pool system calls/request", "{:.2f}"),
    # Chapter 05: the stack lock (stack::NetworkStack), each worker's loop thread's counters,
    # named after Onload's stackdump counters (seed 004).
    "stack_contends_per_req": (False, "sends whose try-lock of the stack lock failed/request "
                               "(tcp_send_ni_lock_contends)", "{:.4f}"),
    "stack_deferred_per_req": (False, "sends left in the lock word for the holder/request "
                               "(deferred_work)", "{:.4f}"),
    "stack_wakes_per_req": (False, "FUTEX_WAKEs sent by unlocks of the stack lock/request "
                            "(lock_wakes)", "{:.4f}"),
    "stack_pool_empty_per_req": (False, "sends that found the packet pool empty/request "
                                 "(tcp_send_nonb_pool_empty)", "{:.4f}"),
    "stack_handoffs_per_req": (False, "unlocks that handed the stack lock to a starving "
                               "waiter/request", "{:.4f}"),
    "stack_sleeps_per_req": (False, "FUTEX_WAITs in blocking takes of the stack lock/request",
                             "{:.4f}"),
    "stack_wait_us_per_req": (False, "µs in blocking takes of the stack lock (buzz and sleep)"
                              "/request", "{:.3f}"),
    "stack_long_waits_per_req": (False, "blocking takes of the stack lock longer than 1 ms"
                                 "/request", "{:.4g}"),
}

# A run whose worst latency (max_us) exceeds this is a stall (seed 004: a pool worker's
# sessions held up behind the stack lock); a spec may set its own ([spec] stall_us).
STALL_US = 10_000.0

# Metrics that get median/min/max columns in the CSV.
CSV_METRICS = ("rps", "loop_us_per_req", "loop_kernel_us_per_req", "pool_us_per_req", "server_us_per_req",
               "pool_cpu_pct", "loop_cpu_pct", "client_us_per_req", "p50_us", "p99_us",
               "p99_9_us", "loop_sleeps_per_req", "loop_preemptions_per_req", "pool_sleeps_per_req",
               "server_sleeps_per_req", "parks_per_req", "wakes_sent_per_req",
               "spin_catches_per_req", "completion_pokes_per_req", "stolen_pokes_per_req",
               "chained_wakes_per_req", "age_wakes_per_req", "loop_blocking_waits_per_req",
               "loop_polls_per_req", "loop_callbacks_per_req", "pg_opened_per_req",
               "pg_closed_on_checkin_per_req", "pg_waits_per_req", "pg_checkin_turns_per_req",
               "pg_burst_checkins_per_req", "pg_sessions_per_req",
               "handoff_syscalls_per_req",
               "loop_syscalls_per_req", "pool_syscalls_per_req", "max_us",
               "stack_contends_per_req", "stack_deferred_per_req", "stack_wakes_per_req",
               "stack_pool_empty_per_req", "stack_handoffs_per_req",
               "stack_sleeps_per_req", "stack_wait_us_per_req", "stack_long_waits_per_req",
               "balancer_us_per_req", "pool_least_share")

# Counter metrics: metric -> (counters in /stats, summed; the role whose threads must
# exist; whether only that role's threads are summed). The hand-off counters are summed
# over every thread (the loop sends the wakes, the pool threads park and poke). A
# metric whose role has no thread in /stats (an inline arm has no pool) is None, not 0.
COUNTER_METRICS: dict[str, tuple[tuple[str, ...], str, bool]] = {
    "parks_per_req": (("parks",), "pool", False),
    "wakes_sent_per_req": (("wakes_sent",), "pool", False),
    "spin_catches_per_req": (("spin_catches",), "pool", False),
    "completion_pokes_per_req": (("completion_pokes",), "pool", False),
    # Chapter 03's: a stolen poke and a chained wake are counted by the pool thread, an age
    # wake by the loop that sends it; like the wakes above they are summed over every thread
    # and exist only where there is a pool.
    "stolen_pokes_per_req": (("stolen_pokes",), "pool", False),
    "chained_wakes_per_req": (("chained_wakes",), "pool", False),
    "age_wakes_per_req": (("age_wakes",), "pool", False),
    "loop_blocking_waits_per_req": (("loop_waits",), "loop", True),
    "loop_polls_per_req": (("loop_polls",), "loop", True),
    # Chapter 04's: callbacks run on a worker's event loop (0 on stages before it).
    "loop_callbacks_per_req": (("loop_callbacks",), "loop", True),
    # Chapter 04, part 2: each worker's pool publishes into its loop thread's counters.
    "pg_opened_per_req": (("pg_opened",), "loop", True),
    "pg_closed_on_checkin_per_req": (("pg_closed_on_checkin",), "loop", True),
    "pg_waits_per_req": (("pg_waits",), "loop", True),
    "pg_checkin_turns_per_req": (("pg_checkin_turns",), "loop", True),
    "pg_burst_checkins_per_req": (("pg_burst_checkins",), "loop", True),
    "handoff_syscalls_per_req": (("handoff_sends", "handoff_recvs"), "pool", False),
    "loop_syscalls_per_req": (("syscalls",), "loop", True),
    "pool_syscalls_per_req": (("syscalls",), "pool", True),
    # Chapter 05's: every worker's loop thread counts its own sends' and unlocks' dealings
    # with the stack lock (code/stats/thread_stats.h); 0 on stages before the stack model.
    "stack_contends_per_req": (("stack_lock_contends",), "loop", True),
    "stack_deferred_per_req": (("stack_deferred_work",), "loop", True),
    "stack_wakes_per_req": (("stack_lock_wakes",), "loop", True),
    "stack_pool_empty_per_req": (("stack_pool_empty_sends",), "loop", True),
    "stack_handoffs_per_req": (("stack_lock_handoffs",), "loop", True),
    "stack_sleeps_per_req": (("stack_lock_sleeps",), "loop", True),
    "stack_wait_us_per_req": (("stack_lock_wait_us",), "loop", True),
    "stack_long_waits_per_req": (("stack_lock_long_waits",), "loop", True),
}


def fmt(metric: str, value: float | None) -> str:
    if value is None:
        return ""
    return METRICS[metric][2].format(value)


def pool_least_share(server_counters: dict | None) -> float | None:
    """min/max of the pool threads' requests over the window (serverstats.delta's
    per_thread), or None without /stats or with no pool thread that served any."""
    if not server_counters:
        return None
    served = [t["counters"].get("requests", 0) for t in server_counters.get("per_thread", [])
              if t.get("role") == "pool"]
    if not served or max(served) <= 0:
        return None
    return min(served) / max(served)


def with_counter_shares(cell: dict) -> dict:
    """The cell's metrics with pool_least_share filled from its recorded /stats counters,
    for a cell measured before the harness derived it (bench.py replot)."""
    metrics = cell.get("metrics") or {}
    if cell.get("ok") and "pool_least_share" not in metrics:
        metrics["pool_least_share"] = pool_least_share(cell.get("server_counters"))
    return cell


def cell_metrics(*, requests: int, rps: float, latency_us: dict, errors_total: int,
                 cpu: procfs.CpuDelta, client_ticks: float, window_s: float,
                 busy_pct: float, counters: dict[str, dict[str, int]] | None = None,
                 server_counters: dict | None = None) -> dict[str, float | None]:
    """The metrics of one cell.

    CPU and sleeps per request divide what the server's threads spent inside the
    harness's window (from just before the client starts to just after it exits) by
    the requests the client completed; so do the counters, from the stage's /stats
    read around the same window (`counters`: per role, as serverstats.delta gives;
    None for a peer). Roles absent from the server give None, not zero: an inline arm
    has no pool, which is different from a pool that cost nothing.
    """
    loop = procfs.group_us(cpu.per_role_us, procfs.LOOP_ROLES)
    loop_kernel_share = cpu.kernel_share(procfs.LOOP_ROLES)
    loop_kernel = None if loop is None or loop_kernel_share is None else loop * loop_kernel_share
    pool = procfs.group_us(cpu.per_role_us, procfs.POOL_ROLES)
    sleeps = cpu.per_role_sleeps
    loop_sleeps = procfs.group_us(sleeps, procfs.LOOP_ROLES)
    loop_preemptions = procfs.group_us(cpu.per_role_preemptions, procfs.LOOP_ROLES)
    pool_sleeps = procfs.group_us(sleeps, procfs.POOL_ROLES)
    all_sleeps = sum(sleeps.values()) if sleeps else None
    balancer = procfs.group_us(cpu.per_role_us, procfs.BALANCER_ROLES)
    other = sum(v for r, v in cpu.per_role_us.items()
                if r not in procfs.LOOP_ROLES | procfs.POOL_ROLES | procfs.BALANCER_ROLES)
    window_us = window_s * 1e6

    def per_req(us):
        return None if us is None or requests <= 0 else us / requests

    def pct(us):
        return None if us is None or window_us <= 0 else 100.0 * us / window_us

    counted: dict[str, float | None] = {}
    for metric, (names, role, role_only) in COUNTER_METRICS.items():
        if counters is None or role not in counters:
            counted[metric] = None
            continue
        summed = [counters[role]] if role_only else list(counters.values())
        counted[metric] = per_req(float(sum(c.get(k, 0) for c in summed for k in names)))

    return {
        "rps": rps,
        "loop_us_per_req": per_req(loop),
        "loop_kernel_us_per_req": per_req(loop_kernel),
        "pool_us_per_req": per_req(pool),
        "other_us_per_req": per_req(other),
        "server_us_per_req": per_req(cpu.threads_us),
        "balancer_us_per_req": per_req(balancer),
        "loop_cpu_pct": pct(loop),
        "pool_cpu_pct": pct(pool),
        "client_us_per_req": per_req(procfs.ticks_to_us(client_ticks)),
        "p50_us": latency_us.get("p50"),
        "p90_us": latency_us.get("p90"),
        "p99_us": latency_us.get("p99"),
        "p99_9_us": latency_us.get("p99_9"),
        "max_us": latency_us.get("max"),
        "errors": float(errors_total),
        "busy_pct": busy_pct,
        "loop_sleeps_per_req": per_req(loop_sleeps),
        "loop_preemptions_per_req": per_req(loop_preemptions),
        "pool_sleeps_per_req": per_req(pool_sleeps),
        "server_sleeps_per_req": per_req(all_sleeps),
        "pool_least_share": pool_least_share(server_counters),
        **counted,
    }


@dataclass(frozen=True)
class Range:
    median: float
    lo: float
    hi: float
    n: int

    def as_dict(self) -> dict:
        return {"median": self.median, "min": self.lo, "max": self.hi, "n": self.n}


def over_rounds(values: list[float | None]) -> Range | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    return Range(statistics.median(present), min(present), max(present), len(present))


def is_stall(max_us: float | None, stall_us: float = STALL_US) -> bool:
    """A run stalled when its worst latency exceeded the threshold (a missing max is not
    a stall: a peer client that reports none says nothing either way)."""
    return max_us is not None and max_us > stall_us


def summarize(cells: list[dict], rows: list[str], arms: list[str],
              busy_threshold_pct: float, stall_us: float = STALL_US
              ) -> dict[tuple[str, str], dict]:
    """Group cells by (row, arm) and reduce each metric over the successful rounds.

    Beside the medians, the stall view (seed 004): each successful run's worst latency in
    round order (max_us_runs; a median of maxima hides one run's 0.85 s), and how many of
    them exceeded stall_us (stall_runs)."""
    out = {}
    for row in rows:
        for arm in arms:
            mine = [c for c in cells if c["row"] == row and c["arm"] == arm]
            ok = sorted((c for c in mine if c.get("ok")), key=lambda c: c.get("round", 0))
            metrics = {m: over_rounds([c["metrics"].get(m) for c in ok]) for m in METRICS}
            maxima = [c["metrics"].get("max_us") for c in ok]
            out[(row, arm)] = {
                "row": row, "arm": arm, "rounds": len(ok), "failed_rounds": len(mine) - len(ok),
                "errors_total": int(sum(c["metrics"]["errors"] for c in ok)),
                "busy_rounds": sum(1 for c in ok
                                   if c["metrics"]["busy_pct"] > busy_threshold_pct),
                "stall_us": stall_us,
                "stall_runs": sum(1 for v in maxima if is_stall(v, stall_us)),
                "max_us_runs": maxima,
                "metrics": metrics,
            }
    return out


def round_values(cells: list[dict], key: tuple[str, str], metric: str) -> dict[int, float]:
    """{round: value} of one (row, arm) over its successful cells that have the metric."""
    return {c.get("round", 0): c["metrics"][metric] for c in cells
            if (c["row"], c["arm"]) == key and c.get("ok") and c["metrics"].get(metric) is not None}


def compare(summary: dict[tuple[str, str], dict], compares, rows: list[str],
            arms: list[str], margins: dict[str, float], cells: list[dict]) -> list[dict]:
    """One verdict per comparison, metric, and row (arm comparisons) or arm (row
    comparisons): harness/results/verdict.py's, from each round's a/b (the two sides of a round
    ran back to back, so a drift of the host between rounds moves both sides of a round's
    ratio and not the ratio), against the spec's margin for the metric. Beside it the
    ratio of medians and the per-round ratios' median and min-max (paired_ratio)."""
    out = []
    for c in compares:
        within = rows if c.over == "arms" else arms
        for w in within:
            ka, kb = ((w, c.a), (w, c.b)) if c.over == "arms" else ((c.a, w), (c.b, w))
            if ka not in summary or kb not in summary:
                continue
            for m in c.metrics:
                ra, rb = summary[ka]["metrics"][m], summary[kb]["metrics"][m]
                ratio = (ra.median / rb.median
                         if ra is not None and rb is not None and rb.median else None)
                va, vb = round_values(cells, ka, m), round_values(cells, kb, m)
                v = verdict.of_rounds(va, vb, METRICS[m][0], verdict.margin_for(m, margins))
                ratios = [va[r] / vb[r] for r in sorted(va.keys() & vb.keys()) if vb[r]]
                out.append({
                    "a": c.a, "b": c.b, "over": c.over, "within": w, "metric": m,
                    "verdict": v.word, "verdict_text": v.text(),
                    "rounds_to_decide": v.rounds_to_decide,
                    "ratio": ratio,
                    "a_range": ra.as_dict() if ra else None,
                    "b_range": rb.as_dict() if rb else None,
                    "paired_ratio": over_rounds(ratios).as_dict() if ratios else None,
                })
    return out


def verdict_column(metric: str, b: str) -> str:
    return f"verdict_{metric}_vs_{b}"


def ratio_column(metric: str, b: str) -> str:
    return f"ratio_{metric}_vs_{b}"


def paired_ratio_column(metric: str, b: str) -> str:
    """The base name: the CSV has its _median, _min and _max over the rounds."""
    return f"paired_ratio_{metric}_vs_{b}"
