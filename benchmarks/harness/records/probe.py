"""harness/records/probe: run handoff-probe and file its results with the chapter's tables (chapter 01).

Role: the hand-off price list. It runs BUILD/bin/handoff-probe (every cross-thread
wake mechanism's round trip, in wall and CPU µs and in sleeps, median and min/max over
rounds, alone and beside a busy neighbour on every CPU),
notes how busy the rest of the machine was meanwhile, and writes
OUT/01-baseline/handoff-probe.json (the probe's own report inside the harness's
record: machine, command, mode), .csv (one line per mechanism) and -cpu_us.png.
"""

from __future__ import annotations

import json
import os
import sys
import time

from harness.results import report
from harness.run import procfs
from harness.run.servers import run_logged

CHAPTER = "01-baseline"
NAME = "handoff-probe"
# Round trips per mechanism per round, and rounds, by mode.
SETTINGS = {"quick": (20_000, 3), "full": (50_000, 5)}
TIMEOUT_S = 900.0
BUSY_THRESHOLD_PCT = 25.0
# Each figure is a {median, min, max} per mechanism; the busy-neighbour arm's copy of
# each (the same round trip beside an idle-priority spinner on every CPU, so that no CPU
# ever goes idle) carries BUSY as a suffix.
BASE_FIGURES = ("wall_us", "cpu_us", "cpu_us_sender", "cpu_us_receiver", "sleeps_per_round_trip")
BUSY = "_busy_neighbour"
FIGURES = BASE_FIGURES + tuple(f + BUSY for f in BASE_FIGURES)


class ProbeError(RuntimeError):
    pass


def binary(build_dir: str) -> str:
    return os.path.join(build_dir, "bin", "handoff-probe")


def csv_lines(doc: dict) -> tuple[list[str], list[dict]]:
    header = ["mechanism"]
    for f in FIGURES:
        header += [f"{f}_median", f"{f}_min", f"{f}_max"]
    lines = []
    for r in doc.get("results", []):
        line = {"mechanism": r["mechanism"]}
        for f in FIGURES:
            v = r.get(f)
            if isinstance(v, dict):
                for k in ("median", "min", "max"):
                    line[f"{f}_{k}"] = f"{v[k]:.3f}"
        lines.append(line)
    return header, lines


def plot(path: str, doc: dict, machine: dict, mode: str) -> None:
    """The price list as horizontal bars (a mechanism's name reads along its row), log
    scale, drawn to be read in the book's column (report.readable_figure)."""
    res = doc.get("results", [])
    names = [r["mechanism"] for r in res]
    bars = [("wall_us", "wall"), ("cpu_us", "CPU (both threads)"),
            ("wall_us" + BUSY, "wall, busy neighbour"),
            ("cpu_us" + BUSY, "CPU, busy neighbour")]
    bars = [b for b in bars if all(b[0] in r for r in res)]
    fig, (ax,) = report.readable_figure(height_in=1.8 + 0.16 * len(names) * max(1, len(bars)))
    height = 0.8 / len(bars)
    for i, (fig_key, label) in enumerate(bars):
        ys = [j + (i - (len(bars) - 1) / 2) * height for j in range(len(res))]
        med = [r[fig_key]["median"] for r in res]
        lo = [r[fig_key]["median"] - r[fig_key]["min"] for r in res]
        hi = [r[fig_key]["max"] - r[fig_key]["median"] for r in res]
        ax.barh(ys, med, height * 0.95, xerr=[lo, hi], capsize=2, label=label)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlabel("µs per round trip (log scale)")
    ax.set_xscale("log")
    fig.suptitle("Cross-thread round trip: median of rounds, whiskers min–max"
                 + ("" if mode == "full" else f" ({mode} mode)"))
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    report.legend_above(ax, 2)
    report.save_readable(fig, path, machine)


def run_probe(*, build_dir: str, out_dir: str, repo_root: str, mode: str, argv: list[str],
              reproduce_argv: list[str], round_trips: int | None = None, rounds: int | None = None,
              stream=sys.stdout) -> dict:
    exe = binary(build_dir)
    if not os.access(exe, os.X_OK):
        raise ProbeError(f"{exe} not built")
    n, r = SETTINGS[mode]
    n = round_trips or n
    r = rounds or r
    base = report.results_base(out_dir, CHAPTER, NAME)
    raw_path = base + ".raw.json"
    probe_argv = [exe, "--round-trips", str(n), "--rounds", str(r), "--json", raw_path]
    self0 = os.times()
    m0 = procfs.machine_times()
    t0 = time.monotonic()
    got = run_logged(probe_argv, base + ".log", TIMEOUT_S)
    if got is None:
        raise ProbeError(f"handoff-probe ran past {TIMEOUT_S:.0f}s")
    code, usage, log_text = got
    window = time.monotonic() - t0
    m1 = procfs.machine_times()
    self1 = os.times()
    if code != 0:
        raise ProbeError(f"handoff-probe exited with {code}:\n{log_text[-1500:]}")
    with open(raw_path, encoding="utf-8") as f:
        raw = json.load(f)
    os.unlink(raw_path)
    if not isinstance(raw.get("results"), list) or not raw["results"]:
        raise ProbeError("handoff-probe JSON has no results")
    accounted = ((usage.ru_utime + usage.ru_stime) if usage else 0.0) * procfs.CLK_TCK \
        + (self1.user + self1.system - self0.user - self0.system) * procfs.CLK_TCK
    busy = procfs.other_busy_pct(m0, m1, accounted, window)
    doc = report.tool_record(mode=mode, settings={"round_trips": n, "rounds": r}, argv=argv,
                             reproduce_argv=reproduce_argv, repo_root=repo_root,
                             build_dir=build_dir, out_dir=out_dir, tool_key="probe",
                             tool_argv=probe_argv[:-2])
    machine = doc["machine"]
    doc.update({
        "window_s": window,
        "machine_busy": {"other_pct_of_core": busy,
                         "busy_machine": busy > BUSY_THRESHOLD_PCT,
                         "threshold_pct": BUSY_THRESHOLD_PCT},
        "probe": raw,
        "results": raw["results"],
    })
    report.write_json(base + ".json", doc)
    header, lines = csv_lines(raw)
    report.write_csv(base + ".csv", header, lines)
    plot(base + "-round-trip.png", raw, machine, mode)
    print(f"\n== {CHAPTER}/{NAME}: hand-off round trip, µs ({mode}: {n} round trips x {r} "
          f"rounds; rest of machine {busy:.0f}% of a core"
          f"{' BUSY' if busy > BUSY_THRESHOLD_PCT else ''}) ==", file=stream)
    print(f"  {'mechanism':<24} {'neighbour':<9} {'wall median [min–max]':<28} "
          f"{'cpu median [min–max]':<28} sleeps", file=stream)
    for res in raw["results"]:
        for suffix, arm in (("", "idle"), (BUSY, "busy")):
            if "wall_us" + suffix not in res:
                continue
            w, c = res["wall_us" + suffix], res["cpu_us" + suffix]
            wall = f"{w['median']:.3f} [{w['min']:.3f}–{w['max']:.3f}]"
            cpu = f"{c['median']:.3f} [{c['min']:.3f}–{c['max']:.3f}]"
            sleeps = res.get("sleeps_per_round_trip" + suffix, {}).get("median")
            sl = f"{sleeps:.2f}" if sleeps is not None else ""
            print(f"  {res['mechanism']:<24} {arm:<9} {wall:<28} {cpu:<28} {sl}".rstrip(),
                  file=stream)
    print(f"  wrote {base}.json, {base}.csv, {NAME}-round-trip.png", file=stream)
    return doc
