"""harness/cli: the one command that measures the servers and writes the book's tables (chapter 01).
Changed in chapters 04, 06: loop-peers and loop-instructions (04), failover and panel (06).

Role: the command line over the harness's package (run as benchmarks/harness/bench.py).

  bench.py run SPEC.toml --mode quick|full --build-dir DIR [--out DIR] [--verify]
      one spec: every round x row x arm, results to OUT/<chapter>/<name>.{json,csv,png}
  bench.py micro --build-dir DIR [--mode quick|full] [--out DIR]
      the Google Benchmark micro-benchmarks (ring-bench) to OUT/<chapter>/<name>.{json,csv}
  bench.py probe --build-dir DIR [--mode quick|full] [--out DIR]
      handoff-probe's round-trip prices to OUT/01-baseline/handoff-probe.{json,csv,png}
  bench.py records --mode quick|full --build-dir DIR [--only NAME] [--out DIR]
      the probes that write one JSON report each (harness/records/tools.py: sb-litmus, herd-probe,
      ...) to OUT/<chapter>/<name>.{json,csv}
  bench.py loop-peers --mode quick|full --build-dir DIR [--ops N] [--rounds R] [--against DIR] [--out DIR]
      our loop (direct and coordinator hand-in) and the event-loop peers (libuv, Boost.Asio,
      asyncio, uvloop) on chapter 04's five loop workloads, rotated round by round, to
      OUT/04-turn-shape/loop-peers.{json,csv}; with --against BUILD_DIR, our loop from this build
      and from BUILD_DIR (another revision's) beside libuv and Asio, to loop-peers-against.{json,csv}
  bench.py loop-instructions --mode quick|full --build-dir DIR [--out DIR]
      our loop and libuv under valgrind's callgrind on the single-threaded loop workloads, at
      two operation counts: instructions per operation, the slope between the two runs'
      totals (harness/records/callgrind_slope.py), to OUT/04-turn-shape/loop-instructions.{json,csv}
  bench.py failover --mode quick|full --build-dir DIR [--out DIR]
      HAProxy in front of three stage 06 processes, one killed mid-run and revived: what was
      answered, answered twice, failed over and failed, and how long the checks took to take
      it out and back, to OUT/06-full-system/failover.{json,csv} (harness/records/failover.py)
  bench.py panel --mode quick|full --build-dir DIR [--out DIR]
      stage 06 scraped by Debian's prometheus (chapter 06's prometheus.yml, one-second
      scrapes) through idle, steady, heavier and idle phases of load; the per-thread rates
      read back with query_range, to OUT/06-full-system/panel.{json,csv,png} (harness/records/panel.py)
  bench.py profile --mode quick|full --build-dir DIR [--out DIR]
      the loop thread's perf samples per request by category (inline, elastic-1, ring-1 at
      256 connections) to OUT/03-lost-wakes/loop-profile.{json,csv}, then the flame graphs
      of chapters 04 and 06 (OUT/CH/flame-*.{json,html,png}, harness/records/flame_graph.py); needs
      perf, and npm for the d3-flame-graph template
  bench.py all --mode quick|full --build-dir DIR [--out DIR] [--strict] [--budget-s S]
      every benchmarks/specs/*.toml that says in_all (the default), then the probe, the
      micro-benchmarks, the records, the loop peers and the profile; parts not built (and the profile
      where perf is missing or refused) are listed as not measured; with --budget-s, every
      chapter's headline spec runs first, and a part whose estimate does not fit in what is
      left of S seconds is not run and its command is printed instead
  bench.py reproduce --mode quick|full --build-dir DIR [--out NEW] [--against DIR]
                    [--budget-s S] [--busy-ok] [--strict]
      what `all` runs, into a fresh folder NEW (default BUILD/reproduce-MODE, never the
      committed results), with a progress line and the time left; run again, it resumes
      (parts done are kept, and a spec's finished cells). It refuses a busy machine (load
      average, or others' CPU over a short sample: harness/run/busy.py) unless --busy-ok, and
      ends with NEW/REPORT.md: every figure the book shows, committed and new, every
      verdict that flips and every sentence the book built from NEW marks
      (harness/results/book_figures.py; each verdict is harness/results/verdict.py's), then the seeds'
      headline table (harness/results/headline.py)
  bench.py compare --out NEW [--against DIR]
      that report alone, from results already there
  bench.py verify SPEC.toml [--out DIR]
      re-read a spec's written results and check that they are whole
  bench.py rounds [--out DIR]
      list every record under OUT that compares arms but keeps no rounds (nor counts with
      their rule), from which no verdict can be computed (harness/results/rounds.py); exit 1
      if there is one
  bench.py targets
      the build targets `all` runs, one a line: what README command 1 (.ci/main) builds
  bench.py replot [--out DIR]
      redraw every plot under OUT from the data its .json recorded (the per-cell summary and
      the spec text; the probe's results), measuring nothing: a change of how plots are
      drawn reaches the committed figures without rerunning a benchmark

OUT defaults to benchmarks/results (the committed, full-mode results); quick runs
from the build (the `quick-measurements` target) write to BUILD/results instead.
A full-mode run refuses a tree with uncommitted changes (outside build/, the build
tree and OUT), so that the revision every result records is the code that produced
it; --allow-dirty runs anyway and the results record git_dirty = true.
Every server and client runs on loopback only; every process the harness starts is
killed when it exits, however it exits. Run it with Debian's /usr/bin/python3 (it
needs tomllib and python3-matplotlib).
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable

from harness import REPO_ROOT
from harness.records import callgrind_slope, failover, flame_graph, loop_peers, loop_profile, micro, panel, probe
from harness.records import tools as records
from harness.results import book_figures, headline, report, rounds
from harness.run import busy, clients, postgres, progress, runner, servers, specfile
from harness.run.servers import CHILDREN

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench.py")  # the command, re-run by a part
SPECS_DIR = os.path.join(REPO_ROOT, "benchmarks", "specs")
DEFAULT_OUT = os.path.join(REPO_ROOT, "benchmarks", "results")


def _settings(spec, args):
    base = spec.modes[args.mode]
    return specfile.ModeSettings(
        rounds=args.rounds or base.rounds,
        duration_s=args.duration or base.duration_s,
        warmup_s=base.warmup_s if args.warmup is None else args.warmup,
        # --rounds asks for that many rounds: no more chosen by the data.
        max_rounds=0 if args.rounds else base.max_rounds,
        budget_s=base.budget_s)


def reproduce_argv(spec, args) -> list[str]:
    """The `bench.py run` line that regenerates this one spec's results."""
    argv = [BENCH, "run", os.path.abspath(spec.path),
            "--mode", args.mode, "--build-dir", args.build_dir]
    if os.path.abspath(args.out) != DEFAULT_OUT:
        argv += ["--out", args.out]
    for flag in ("rounds", "duration", "warmup"):
        if getattr(args, flag, None) is not None:
            argv += [f"--{flag}", f"{getattr(args, flag):g}"]
    if getattr(args, "host", specfile.LOOPBACK_HOST) != specfile.LOOPBACK_HOST:
        argv += ["--host", args.host]
    return argv


