"""harness/run/specfile: read and check a measurement spec (TOML) (chapter 01).

Role: turns benchmarks/specs/*.toml into plain objects the runner iterates over: the
arms (how to start each server), the rows (what load to offer), the per-mode rounds
and durations, and the comparisons that get a verdict. Everything a spec may say is
checked here, so that a typo fails before any server starts.

Shape of a spec:

    [spec]
    chapter = "01-baseline"        # results go to OUT/<chapter>/<name>.{json,csv,png}
    name = "server"
    title = "..."                  # optional, for the stdout table and the plots
    in_all = true                  # `bench.py all` runs it (smoke specs say false)
    headline = true                # the chapter's headline table: a budgeted `bench.py all`
                                   # (README command 1) runs every headline first
    needs = ["postgres"]           # optional: services the arms need (harness/run/postgres.py)
    busy_threshold_pct = 25        # flag a cell when the rest of the machine used more
    stall_us = 10000               # a run whose max latency exceeds this is a stall (default)
    stall_samples = false          # true: loadgen rows record raw samples, and a stalled
                                   # run's slowest ones are kept next to the results
    verdict_metrics = ["loop_us_per_req", "rps"]
    plots = ["loop_us_per_req", "rps"]

    [margins]                      # optional: each metric's equivalence margin, a fraction:
    loop_us_per_req = 0.03         # a ratio inside [1/1.03, 1.03] is "level" (harness/results/verdict.py;
    rps = 0.05                     # its DEFAULT_MARGINS: 3% for CPU, 5% for rates and the rest)

    [modes.quick]                  # and [modes.full]
    rounds = 1
    duration_s = 2
    warmup_s = 1
    max_rounds = 15                # optional: after `rounds`, go on one round at a time while
    budget_s = 1200                # a verdict is undecided and the rounds it would take are
                                   # within max_rounds, and one more round fits in budget_s
                                   # (harness/run/runner.py, more_rounds); every round is kept

    [[arms]]
    name = "inline"
    kind = "stage"                 # stage | floor | a peer: nginx | h2o | lighttpd | haproxy | python
    binary = "handoff-01"          # stage: required; floor: default "epoll-floor";
                                   # haproxy: the stage its backends run (with args)
    args = ["--workers", "1", "--dispatch", "inline"]
    env = { SOME_SWITCH = "0" }
    main_role = "loop"             # optional: role of an unnamed main thread
    template = "benchmarks/peers/nginx.conf.in"  # a peer: its configuration (default: its own,
                                   # harness/run/peers.py); python: the script
    workers = 1                    # nginx: worker processes to wait for
    backends = 2                   # haproxy: the stage processes it balances over

    [[rows]]
    name = "c16"
    path = "/"
    model = "closed"               # closed | paced | open
    connections = 16
    client = "loadgen"             # loadgen | wrk
    threads = 1
    rate = 0                       # paced/open: requests per second
    interval_us = 0                # paced: per-connection gap
    pipeline = 1
    method = "GET"
    body_size = 0

    compare = [["pool", "inline"]] # or [[compare]] tables with a, b, metrics

A comparison names two arms (compared inside every row) or two rows (compared inside
every arm); arm and row names must therefore be distinct.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from dataclasses import dataclass, field

from harness.run.peers import PEERS

ARM_KINDS = ("stage", "floor", *PEERS)
MODELS = ("closed", "paced", "open")
CLIENTS = ("loadgen", "wrk")
MODES = ("quick", "full")
SERVICES = ("postgres",)  # a spec's `needs`: harness/run/postgres.py starts one for the run
LOOPBACK_HOST = "127.0.0.1"
CELL_OVERHEAD_S = 0.3  # a cell's server start, readiness GET, /stats reads and stop (2-core VM)


class SpecError(ValueError):
    pass


@dataclass(frozen=True)
class Arm:
    name: str
    kind: str
    binary: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    template: str = ""          # a peer: config template, relative to the repo root ("": its own)
    workers: int = 1            # nginx: worker processes to wait for
    backends: int = 0           # haproxy: stage processes (binary and args) behind it
    main_role: str | None = None
    ready_path: str = "/"


@dataclass(frozen=True)
class Row:
    name: str
    path: str = "/"
    model: str = "closed"
    connections: int = 16
    client: str = "loadgen"
    threads: int = 1
    rate: float = 0.0
    interval_us: int = 0
    pipeline: int = 1
    method: str = "GET"
    body_size: int = 0


@dataclass(frozen=True)
class ModeSettings:
    rounds: int
    duration_s: float
    warmup_s: float
    max_rounds: int = 0       # > rounds: go on round by round while a verdict is undecided
    budget_s: float = 0.0     # and the rounds so far say one more fits in this time (0: no limit)


@dataclass(frozen=True)
class Compare:
    a: str
    b: str
    over: str                   # "arms" or "rows"
    metrics: tuple[str, ...]


@dataclass
class Spec:
    path: str
    chapter: str
    name: str
    title: str
    in_all: bool
    busy_threshold_pct: float
    verdict_metrics: tuple[str, ...]
    plots: tuple[str, ...]
    modes: dict[str, ModeSettings]
    arms: list[Arm]
    rows: list[Row]
    compares: list[Compare] = field(default_factory=list)
    text: str = ""
    needs: tuple[str, ...] = ()
    margins: dict[str, float] = field(default_factory=dict)
    stall_us: float = 10_000.0
    stall_samples: bool = False
    headline: bool = False

    def estimate_s(self, mode: str) -> float:
        """About how long a run of this spec takes: every cell's warm-up and measured seconds,
        and CELL_OVERHEAD_S for starting, checking and stopping its server."""
        m = self.modes[mode]
        cells = len(self.arms) * len(self.rows) * m.rounds
        return cells * (m.warmup_s + m.duration_s + CELL_OVERHEAD_S)


def _need(table: dict, key: str, kind, where: str):
    if key not in table:
        raise SpecError(f"{where}: missing '{key}'")
    value = table[key]
    if not isinstance(value, kind):
        raise SpecError(f"{where}: '{key}' must be {kind}")
    return value


def _only(table: dict, allowed: set[str], where: str) -> None:
    unknown = set(table) - allowed
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {sorted(unknown)}")


def check_loopback(host: str) -> str:
    """Refuse any target that is not this machine's loopback."""
    try:
        if ipaddress.ip_address(host.strip("[]")).is_loopback:
            return host
    except ValueError:
        pass
    raise SpecError(f"refusing non-loopback target host {host!r}")


