"""harness/records/panel: an operator's dashboard panel of stage 06, drawn from what a real Prometheus
scraped (chapter 06).

Role: the record behind chapter 06's Prometheus section. It starts stage 06 with the
chapter's hand-off profile (`--like seed000-ring`: one loop thread that parses, one pool
thread that serves), starts Debian's prometheus against it with the chapter's
prometheus.yml (harness/run/prometheus.py: target and a one-second scrape interval changed,
nothing else), and drives the stage with the load generator through the phases an operator
would recognise on a dashboard: idle, a steady paced load (loadgen's open model at a fixed
rate), a heavier one (a closed loop of many connections, as fast as the machine answers),
idle again. Then it asks Prometheus, through its HTTP API's query_range, for the panel's
series, one per thread (labels thread and role):

- requests per second, rate(handoff_requests_total[WINDOW]);
- hand-off syscalls per second, rate(handoff_handoff_sends_total[WINDOW]) (the sends that
  move a job, a completion or a wake between the loop and the pool);
- CPU per thread in cores, rate(handoff_thread_cpu_seconds_total[WINDOW]);
- and, filed but not drawn, wakes sent per second, rate(handoff_wakes_sent_total[WINDOW]).

For each phase it also files the load generator's own responses per second beside the
median of each scraped series inside the phase, and from those the hand-off syscalls, the
wakes and the CPU microseconds per request on each thread (its first WINDOW and a scrape cut, where a
rate's window still reaches into the phase before), so the scraped figure can be checked against the client's.

Writes OUT/06-full-system/panel.json (machine, commands, mode, phases, every scraped series)
and .csv (lines of kind "phase", then of kind "sample": one per series and step), and draws
the panel to panel.png beside them.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import statistics
import time

from harness.results import report
from harness.run import clients
from harness.run import prometheus
from harness.run import servers
from harness.run.specfile import Arm, Row

CHAPTER = "06-full-system"
NAME = "panel"
STEP_S = 1.0               # the scrape interval the run sets, and the query's step
WINDOW = "3s"              # three scrapes: a rate needs two samples in its window
WINDOW_S = 3.0
PROFILE = "seed000-ring"
# name, seconds, the load (None: idle); a phase's load is a loadgen row.
MODES = {
    "quick": {"phases": [["idle", 4, None],
                         ["steady", 8, {"model": "open", "rate": 4000, "connections": 8}],
                         ["heavier", 8, {"model": "closed", "connections": 16}],
                         ["idle-after", 4, None]]},
    "full": {"phases": [["idle", 8, None],
                        ["steady", 20, {"model": "open", "rate": 4000, "connections": 8}],
                        ["heavier", 20, {"model": "closed", "connections": 16}],
                        ["idle-after", 8, None]]},
}
QUERIES = {
    "requests": "rate(handoff_requests_total{{job=\"handoff\"}}[{w}])",
    "handoff_sends": "rate(handoff_handoff_sends_total{{job=\"handoff\"}}[{w}])",
    "cpu": "rate(handoff_thread_cpu_seconds_total{{job=\"handoff\"}}[{w}])",
    "wakes": "rate(handoff_wakes_sent_total{{job=\"handoff\"}}[{w}])",
}
PLOTTED = ("requests", "handoff_sends", "cpu")   # the wakes are filed, for the reading of the sends
# Per request, from two medians of a phase: (name, numerator's query, scale).
PER_REQUEST = (("handoff_sends_per_req", "handoff_sends", 1.0), ("wakes_per_req", "wakes", 1.0),
               ("us_per_req", "cpu", 1e6))
YLABELS = {"requests": "requests/s", "handoff_sends": "hand-off syscalls/s",
           "cpu": "CPU (cores)"}


def missing(build_dir: str) -> str | None:
    """Why the panel cannot run here, or None."""
    for tool in ("prometheus", "promtool"):
        if not shutil.which(tool):
            return f"{tool} not installed (Debian package {prometheus.PACKAGE})"
    for binary in ("handoff-06", "loadgen"):
        if not os.access(os.path.join(build_dir, "bin", binary), os.X_OK):
            return f"{os.path.join(build_dir, 'bin', binary)} not built"
    return None


def drive(phases: list, stage: servers.Server, build_dir: str, repo_root: str,
          workdir: str) -> list[dict]:
    """Each phase in turn: an idle one waits, a loaded one runs loadgen for its seconds and
    files its report. Returns the phases with their wall-clock bounds (Unix seconds, the
    clock Prometheus stamps its samples with)."""
    done = []
    for name, seconds, load in phases:
        start = time.time()
        got = {"name": name, "seconds": seconds, "load": load, "start": start}
        if load is None:
            time.sleep(seconds)
        else:
            row = Row(name=name, connections=load["connections"], model=load["model"],
                      rate=load.get("rate", 0.0))
            json_path = os.path.join(workdir, f"load-{name}.json")
            argv = clients.loadgen_argv(os.path.join(build_dir, "bin"), stage.url("/"), row,
                                        seconds, json_path)
            with open(os.path.join(workdir, f"load-{name}.log"), "wb") as log:
                proc = servers.CHILDREN.spawn(argv, stdout=log, stderr=log)
            if servers.wait_exit(proc, seconds + prometheus.WAIT_S) is None:
                servers.stop(proc)
                raise ValueError(f"loadgen ran past {seconds + prometheus.WAIT_S:g} s in phase {name}")
            if proc.returncode != 0:
                raise ValueError(f"loadgen exited {proc.returncode} in phase {name}")
            with open(json_path, encoding="utf-8") as f:
                client = json.load(f)
            got.update(command=report.repo_relative(argv, repo_root),
                       client_rps=client["rps"], client_requests=client["requests"],
                       client_errors=sum(client["errors"].values()))
        got["end"] = time.time()
        done.append(got)
    return done


def scrape_series(prom: prometheus.Prometheus, start: float, end: float) -> dict[str, list[dict]]:
    """Every query's series over [start, end], one {thread, role, points: [[t, v]]} each."""
    out = {}
    for key, expr in QUERIES.items():
        result = prom.query_range(expr.format(w=WINDOW), start, end, STEP_S)
        out[key] = [{"thread": s["metric"].get("thread", "?"), "role": s["metric"].get("role", "?"),
                     "points": [[float(t), float(v)] for t, v in s["values"]]}
                    for s in sorted(result, key=lambda s: s["metric"].get("thread", ""))]
    return out