def sub_reproduce_argv(sub: str, args, extra: tuple[str, ...] = ()) -> list[str]:
    """The `bench.py SUB` line (probe, micro, records) that regenerates what this run of it
    wrote: SUB, `extra`, the mode, the build tree, and --out unless it is the default."""
    argv = [BENCH, sub, *extra, "--mode", args.mode,
            "--build-dir", args.build_dir]
    if os.path.abspath(args.out) != DEFAULT_OUT:
        argv += ["--out", args.out]
    return argv


def probe_reproduce_argv(args) -> list[str]:
    argv = sub_reproduce_argv("probe", args)
    for flag in ("round_trips", "rounds"):
        if getattr(args, flag, None) is not None:
            argv += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    return argv


def verify(spec, out_dir: str) -> list[str]:
    """Problems with a spec's written results: files missing or unparsable, a row x arm
    without a successful round, errors, a zero rate, a server that did not exit 0."""
    base = os.path.join(out_dir, spec.chapter, spec.name)
    problems = []
    try:
        with open(base + ".json", encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return [f"{base}.json: {e}"]
    try:
        with open(base + ".csv", encoding="utf-8", newline="") as f:
            lines = list(csv.DictReader(f))
    except (OSError, csv.Error) as e:
        return [f"{base}.csv: {e}"]
    for key in ("machine", "cells", "summary", "command", "mode"):
        if key not in doc:
            problems.append(f"{base}.json lacks '{key}'")
    have = {(line["row"], line["arm"]): line for line in lines}
    for row in spec.rows:
        for arm in spec.arms:
            line = have.get((row.name, arm.name))
            where = f"{row.name} x {arm.name}"
            if line is None:
                problems.append(f"{where}: no CSV line")
                continue
            if int(line["rounds"]) < 1 or int(line["failed_rounds"]) > 0:
                problems.append(f"{where}: {line['failed_rounds']} failed rounds")
            if int(line["errors"]) > 0:
                problems.append(f"{where}: {line['errors']} client errors")
            if not line["rps_median"] or float(line["rps_median"]) <= 0:
                problems.append(f"{where}: no requests completed")
            if not line["server_us_per_req_median"]:
                problems.append(f"{where}: no server CPU recorded")
    for cell in doc.get("cells", []):
        if cell.get("server_exit", 0) != 0:
            problems.append(f"round {cell['round']} {cell['row']} x {cell['arm']}: server "
                            f"exited with {cell['server_exit']} when stopped")
        if not cell.get("ok"):
            first = (cell.get("error") or "failed").splitlines()[0]
            problems.append(f"round {cell['round']} {cell['row']} x {cell['arm']}: {first}")
    for metric in spec.plots:
        if not os.path.isfile(f"{base}-{metric}.png"):
            problems.append(f"{base}-{metric}.png missing")
    return problems


def refuse_dirty(args, repo_root: str = REPO_ROOT, stream=sys.stderr) -> bool:
    """True (and says why) when a full-mode run would measure a tree that differs from
    its recorded revision and --allow-dirty was not given."""
    if args.mode != "full" or args.allow_dirty:
        return False
    changed = report.dirty_paths(repo_root, [args.out, getattr(args, "build_dir", args.out)])
    if changed is None:
        print("bench: refusing a full-mode run: git cannot say whether the tree is clean "
              "(the results would record no revision); --allow-dirty runs anyway",
              file=stream)
        return True
    if not changed:
        return False
    shown = "\n".join(f"  {p}" for p in changed[:20])
    more = f"\n  ... and {len(changed) - 20} more" if len(changed) > 20 else ""
    print(f"bench: refusing a full-mode run on a tree with uncommitted changes (the results "
          f"would name a revision that did not produce them); commit or stash them, or pass "
          f"--allow-dirty (the results then record git_dirty = true):\n{shown}{more}",
          file=stream)
    return True


def _loopback(host: str) -> str:
    try:
        return specfile.check_loopback(host.strip("[]"))
    except specfile.SpecError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def cmd_run(args) -> int:
    spec = specfile.load(args.spec)
    try:
        doc = runner.run_spec(spec, mode=args.mode, build_dir=args.build_dir,
                              out_dir=args.out, repo_root=REPO_ROOT, argv=args.argv,
                              reproduce_argv=reproduce_argv(spec, args),
                              settings=_settings(spec, args),
                              allow_missing=args.allow_missing, keep_tmp=args.keep_tmp,
                              host=args.host)
    except runner.MissingParts as e:
        print(f"bench: cannot run {args.spec}: {e}", file=sys.stderr)
        return 2
    if doc.get("skipped") and "cells" not in doc:
        print(f"bench: {args.spec}: nothing could run", file=sys.stderr)
        return 2
    failed = sum(1 for c in doc["cells"] if not c["ok"])
    if args.verify:
        problems = verify(spec, args.out)
        for p in problems:
            print(f"bench verify: {p}", file=sys.stderr)
        if problems:
            return 1
        print("bench verify: results are whole", file=sys.stderr)
    return 1 if failed else 0


def cmd_probe(args) -> int:
    try:
        probe.run_probe(build_dir=args.build_dir, out_dir=args.out, repo_root=REPO_ROOT,
                        mode=args.mode, argv=args.argv,
                        reproduce_argv=probe_reproduce_argv(args), round_trips=args.round_trips,
                        rounds=args.rounds)
    except probe.ProbeError as e:
        print(f"bench probe: {e}", file=sys.stderr)
        return 1
    return 0


def run_records(args) -> tuple[list[str], list[str]]:
    """Every registered JSON-writing probe (or only --only): (not built, failures)."""
    return records.run_records(
        build_dir=args.build_dir, out_dir=args.out, repo_root=REPO_ROOT, mode=args.mode,
        argv=args.argv, only=getattr(args, "only", None),
        reproduce_argv=lambda name: sub_reproduce_argv("records", args, ("--only", name)))


def cmd_records(args) -> int:
    if args.only is not None and args.only not in {t.name for t in records.TOOLS}:
        print(f"bench records: no tool named {args.only!r} (registered: "
              f"{', '.join(t.name for t in records.TOOLS)})", file=sys.stderr)
        return 2
    missing, failures = run_records(args)
    said("bench records", missing, failures)
    return 1 if failures or (missing and args.only is not None) else 0


def said(who: str, missing: list[str], failures: list[str]) -> int:
    """Print a part's failures and what it could not measure, on stderr, each line under
    `who`; 1 when it failed, else 0 (not measured is not a failure)."""
    for f in failures:
        print(f"{who}: {f}", file=sys.stderr)
    for m in missing:
        print(f"{who}: not measured: {m}", file=sys.stderr)
    return 1 if failures else 0


def run_loop_peers(args) -> tuple[list[str], list[str]]:
    """Every event-loop peer that can run here: (not measured, failures)."""
    extra = []
    for flag in ("ops", "rounds", "against"):
        if getattr(args, flag, None) is not None:
            extra += [f"--{flag}", str(getattr(args, flag))]
    return loop_peers.run_loop_peers(
        build_dir=args.build_dir, out_dir=args.out, repo_root=REPO_ROOT, mode=args.mode,
        argv=args.argv, reproduce_argv=sub_reproduce_argv("loop-peers", args) + extra,
        ops=getattr(args, "ops", None), rounds=getattr(args, "rounds", None),
        against=getattr(args, "against", None))


def cmd_loop_peers(args) -> int:
    return said("bench loop-peers", *run_loop_peers(args))


def run_callgrind(args) -> tuple[list[str], list[str]]:
    """Instructions per loop operation under callgrind: (not measured, failures)."""
    return callgrind_slope.run_callgrind(
        build_dir=args.build_dir, out_dir=args.out, repo_root=REPO_ROOT, mode=args.mode,
        argv=args.argv, reproduce_argv=sub_reproduce_argv("loop-instructions", args))


def run_callgrind_part(args) -> tuple[bool, list[str]]:
    missing, failures = run_callgrind(args)
    for f in failures:
        print(f"bench all: loop-instructions: {f}", file=sys.stderr)
    return bool(failures or (missing and args.strict)), missing


def run_failover(args) -> tuple[list[str], list[str]]:
    """The failover record, where HAProxy and stage 06 are here: (not measured, failures)."""
    return failover.run_failover(mode=args.mode, build_dir=args.build_dir, out_dir=args.out,
                                 repo_root=REPO_ROOT, argv=args.argv,
                                 reproduce_argv=sub_reproduce_argv("failover", args),
                                 stream=sys.stdout)


def cmd_failover(args) -> int:
    return said("bench failover", *run_failover(args))


def run_failover_part(args) -> tuple[bool, list[str]]:
    missing, failures = run_failover(args)
    for f in failures:
        print(f"bench all: failover: {f}", file=sys.stderr)
    return bool(failures or (missing and args.strict)), missing


def run_panel(args) -> tuple[list[str], list[str]]:
    """The Prometheus panel record, where prometheus and stage 06 are here: (not measured,
    failures)."""
    return panel.run_panel(mode=args.mode, build_dir=args.build_dir, out_dir=args.out,
                           repo_root=REPO_ROOT, argv=args.argv,
                           reproduce_argv=sub_reproduce_argv("panel", args), stream=sys.stdout)


def cmd_panel(args) -> int:
    return said("bench panel", *run_panel(args))


def run_panel_part(args) -> tuple[bool, list[str]]:
    missing, failures = run_panel(args)
    for f in failures:
        print(f"bench all: panel: {f}", file=sys.stderr)
    return bool(failures or (missing and args.strict)), missing


def cmd_profile(args) -> int:
    """The loop profile, then the flame graphs of the profiles the book shows."""
    rc = 0
    try:
        loop_profile.run_profile(build_dir=args.build_dir, out_dir=args.out, repo_root=REPO_ROOT,
                            mode=args.mode, argv=args.argv,
                            reproduce_argv=sub_reproduce_argv("profile", args))
    except loop_profile.NotMeasured as e:
        print(f"bench profile: not measured: {e}", file=sys.stderr)
        rc = 1
    except loop_profile.ProfileError as e:
        print(f"bench profile: {e}", file=sys.stderr)
        rc = 1
    try:
        for w in flame_graph.run_flames(build_dir=args.build_dir, out_dir=args.out, repo_root=REPO_ROOT,
                                        mode=args.mode, argv=args.argv,
                                        reproduce_argv=sub_reproduce_argv("profile", args)):
            print(f"bench profile: wrote {os.path.relpath(w)}")
    except flame_graph.NotMeasured as e:
        print(f"bench profile: flame graphs not measured: {e}", file=sys.stderr)
        rc = 1
    except (flame_graph.FlameError, servers.StartError, clients.ClientError, OSError,
            subprocess.TimeoutExpired) as e:
        print(f"bench profile: flame graphs: {e}", file=sys.stderr)
        rc = 1
    return rc


def cmd_targets(args) -> int:
    """The build targets `all` runs, one a line: every spec's stage and floor binaries, the
    load generator, the probe, the micro-benchmarks, the records' tools, the loop peers and
    the profile's stage. README command 1 (.ci/main) builds these and nothing else."""
    names = {"loadgen", os.path.basename(probe.binary(""))}
    for path in glob.glob(os.path.join(SPECS_DIR, "*.toml")):
        spec = specfile.load(path)
        if spec.in_all:
            names |= {a.binary for a in spec.arms if a.binary}
    names |= {binary for _, _, binary in micro.BENCHES}
    names |= {t.binary for t in records.TOOLS}
    names |= {p.binary for p in loop_peers.PEERS if p.binary}
    names |= {a.binary for a in loop_profile.arms_and_row(REPO_ROOT)[0]}
    for name in sorted(names):
        print(name)
    return 0


def cmd_micro(args) -> int:
    try:
        missing = micro.run_micro(build_dir=args.build_dir, out_dir=args.out, repo_root=REPO_ROOT,
                                  mode=args.mode, argv=args.argv, reproduce_argv=sub_reproduce_argv("micro", args))
    except micro.MicroError as e:
        print(f"bench micro: {e}", file=sys.stderr)
        return 1
    for m in missing:
        print(f"bench micro: {m}", file=sys.stderr)
    return 1 if missing else 0


# About how long each part after the specs takes in quick mode (2-core VM), for --budget-s
# and the time left of `reproduce`; the records' figure is for all of them together, the
# profile's the loop profile and its flame graphs (14 s and 49 s). Full mode has no estimate
# (a budget only stops what would start after it is spent).
QUICK_ESTIMATE_S = {"probe": 35.0, "micro": 2.0, "records": 80.0, "loop-peers": 11.0, "profile": 65.0,
                    "failover": 6.0, "panel": 32.0, "loop-instructions": 45.0}


@dataclass
class Part:
    """One piece of `bench.py all`: a spec, or a probe that writes its own record."""
    name: str                      # "01-baseline/server", "probe", "records sb-litmus", ...
    argv: list[str]                # the command that runs this part alone
    estimate_s: float | None       # about how long it takes (None: no estimate)
    run: Callable[..., tuple[bool, list[str]]]  # (on_cell) -> (failed, not measured)
    cells: int = 0                 # a spec's cells, for the progress line
    missing: str | None = None     # why it cannot run in this build (then it is not run)


def plan(args, resume: bool = False) -> list[Part]:
    """What `all` and `reproduce` run, in order: every spec that says in_all (with a budget,
    every chapter's headline spec first), then the probe, the micro-benchmarks, each record,
    the loop peers and the profile. Every spec parses before anything runs."""
    def estimate(part: str, share: int = 1) -> float | None:
        return QUICK_ESTIMATE_S[part] / share if args.mode == "quick" else None

    specs = [specfile.load(p) for p in sorted(glob.glob(os.path.join(SPECS_DIR, "*.toml")))]
    if args.budget_s:
        specs.sort(key=lambda sp: not sp.headline)  # stable: headlines in path order, then the rest
    parts = []
    for spec in (sp for sp in specs if sp.in_all):
        m = spec.modes[args.mode]
        parts.append(Part(f"{spec.chapter}/{spec.name}", reproduce_argv(spec, args),
                          spec.estimate_s(args.mode),
                          lambda on_cell, spec=spec: run_spec_part(spec, args, resume, on_cell),
                          cells=len(spec.arms) * len(spec.rows) * m.rounds))
    parts.append(Part("probe", probe_reproduce_argv(args), estimate("probe"), lambda _: run_probe_part(args),
                      missing=None if os.access(probe.binary(args.build_dir), os.X_OK)
                      else f"probe: {probe.binary(args.build_dir)} not built"))
    parts.append(Part("micro", sub_reproduce_argv("micro", args), estimate("micro"),
                      lambda _: run_micro_part(args)))
    for tool in records.TOOLS:
        parts.append(Part(f"records {tool.name}", sub_reproduce_argv("records", args, ("--only", tool.name)),
                          estimate("records", len(records.TOOLS)),
                          lambda _, name=tool.name: run_records_part(args, name)))
    parts.append(Part("loop-peers", sub_reproduce_argv("loop-peers", args), estimate("loop-peers"),
                      lambda _: run_loop_peers_part(args)))
    parts.append(Part("loop-instructions", sub_reproduce_argv("loop-instructions", args),
                      estimate("loop-instructions"),
                      lambda _: run_callgrind_part(args)))
    parts.append(Part("failover", sub_reproduce_argv("failover", args), estimate("failover"),
                      lambda _: run_failover_part(args)))
    parts.append(Part("panel", sub_reproduce_argv("panel", args), estimate("panel"),
                      lambda _: run_panel_part(args)))
    why = loop_profile.missing_parts(args.build_dir, REPO_ROOT)
    parts.append(Part("profile", sub_reproduce_argv("profile", args), estimate("profile"),
                      lambda _: (cmd_profile(args) != 0, []), missing=why and f"profile: {why}"))
    return parts


def run_spec_part(spec, args, resume: bool, on_cell) -> tuple[bool, list[str]]:
    try:
        doc = runner.run_spec(spec, mode=args.mode, build_dir=args.build_dir,
                              out_dir=args.out, repo_root=REPO_ROOT, argv=args.argv,
                              reproduce_argv=reproduce_argv(spec, args),
                              settings=spec.modes[args.mode], allow_missing=not args.strict,
                              resume=resume, on_cell=on_cell)
    except runner.MissingParts as e:
        print(f"bench all: {spec.path}: {e}", file=sys.stderr)
        return True, []
    skipped = [f"{spec.chapter}/{spec.name}: {s}" for s in doc.get("skipped", [])]
    return any(not c["ok"] for c in doc.get("cells", [])), skipped


def run_probe_part(args) -> tuple[bool, list[str]]:
    try:
        probe.run_probe(build_dir=args.build_dir, out_dir=args.out, repo_root=REPO_ROOT,
                        mode=args.mode, argv=args.argv, reproduce_argv=probe_reproduce_argv(args))
    except probe.ProbeError as e:
        print(f"bench all: probe: {e}", file=sys.stderr)
        return True, []
    return False, []


def run_micro_part(args) -> tuple[bool, list[str]]:
    try:
        missing = micro.run_micro(build_dir=args.build_dir, out_dir=args.out, repo_root=REPO_ROOT,
                                  mode=args.mode, argv=args.argv,
                                  reproduce_argv=sub_reproduce_argv("micro", args))
    except micro.MicroError as e:
        print(f"bench all: micro: {e}", file=sys.stderr)
        return True, []
    return bool(missing and args.strict), [f"micro {m}" for m in missing]


def run_records_part(args, name: str) -> tuple[bool, list[str]]:
    args = argparse.Namespace(**{**vars(args), "only": name})
    missing, failures = run_records(args)
    for f in failures:
        print(f"bench all: records: {f}", file=sys.stderr)
    return bool(failures or (missing and args.strict)), [f"records {m}" for m in missing]


def run_loop_peers_part(args) -> tuple[bool, list[str]]:
    missing, failures = run_loop_peers(args)
    for f in failures:
        print(f"bench all: loop-peers: {f}", file=sys.stderr)
    return bool(failures or (missing and args.strict)), [f"loop-peers {m}" for m in missing]


def print_not_run(skipped: list[str], deferred: list[list[str]], budget_s: float | None) -> None:
    if skipped:
        print("\nnot measured (parts not built here, or perf missing):", file=sys.stderr)
        for s in skipped:
            print(f"  {s}", file=sys.stderr)
    if deferred:
        print(f"\nnot run: past the {budget_s:g} s budget; each line runs one of them:", file=sys.stderr)
        for argv in deferred:
            here = os.getcwd() + os.sep
            print("  /usr/bin/python3 " + " ".join(shlex.quote(os.path.relpath(a) if a.startswith(here) else a)
                                                for a in argv), file=sys.stderr)


class Budget:
    """--budget-s: a part whose estimate does not fit in what is left of the budget is not
    run (a later, smaller one may still be); its command is kept, to be printed instead, so
    a reader's first run stays short and says how to get the rest."""

    def __init__(self, budget_s: float | None):
        self.budget_s = budget_s
        self.deadline = time.monotonic() + budget_s if budget_s else None
        self.deferred: list[list[str]] = []

    def over(self, part: Part) -> bool:
        if self.deadline is not None and time.monotonic() + (part.estimate_s or 0.0) >= self.deadline:
            self.deferred.append(part.argv)
            return True
        return False


def cmd_all(args) -> int:
    status, skipped, budget = 0, [], Budget(args.budget_s)
    for part in plan(args):
        if part.missing:
            skipped.append(part.missing)
            status |= args.strict
            continue
        if budget.over(part):
            continue
        failed, not_measured = part.run(None)
        skipped += not_measured
        status |= failed
    print_not_run(skipped, budget.deferred, args.budget_s)
    print(f"\nbench all: results (JSON, CSV, plots) under {os.path.abspath(args.out)}")
    return int(status)


MANIFEST = "reproduce.json"
REPORT = "REPORT.md"


def overlap_problem(out: str, against: str) -> str | None:
    """Why OUT may not take new results or a report: it is, holds, or is inside the
    results it is compared with (the committed ones, by default)."""
    if os.path.commonpath([out, against]) in (out, against):
        return f"{out} is (or holds, or is inside) the results it compares with, {against}"
    return None


def fresh_out_problem(out: str, manifest: dict | None, args) -> str | None:
    """Why `reproduce` may not write to OUT: overlap_problem, a folder that holds something
    other than an earlier reproduce run, or an earlier run of another mode or build tree
    (its results would not be comparable)."""
    problem = overlap_problem(out, args.against)
    if problem:
        return problem
    if manifest is None:
        if os.path.isdir(out) and os.listdir(out):
            return f"{out} is not empty and no reproduce run started there (no {MANIFEST})"
        return None
    for key in ("mode", "build_dir"):
        if manifest.get(key) != getattr(args, key):
            return (f"{out} holds a run with {key} {manifest.get(key)}, not {getattr(args, key)}; "
                    f"resume it with that, or name another --out")
    return None


def read_manifest(out: str) -> dict | None:
    try:
        with open(os.path.join(out, MANIFEST), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def busy_reading(args) -> dict:
    """The machine's reading for this run: taken once, before a re-exec into a PostgreSQL
    cluster (whose start would count as load), and handed to the re-executed run."""
    kept = os.environ.get("HANDOFF_REPRODUCE_BUSY")
    if kept:
        return json.loads(kept)
    reading = busy.sample().as_dict()
    reading["busy_ok"] = bool(args.busy_ok)
    os.environ["HANDOFF_REPRODUCE_BUSY"] = json.dumps(reading)
    return reading


def refuse_busy(reading: dict) -> bool:
    if not reading["reasons"] or reading["busy_ok"]:
        return False
    print("bench reproduce: refusing to measure on a busy machine (figures taken beside other "
          "work would be compared with the committed ones as if they were the servers'):\n"
          + "\n".join(f"  {r}" for r in reading["reasons"])
          + "\n  wait until it is quiet, or pass --busy-ok (the report then says so)", file=sys.stderr)
    return True


def report_context(args, manifest: dict) -> list[str]:
    lines = [f"committed results: {os.path.relpath(os.path.abspath(args.against), REPO_ROOT)}",
             f"new results: {args.out} ({manifest.get('mode', '?')} mode, build tree "
             f"{manifest.get('build_dir', '?')})"]
    for n, session in enumerate(manifest.get("sessions", []), 1):
        b = session["busy"]
        quiet = ("quiet" if not b["reasons"] else
                 "BUSY, measured anyway with --busy-ok: " + "; ".join(b["reasons"]))
        lines.append(f"session {n} (a resumed run is another) started on a machine {quiet} (load "
                     f"average {b['load1']:.2f} on {b['cores']} cores, others "
                     f"{b['others_pct_of_core']:.0f}% of a core over {b['sample_s']:.1f} s)"
                     + (f"; measured at nice {session['nice']}, below other work" if session["nice"] else ""))
    done = manifest.get("done", {})
    if done:
        lines.append(f"parts done: {len(done)}, "
                     f"{sum(d['elapsed_s'] for d in done.values()) / 60:.1f} min of measuring")
    for key, what in (("failed", "failed (a resumed run tries them again)"),
                      ("not_measured", "not measured here"), ("not_run", "not run (past the budget)")):
        if manifest.get(key):
            lines.append(f"{what}: " + "; ".join(manifest[key]))
    if manifest.get("mode") == "quick":
        lines.append("quick mode: one round a cell, too few for an interval, so every verdict the "
                     "rule gives is undecided; the report's flips are not findings")
    return lines


def write_report(args, manifest: dict) -> list:
    rows = book_figures.compare(args.against, args.out)
    text = book_figures.render(rows, report_context(args, manifest))
    text += "\n".join(headline.report(args.against, args.out)) + "\n"
    path = os.path.join(args.out, REPORT)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    print(f"bench: the report is in {path}")
    return rows


def refuse_reproduce(args) -> bool:
    """True (and says why) when `reproduce` may not start: OUT is not fresh, or the machine
    is busy without --busy-ok. Checked before anything starts (a PostgreSQL cluster too)."""
    problem = fresh_out_problem(args.out, read_manifest(args.out), args)
    if problem:
        print(f"bench reproduce: {problem}", file=sys.stderr)
        return True
    return refuse_busy(busy_reading(args))


def cmd_reproduce(args) -> int:
    """After refuse_reproduce: run the plan's parts not done yet, then the report."""
    manifest = read_manifest(args.out)
    reading = busy_reading(args)
    if manifest is None:
        manifest = {"mode": args.mode, "build_dir": args.build_dir, "done": {}, "sessions": []}
    # One entry per start (a resumed run is another session on another machine state).
    manifest["sessions"].append({"busy": reading, "nice": os.nice(0)})
    manifest.update(not_measured=[], not_run=[], failed=[])
    os.makedirs(args.out, exist_ok=True)
    report.write_json(os.path.join(args.out, MANIFEST), manifest)

    parts = plan(args, resume=True)
    todo = [p for p in parts if p.name not in manifest["done"] and not p.missing]
    manifest["not_measured"] = [p.missing for p in parts if p.missing]
    for p in parts:
        if p.name in manifest["done"]:
            print(f"bench reproduce: {p.name}: done in an earlier run, kept", file=sys.stderr)
    prog = progress.Progress(parts=len(todo), cells=sum(p.cells for p in todo),
                             estimate_s=sum(p.estimate_s or 0.0 for p in todo),
                             unestimated=sum(p.estimate_s is None for p in todo))
    budget = Budget(args.budget_s)
    status = 0
    for part in todo:
        if budget.over(part):
            manifest["not_run"].append(part.name)
            continue
        per_cell = (part.estimate_s or 0.0) / part.cells if part.cells else 0.0
        seen = []

        def on_cell(cell, kept=False, part=part, per_cell=per_cell, seen=seen):
            seen.append(cell)
            if kept:
                prog.kept(per_cell)
            else:
                prog.finished(per_cell, cell=True)
                prog.show(part.name)

        prog.show(f"{part.name} starts")
        t0 = time.monotonic()
        failed, not_measured = part.run(on_cell)
        # A spec's cells that did not run (arms not built) leave the totals with its last one.
        prog.cells -= part.cells - len(seen)
        prog.finished(per_cell * (part.cells - len(seen)) if part.cells else part.estimate_s,
                      part=True)
        manifest["not_measured"] += not_measured
        if failed:
            status = 1      # not recorded as done: a resumed run tries it again
            manifest["failed"].append(part.name)
        else:
            manifest["done"][part.name] = {"elapsed_s": time.monotonic() - t0}
        report.write_json(os.path.join(args.out, MANIFEST), manifest)
        prog.show(f"{part.name} {'FAILED' if failed else 'done'}")
    print_not_run(manifest["not_measured"], budget.deferred, args.budget_s)
    write_report(args, manifest)
    return status


def cmd_compare(args) -> int:
    problem = overlap_problem(args.out, args.against)
    if problem:
        print(f"bench compare: {problem}", file=sys.stderr)
        return 2
    manifest = read_manifest(args.out) or {}
    rows = write_report(args, manifest)
    return 1 if any(r.flips() for r in rows) else 0


def cmd_verify(args) -> int:
    spec = specfile.load(args.spec)
    problems = verify(spec, args.out)
    for p in problems:
        print(f"bench verify: {p}", file=sys.stderr)
    return 1 if problems else 0


def cmd_rounds(args) -> int:
    missing = rounds.without_rounds(args.out)
    for m in missing:
        print(f"bench rounds: {m} keeps no rounds: no verdict can be computed from it; measure "
              f"it again", file=sys.stderr)
    return 1 if missing else 0


def replot_one(json_path: str) -> list[str]:
    """Redraw the PNGs of one results record from its own data (the cells, or the per-cell
    summary, and the spec text it recorded, or a probe's results), measuring nothing. A
    spec's record with its cells also gets its CSV and its comparisons derived again (what
    the harness derives from cells may grow a column; what was measured stays). Returns the
    files written."""
    with open(json_path, encoding="utf-8") as f:
        doc = json.load(f)
    base = json_path[:-len(".json")]
    if doc.get("kind") == flame_graph.KIND:
        # The d3-flame-graph template from npm, kept in the release build's folder.
        return flame_graph.replot(json_path, os.path.join(REPO_ROOT, "build", "release"))
    if doc.get("summary") and doc.get("spec", {}).get("text"):
        spec = specfile.parse(doc["spec"]["text"], doc["spec"].get("path", json_path))
        spec.margins = rounds.record_margins(doc)   # the spec's margins as they stand now
        summ = {(s["row"], s["arm"]): {**s, "metrics": {
                    m: (runner.sm.Range(r["median"], r["min"], r["max"], r["n"]) if r else None)
                    for m, r in s["metrics"].items()}}
                for s in doc["summary"]}
        view = specfile.Spec(**{**spec.__dict__,
                                "arms": [a for a in spec.arms if any(k[1] == a.name for k in summ)],
                                "rows": [r for r in spec.rows if any(k[0] == r.name for k in summ)]})
        out = []
        if doc.get("cells"):
            summ, compares, comparisons = runner.derive(view, doc["cells"])
            runner.write_summary_csv(base + ".csv", view, summ, compares, comparisons)
            doc["comparisons"] = comparisons
            report.write_json(json_path, doc)
            out += [base + ".csv", json_path]
        for metric in spec.plots:
            if report.plot_metric(f"{base}-{metric}.png", view, summ, metric, doc["machine"],
                                  doc.get("mode", "?")):
                out.append(f"{base}-{metric}.png")
        return out
    if os.path.basename(base) == failover.NAME and doc.get("results"):
        failover.write_csv(base + ".csv", doc["results"])
        failover.plot(base + "-timeline.png", doc)
        return [base + ".csv", base + "-timeline.png"]
    if os.path.basename(base) == panel.NAME and doc.get("series"):
        panel.write_csv(base + ".csv", doc)
        panel.plot(base + ".png", doc)
        return [base + ".csv", base + ".png"]
    if os.path.basename(base) in (loop_peers.NAME, loop_peers.AGAINST_NAME) and doc.get("rounds"):
        loop_peers.add_verdicts(doc["results"], doc["rounds"], loop_peers.targets_of(os.path.basename(base)))
        report.write_json(json_path, doc)
        report.write_csv(base + ".csv", *records.csv_lines(doc["results"]))
        return [base + ".csv", json_path]
    if os.path.basename(base) == probe.NAME and doc.get("results"):
        probe.plot(base + "-round-trip.png", doc, doc["machine"], doc.get("mode", "?"))
        return [base + "-round-trip.png"]
    return []


def cmd_replot(args) -> int:
    written = []
    for path in sorted(glob.glob(os.path.join(args.out, "*", "*.json"))):
        try:
            written += replot_one(path)
        except (report.PlotError, specfile.SpecError, KeyError) as e:
            print(f"bench replot: {path}: {e}", file=sys.stderr)
            return 1
    for w in written:
        print(f"bench replot: wrote {os.path.relpath(w)}")
    return 0


def needs_postgres(args) -> bool:
    """Whether this command runs something that needs a PostgreSQL (then the whole command
    runs again inside a throwaway cluster; without pg_virtualenv those parts are skipped, or
    fail a `run`)."""
    if args.cmd == "run":
        return "postgres" in specfile.load(args.spec).needs
    every = args.cmd in ("all", "reproduce")
    tools = [t for t in records.TOOLS if every or
             (args.cmd == "records" and args.only in (None, t.name))]
    if any("postgres" in t.needs for t in tools):
        return True
    return every and any(
        "postgres" in specfile.load(p).needs for p in glob.glob(os.path.join(SPECS_DIR, "*.toml")))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p, need_build=True):
        if need_build:
            p.add_argument("--build-dir", required=True, type=os.path.abspath,
                           help="the CMake build tree (binaries under DIR/bin)")
        p.add_argument("--out", default=DEFAULT_OUT, type=os.path.abspath,
                       help="results root (default: benchmarks/results)")

    p = sub.add_parser("run", help="run one spec")
    p.add_argument("spec")
    p.add_argument("--mode", choices=specfile.MODES, required=True)
    common(p)
    p.add_argument("--rounds", type=int, help="override the mode's rounds")
    p.add_argument("--duration", type=float, help="override the mode's seconds per cell")
    p.add_argument("--warmup", type=float, help="override the mode's warm-up seconds")
    p.add_argument("--allow-missing", action="store_true",
                   help="skip arms/rows whose binaries are not built instead of failing")
    p.add_argument("--keep-tmp", action="store_true",
                   help="keep BUILD/bench-tmp (server logs, nginx prefix, client reports)")
    p.add_argument("--verify", action="store_true",
                   help="re-read the written results and fail unless they are whole")
    p.add_argument("--host", default=specfile.LOOPBACK_HOST, type=_loopback,
                   help="the loopback address our servers listen on and the clients use "
                        "(default 127.0.0.1; ::1 runs the spec over IPv6; nginx arms are skipped)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("probe", help="run handoff-probe")
    p.add_argument("--mode", choices=specfile.MODES, default="quick")
    common(p)
    p.add_argument("--round-trips", type=int)
    p.add_argument("--rounds", type=int)
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser("micro", help="run the Google Benchmark micro-benchmarks")
    p.add_argument("--mode", choices=specfile.MODES, default="quick")
    common(p)
    p.set_defaults(func=cmd_micro)

    p = sub.add_parser("records", help="run the JSON-writing probes (sb-litmus, herd-probe, ...)")
    p.add_argument("--mode", choices=specfile.MODES, required=True)
    common(p)
    p.add_argument("--only", metavar="NAME", help="run only this registered tool")
    p.set_defaults(func=cmd_records)

    p = sub.add_parser("loop-peers", help="run the event-loop peers on chapter 04's loop workloads")
    p.add_argument("--mode", choices=specfile.MODES, required=True)
    common(p)
    p.add_argument("--ops", type=int, help="override the mode's operations per round")
    p.add_argument("--rounds", type=int, help="override the mode's rounds")
    p.add_argument("--against", metavar="BUILD_DIR",
                   help="instead, our loop from this build and from BUILD_DIR (another revision's), "
                        "with libuv and Asio as the machine's controls, to loop-peers-against")
    p.set_defaults(func=cmd_loop_peers)

    p = sub.add_parser("loop-instructions", help="count instructions per loop operation under "
                                                  "callgrind (our loop, libuv)")
    p.add_argument("--mode", choices=specfile.MODES, required=True)
    common(p)
    p.set_defaults(func=lambda args: said("bench loop-instructions", *run_callgrind(args)))

    p = sub.add_parser("failover", help="kill one of three backends behind HAProxy mid-run, and revive it")
    p.add_argument("--mode", choices=specfile.MODES, required=True)
    common(p)
    p.set_defaults(func=cmd_failover)

    p = sub.add_parser("panel", help="stage 06 scraped by prometheus through phases of load; "
                                     "the per-thread rates read back")
    p.add_argument("--mode", choices=specfile.MODES, required=True)
    common(p)
    p.set_defaults(func=cmd_panel)

    p = sub.add_parser("profile", help="sample the loop thread with perf, by category per request")
    p.add_argument("--mode", choices=specfile.MODES, required=True)
    common(p)
    p.set_defaults(func=cmd_profile)

    p = sub.add_parser("all", help="run every spec, the probe, the micro-benchmarks and the records")
    p.add_argument("--mode", choices=specfile.MODES, required=True)
    common(p)
    p.add_argument("--strict", action="store_true",
                   help="fail when a spec's binaries are not built instead of skipping")
    p.add_argument("--budget-s", type=float, default=None,
                   help="start no part after this many seconds; print the commands of those not run")
    p.set_defaults(func=cmd_all)

    p = sub.add_parser(
        "reproduce", help="rerun every published table into a fresh folder, then compare every "
                          "figure the book shows with the committed one",
        description="Run what `all` runs into a fresh folder OUT, with a progress line and the time "
                    "left; run again with the same OUT, it resumes (parts done are kept, and a "
                    "spec's finished cells; an interrupted cell is measured again). It ends with "
                    f"OUT/{REPORT}: every figure the book's pages quote through a role, committed "
                    "and new, and every verdict or expectation that flips. It refuses a busy "
                    f"machine: a 1-minute load average above {busy.LOAD_PER_CORE:g} per core, or "
                    f"other processes using more than {busy.OTHERS_PCT:g}% of a core over a "
                    f"{busy.SAMPLE_S:g} s sample of /proc/stat (harness/run/busy.py); --busy-ok "
                    "measures anyway and the report says so.")
    p.add_argument("--mode", choices=specfile.MODES, required=True)
    p.add_argument("--build-dir", required=True, type=os.path.abspath,
                   help="the CMake build tree (binaries under DIR/bin)")
    p.add_argument("--out", type=os.path.abspath, default=None,
                   help="the new results' folder: empty, or one an interrupted reproduce run "
                        "left (default: BUILD/reproduce-MODE); never the committed results")
    p.add_argument("--against", type=os.path.abspath, default=DEFAULT_OUT,
                   help="the results to compare with (default: benchmarks/results)")
    p.add_argument("--budget-s", type=float, default=None,
                   help="start no part after this many seconds (a resumed run goes on from there)")
    p.add_argument("--busy-ok", action="store_true",
                   help="measure on a busy machine (the report says it was busy)")
    p.add_argument("--strict", action="store_true",
                   help="fail when a spec's binaries are not built instead of skipping")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("compare", help="the report of `reproduce` alone: every figure the book "
                                       "shows, from OUT and from the committed results")
    p.add_argument("--out", type=os.path.abspath, required=True, help="the new results' folder")
    p.add_argument("--against", type=os.path.abspath, default=DEFAULT_OUT,
                   help="the results to compare with (default: benchmarks/results)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("targets", help="the build targets `all` runs, one a line (what README command 1 builds)")
    p.set_defaults(func=cmd_targets)

    p = sub.add_parser("replot", help="redraw every plot under OUT from its recorded data")
    common(p, need_build=False)
    p.set_defaults(func=cmd_replot)

    p = sub.add_parser("rounds", help="list the records under OUT that keep no rounds")
    common(p, need_build=False)
    p.set_defaults(func=cmd_rounds)

    p = sub.add_parser("verify", help="check a spec's written results")
    p.add_argument("spec")
    common(p, need_build=False)
    p.set_defaults(func=cmd_verify)

    for p in (sub.choices[c] for c in ("run", "probe", "micro", "records", "loop-peers",
                                           "loop-instructions", "panel",
                                           "profile", "all", "reproduce")):
        p.add_argument("--allow-dirty", action="store_true",
                       help="let a full-mode run measure a tree with uncommitted changes "
                            "(the results record git_dirty = true)")

    args = ap.parse_args(argv[1:])
    args.argv = [BENCH] + argv[1:]
    if args.cmd == "reproduce" and args.out is None:
        args.out = os.path.join(args.build_dir, f"reproduce-{args.mode}")
    if hasattr(args, "allow_dirty") and refuse_dirty(args):
        return 2
    if args.cmd == "reproduce" and refuse_reproduce(args):
        return 2
    if needs_postgres(args) and not postgres.inside() and postgres.missing() is None:
        return postgres.reexec_inside([sys.executable, *args.argv])
    CHILDREN.install()
    try:
        return args.func(args)
    except specfile.SpecError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    finally:
        CHILDREN.kill_all()