def _arm(t: dict, i: int) -> Arm:
    where = f"arms[{i}]"
    _only(t, {"name", "kind", "binary", "args", "env", "template", "workers", "backends",
              "main_role", "ready_path"}, where)
    name = _need(t, "name", str, where)
    kind = _need(t, "kind", str, where)
    if kind not in ARM_KINDS:
        raise SpecError(f"{where}: kind must be one of {ARM_KINDS}")
    args = tuple(str(a) for a in t.get("args", []))
    for flag, value in zip(args, args[1:]):
        if flag == "--host":
            check_loopback(value)
    for a in args:
        if a.startswith("--host="):
            check_loopback(a.split("=", 1)[1])
    binary = t.get("binary", "epoll-floor" if kind == "floor" else "")
    if kind in ("stage", "haproxy") and not binary:
        raise SpecError(f"{where}: a {kind} arm names its (backends') binary")
    backends = int(t.get("backends", 0))
    if (kind == "haproxy") != (backends >= 1):
        raise SpecError(f"{where}: an haproxy arm, and only one, has backends >= 1")
    if os.sep in binary:
        raise SpecError(f"{where}: binary is a name under BUILD/bin, not a path")
    env = tuple(sorted((str(k), str(v)) for k, v in t.get("env", {}).items()))
    return Arm(name=name, kind=kind, binary=binary, args=args, env=env,
               template=t.get("template", ""), workers=int(t.get("workers", 1)),
               backends=backends, main_role=t.get("main_role"),
               ready_path=t.get("ready_path", "/"))


def _row(t: dict, i: int) -> Row:
    where = f"rows[{i}]"
    _only(t, {"name", "path", "model", "connections", "client", "threads", "rate",
              "interval_us", "pipeline", "method", "body_size"}, where)
    row = Row(name=_need(t, "name", str, where), path=t.get("path", "/"),
              model=t.get("model", "closed"), connections=int(t.get("connections", 16)),
              client=t.get("client", "loadgen"), threads=int(t.get("threads", 1)),
              rate=float(t.get("rate", 0)), interval_us=int(t.get("interval_us", 0)),
              pipeline=int(t.get("pipeline", 1)), method=t.get("method", "GET"),
              body_size=int(t.get("body_size", 0)))
    if not row.path.startswith("/"):
        raise SpecError(f"{where}: path must start with '/'")
    if row.model not in MODELS:
        raise SpecError(f"{where}: model must be one of {MODELS}")
    if row.client not in CLIENTS:
        raise SpecError(f"{where}: client must be one of {CLIENTS}")
    if row.connections < 1 or row.threads < 1:
        raise SpecError(f"{where}: connections and threads must be >= 1")
    if row.model in ("paced", "open") and row.rate <= 0 and row.interval_us <= 0:
        raise SpecError(f"{where}: a {row.model} row needs rate or interval_us")
    if row.client == "wrk" and (row.model != "closed" or row.pipeline != 1
                                or row.method != "GET"):
        raise SpecError(f"{where}: the wrk client runs closed-loop GET rows only")
    return row


def _modes(t: dict) -> dict[str, ModeSettings]:
    out = {}
    for mode in MODES:
        m = t.get(mode)
        if m is None:
            raise SpecError(f"modes.{mode} is missing")
        _only(m, {"rounds", "duration_s", "warmup_s", "max_rounds", "budget_s"}, f"modes.{mode}")
        s = ModeSettings(rounds=int(_need(m, "rounds", int, f"modes.{mode}")),
                         duration_s=float(_need(m, "duration_s", (int, float),
                                                f"modes.{mode}")),
                         warmup_s=float(m.get("warmup_s", 1)),
                         max_rounds=int(m.get("max_rounds", 0)),
                         budget_s=float(m.get("budget_s", 0)))
        if s.rounds < 1 or s.duration_s <= 0 or s.warmup_s < 0:
            raise SpecError(f"modes.{mode}: rounds >= 1, duration_s > 0, warmup_s >= 0")
        if s.max_rounds and s.max_rounds < s.rounds or s.budget_s < 0:
            raise SpecError(f"modes.{mode}: max_rounds >= rounds (or 0), budget_s >= 0")
        out[mode] = s
    return out


