"""harness/run/runner: run one spec, round by round, and write its results (chapter 01).

Role: the measurement loop. For every round, every row, and every arm in that round's
rotated order (A B C, B C A, ...), one cell:

  1. start a fresh server process for the arm (loopback, port 0) and wait until it
     is ready; a fresh process per cell keeps cells independent (no state from the
     previous row's 256 connections, no idle arm beside the one being measured);
     the rows rotate too, so that two rows compared with each other (two clients,
     say) also take turns going first;
  2. warm it up with a short run of the row's own client;
  3. read a stage's own counters (GET /stats); snapshot every server thread's CPU
     (nanoseconds, from schedstat) and sleeps (voluntary context switches), the
     machine's busy jiffies and the harness's own CPU; run the measured client;
     snapshot again; read /stats again (the reads sit outside the CPU window);
  4. stop the server with SIGTERM and keep its exit status.

Per cell it keeps the raw samples (per thread, per role, the client's report) and the
derived metrics; then it reduces them over rounds, judges the declared comparisons,
and writes OUT/<chapter>/<name>.json, .csv, -runs.csv (a line per cell: its max latency,
whether it stalled) and -<metric>.png. A spec that says stall_samples has loadgen record
raw samples, and a run whose max exceeds the spec's stall_us leaves its slowest ones in
OUT/<chapter>/<name>-stalls/ (harness/run/stalls.py). Asked to resume (`bench.py reproduce`),
it keeps each finished cell in a journal and, run again, measures only the cells the journal
lacks (harness/run/journal.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

from harness.results import report
from harness.results import summary as sm
from harness.results import verdict
from harness.run import clients
from harness.run import journal
from harness.run import postgres
from harness.run import procfs
from harness.run import servers
from harness.run import serverstats
from harness.run import stalls
from harness.run.peers import PEERS
from harness.run.specfile import LOOPBACK_HOST, Spec, rotation

FORMAT_VERSION = 1


class MissingParts(RuntimeError):
    pass


def _self_ticks() -> float:
    t = os.times()
    return (t.user + t.system) * procfs.CLK_TCK


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def measure_cell(spec: Spec, arm, row, round_index: int, order: int, settings,
                 build_dir: str, repo_root: str, workdir: str,
                 stall_dir: str | None = None, host: str = LOOPBACK_HOST) -> dict:
    """One cell. With stall_dir (a spec that says stall_samples), a loadgen row's measured
    run records its raw samples, and a run whose max exceeds the spec's stall_us leaves
    its slowest ones in stall_dir (harness/run/stalls.py)."""
    cell = {"round": round_index, "order": order, "row": row.name, "arm": arm.name,
            "ok": False, "error": None}
    tag = f"r{round_index}-{row.name}-{arm.name}"
    server = servers.Server(arm, build_dir, repo_root, os.path.join(workdir, tag), host)
    bin_dir = os.path.join(build_dir, "bin")
    pg_sessions = postgres.SessionCounter() if "postgres" in spec.needs else None
    served = 0  # requests over the server's whole life (warm-up included), for pg_sessions
    try:
        if pg_sessions is not None:
            pg_sessions.start()
        server.start()
        cell["server_argv"] = server.argv
        url = server.url(row.path)
        if settings.warmup_s > 0:
            served += clients.run(row, url, settings.warmup_s, bin_dir, server.workdir,
                                  "warmup").requests
        if not server.alive():
            raise servers.StartError(f"arm {arm.name} died during warm-up")
        targets = server.targets()
        stats0 = _read_stats(server, cell)
        self0, m0 = _self_ticks(), procfs.machine_times()
        s0 = procfs.snapshot(targets)
        samples = (os.path.join(server.workdir, "measured-samples.csv")
                   if stall_dir is not None and row.client == "loadgen" else None)
        t0 = time.monotonic()
        result = clients.run(row, url, settings.duration_s, bin_dir, server.workdir,
                             "measured", samples_path=samples)
        t1 = time.monotonic()
        served += result.requests
        s1 = procfs.snapshot(targets)
        m1, self1 = procfs.machine_times(), _self_ticks()
        stats1 = _read_stats(server, cell) if stats0 is not None else None
        if not server.alive():
            raise servers.StartError(f"arm {arm.name} died during the measured window")
        if samples is not None and sm.is_stall(result.latency_us.get("max"), spec.stall_us):
            _keep_stall(cell, samples, stall_dir, stalls.file_name(round_index, row.name,
                                                                   arm.name), spec.stall_us)
        counted = serverstats.delta(stats0, stats1) if stats1 is not None else None
        window = t1 - t0
        cpu = procfs.delta(s0, s1)
        accounted = cpu.process_ticks + result.cpu_ticks + (self1 - self0)
        busy = procfs.other_busy_pct(m0, m1, accounted, window)
        cell.update(
            ok=True, window_s=window, client_argv=result.argv,
            client={"requests": result.requests, "rps": result.rps,
                    "duration_s": result.duration_s, "latency_us": result.latency_us,
                    "errors": result.errors, "cpu_us": procfs.ticks_to_us(result.cpu_ticks)},
            client_raw=result.raw,
            cpu={"source": cpu.cpu_source, "per_thread": cpu.per_thread,
                 "per_role_us": cpu.per_role_us, "per_role_sleeps": cpu.per_role_sleeps,
                 "process_us": procfs.ticks_to_us(cpu.process_ticks),
                 "lost_threads": cpu.lost_threads},
            server_counters=counted,
            machine_busy={"other_pct_of_core": busy,
                          "machine_busy_jiffies": m1.busy - m0.busy,
                          "accounted_jiffies": accounted},
            busy_machine=busy > spec.busy_threshold_pct,
            metrics=sm.cell_metrics(requests=result.requests, rps=result.rps,
                                    latency_us=result.latency_us,
                                    errors_total=result.errors_total, cpu=cpu,
                                    client_ticks=result.cpu_ticks, window_s=window,
                                    busy_pct=busy,
                                    counters=counted["per_role"] if counted else None,
                                    server_counters=counted))
    except (servers.StartError, clients.ClientError, OSError) as e:
        cell["error"] = str(e)
    finally:
        if server.proc is not None:
            cell["server_exit"] = server.stop()
            if cell["server_exit"] != 0:
                cell["server_stderr_tail"] = servers._tail(server.stderr_path)
        server.cleanup()
    if pg_sessions is not None and cell["ok"]:
        # PostgreSQL's own count, over the server's life: see harness/run/postgres.py.
        try:
            cell["pg_sessions"] = {"sessions": pg_sessions.stop(), "requests": served}
            cell["metrics"]["pg_sessions_per_req"] = (
                cell["pg_sessions"]["sessions"] / served if served > 0 else None)
        except (TimeoutError, subprocess.SubprocessError, ValueError) as e:
            cell.update(ok=False, error=f"PostgreSQL session count: {e}")
    return cell


def _keep_stall(cell: dict, samples: str, stall_dir: str, name: str, stall_us: float) -> None:
    """Keep a stalled run's slowest raw samples; a failure to is noted, not fatal."""
    try:
        info = stalls.keep(samples, os.path.join(stall_dir, name), stall_us)
        cell["stall_samples"] = {"file": os.path.join(os.path.basename(stall_dir), name),
                                 **info}
    except (stalls.SamplesError, OSError, ValueError) as e:
        cell["stall_samples_error"] = str(e)


