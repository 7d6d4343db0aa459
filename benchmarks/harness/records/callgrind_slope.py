"""harness/records/callgrind_slope: instructions per loop operation, counted by callgrind, for our loop
and libuv on chapter 04's single-threaded loop workloads (chapter 04).

Role: the loop peers' price in instructions, a figure the machine's load does not move.
loop_peers.py times the peers (CPU µs per operation, over rotated rounds); this module runs
each one under Valgrind's callgrind (`valgrind --tool=callgrind`), which counts the
instructions the program executes (its "Ir" event: Valgrind User Manual, 6.1 "Overview",
https://valgrind.org/docs/manual/cl-manual.html), at two operation counts, and files the
slope between the two runs' totals: (total at the large count - total at the small) /
(operations at the large - at the small). Whatever a run does once (loading, the loop's
set-up, the wake check, writing its report) is in both totals and drops out. Each peer
first runs its workload at a tenth of the count, unmeasured (the warm-up of
benchmarks/peers/loops/README.md), and callgrind counts that too, so a run's operations
are the count the peer's report gives plus that warm-up.

Only the workloads that run on one thread are counted: the call_soon chain, the cancelled
timer and the TCP echo (both ends on the loop; the kernel's instructions are not counted,
callgrind sees user space only). Under Valgrind only one thread runs at a time (the same
manual, 2.8 "Support for Threads"), so the ping-pong's and the executor's counts would
hold the spins and waits that Valgrind's serialised schedule makes, not the loop's work.

A count is compared as it stands, as harness/results/verdict.py's `exact` compares the counts of a
deterministic run: no rounds, no interval. The counts are not quite deterministic (a run's
total moves by some hundreds of instructions from run to run: addresses, the environment),
so the full mode runs each count twice and files the median, min and max of the slopes of
every pairing of a small run with a large one; the min-max is that wobble, per operation.

Writes OUT/04-turn-shape/loop-instructions.json (the harness's record: machine, revision,
commands, mode, settings, every run's total) and .csv (one line per loop x workload:
ops_small, ops_large, instructions_small, instructions_large, instructions_per_op_median,
_min, _max).
"""

from __future__ import annotations

import json
import os
import shutil
import shlex
import statistics
import subprocess
import sys
from dataclasses import dataclass

from harness.records import tools as records
from harness.results import report
from harness.run.servers import run_logged

CHAPTER = "04-turn-shape"
NAME = "loop-instructions"
TIMEOUT_S = 300.0

# --ops of the small and the large run, and the runs at each. The echo runs a tenth of --ops
# (README.md in benchmarks/peers/loops). Under callgrind a run takes about 2-6 s here, most of
# it Valgrind's start; quick, 7 lines x 2 runs: about 45 s; full, 7 x 4 runs: about 2 min.
SETTINGS = {"quick": {"ops": (2_000, 4_000), "runs": 1},
            "full": {"ops": (20_000, 40_000), "runs": 2}}
WORKLOADS = ("call_soon_chain", "cancelled_timer", "tcp_echo")


@dataclass(frozen=True)
class Arm:
    binary: str                              # BUILD/bin/<binary>
    args: tuple[str, ...] = ()
    workloads: tuple[str, ...] = WORKLOADS   # the loop's name comes from its own report


ARMS = [
    Arm("loop-peer-ourloop"),
    # The clock read per call_later (asyncio's rule) instead of once per turn: the timer's
    # first change after the heap's (chapter 04's note), still a flag of the same binary.
    Arm("loop-peer-ourloop", ("--timer-clock", "call"), ("cancelled_timer",)),
    Arm("loop-peer-libuv"),
]


class NotMeasured(RuntimeError):
    pass


