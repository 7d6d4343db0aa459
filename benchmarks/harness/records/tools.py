"""harness/records/tools: run the probes that each write one JSON report, and file each report with
its chapter's tables (chapter 03).

Role: one runner for every measuring binary that follows the probes' contract: it takes
`--json PATH` and writes there a JSON object with "tool", "machine" and a "results" array
of objects (and, if TOOLS says so, judges such a file with `--check PATH`, exit 0 when it
is whole). For each registered tool that is built, it runs BUILD/bin/<binary> with the
mode's settings, has the tool check its own file, and writes OUT/<chapter>/<name>.json (the
tool's report inside the harness's record: machine, command, reproduce command, mode,
settings) and .csv (one line per result, nested objects flattened one level into
`outer_inner` columns, e.g. sb-litmus's outcomes.00 as outcomes_00), which the book's
`results-table` directive renders.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

from harness.results import report
from harness.run import postgres
from harness.run.servers import run_logged

TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Tool:
    chapter: str
    name: str            # the record's name: OUT/<chapter>/<name>.{json,csv}
    binary: str          # BUILD/bin/<binary>
    settings: dict       # mode -> {flag: value}, passed as --flag value (underscores as dashes)
    check: bool          # the binary judges its own JSON with --check PATH
    needs: tuple[str, ...] = ()  # services it needs: ("postgres",) runs inside the cluster
                                 # bench.py starts (harness/run/postgres.py), else is not run


# Every tool the book renders. Full-mode counts keep each under about two minutes on the
# book's two-core machine.
TOOLS = [
    # 8 cells (4 orderings x pinned/unpinned). A trial costs its two threads about 4.6 µs of
    # CPU together (a run of 1.6 M trials there: 7.3 s user + system), so about 2.3 µs of wall
    # on an idle machine: 5 M per cell is 40 M trials, about 90 s. A busy machine stretches
    # it many times over (each side yields while it waits for the other).
    Tool("03-lost-wakes", "sb-litmus", "sb-litmus",
         {"quick": {"trials": 300_000}, "full": {"trials": 5_000_000}}, check=True),
    # 12 cells (3 mechanisms x W = 1, 2, 4, 8); a wake takes about 0.6 ms there (its 500 µs
    # gap, the wake, the settle), so the full run's 120 k wakes about 75 s.
    Tool("03-lost-wakes", "herd-probe", "herd-probe",
         {"quick": {"round_trips": 200, "rounds": 3}, "full": {"round_trips": 2000, "rounds": 5}},
         check=True),
    # 3 policies, a round about 0.33 s (two 300 ms jobs beside the fast one): 40 rounds each
    # (twice the seed's 20) is about 40 s.
    Tool("03-lost-wakes", "wake-rounds", "wake-rounds",
         {"quick": {"rounds": 5}, "full": {"rounds": 40}}, check=True),
    # 2 variants x runs of 100 k aligned wakes: about 3 s fenced; unfenced about 5-10 s, as
    # each of its 200-300 lost wakes costs the 20 ms that show the loop asleep. Full: ~40 s.
    Tool("03-lost-wakes", "loop-wake-stress", "loop-wake-stress",
         {"quick": {"runs": 1}, "full": {"runs": 3}}, check=True),
    # 4 rows (getaddrinfo("localhost") and an artificial 1 ms lookup, capped and unbounded)
    # of a 1,000-lookup burst: a round takes about 1 s, most of it the artificial row's capped
    # arm (1,000 / cap waits of 1 ms) and the unbounded arm's thread creations and exits.
    Tool("04-turn-shape", "resolver-burst", "resolver-burst",
         {"quick": {"lookups": 1000, "rounds": 3}, "full": {"lookups": 1000, "rounds": 11}}, check=True),
    # 4 arms (wake spin 0 / 50 µs, with and without the lock model), each run a 100 ms
    # warm-up and SECONDS measured: quick 3 rounds of 1 s, about 14 s; full 5 of 4 s, ~85 s.
    Tool("04-turn-shape", "gil-spin", "gil-spin",
         {"quick": {"seconds": 1, "rounds": 3}, "full": {"seconds": 4, "rounds": 5}}, check=True),
    # 8 arms (drain / generation turn x wake spin 0 / 50 µs x lock model on / off) of seed 003's
    # pool churn against the PostgreSQL bench.py starts: each run a fresh loop and pool 4 + 2,
    # a 300 ms warm-up and SECONDS measured: quick 3 rounds of 1 s, about 35 s; full 5 of
    # 2.5 s, about 2 min. At 2-6 k requests/s on two shared cores one new session is 0.2-0.5
    # per 1k in a 1 s window: read the quick mode's session counts as coarse.
    Tool("04-turn-shape", "pool-churn", "pool-churn",
         {"quick": {"seconds": 1, "rounds": 3}, "full": {"seconds": 2.5, "rounds": 5}},
         check=True, needs=("postgres",)),
    # 2 turn shapes x one run of the chain_beside_socket scenario with a 2048-step chain,
    # longer than a drain turn's cap (1024), on our callback loop: a count, not a timing,
    # so quick and full are the same run (well under a second).
    Tool("04-turn-shape", "chain-beside-socket", "loop-oracle",
         {"quick": {"chain_steps": 2048}, "full": {"chain_steps": 2048}}, check=True),
    # 4 arms (one shared stack lock, one per worker, shared with hand-off, shared with a long
    # buzz) of W = 4 threads sending through the stack model with nothing else to do, each
    # run SECONDS: quick 3 rounds of 0.5 s, about 8 s; full 5 rounds of 2 s, about 45 s.
    Tool("05-stack-lock", "stack-lock-probe", "stack-lock-probe",
         {"quick": {"workers": 4, "seconds": 0.5, "rounds": 3},
          "full": {"workers": 4, "seconds": 2, "rounds": 5}}, check=True),
]


class RecordError(RuntimeError):
    pass


def tool_argv(tool: Tool, mode: str) -> list[str]:
    """The tool's flags for a mode, without --json."""
    argv = []
    for flag, value in tool.settings[mode].items():
        argv += [f"--{flag.replace('_', '-')}", str(value)]
    return argv