def _read_stats(server: servers.Server, cell: dict) -> dict | None:
    """A stage's /stats, or None for a peer (which has none) or when the read fails
    (the cell still counts; its counter columns stay empty and the reason is kept)."""
    if server.arm.kind != "stage":
        return None
    try:
        return serverstats.fetch(server.host, server.port)
    except serverstats.StatsError as e:
        cell["server_stats_error"] = str(e)
        return None


def _progress(cell: dict, rounds: int) -> str:
    head = f"[{cell['round'] + 1}/{rounds}] {cell['row']:<12} {cell['arm']:<14}"
    if not cell["ok"]:
        return f"{head} FAILED: {cell['error'].splitlines()[0]}"
    m = cell["metrics"]
    parts = [f"{m['rps']:>9.0f} rps"]
    for key, label in (("loop_us_per_req", "loop"), ("pool_us_per_req", "pool"),
                       ("server_us_per_req", "server")):
        if m[key] is not None:
            parts.append(f"{label} {m[key]:.2f} µs/req")
    for key, label in (("loop_sleeps_per_req", "loop sleeps"),
                       ("pool_sleeps_per_req", "pool sleeps"), ("parks_per_req", "parks")):
        if m[key] is not None:
            parts.append(f"{label} {m[key]:.2f}/req")
    parts.append(f"p99 {m['p99_us']:.0f} µs" if m["p99_us"] is not None else "")
    parts.append(f"max {m['max_us']:.0f} µs" if m.get("max_us") is not None else "")
    if cell.get("stall_samples"):
        parts.append(f"STALL (samples in {cell['stall_samples']['file']})")
    parts.append(f"rest {m['busy_pct']:.0f}%" + (" BUSY" if cell["busy_machine"] else ""))
    if cell.get("server_exit"):
        parts.append(f"server exit {cell['server_exit']}")
    return head + "  " + "  ".join(p for p in parts if p)