def parse(text: str, path: str = "<spec>") -> Spec:
    from harness.results.summary import METRICS  # one table of metric names and directions
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: {e}") from e
    _only(doc, {"spec", "modes", "arms", "rows", "compare", "margins"}, path)
    head = _need(doc, "spec", dict, path)
    _only(head, {"chapter", "name", "title", "in_all", "headline", "needs", "busy_threshold_pct",
                 "verdict_metrics", "plots", "stall_us",
                 "stall_samples"}, "spec")
    arms = [_arm(t, i) for i, t in enumerate(_need(doc, "arms", list, path))]
    rows = [_row(t, i) for i, t in enumerate(_need(doc, "rows", list, path))]
    if not arms or not rows:
        raise SpecError(f"{path}: needs at least one arm and one row")
    arm_names = [a.name for a in arms]
    row_names = [r.name for r in rows]
    for names, what in ((arm_names, "arm"), (row_names, "row")):
        if len(set(names)) != len(names):
            raise SpecError(f"{path}: duplicate {what} names")
    if set(arm_names) & set(row_names):
        raise SpecError(f"{path}: arm and row names must differ")
    verdict_metrics = tuple(head.get("verdict_metrics", ["loop_us_per_req", "rps"]))
    plots = tuple(head.get("plots", ["loop_us_per_req", "rps"]))
    for m in verdict_metrics + plots:
        if m not in METRICS:
            raise SpecError(f"{path}: unknown metric {m!r}")
    compares = []
    for i, c in enumerate(doc.get("compare", [])):
        if isinstance(c, list):
            if len(c) != 2:
                raise SpecError(f"compare[{i}]: a pair of names")
            a, b, metrics = str(c[0]), str(c[1]), verdict_metrics
        else:
            _only(c, {"a", "b", "metrics"}, f"compare[{i}]")
            a, b = _need(c, "a", str, f"compare[{i}]"), _need(c, "b", str, f"compare[{i}]")
            metrics = tuple(c.get("metrics", verdict_metrics))
        for m in metrics:
            if m not in METRICS:
                raise SpecError(f"compare[{i}]: unknown metric {m!r}")
        if a in arm_names and b in arm_names:
            over = "arms"
        elif a in row_names and b in row_names:
            over = "rows"
        else:
            raise SpecError(f"compare[{i}]: {a!r} and {b!r} must both be arms or both rows")
        compares.append(Compare(a, b, over, tuple(metrics)))
    margins = _margins(doc.get("margins", {}), METRICS)
    needs = tuple(head.get("needs", []))
    for n in needs:
        if n not in SERVICES:
            raise SpecError(f"spec: needs {n!r}: known services are {sorted(SERVICES)}")
    stall_us = head.get("stall_us", 10_000)
    if isinstance(stall_us, bool) or not isinstance(stall_us, (int, float)) or stall_us <= 0:
        raise SpecError("spec: stall_us must be a number of microseconds > 0")
    stall_samples = head.get("stall_samples", False)
    if not isinstance(stall_samples, bool):
        raise SpecError("spec: stall_samples must be true or false")
    chapter = _need(head, "chapter", str, "spec")
    name = _need(head, "name", str, "spec")
    for part in (chapter, name):
        if not part or "/" in part or part.startswith("."):
            raise SpecError(f"spec: chapter and name are plain file names, not {part!r}")
    return Spec(path=path, chapter=chapter, name=name, title=head.get("title", name),
                in_all=bool(head.get("in_all", True)),
                busy_threshold_pct=float(head.get("busy_threshold_pct", 25.0)),
                verdict_metrics=verdict_metrics, plots=plots,
                modes=_modes(_need(doc, "modes", dict, path)), arms=arms, rows=rows,
                compares=compares, text=text, needs=needs, margins=margins, stall_us=float(stall_us),
                stall_samples=stall_samples, headline=bool(head.get("headline", False)))


def _margins(table, metrics) -> dict[str, float]:
    """[margins]: metric = fraction, each a known metric and 0 < fraction < 1."""
    if not isinstance(table, dict):
        raise SpecError("margins: a table of metric = fraction")
    for m, v in table.items():
        if m not in metrics:
            raise SpecError(f"margins: unknown metric {m!r}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
            raise SpecError(f"margins: {m} is a fraction between 0 and 1 (0.03 for ±3%), not {v!r}")
    return {m: float(v) for m, v in table.items()}


def load(path: str) -> Spec:
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    return parse(text, path)


def rotation(items: list, round_index: int) -> list:
    """The order of the arms in round r: A B C, then B C A, then C A B, ..."""
    if not items:
        return []
    k = round_index % len(items)
    return list(items[k:]) + list(items[:k])
