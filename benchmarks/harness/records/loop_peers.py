"""harness/records/loop_peers: run every event-loop peer on chapter 04's five loop workloads, the
peers rotated round by round, and file one record for the comparison (chapter 04).

Role: the multi-peer sibling of records.py. records.py runs one tool that does all its
rounds itself; here several programs (benchmarks/peers/loops/: our loop on both hand-in
arms, the drain turn and the executor's spin backoff, libuv, Boost.Asio, CPython's asyncio,
uvloop) are compared, so each round runs every peer once (`--rounds 1`) in an
order rotated by one peer per round, so that the machine's drift falls on all of them
alike, and each figure is the median, min and max over the rounds of that peer's per-round
value. Every peer's file is judged by the peer itself (`--check`) and must meet the records
contract (records.contract_problems). Writes OUT/04-turn-shape/loop-peers.json (the
harness's record: machine, commands, mode, settings, every round's reports) and .csv (one
line per loop x workload, `cpu_us_per_op_median`, `sleeps_per_op_median` and the like, as
records.py flattens; the ping-pong's `trip_wall_us_p50` and the like; on our loops' lines
the verdict (harness/results/verdict.py, from each round's pair) and ratio against each target peer,
add_verdicts).
With `against` (another build tree, e.g. an earlier revision's), the record is
OUT/04-turn-shape/loop-peers-against.{json,csv} instead: our loop from this build and from that
one (peer "ourloop-against", its revision in the settings and on its lines), with libuv and
Asio beside them as the machine's controls, so that a change between two sessions' records
can be laid to the code or to the machine in one session (against_peers).
A peer that is not built or cannot run here (uvloop not importable) is listed as not
measured; a peer that fails a round is a failure, and its other rounds are still filed. A
workload a peer does not run is filed as its result with "not_supported" (the reason) and
no figures.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass

from harness.records import tools as records
from harness.results import report
from harness.results import rounds
from harness.results import summary
from harness.results import verdict
from harness.run.servers import run_logged

CHAPTER = "04-turn-shape"
NAME = "loop-peers"
AGAINST_NAME = "loop-peers-against"
AGAINST_LOOP = "ourloop-against"
PYTHON = "/usr/bin/python3"
TIMEOUT_S = 300.0

# --ops is the chain's and the timers' count per round; the ping-pong, the executor and the
# echo run a tenth of it (README.md in benchmarks/peers/loops). Quick: the slowest peer
# (asyncio) takes about a second a round here; full: about ten.
SETTINGS = {"quick": {"ops": 20_000, "rounds": 3}, "full": {"ops": 200_000, "rounds": 15}}


# The figures over rounds a peer's result may carry; each becomes median, min and max.
FIGURES = ("cpu_us_per_op", "wall_us_per_op", "sleeps_per_op")
# The ping-pong's round-trip percentiles (each peer's, over its trips in one round); each
# becomes the median over rounds.
TRIP = "trip_wall_us"


def pin_cpus() -> list[int] | None:
    """The ping-pong's two CPUs (the loop's, the poster's): the first two this process may
    use, or None on one CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:2] if len(cpus) >= 2 else None


@dataclass(frozen=True)
class Peer:
    loop: str                 # the name its results carry in "loop"
    binary: str | None = None  # BUILD/bin/<binary>, or
    script: str | None = None  # a Python script under the repository, run with /usr/bin/python3
    args: tuple[str, ...] = ()  # the binary's or the script's arguments, before --ops
    needs_module: str | None = None  # a Python module the script's loop imports
    build_dir: str | None = None  # a binary's build tree, when not the run's (against_peers)