def check_parts(spec: Spec, build_dir: str, repo_root: str) -> tuple[list, list, list[str]]:
    """The arms and rows that can run in this build, and why the others cannot."""
    why = []
    arms = []
    for a in spec.arms:
        reason = servers.Server(a, build_dir, repo_root, "/nonexistent").missing()
        if reason:
            why.append(f"arm {a.name}: {reason}")
        else:
            arms.append(a)
    rows = []
    for r in spec.rows:
        reason = clients.missing(r, os.path.join(build_dir, "bin"))
        if reason:
            why.append(f"row {r.name}: {reason}")
        else:
            rows.append(r)
    return arms, rows, why


def derive(spec_view: Spec, cells: list[dict]):
    """What a run's CSV and verdicts say, from its cells alone: the per-(row, arm) summary,
    the comparisons that apply to the arms and rows measured, and their verdicts (ranges and
    round by round). `bench.py replot` calls it on a recorded run, so a record's derived
    files can always be rewritten from what it measured."""
    row_names = [r.name for r in spec_view.rows]
    arm_names = [a.name for a in spec_view.arms]
    cells = [sm.with_counter_shares(c) for c in cells]
    summ = sm.summarize(cells, row_names, arm_names, spec_view.busy_threshold_pct,
                        spec_view.stall_us)
    compares = [c for c in spec_view.compares
                if (c.over == "arms" and {c.a, c.b} <= set(arm_names))
                or (c.over == "rows" and {c.a, c.b} <= set(row_names))]
    comparisons = sm.compare(summ, compares, row_names, arm_names, spec_view.margins, cells)
    return summ, compares, comparisons


def more_rounds(spec_view: Spec, cells: list[dict], done: int, settings,
                elapsed_s: float) -> tuple[bool, str]:
    """Whether to run another round, and why not: the mode's `rounds` always; past them,
    only with max_rounds set, while some verdict is undecided and the rounds it says would
    decide it are within max_rounds, and while one more round (at the pace so far) fits in
    budget_s. Every round run stays in the record, so each verdict can be recomputed."""
    if done < settings.rounds:
        return True, ""
    if done >= max(settings.max_rounds, settings.rounds):
        return False, f"{done} rounds, the mode's {'max_rounds' if settings.max_rounds else 'rounds'}"
    if settings.budget_s and elapsed_s + elapsed_s / done > settings.budget_s:
        return False, f"{done} rounds: another would pass the budget of {settings.budget_s:.0f} s"
    _, _, comparisons = derive(spec_view, cells)
    open_ = [c for c in comparisons if c["verdict"] == "undecided"
             and (c.get("rounds_to_decide") or 0) <= settings.max_rounds]
    if not open_:
        return False, f"{done} rounds: every verdict decided, or beyond max_rounds' reach"
    return True, f"{len(open_)} verdict(s) undecided"