def cell(value) -> str:
    """One CSV cell: a boolean or a null as JSON spells it, an integer as is, a float to four
    significant digits (to the unit from a thousand up, so a large figure keeps its digits),
    a list as its items joined by spaces, anything else as its text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.0f}" if abs(value) >= 1e3 else f"{value:.4g}"
    if isinstance(value, list):
        return " ".join(cell(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))   # nested two deep: kept whole
    return str(value)


def flatten(result: dict) -> dict[str, str]:
    """One result as CSV cells: a nested object's keys become `outer_inner` columns (one
    level), everything else keeps its key."""
    out: dict[str, str] = {}
    for key, value in result.items():
        if isinstance(value, dict):
            for inner, v in value.items():
                out[f"{key}_{inner}"] = cell(v)
        else:
            out[key] = cell(value)
    return out


def csv_lines(results: list[dict]) -> tuple[list[str], list[dict]]:
    """The header (every column in the order first seen) and one line per result; a column
    a result lacks is left empty."""
    lines = [flatten(r) for r in results]
    header: list[str] = []
    for line in lines:
        header += [k for k in line if k not in header]
    return header, lines


def contract_problems(doc) -> list[str]:
    """How a tool's JSON breaks the contract: "tool", "machine" and a "results" array of objects."""
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    problems = []
    if not isinstance(doc.get("tool"), str) or not doc["tool"]:
        problems.append('no "tool" name')
    if not isinstance(doc.get("machine"), dict):
        problems.append('no "machine" object')
    results = doc.get("results")
    if not isinstance(results, list) or not results:
        problems.append('no "results" array, or an empty one')
    elif not all(isinstance(r, dict) for r in results):
        problems.append('"results" holds something other than objects')
    return problems