PEERS = [
    Peer("ourloop", binary="loop-peer-ourloop", args=("--hand-in", "direct")),
    Peer("ourloop-coord", binary="loop-peer-ourloop", args=("--hand-in", "coordinator")),
    Peer("ourloop-drain", binary="loop-peer-ourloop", args=("--hand-in", "direct", "--turn", "drain")),
    Peer("ourloop-backoff", binary="loop-peer-ourloop",
         args=("--hand-in", "direct", "--executor-spin", "backoff")),
    Peer("libuv", binary="loop-peer-libuv"),
    Peer("boost-asio", binary="loop-peer-asio"),
    Peer("asyncio", script="benchmarks/peers/loops/loop_peer.py", args=("--loop", "asyncio")),
    Peer("uvloop", script="benchmarks/peers/loops/loop_peer.py", args=("--loop", "uvloop"),
         needs_module="uvloop"),
]


def peer_argv(peer: Peer, build_dir: str, repo_root: str) -> list[str]:
    """The peer's command, before its --ops, --rounds and --json."""
    if peer.binary:
        return [os.path.join(peer.build_dir or build_dir, "bin", peer.binary), *peer.args]
    return [PYTHON, os.path.join(repo_root, peer.script), *peer.args]


def against_peers(against_build_dir: str) -> list[Peer]:
    """The peers of a comparison with another build: our loop (direct hand-in) from this
    build and from the other, then libuv and Asio, whose figures do not depend on our code and
    so show what the machine did between two sessions."""
    ours = PEERS[0]
    return [ours, Peer(AGAINST_LOOP, binary=ours.binary, args=ours.args, build_dir=against_build_dir),
            *(p for p in PEERS if p.loop in TARGET_PEERS)]


def why_not(peer: Peer, build_dir: str, repo_root: str) -> str | None:
    """Why the peer cannot run here, or None."""
    argv = peer_argv(peer, build_dir, repo_root)
    if not os.access(argv[0], os.X_OK):
        return f"{argv[0]} not built"
    if peer.needs_module:
        got = subprocess.run([PYTHON, "-c", f"import {peer.needs_module}"], capture_output=True)
        if got.returncode != 0:
            return f"{PYTHON} cannot import {peer.needs_module} (Debian python3-{peer.needs_module})"
    return None


def rotation(peers: list, round_index: int) -> list:
    """The peers in round `round_index`'s order: the list rotated left by the round's index."""
    k = round_index % len(peers) if peers else 0
    return peers[k:] + peers[:k]


def merge(rounds: list[list[dict]]) -> list[dict]:
    """One result per (loop, workload) over the rounds' results (each a peer's one-round
    report): each figure's (FIGURES) medians become the median, min and max over rounds; the wake
    check keeps its largest count. Order: first seen."""
    keyed: dict[tuple[str, str], list[dict]] = {}
    for results in rounds:
        for r in results:
            keyed.setdefault((r["loop"], r["workload"]), []).append(r)
    out = []
    for (loop, workload), rs in keyed.items():
        line = {"loop": loop, "workload": workload, "ops": rs[0]["ops"], "rounds": len(rs)}
        if "not_supported" in rs[0]:
            line["not_supported"] = rs[0]["not_supported"]
        for figure in (f for f in FIGURES if f in rs[0]):
            xs = [r[figure]["median"] for r in rs]
            line[figure] = {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}
        trips = [r[TRIP] for r in rs if TRIP in r]
        if trips:
            line[TRIP] = {p: statistics.median(t[p] for t in trips) for p in trips[0]}
        sleeps = [r["wake_check_sleeps"] for r in rs if "wake_check_sleeps" in r]
        if sleeps:
            line["wake_check_sleeps_max"] = max(sleeps)
        out.append(line)
    return out


# Our loop's target (chapter 04): ahead of or level with these peers on every workload.
TARGET_PEERS = ("libuv", "boost-asio")
TARGET_FIGURE = "cpu_us_per_op"


def targets_of(name: str) -> tuple[str, ...]:
    """The loops a record's verdicts judge our loops against: the target peers, and in the
    against record the other build's loop too."""
    return (AGAINST_LOOP, *TARGET_PEERS) if name == AGAINST_NAME else TARGET_PEERS


