"""harness/records/failover: kill one backend behind HAProxy mid-run, revive it, and file what the
fleet did (chapter 06).

Role: the record of chapter 06's "beyond one process" section. It starts HAProxy in front of
BACKENDS stage processes (benchmarks/peers/haproxy.cfg.in, through servers.Server), offers a
closed-loop load through it for the run's length, SIGKILLs one backend at a third of the run
and starts it again on the same port at two thirds, and meanwhile reads HAProxy's statistics
page (CSV) every POLL_S. From HAProxy's counters, read just before the load starts and again
after it ends, and the load generator's own, it files:

- **served**: the responses each backend gave HAProxy over the run, and the client's count;
- **accounted**: every request HAProxy received ends one way: a backend's response passed
  on, an abort (in flight on a backend when it died: HAProxy closes that client connection,
  which the client counts as a read error), or HAProxy's own refusal (a request the client
  cut short as it exited); `unaccounted` is what is left, and must be 0;
- **answered twice**: responses a client received with no request outstanding (loadgen's
  parser counts each as a parse error); HAProxy sends a request again only when its
  connection failed to open (its default retry-on), so a backend never sees one twice;
- **failed over**: the backend's retries and redispatches, requests whose connection to the
  dead backend failed before anything was sent and that went to a live one instead;
- **out** and **back**: seconds from the kill to the first poll that shows the backend DOWN,
  and from its restart to the first that shows it UP again (HAProxy's checks, every 100 ms,
  out after 2 failures and back after 2 successes: the template's `check` line);
- a timeline of the client's responses by status in 100 ms buckets (loadgen's raw samples,
  their clock started with the load, so the kill's time is known to a few milliseconds).

Writes OUT/06-full-system/failover.json (the harness's record: machine, commands, mode,
settings, every poll) and .csv (one line of totals, one line per backend, and the timeline
as lines of kind "bucket").
"""

from __future__ import annotations

import csv
import http.client
import io
import json
import os
import signal
import time

from harness.results import report
from harness.run import clients
from harness.run import servers
from harness.run.specfile import Arm, Row

CHAPTER = "06-full-system"
NAME = "failover"
BACKENDS = 3
VICTIM = 1
POLL_S = 0.02
BUCKET_S = 0.1
MODES = {"quick": {"duration_s": 3.0, "connections": 16},
         "full": {"duration_s": 9.0, "connections": 16}}


def read_stats(port: int) -> dict[str, dict[str, str]]:
    """HAProxy's statistics as CSV, keyed by "proxy/server" ("stages/b0", "fleet/FRONTEND")."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=2.0)
    try:
        c.request("GET", "/;csv")
        body = c.getresponse().read().decode("utf-8", "replace")
    finally:
        c.close()
    rows = csv.DictReader(io.StringIO(body.lstrip("# ")))
    return {f"{r['pxname']}/{r['svname']}": r for r in rows}


def settled(port: int, bound_s: float = 5.0) -> dict[str, dict[str, str]]:
    """The statistics once HAProxy holds no session on either side: the load generator's
    last requests, still in flight when it exited, have been answered or dropped and
    counted by then (a bound turns a session that never ends into a failure)."""
    deadline = time.monotonic() + bound_s
    while True:
        stats = read_stats(port)
        if _n(stats["fleet/FRONTEND"], "scur") == 0 and _n(stats["stages/BACKEND"], "scur") == 0:
            return stats
        if time.monotonic() > deadline:
            raise ValueError(f"HAProxy still holds sessions {bound_s:g} s after the load ended")
        time.sleep(POLL_S)


def _n(row: dict[str, str], key: str) -> int:
    return int(row.get(key) or 0)


def responses(row: dict[str, str]) -> int:
    return sum(_n(row, f"hrsp_{k}") for k in ("1xx", "2xx", "3xx", "4xx", "5xx", "other"))


def first_after(polls: list[dict], t: float, want: str, victim: str) -> float | None:
    """The first poll's time after t whose status for the victim starts with `want`."""
    for p in polls:
        if p["t"] >= t and p["status"].get(victim, "").startswith(want):
            return p["t"]
    return None