def run_tool(tool: Tool, *, build_dir: str, out_dir: str, repo_root: str, mode: str,
             argv: list[str], reproduce_argv: list[str], stream=sys.stdout) -> dict:
    """Run one built tool, check its report, and write its record. Raises RecordError."""
    exe = os.path.join(build_dir, "bin", tool.binary)
    base = report.results_base(out_dir, tool.chapter, tool.name)
    raw_path = base + ".raw.json"
    run_argv = [exe] + tool_argv(tool, mode) + ["--json", raw_path]
    got = run_logged(run_argv, base + ".log", TIMEOUT_S)
    if got is None:
        raise RecordError(f"{tool.binary} ran past {TIMEOUT_S:.0f}s (its output: {base}.log)")
    code, _, log_text = got
    if code != 0:
        raise RecordError(f"{tool.binary} exited with {code}:\n{log_text[-1500:]}")
    try:
        with open(raw_path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, ValueError) as e:
        raise RecordError(f"{tool.binary} wrote no readable JSON: {e}") from e
    problems = contract_problems(raw)
    if problems:
        raise RecordError(f"{raw_path}: " + "; ".join(problems))
    if tool.check:
        checked = run_logged([exe, "--check", raw_path], base + ".check.log", TIMEOUT_S)
        if checked is None or checked[0] != 0:
            said = checked[2][-1500:] if checked else "ran past the timeout"
            raise RecordError(f"{tool.binary} --check rejected its own report "
                              f"(kept: {raw_path}):\n{said}")
    os.unlink(raw_path)
    doc = report.tool_record(mode=mode, settings=tool.settings[mode], argv=argv,
                             reproduce_argv=reproduce_argv, repo_root=repo_root,
                             build_dir=build_dir, out_dir=out_dir, tool_key="tool",
                             tool_argv=run_argv[:-2])
    doc.update(tool=raw["tool"], report=raw, results=raw["results"])
    report.write_json(base + ".json", doc)
    header, lines = csv_lines(raw["results"])
    report.write_csv(base + ".csv", header, lines)
    settings = ", ".join(f"{k} {v}" for k, v in tool.settings[mode].items())
    print(f"\n== {tool.chapter}/{tool.name} ({mode}: {settings}) ==", file=stream)
    for line in log_text.rstrip("\n").splitlines():
        print(f"  {line}", file=stream)
    print(f"  wrote {base}.json, {base}.csv", file=stream)
    return doc


def run_records(*, build_dir: str, out_dir: str, repo_root: str, mode: str, argv: list[str],
                reproduce_argv, only: str | None = None, tools: list[Tool] = TOOLS,
                stream=sys.stdout) -> tuple[list[str], list[str]]:
    """Run every registered tool that is built (or only the one named `only`); a failure of
    one does not stop the others. `reproduce_argv(name)` gives the command that regenerates
    one tool's record. Returns (the tools not built, the failures)."""
    missing, failures = [], []
    for tool in tools:
        if only is not None and tool.name != only:
            continue
        exe = os.path.join(build_dir, "bin", tool.binary)
        if not os.access(exe, os.X_OK):
            missing.append(f"{tool.chapter}/{tool.name}: {exe} not built")
            continue
        if "postgres" in tool.needs and not postgres.inside():
            missing.append(f"{tool.chapter}/{tool.name}: a PostgreSQL: "
                           f"{postgres.missing() or 'not started (bench.py starts one)'}")
            continue
        try:
            run_tool(tool, build_dir=build_dir, out_dir=out_dir, repo_root=repo_root, mode=mode,
                     argv=argv, reproduce_argv=reproduce_argv(tool.name), stream=stream)
        except RecordError as e:
            failures.append(f"{tool.chapter}/{tool.name}: {e}")
    return missing, failures