def add_verdicts(results: list[dict], per_round: list[dict],
                 targets: tuple[str, ...] = TARGET_PEERS) -> None:
    """On each of our loops' lines (loop "ourloop..."), the verdict of its CPU per operation
    against each target peer's on the same workload, from the two loops' values round by
    round (harness/results/verdict.py, the default margin for CPU; lower is better), and the ratio of
    medians: verdict_cpu_us_per_op_vs_libuv, ratio_cpu_us_per_op_vs_libuv and the same for
    Asio."""
    margin = verdict.margin_for(TARGET_FIGURE)
    by_key = {(r["loop"], r["workload"]): r for r in results}
    for line in results:
        if not line["loop"].startswith("ourloop"):
            continue
        for peer in (t for t in targets if t != line["loop"]):
            other = by_key.get((peer, line["workload"]))
            mine = rounds.loop_peer_rounds(per_round, line["loop"], line["workload"], TARGET_FIGURE)
            theirs = rounds.loop_peer_rounds(per_round, peer, line["workload"], TARGET_FIGURE)
            line[summary.verdict_column(TARGET_FIGURE, peer)] = (
                verdict.of_rounds(mine, theirs, False, margin).word)
            a, b = line.get(TARGET_FIGURE), (other or {}).get(TARGET_FIGURE)
            if a and b and b["median"]:
                line[summary.ratio_column(TARGET_FIGURE, peer)] = a["median"] / b["median"]