def warmed(ops: int) -> int:
    """The operations a peer runs for a workload whose report says `ops`: those and the
    unmeasured warm-up at a tenth of them, at least one (benchmarks/peers/loops/README.md)."""
    return ops + max(1, ops // 10)


def total_instructions(out_file: str) -> int:
    """The `totals:` line of a callgrind output file (its events are Ir only, the default)."""
    with open(out_file, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise records.RecordError(f"{out_file} has no totals: line")


def slopes(small: list[dict], large: list[dict]) -> list[float]:
    """Instructions per operation of every pairing of a small run with a large one (each run
    {"ops", "instructions"})."""
    return [(b["instructions"] - a["instructions"]) / (b["ops"] - a["ops"])
            for a in small for b in large]


def run_once(arm: Arm, workload: str, ops: int, *, valgrind: str, build_dir: str, base: str) -> dict:
    """One run under callgrind: {"loop", "ops" (counted, warm-up included), "instructions"}."""
    stem = f"{base}.{arm.binary}.{workload}.{ops}"
    out_file, raw = stem + ".callgrind", stem + ".raw.json"
    argv = [valgrind, "--tool=callgrind", f"--callgrind-out-file={out_file}",
            os.path.join(build_dir, "bin", arm.binary), *arm.args,
            "--only", workload, "--ops", str(ops), "--rounds", "1", "--json", raw]
    got = run_logged(argv, stem + ".log", TIMEOUT_S)
    if got is None:
        raise records.RecordError(f"{arm.binary} {workload} ran past {TIMEOUT_S:.0f}s under callgrind")
    if got[0] != 0:
        raise records.RecordError(f"{arm.binary} {workload} exited with {got[0]}:\n{got[2][-1500:]}")
    try:
        with open(raw, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise records.RecordError(f"{arm.binary} wrote no readable JSON: {e}") from e
    problems = records.contract_problems(doc)
    if problems:
        raise records.RecordError(f"{raw}: " + "; ".join(problems))
    (result,) = doc["results"]
    count = total_instructions(out_file)
    os.unlink(raw)
    os.unlink(out_file)
    return {"loop": result["loop"], "ops": warmed(result["ops"]), "instructions": count}


def csv_lines(results: list[dict]) -> tuple[list[str], list[dict]]:
    header = ["loop", "workload", "ops_small", "ops_large", "instructions_small",
              "instructions_large", "instructions_per_op_median", "instructions_per_op_min",
              "instructions_per_op_max"]
    lines = []
    for r in results:
        line = {k: r[k] for k in header[:6]}
        for k in ("median", "min", "max"):
            line[f"instructions_per_op_{k}"] = f"{r['instructions_per_op'][k]:.1f}"
        lines.append(line)
    return header, lines


def run_callgrind(*, build_dir: str, out_dir: str, repo_root: str, mode: str, argv: list[str],
                  reproduce_argv: list[str], stream=sys.stdout) -> tuple[list[str], list[str]]:
    """Every arm's workloads at the mode's two counts; writes the record when every line was
    counted. Returns (not measured, failures)."""
    settings = SETTINGS[mode]
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return [f"{CHAPTER}/{NAME}: valgrind is not installed (Debian: valgrind)"], []
    missing = sorted({f"{CHAPTER}/{NAME}: {os.path.join(build_dir, 'bin', a.binary)} not built"
                      for a in ARMS if not os.access(os.path.join(build_dir, "bin", a.binary), os.X_OK)})
    if missing:
        return missing, []
    base = report.results_base(out_dir, CHAPTER, NAME)
    small_ops, large_ops = settings["ops"]
    results = []
    try:
        for arm in ARMS:
            for workload in arm.workloads:
                small = [run_once(arm, workload, small_ops, valgrind=valgrind, build_dir=build_dir, base=base)
                         for _ in range(settings["runs"])]
                large = [run_once(arm, workload, large_ops, valgrind=valgrind, build_dir=build_dir, base=base)
                         for _ in range(settings["runs"])]
                per_op = slopes(small, large)
                results.append({
                    "loop": small[0]["loop"], "workload": workload, "command": shlex.join([arm.binary, *arm.args, "--only", workload]),
                    "ops_small": small[0]["ops"], "ops_large": large[0]["ops"],
                    "instructions_small": statistics.median_low(r["instructions"] for r in small),
                    "instructions_large": statistics.median_low(r["instructions"] for r in large),
                    "runs": {"small": small, "large": large},
                    "instructions_per_op": {"median": statistics.median(per_op),
                                            "min": min(per_op), "max": max(per_op)}})
    except records.RecordError as e:
        return [], [f"{CHAPTER}/{NAME}: {e}"]
    doc = report.tool_record(mode=mode, settings={"ops": list(settings["ops"]), "runs": settings["runs"],
                                                  "workloads": list(WORKLOADS)},
                             argv=argv, reproduce_argv=reproduce_argv, repo_root=repo_root,
                             build_dir=build_dir, out_dir=out_dir, tool_key="valgrind",
                             tool_argv=[valgrind, "--tool=callgrind", "<peer>", "--only", "<workload>",
                                        "--ops", "<count>", "--rounds", "1"])
    version = subprocess.run([valgrind, "--version"], capture_output=True, text=True, check=False)
    # Instructions under callgrind do not move with the machine's load: compared as they stand.
    doc.update(tool=NAME, valgrind=version.stdout.strip(), results=results,
               verdict_rules={"paired_rounds": [], "proportion": {}, "exact": ["instructions_per_op"]})
    report.write_json(base + ".json", doc)
    report.write_csv(base + ".csv", *csv_lines(results))
    print(f"\n== {CHAPTER}/{NAME} ({mode}: --ops {small_ops} and {large_ops}, {settings['runs']} "
          f"run(s) each, under callgrind) ==", file=stream)
    print(f"  {'loop':<18} {'workload':<16} {'instructions/op median (min-max)':>34}", file=stream)
    for r in results:
        s = r["instructions_per_op"]
        print(f"  {r['loop']:<18} {r['workload']:<16} {s['median']:14.1f} "
              f"({s['min']:.1f}-{s['max']:.1f})", file=stream)
    print(f"  wrote {base}.json, {base}.csv", file=stream)
    return [], []