def summarize(before: dict, after: dict, polls: list[dict], t_kill: float, t_restart: float,
              client: dict, names: list[str], victim: str) -> dict:
    """The run's figures from two statistics snapshots, the polls and the client's summary."""
    def d(key: str, field: str) -> int:
        return _n(after[key], field) - _n(before[key], field)

    served = {n: responses(after[f"stages/{n}"]) - responses(before[f"stages/{n}"])
              for n in names}
    received = d("fleet/FRONTEND", "req_tot")
    refused = d("fleet/FRONTEND", "ereq")              # HAProxy's own 400s (a request cut short)
    aborted = d("stages/BACKEND", "srv_abrt")          # in flight on a server when it died
    down = first_after(polls, t_kill, "DOWN", victim)
    up = first_after(polls, t_restart, "UP", victim)
    errors = client.get("errors", {})
    return {
        "client_responses": client.get("requests", 0),
        "client_5xx": errors.get("status_5xx", 0),
        "client_errors": sum(v for k, v in errors.items() if not k.startswith("status_")),
        "client_read_errors": errors.get("read", 0),
        # A response on a connection with no request outstanding: loadgen's strict parser
        # counts it as a parse error, so a request answered twice cannot pass unseen.
        "answered_twice": errors.get("parse", 0),
        "balancer_received": received,
        "backends_responses": sum(served.values()),
        "aborted_in_flight": aborted,
        "balancer_refused": refused,
        "unaccounted": received - sum(served.values()) - aborted - refused,
        "retries": d("stages/BACKEND", "wretr"),
        "redispatches": d("stages/BACKEND", "wredis"),
        "failed_over": d("stages/BACKEND", "wretr") + d("stages/BACKEND", "wredis"),
        "out_s": None if down is None else down - t_kill,
        "back_s": None if up is None else up - t_restart,
        "served": served,
    }


def timeline(samples_path: str, t_load: float, duration_s: float) -> list[dict]:
    """Responses per BUCKET_S by status class, from loadgen's raw samples."""
    buckets: dict[int, dict[str, int]] = {}
    with open(samples_path, encoding="utf-8") as f:
        for line in csv.DictReader(f):
            b = int(float(line["send_time_us"]) / 1e6 / BUCKET_S)
            cls = "ok" if line["status"].startswith("2") else "5xx" if line["status"].startswith("5") \
                else "other"
            slot = buckets.setdefault(b, {"ok": 0, "5xx": 0, "other": 0})
            slot[cls] += 1
    n = int(duration_s / BUCKET_S)
    return [{"t_s": round(t_load + i * BUCKET_S, 3), **buckets.get(i, {"ok": 0, "5xx": 0, "other": 0})}
            for i in range(n)]