def write_summary_csv(path: str, spec_view: Spec, summ: dict, compares, comparisons) -> None:
    report.write_csv(path, report.csv_header(compares),
                     report.csv_rows(spec_view, summ, comparisons))


def run_spec(spec: Spec, *, mode: str, build_dir: str, out_dir: str, repo_root: str,
             argv: list[str], reproduce_argv: list[str], settings, allow_missing: bool,
             keep_tmp: bool = False, stream=sys.stdout, host: str = LOOPBACK_HOST,
             resume: bool = False, on_cell=None) -> dict:
    """Run every cell of a spec and write its results. Returns the JSON document
    (with "skipped" set when the whole spec could not run).

    argv is the command line as typed (kept as "command"); reproduce_argv is the
    `bench.py run` line for this one spec, kept as "reproduce" with paths made
    relative to the repository, which is what the book prints under a table.
    With resume, the cells a journal in OUT already holds are kept and the others
    measured (harness/run/journal.py); on_cell(cell) is called after each measured cell, and
    on_cell(cell, kept=True) for each kept one."""
    arms, rows, missing = check_parts(spec, build_dir, repo_root)
    if host != LOOPBACK_HOST:
        # A peer with a configuration file listens where its template says; only our own
        # servers (and our Python peer) take --host.
        fixed = [a for a in arms if a.kind in PEERS and PEERS[a.kind].needs_conf]
        missing += [f"arm {a.name}: an {a.kind} arm listens on {LOOPBACK_HOST} (its template), "
                    f"not {host}" for a in fixed]
        arms = [a for a in arms if a not in fixed]
    if "postgres" in spec.needs and not postgres.inside():
        missing.append(f"a PostgreSQL: {postgres.missing() or 'not started (bench.py starts one)'}")
        arms = []
    if missing and not allow_missing:
        raise MissingParts("; ".join(missing))
    for m in missing:
        _log(f"{spec.chapter}/{spec.name}: skipping {m}")
    if not arms or not rows:
        return {"skipped": missing}
    spec_view = Spec(**{**spec.__dict__, "arms": arms, "rows": rows})
    for pid in servers.reap_stale(os.path.join(build_dir, "bench-tmp")):
        _log(f"killed pid {pid}, left running by an earlier harness that was killed")
    workdir = os.path.join(build_dir, "bench-tmp", f"{spec.chapter}-{spec.name}-{os.getpid()}")
    os.makedirs(workdir, exist_ok=True)
    kept, log = {}, None
    if resume:
        jpath = journal.path_for(out_dir, spec.chapter, spec.name)
        head = {"mode": mode, "host": host, "arms": [a.name for a in arms],
                "rows": [r.name for r in rows], "spec": spec.text,
                "settings": [settings.rounds, settings.duration_s, settings.warmup_s]}
        kept = journal.read(jpath, head)
        log = journal.Writer(jpath, head, kept)
        if kept:
            _log(f"{spec.chapter}/{spec.name}: resuming, {len(kept)} cells kept from {jpath}")
    stall_dir = None
    if spec.stall_samples:
        # This run's stalled samples only: an earlier run's files would name other cells
        # (those of the cells a resumed run keeps stay).
        stall_dir = stalls.dest_dir(out_dir, spec.chapter, spec.name)
        if not kept:
            shutil.rmtree(stall_dir, ignore_errors=True)
    machine = report.machine_info(build_dir, repo_root, out_dir)
    cells = []
    started = time.monotonic()
    r, stopped = 0, ""
    try:
        while True:
            more, stopped = more_rounds(spec_view, cells, r, settings, time.monotonic() - started)
            if not more:
                break
            if r >= settings.rounds:
                _log(f"{spec.chapter}/{spec.name}: round {r + 1}, {stopped}")
            for row in rotation(rows, r):
                for order, arm in enumerate(rotation(arms, r)):
                    if (r, row.name, arm.name) in kept:
                        cells.append(kept[(r, row.name, arm.name)])
                        if on_cell is not None:
                            on_cell(cells[-1], kept=True)
                        continue
                    cell = measure_cell(spec_view, arm, row, r, order, settings, build_dir,
                                        repo_root, workdir, stall_dir, host)
                    cells.append(cell)
                    if log is not None:
                        log.append(cell)
                    _log(_progress(cell, max(settings.rounds, settings.max_rounds)))
                    if on_cell is not None:
                        on_cell(cell)
            r += 1
    finally:
        if log is not None:
            log.close()
        servers.CHILDREN.kill_all()
        if not keep_tmp:
            shutil.rmtree(workdir, ignore_errors=True)
            try:
                os.rmdir(os.path.dirname(workdir))   # bench-tmp, when nothing else is in it
            except OSError:
                pass

    summ, compares, comparisons = derive(spec_view, cells)

    dest = os.path.join(out_dir, spec.chapter)
    os.makedirs(dest, exist_ok=True)
    base = os.path.join(dest, spec.name)
    doc = {
        "format": FORMAT_VERSION,
        "spec": {"path": os.path.relpath(os.path.abspath(spec.path), repo_root),
                 "chapter": spec.chapter, "name": spec.name, "title": spec.title,
                 "text": spec.text},
        "mode": mode,
        "settings": {"rounds": settings.rounds, "max_rounds": settings.max_rounds,
                     "budget_s": settings.budget_s, "rounds_run": r, "stopped": stopped,
                     "duration_s": settings.duration_s,
                     "warmup_s": settings.warmup_s,
                     "busy_threshold_pct": spec.busy_threshold_pct,
                     "margins": {m: verdict.margin_for(m, spec.margins)
                                 for c in spec.compares for m in c.metrics},
                     "stall_us": spec.stall_us, "stall_samples": spec.stall_samples,
                     "host": host,
                     "arm_lifecycle": "a fresh server process per cell",
                     "order": "rounds x rows x arms, arm order rotated each round"},
        "command": report.repo_relative(argv, repo_root),
        "reproduce": report.reproduce_command(reproduce_argv, repo_root),
        "machine": machine,
        "elapsed_s": time.monotonic() - started,
        "resumed_cells": len(kept),
        "skipped": missing,
        "cells": cells,
        "summary": [{**{k: v for k, v in s.items() if k != "metrics"},
                     "metrics": {m: (r.as_dict() if r else None)
                                 for m, r in s["metrics"].items()}}
                    for s in summ.values()],
        "comparisons": comparisons,
    }
    report.write_json(base + ".json", doc)
    write_summary_csv(base + ".csv", spec_view, summ, compares, comparisons)
    report.write_csv(base + "-runs.csv", report.RUNS_HEADER,
                     report.runs_rows(cells, spec.stall_us))
    plots = []
    for metric in spec.plots:
        path = f"{base}-{metric}.png"
        if report.plot_metric(path, spec_view, summ, metric, machine, mode):
            plots.append(os.path.basename(path))
    if log is not None and all(c["ok"] for c in cells):
        os.unlink(log.path)   # the results hold every cell now; a failed one is tried again
    report.print_table(spec_view, summ, comparisons, mode, stream)
    print(f"  wrote {base}.json, {base}.csv, {base}-runs.csv"
          + (f", {', '.join(plots)}" if plots else ""), file=stream, flush=True)
    return doc