def phase_figures(phases: list[dict], series: dict[str, list[dict]]) -> list[str]:
    """Add to each phase, for each query and role, the median of the scraped series inside
    it (as "<query>_<role>": requests_pool, cpu_loop, ...): from a scrape after its first
    WINDOW_S (a rate's window reaches back that far: before, it holds the phase before) to
    its end. Returns the names added, in order."""
    names = []
    for ph in phases:
        lo, hi = ph["start"] + WINDOW_S + STEP_S, ph["end"]
        for key, found in series.items():
            for s in found:
                name = f"{key}_{s['role']}"
                inside = [v for t, v in s["points"] if lo <= t <= hi]
                ph[name] = statistics.median(inside) if inside else None
                if name not in names:
                    names.append(name)
        for role in [s["role"] for s in series.get("requests", [])]:
            for name, key, scale in PER_REQUEST:
                if f"{key}_{role}" not in ph:
                    continue
                per, num = f"{name}_{role}", ph[f"{key}_{role}"]
                reqs = ph[f"requests_{role}"]
                ph[per] = num / reqs * scale if num is not None and reqs else None
                if per not in names:
                    names.append(per)
    return names


def run_panel(*, mode: str, build_dir: str, out_dir: str, repo_root: str, argv: list[str],
              reproduce_argv: list[str], stream) -> tuple[list[str], list[str]]:
    """Run the panel record. Returns (what is missing here, failures)."""
    why = missing(build_dir)
    if why:
        return [f"{CHAPTER}/{NAME}: {why}"], []
    settings = MODES[mode]
    workdir = os.path.join(build_dir, "bench-tmp", f"{CHAPTER}-{NAME}-{os.getpid()}")
    os.makedirs(workdir, exist_ok=True)
    arm = Arm(name="handoff-06", kind="stage", binary="handoff-06", args=("--like", PROFILE))
    stage = servers.Server(arm, build_dir, repo_root, os.path.join(workdir, "stage"))
    prom = None
    try:
        stage.start()
        prom = prometheus.Prometheus(f"127.0.0.1:{stage.port}", os.path.join(workdir, "prometheus"),
                                     spawn=servers.CHILDREN.spawn)
        prom.start()
        prom.wait_scraped()
        phases = drive(settings["phases"], stage, build_dir, repo_root, workdir)
        t_end = phases[-1]["end"]

        def covered():
            ts = prom.query('timestamp(up{job="handoff"})')
            return (ts and float(ts[0]["value"][1]) >= t_end + STEP_S), ts
        prometheus.wait_for("a scrape after the last phase", covered)
        series = scrape_series(prom, phases[0]["start"], t_end)
    except (servers.StartError, prometheus.PrometheusError, OSError, ValueError, KeyError) as e:
        return [], [f"{CHAPTER}/{NAME}: {e}"]
    finally:
        if prom is not None:
            prom.stop()
        stage.stop()
    figures = phase_figures(phases, series)
    record = report.tool_record(mode=mode, settings=settings, argv=argv,
                                reproduce_argv=reproduce_argv, repo_root=repo_root,
                                build_dir=build_dir, out_dir=out_dir, tool_key="stage",
                                tool_argv=[os.path.join(build_dir, "bin", "handoff-06"), *arm.args])
    record.update(profile=PROFILE, step_s=STEP_S, window=WINDOW,
                  queries={k: q.format(w=WINDOW) for k, q in QUERIES.items()},
                  prometheus_config=report.repo_relative([prometheus.CONFIG], repo_root),
                  phases=phases, phase_figures=figures, series=series)
    base = report.results_base(out_dir, CHAPTER, NAME)
    with open(base + ".json", "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    write_csv(base + ".csv", record)
    plot(base + ".png", record)
    print(f"{CHAPTER}/{NAME}: " + "; ".join(
        f"{p['name']} {p.get('client_rps', 0):.0f}/s by the client, "
        f"{p.get('requests_pool') or 0:.0f}/s scraped on the pool" for p in phases)
        + f"; wrote {base}.json, .csv, .png", file=stream)
    problems = []
    n = sum(len(v) for v in series.values())
    if not series["requests"]:
        problems.append(f"{CHAPTER}/{NAME}: Prometheus returned no requests series")
    errors = sum(p.get("client_errors", 0) for p in phases)
    if errors:
        problems.append(f"{CHAPTER}/{NAME}: {errors} client errors")
    if n and not any(p.get("requests_pool") for p in phases if p["load"]):
        problems.append(f"{CHAPTER}/{NAME}: no scraped rate inside a loaded phase")
    return [], problems


def write_csv(path: str, record: dict) -> None:
    t0 = record["phases"][0]["start"]
    figures = record["phase_figures"]
    cols = ["kind", "name", "query", "thread", "role", "start_s", "end_s", "client_rps",
            *figures, "t_s", "value"]
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for p in record["phases"]:
            w.writerow({"kind": "phase", "name": p["name"], "start_s": f"{p['start'] - t0:.1f}",
                        "end_s": f"{p['end'] - t0:.1f}",
                        **{k: (_figure(k, p[k]) if p.get(k) is not None else "")
                           for k in ("client_rps", *figures)}})
        for key, series in record["series"].items():
            for s in series:
                for t, v in s["points"]:
                    w.writerow({"kind": "sample", "name": f"{key}/{s['thread']}", "query": key,
                                "thread": s["thread"], "role": s["role"],
                                "t_s": f"{t - t0:.0f}", "value": f"{v:.6g}"})


def _figure(name: str, value: float) -> str:
    """A phase's figure as the table shows it: rates to the request, cores to a thousandth,
    per-request figures to three significant digits."""
    if name.startswith("cpu_"):
        return f"{value:.3f}"
    if "_per_req_" in name:
        return f"{value:.3g}"
    return f"{value:.0f}"


def plot(path: str, record: dict) -> None:
    """One panel per query, a line per thread, the phases shaded and named: what an
    operator's dashboard shows of the same run."""
    keys = [k for k in PLOTTED if k in record["series"]]
    fig, axes = report.readable_figure(len(keys), sharey=False,
                                       height_in=report.PANEL_HEIGHT_IN * 0.8 * len(keys) + 0.9)
    t0 = record["phases"][0]["start"]
    for ax, key in zip(axes, keys):
        for i, s in enumerate(record["series"][key]):
            # Dashed over solid: where the loop's and the pool's lines coincide (every
            # request parsed is served), both still show.
            ax.plot([t - t0 for t, _ in s["points"]], [v for _, v in s["points"]],
                    color=f"C{i}", linewidth=2.4 if i == 0 else 1.6, linestyle="-" if i == 0 else "--",
                    label=f"{s['thread']} ({s['role']})")
        for j, p in enumerate(record["phases"]):
            if p["load"]:
                ax.axvspan(p["start"] - t0, p["end"] - t0, color="0.85" if j % 2 else "0.92",
                           zorder=0)
        ax.set_ylabel(YLABELS.get(key, key))
        ax.set_ylim(bottom=0)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    top = axes[0]
    for p in record["phases"]:
        top.annotate(p["name"], ((p["start"] + p["end"]) / 2 - t0, 1.0),
                     xycoords=("data", "axes fraction"), xytext=(0, -12),
                     textcoords="offset points", ha="center")
    report.legend_above(top, 2)
    axes[-1].set_xlabel(f"seconds into the run (Prometheus, scraped every {record['step_s']:g} s, "
                        f"rate over {record['window']})")
    fig.suptitle(f"stage 06 ({record['profile']}) as Prometheus scraped it"
                 + ("" if record["mode"] == "full" else f" ({record['mode']} mode)"))
    report.save_readable(fig, path, record["machine"])