def run_failover(*, mode: str, build_dir: str, out_dir: str, repo_root: str, argv: list[str],
                 reproduce_argv: list[str], stream) -> tuple[list[str], list[str]]:
    """Run the failover record. Returns (what is missing here, failures)."""
    settings = MODES[mode]
    arm = Arm(name="fleet", kind="haproxy", binary="handoff-06", args=("--workers", "1"),
              backends=BACKENDS)
    workdir = os.path.join(build_dir, "bench-tmp", f"{CHAPTER}-{NAME}-{os.getpid()}")
    lb = servers.Server(arm, build_dir, repo_root, workdir)
    why = lb.missing()
    if why:
        return [f"{CHAPTER}/{NAME}: {why}"], []
    row = Row(name="c16", path="/", connections=settings["connections"])
    duration = settings["duration_s"]
    victim = f"b{VICTIM}"
    names = [f"b{i}" for i in range(BACKENDS)]
    polls: list[dict] = []
    revived = None
    try:
        lb.start()
        before = read_stats(lb.stats_port)
        samples = os.path.join(workdir, "samples.csv")
        json_path = os.path.join(workdir, "load.json")
        load_argv = clients.loadgen_argv(os.path.join(build_dir, "bin"), lb.url("/"), row,
                                         duration, json_path, samples)
        load_argv += ["--timeout-ms", "1000"]
        with open(os.path.join(workdir, "load.log"), "wb") as log:
            load = servers.CHILDREN.spawn(load_argv, stdout=log, stderr=log)
        t0 = time.monotonic()
        t_kill = t_restart = None
        while load.poll() is None:
            t = time.monotonic() - t0
            if t_kill is None and t >= duration / 3:
                os.kill(lb.backends[VICTIM].proc.pid, signal.SIGKILL)
                t_kill = time.monotonic() - t0
            if t_restart is None and t >= 2 * duration / 3:
                old = lb.backends[VICTIM]
                servers.wait_exit(old.proc, 1.0)
                revived = servers.Server(old.arm, build_dir, repo_root, old.workdir + "-revived",
                                         old.host, port=old.port)
                revived.start()
                t_restart = time.monotonic() - t0
            try:
                stats = read_stats(lb.stats_port)
                polls.append({"t": time.monotonic() - t0,
                              "status": {n: stats[f"stages/{n}"]["status"] for n in names}})
            except OSError:
                pass
            time.sleep(POLL_S)
        after = settled(lb.stats_port)
        with open(json_path, encoding="utf-8") as f:
            client = json.load(f)
        got = summarize(before, after, polls, t_kill, t_restart, client, names, victim)
        got["timeline"] = timeline(samples, 0.0, duration)
    except (servers.StartError, OSError, ValueError, KeyError) as e:
        return [], [f"{CHAPTER}/{NAME}: {e}"]
    finally:
        if revived is not None:
            revived.stop()
        lb.stop()
    record = report.tool_record(mode=mode, settings=settings, argv=argv,
                                reproduce_argv=reproduce_argv, repo_root=repo_root,
                                build_dir=build_dir, out_dir=out_dir, tool_key="loadgen",
                                tool_argv=load_argv)
    record.update(backends=BACKENDS, victim=victim, kill_at_s=t_kill, restart_at_s=t_restart,
                  polls=polls, results=got)
    base = report.results_base(out_dir, CHAPTER, NAME)
    with open(base + ".json", "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    write_csv(base + ".csv", got)
    plot(base + "-timeline.png", record)
    print(f"{CHAPTER}/{NAME}: {got['client_responses']} responses, {got['answered_twice']} answered "
          f"twice, {got['unaccounted']} unaccounted, {got['failed_over']} failed over, "
          f"{got['aborted_in_flight']} aborted in flight, {got['client_errors']} client errors; "
          f"out after {_s(got['out_s'])}, back after {_s(got['back_s'])}; wrote {base}.json, .csv",
          file=stream)
    problems = []
    if got["out_s"] is None or got["back_s"] is None:
        problems.append(f"{CHAPTER}/{NAME}: no poll showed {victim} taken out and back in")
    if got["answered_twice"]:
        problems.append(f"{CHAPTER}/{NAME}: {got['answered_twice']} responses arrived with no "
                        "request outstanding")
    if got["unaccounted"]:
        problems.append(f"{CHAPTER}/{NAME}: {got['unaccounted']} requests HAProxy received are "
                        "neither answered, aborted nor refused")
    return [], problems


def plot(path: str, record: dict) -> None:
    """The client's responses per bucket over the run, the kill and the restart marked, and
    the spans in which HAProxy still counted the dead backend up and the revived one down
    shaded: where the rate dips, and for how long, beside what the checks saw."""
    fig, (ax,) = report.readable_figure(1, height_in=report.PANEL_HEIGHT_IN + 0.7)
    got = record["results"]
    buckets = got["timeline"]
    width = buckets[1]["t_s"] - buckets[0]["t_s"] if len(buckets) > 1 else BUCKET_S
    ax.bar([b["t_s"] for b in buckets], [b["ok"] / width for b in buckets], width * 0.95,
           align="edge", color="C0", label="responses/s (200)")
    failed = [(b["t_s"], (b["5xx"] + b["other"]) / width) for b in buckets if b["5xx"] + b["other"]]
    if failed:
        ax.bar([t for t, _ in failed], [v for _, v in failed], width * 0.95, align="edge",
               color="C3", label="errors/s")
    kill, restart = record["kill_at_s"], record["restart_at_s"]
    for t, what in ((kill, "SIGKILL"), (restart, "restart")):
        ax.axvline(t, color="k", linewidth=1)
        ax.annotate(what, (t, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -12),
                    textcoords="offset points")
    if got.get("out_s") is not None:
        ax.axvspan(kill, kill + got["out_s"], color="C1", alpha=0.3, label="dead, still UP")
    if got.get("back_s") is not None:
        ax.axvspan(restart, restart + got["back_s"], color="C2", alpha=0.3,
                   label="alive, still DOWN")
    ax.set_xlabel("seconds into the run")
    ax.set_ylabel("per second")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    report.legend_above(ax, 2)
    fig.suptitle(f"{record['backends']} backends behind HAProxy, {record['victim']} killed and "
                 "revived" + ("" if record["mode"] == "full" else f" ({record['mode']} mode)"))
    report.save_readable(fig, path, record["machine"])


def _s(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds:.3f} s"


def write_csv(path: str, got: dict) -> None:
    # Seconds to the millisecond: the checks are polled every POLL_S, so finer is noise.
    totals = {k: (f"{v:.3f}" if isinstance(v, float) else v)
              for k, v in got.items() if k not in ("served", "timeline")}
    cols = ["kind", "name", *totals, "served", "t_s", "ok", "5xx", "other"]
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="raise")
        w.writeheader()
        w.writerow({"kind": "total", "name": "fleet", **totals})
        for name, n in got["served"].items():
            w.writerow({"kind": "backend", "name": name, "served": n})
        for b in got["timeline"]:
            w.writerow({"kind": "bucket", "name": f"{b['t_s']:.1f}", **b})