def run_once(peer: Peer, *, build_dir: str, repo_root: str, base: str, ops: int,
             pin: list[int] | None = None) -> dict:
    """One round of one peer: its report, checked. Raises records.RecordError."""
    raw = f"{base}.{peer.loop}.raw.json"
    argv = peer_argv(peer, build_dir, repo_root) + ["--ops", str(ops), "--rounds", "1", "--json", raw]
    if pin:
        argv += ["--pin", ",".join(map(str, pin))]
    got = run_logged(argv, f"{base}.{peer.loop}.log", TIMEOUT_S)
    if got is None:
        raise records.RecordError(f"ran past {TIMEOUT_S:.0f}s")
    if got[0] != 0:
        raise records.RecordError(f"exited with {got[0]}:\n{got[2][-1500:]}")
    try:
        with open(raw, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise records.RecordError(f"wrote no readable JSON: {e}") from e
    problems = records.contract_problems(doc)
    if problems:
        raise records.RecordError(f"{raw}: " + "; ".join(problems))
    checked = run_logged(peer_argv(peer, build_dir, repo_root) + ["--check", raw],
                         f"{base}.{peer.loop}.check.log", TIMEOUT_S)
    if checked is None or checked[0] != 0:
        said = checked[2][-1500:] if checked else "ran past the timeout"
        raise records.RecordError(f"--check rejected its own report (kept: {raw}):\n{said}")
    os.unlink(raw)
    return labelled(doc, peer)


def labelled(doc: dict, peer: Peer) -> dict:
    """A peer's report with its results named by the peer: a binary from another build
    names its results as this build's does ("ourloop"), and merge() would pool the two."""
    if peer.build_dir:
        for r in doc.get("results", []):
            r["loop"] = peer.loop
    return doc


def run_loop_peers(*, build_dir: str, out_dir: str, repo_root: str, mode: str, argv: list[str],
                   reproduce_argv: list[str], ops: int | None = None, rounds: int | None = None,
                   peers: list[Peer] = PEERS, against: str | None = None,
                   stream=sys.stdout) -> tuple[list[str], list[str]]:
    """Every peer that can run, `rounds` rounds rotated; writes the record when any round of
    any peer succeeded. With `against` (another build tree), the peers are against_peers' and
    the record is AGAINST_NAME's. Returns (the peers not measured, the failures)."""
    settings = dict(SETTINGS[mode])
    name = NAME
    if against:
        peers, name = against_peers(against), AGAINST_NAME
        settings["against"] = {"build_dir": against, "revision": report.build_revision(against)}
    settings.update({k: v for k, v in (("ops", ops), ("rounds", rounds)) if v is not None})
    pin = pin_cpus()
    if pin:
        settings["ping_pong_pin"] = {"loop_cpu": pin[0], "poster_cpu": pin[1]}
    missing, failures, ready = [], [], []
    for peer in peers:
        why = why_not(peer, build_dir, repo_root)
        if why:
            missing.append(f"{CHAPTER}/{name} {peer.loop}: {why}")
        else:
            ready.append(peer)
    if against and AGAINST_LOOP not in (p.loop for p in ready):
        # Without the other build there is no comparison to file: a typo in the path must not
        # leave a record that looks whole.
        return missing, [f"{CHAPTER}/{name}: --against {against}: nothing to compare with "
                         f"(build its {PEERS[0].binary} there first)"]
    base = report.results_base(out_dir, CHAPTER, name)
    per_round: list[dict] = []
    for i in range(settings["rounds"]):
        reports = {}
        for peer in rotation(ready, i):
            try:
                reports[peer.loop] = run_once(peer, build_dir=build_dir, repo_root=repo_root,
                                              base=base, ops=settings["ops"], pin=pin)
            except records.RecordError as e:
                failures.append(f"{CHAPTER}/{name} {peer.loop}, round {i + 1}: {e}")
        per_round.append({"order": [p.loop for p in rotation(ready, i)], "reports": reports})
    by_peer = [[r for rnd in per_round for r in rnd["reports"].get(p.loop, {}).get("results", [])]
               for p in ready]
    results = merge([rs for rs in by_peer if rs])
    if not results:
        return missing, failures
    add_verdicts(results, per_round, targets_of(name))
    if against:  # each of our two loops' lines names the revision it was built from
        revisions = {PEERS[0].loop: report.build_revision(build_dir),
                     AGAINST_LOOP: settings["against"]["revision"]}
        for line in results:
            if line["loop"] in revisions:
                line["revision"] = revisions[line["loop"]]
    doc = report.tool_record(mode=mode, settings=settings, argv=argv, reproduce_argv=reproduce_argv,
                             repo_root=repo_root, build_dir=build_dir, out_dir=out_dir,
                             tool_key="peer",
                             tool_argv=["<peer>", "--ops", str(settings["ops"]), "--rounds", "1"])
    doc.update(tool=name, peers={p.loop: report.reproduce_command(peer_argv(p, build_dir, repo_root),
                                                                   repo_root) for p in ready},
               rounds=per_round, results=results)
    report.write_json(base + ".json", doc)
    header, lines = records.csv_lines(results)
    report.write_csv(base + ".csv", header, lines)
    print(f"\n== {CHAPTER}/{name} ({mode}: ops {settings['ops']}, rounds {settings['rounds']}, "
          f"peers rotated) ==", file=stream)
    print(f"  {'loop':<13} {'workload':<21} {'cpu us/op median (min-max)':<30} "
          f"{'wall us/op':>10} {'sleeps/op':>9}", file=stream)
    for r in results:
        if "not_supported" in r:
            print(f"  {r['loop']:<13} {r['workload']:<21} not supported: {r['not_supported']}",
                  file=stream)
            continue
        c, w, z = r["cpu_us_per_op"], r["wall_us_per_op"], r.get("sleeps_per_op", {})
        print(f"  {r['loop']:<13} {r['workload']:<21} "
              f"{c['median']:9.3f} ({c['min']:.3f}-{c['max']:.3f}){'':<5} {w['median']:10.3f} "
              f"{z.get('median', float('nan')):9.3f}", file=stream)
    print(f"  wrote {base}.json, {base}.csv", file=stream)
    return missing, failures
