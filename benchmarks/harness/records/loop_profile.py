"""harness/records/loop_profile: where the loop thread's CPU goes, sampled with perf, per request (chapter 03).

Role: the measured cause behind chapter 03's loop-CPU target. For a fixed list of arms of
specs/03-server.toml at its c256 row (inline; elastic-1; ring-1, which is that spec's
shared-1, chapter 02's pool), alternated over rounds, one cell each: start the server
(servers.Server), warm it up with the row's own client, find the loop thread by its name
(procfs), start `perf record -F FREQ -g -t <loop tid> -D -1` (disabled) and loadgen in the
background, then: read the stage's /stats, enable perf, sleep WINDOW, disable perf, read
/stats again (PerfControl: perf acknowledges each command, so the loop's `requests`
counter over the two reads is the requests the sampled window served, give or take the
few that one /stats round trip overlaps), stop perf, loadgen and the server. Each sample
is then put in one category (`categorise`), and the record gives, per (arm, category),
samples per 1000 requests (median, min, max over rounds) and the category's share of the
loop's samples, plus each arm's top symbols. It writes OUT/03-lost-wakes/loop-profile.{json,csv}.

Categories, by the sample's leaf frame (the instruction the loop was on):
  allocator  glibc's malloc and free and their lock (ALLOCATOR_SYMBOLS, tcache_*); and a
             kernel sample whose first user-space frame is one of those (the futex of the
             allocator's lock and the sleep or wake it causes, a page fault inside
             _int_malloc); call chains (-g) are recorded for this, and only their first
             user frame is read: it is the user registers at the kernel entry, so exact,
             unlike the frame-pointer walk beyond it (the build keeps no frame pointers)
  kernel     every other kernel sample (system calls, epoll, the socket, the scheduler)
  hand-off   handoff::pool:: and handoff::sync:: symbols
  http       handoff::http:: and handoff::net:: symbols (and llhttp's parser)
  other      everything else (the server's per-connection bookkeeping, libstdc++, memcpy)
A line with category `all` carries the loop's total samples per 1000 requests.

perf must be present and allowed to sample the kernel (root, or perf_event_paranoid <= 1);
otherwise the tool says why and writes nothing (`NotMeasured`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from harness.results import report
from harness.run import clients
from harness.run import procfs
from harness.run import servers
from harness.run import serverstats
from harness.run import specfile
from harness.run.servers import CHILDREN, run_logged, stop, wait_exit

CHAPTER = "03-lost-wakes"
NAME = "loop-profile"
SPEC = os.path.join("benchmarks", "specs", "03-server.toml")
ROW = "c256"
# (the name in this record, the arm's name in SPEC).
ARMS = (("inline", "inline"), ("elastic-1", "elastic-1"), ("ring-1", "shared-1"))
# Samples per second of the loop's CPU time (perf's -F). On a machine without a PMU perf
# samples cpu-clock, so a sample is 1/FREQ s of the loop's time on a CPU.
FREQ = 1999


@dataclass(frozen=True)
class Settings:
    rounds: int
    warmup_s: float
    window_s: float


# A full run: 3 arms x 3 rounds of about 9 s (start, warm-up, window, perf script), under
# 2 minutes.
MODES = {"quick": Settings(rounds=1, warmup_s=0.5, window_s=2.0),
         "full": Settings(rounds=3, warmup_s=1.0, window_s=5.0)}
# loadgen starts LEAD_S before the window (so its 256 connections are open) and runs
# TAIL_S past it: perf's start-up, its acknowledgements and the reads of /stats and /proc
# around the window all fall inside loadgen's run (half a second was too little on a busy
# 2-core machine: seven of nine full-mode cells found loadgen gone before the window closed).
LEAD_S = 0.3
TAIL_S = 2.0
PERF_TIMEOUT_S = 60.0
ACK_TIMEOUT_S = 10.0

CATEGORIES = ("allocator", "kernel", "hand-off", "http", "other")
ALL = "all"
ALLOCATOR_SYMBOLS = frozenset({
    "_int_malloc", "_int_free", "malloc", "free", "cfree", "__libc_malloc", "__libc_free",
    "malloc_consolidate", "unlink_chunk", "__lll_lock_wait_private", "__lll_lock_wake_private",
    "_int_free_merge_chunk", "_int_free_create_chunk", "_int_free_maybe_consolidate"})
ALLOCATOR_PREFIXES = ("tcache_",)
HANDOFF_PREFIXES = ("handoff::pool::", "handoff::sync::")
HTTP_PREFIXES = ("handoff::http::", "handoff::net::", "llhttp_")
TOP_SYMBOLS = 15


class NotMeasured(RuntimeError):
    """perf is missing or may not sample here: nothing is written."""


class ProfileError(RuntimeError):
    pass


# -- perf ---------------------------------------------------------------------------------

def perf_path() -> str | None:
    return shutil.which("perf")


def perf_refusal(perf: str | None, paranoid_path: str = "/proc/sys/kernel/perf_event_paranoid",
                 euid: int | None = None) -> str | None:
    """Why perf cannot sample the loop's kernel time here, or None when it can (as far as
    the permissions say; a refusal at run time is caught too)."""
    if perf is None:
        return "perf not found on PATH (Debian: linux-perf)"
    euid = os.geteuid() if euid is None else euid
    if euid == 0:
        return None
    try:
        with open(paranoid_path, encoding="utf-8") as f:
            level = int(f.read().strip())
    except (OSError, ValueError):
        return f"cannot read {paranoid_path}"
    if level > 1:
        return (f"perf_event_paranoid is {level}: sampling another process's kernel time "
                f"needs root or a level of 1 or less")
    return None


_REFUSED_RE = re.compile(r"perf_event_paranoid|No permission|Permission denied|"
                         r"not permitted|Access to performance monitoring", re.I)


def perf_version(perf: str) -> str:
    try:
        r = subprocess.run([perf, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NotMeasured(f"{perf} --version failed: {e}") from e
    if r.returncode != 0:
        raise NotMeasured(f"{perf} --version exited with {r.returncode}: {r.stderr.strip()}")
    return r.stdout.strip()


def preflight(perf: str, tmp: str) -> None:
    """One tiny recording, so that a perf that the kernel or a container refuses is found
    before any server starts."""
    data = os.path.join(tmp, "preflight.data")
    got = run_logged([perf, "record", "-q", "-F", str(FREQ), "-g", "-o", data, "--", "true"],
                     os.path.join(tmp, "preflight.log"), PERF_TIMEOUT_S)
    if got is None or got[0] != 0:
        said = got[2].strip()[-600:] if got else "ran past its timeout"
        raise NotMeasured(f"perf record refused a trial recording: {said}")


# -- parsing and categorising -----------------------------------------------------------

_FRAME_RE = re.compile(r"^\s*([0-9a-fA-F]+)\s+(.*?)\s+\(([^()]*)\)\s*$")
# A sample's header: the tid, right-aligned (so a short tid starts with spaces), then the
# event and a colon.
_HEADER_RE = re.compile(r"^\s*(\d+)\s+(\S+):\s*$")


@dataclass(frozen=True)
class Frame:
    symbol: str
    dso: str

    @property
    def kernel(self) -> bool:
        return self.dso.startswith("[kernel") or self.dso.endswith(".ko") or \
            self.dso.startswith("[guest.kernel")


def parse_script(text: str) -> list[list[Frame]]:
    """`perf script -F tid,event,ip,sym,dso` of a -g recording: one list of frames per sample,
    leaf first. A sample is a header line (the tid) and one indented line per frame,
    `ADDR SYMBOL (DSO)`; samples are separated by blank lines."""
    samples: list[list[Frame]] = []
    frames: list[Frame] | None = None
    for line in text.splitlines():
        if not line.strip():
            if frames:
                samples.append(frames)
            frames = None
            continue
        m = _FRAME_RE.match(line)
        if m:                              # a frame (an all-digit address can look like a tid)
            if frames is not None:
                frames.append(Frame(m.group(2), m.group(3)))
            continue
        if _HEADER_RE.match(line):         # a sample's header
            if frames:
                samples.append(frames)
            frames = []
    if frames:
        samples.append(frames)
    return samples


def script_event(text: str) -> str | None:
    """The sampled event, from the first sample's header (`TID EVENT: `)."""
    for line in text.splitlines():
        m = None if _FRAME_RE.match(line) else _HEADER_RE.match(line)
        if m:
            return m.group(2)
    return None


def is_allocator(symbol: str) -> bool:
    return symbol in ALLOCATOR_SYMBOLS or symbol.startswith(ALLOCATOR_PREFIXES)


def categorise(frames: list[Frame]) -> str:
    """One sample's category (see the module's header)."""
    leaf = frames[0]
    if leaf.kernel:
        user = next((f for f in frames if not f.kernel), None)
        return "allocator" if user is not None and is_allocator(user.symbol) else "kernel"
    sym = leaf.symbol
    if is_allocator(sym):
        return "allocator"
    if sym.startswith(HANDOFF_PREFIXES):
        return "hand-off"
    if sym.startswith(HTTP_PREFIXES):
        return "http"
    return "other"


@dataclass
class Tally:
    samples: int
    by_category: dict[str, int]
    by_symbol: dict[tuple[str, str, str], int]     # (symbol, [k] or [.], category) -> samples


def tally(samples: list[list[Frame]]) -> Tally:
    cats = {c: 0 for c in CATEGORIES}
    syms: dict[tuple[str, str, str], int] = {}
    for frames in samples:
        if not frames:
            continue
        c = categorise(frames)
        cats[c] += 1
        key = (frames[0].symbol, "[k]" if frames[0].kernel else "[.]", c)
        syms[key] = syms.get(key, 0) + 1
    return Tally(sum(cats.values()), cats, syms)


class PerfControl:
    """perf record's control FIFOs (`--control fifo:CTL,ACK`, started with `-D -1`, disabled):
    `send` writes a command (enable, disable, stop) and waits for perf's ack, so that the
    sampled window starts and ends between the harness's own reads of /stats."""

    def __init__(self, proc, ctl: str, ack: str, log_path: str) -> None:
        self.proc, self.log_path = proc, log_path
        # O_RDWR: opening either FIFO never blocks, whether or not perf has opened it yet.
        self.ctl = os.open(ctl, os.O_RDWR)
        self.ack = os.open(ack, os.O_RDWR | os.O_NONBLOCK)

    def send(self, word: str) -> None:
        os.write(self.ctl, f"{word}\n".encode())
        deadline = time.monotonic() + ACK_TIMEOUT_S
        while True:
            ready, _, _ = select.select([self.ack], [], [], 0.05)
            if ready and b"ack" in os.read(self.ack, 64):
                return
            if self.proc.poll() is not None:
                said = _tail(self.log_path)
                if _REFUSED_RE.search(said):
                    raise NotMeasured(f"perf record refused: {said}")
                raise ProfileError(f"perf record exited with {self.proc.returncode} before "
                                   f"acknowledging '{word}': {said}")
            if time.monotonic() > deadline:
                raise ProfileError(f"perf record did not acknowledge '{word}' within "
                                   f"{ACK_TIMEOUT_S:.0f}s")

    def close(self) -> None:
        os.close(self.ctl)
        os.close(self.ack)


def _tail(path: str) -> str:
    return servers._tail(path, 600).strip()


# -- one cell ---------------------------------------------------------------------------

def loop_tid(server: servers.Server) -> int:
    """The loop thread, by its name (procfs's roles)."""
    snap = procfs.snapshot(server.targets())
    loops = [t.tid for t in snap.threads.values() if t.role == "loop"]
    if len(loops) != 1:
        raise ProfileError(f"expected one loop thread, found {len(loops)}")
    return loops[0]


def measure_cell(arm: specfile.Arm, row: specfile.Row, round_index: int, settings: Settings,
                 perf: str, build_dir: str, repo_root: str, workdir: str) -> dict:
    tag = f"r{round_index}-{arm.name}"
    cell = {"round": round_index, "arm": arm.name, "ok": False, "error": None}
    server = servers.Server(arm, build_dir, repo_root, os.path.join(workdir, tag))
    bin_dir = os.path.join(build_dir, "bin")
    data = os.path.join(workdir, f"{tag}.data")
    ctl, ack = os.path.join(workdir, f"{tag}.ctl"), os.path.join(workdir, f"{tag}.ack")
    os.mkfifo(ctl)
    os.mkfifo(ack)
    perf_log = open(os.path.join(workdir, f"{tag}.perf.log"), "wb")
    load = perf_p = control = None
    try:
        server.start()
        cell["server_argv"] = server.argv
        url = server.url(row.path)
        clients.run(row, url, settings.warmup_s, bin_dir, server.workdir, "warmup")
        tid = loop_tid(server)
        perf_p = CHILDREN.spawn([perf, "record", "-q", "-F", str(FREQ), "-g", "-t", str(tid),
                                 "-D", "-1", "--control", f"fifo:{ctl},{ack}", "-o", data],
                                stdout=perf_log, stderr=perf_log)
        load_argv = clients.loadgen_argv(bin_dir, url, row, LEAD_S + settings.window_s + TAIL_S,
                                         os.path.join(server.workdir, "measured.json"))
        with open(os.path.join(server.workdir, "measured.log"), "wb") as log:
            load = CHILDREN.spawn(load_argv, stdout=log, stderr=log)
        time.sleep(LEAD_S)
        control = PerfControl(perf_p, ctl, ack, perf_log.name)
        stats0 = serverstats.fetch(server.host, server.port)
        s0 = procfs.snapshot(server.targets())
        control.send("enable")
        time.sleep(settings.window_s)
        control.send("disable")
        s1 = procfs.snapshot(server.targets())
        stats1 = serverstats.fetch(server.host, server.port)
        if load.poll() is not None:
            raise ProfileError("loadgen ended before the sampled window closed")
        control.send("stop")
        got = wait_exit(perf_p, PERF_TIMEOUT_S)
        if got is None or got[0] != 0:
            raise ProfileError(f"perf record exited with {got[0] if got else 'a timeout'}: "
                               f"{_tail(perf_log.name)}")
        requests = serverstats.count(serverstats.delta(stats0, stats1)["per_role"], "requests",
                                     "loop")
        loop_us = procfs.group_us(procfs.delta(s0, s1).per_role_us, frozenset({"loop"}))
        done = wait_exit(load, TAIL_S + clients.GRACE_S)
        if done is None or done[0] != 0:
            raise ProfileError(f"loadgen exited with {done[0] if done else 'a timeout'}")
        script = subprocess.run([perf, "script", "-i", data, "-F", "tid,event,ip,sym,dso"],
                                capture_output=True, text=True, timeout=PERF_TIMEOUT_S)
        if script.returncode != 0:
            raise ProfileError(f"perf script exited with {script.returncode}: "
                               f"{script.stderr.strip()[-600:]}")
        t = tally(parse_script(script.stdout))
        if requests <= 0 or t.samples <= 0:
            raise ProfileError(f"{requests} requests and {t.samples} samples in the window")
        with open(os.path.join(server.workdir, "measured.json"), encoding="utf-8") as f:
            client = clients.parse_loadgen(json.load(f))
        cell.update(ok=True, loop_tid=tid, event=script_event(script.stdout), requests=requests,
                    samples=t.samples, client_errors=client["errors_total"],
                    loop_cpu_us_per_req=loop_us / requests if loop_us is not None else None,
                    by_category=t.by_category,
                    by_symbol=[{"symbol": s, "space": k, "category": c, "samples": n}
                               for (s, k, c), n in sorted(t.by_symbol.items(),
                                                          key=lambda kv: -kv[1])])
    except (servers.StartError, clients.ClientError, serverstats.StatsError, ProfileError,
            OSError, ValueError, subprocess.TimeoutExpired) as e:
        cell["error"] = str(e)
    finally:
        if control is not None:
            control.close()
        for p in (perf_p, load):
            if p is not None:
                stop(p)
        perf_log.close()
        if server.proc is not None:
            cell["server_exit"] = server.stop()
        server.cleanup()
        for path in (data, ctl, ack, perf_log.name):
            if os.path.exists(path):
                os.unlink(path)
    return cell


# -- reduction --------------------------------------------------------------------------

def _range(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarize(cells: list[dict], arms: list[str]) -> tuple[list[dict], dict[str, list[dict]]]:
    """Per (arm, category), over the arm's good rounds: samples per 1000 requests and the
    share of the loop's samples (percent), each median/min/max; and per arm its top symbols
    over all rounds (samples summed, per 1000 requests of all rounds)."""
    lines, tops = [], {}
    for arm in arms:
        good = [c for c in cells if c["arm"] == arm and c["ok"]]
        if not good:
            continue
        for cat in CATEGORIES + (ALL,):
            n = [c["samples"] if cat == ALL else c["by_category"][cat] for c in good]
            per = [1000.0 * k / c["requests"] for k, c in zip(n, good)]
            share = [100.0 * k / c["samples"] for k, c in zip(n, good)]
            lines.append({"arm": arm, "category": cat, "rounds": len(good),
                          "samples_per_kreq": _range(per), "share_pct": _range(share)})
        requests = sum(c["requests"] for c in good)
        samples = sum(c["samples"] for c in good)
        syms: dict[tuple[str, str, str], int] = {}
        for c in good:
            for s in c["by_symbol"]:
                key = (s["symbol"], s["space"], s["category"])
                syms[key] = syms.get(key, 0) + s["samples"]
        tops[arm] = [{"symbol": s, "space": k, "category": cat, "samples": n,
                      "samples_per_kreq": 1000.0 * n / requests, "share_pct": 100.0 * n / samples}
                     for (s, k, cat), n in sorted(syms.items(),
                                                  key=lambda kv: -kv[1])[:TOP_SYMBOLS]]
    return lines, tops


def loop_cpu_check(cells: list[dict], arms: list[str]) -> dict[str, dict]:
    """The check on the sampling, per arm, µs per request: samples x 1/FREQ (a cpu-clock
    sample is that much of the loop's time on a CPU) beside the loop's CPU from schedstat
    over the same window. A cycles event (a machine with a PMU) makes the first a rougher
    figure."""
    out = {}
    for arm in arms:
        good = [c for c in cells if c["arm"] == arm and c["ok"] and c["loop_cpu_us_per_req"]]
        if good:
            out[arm] = {"sampled_us_per_req": _range([1e6 * c["samples"] / FREQ / c["requests"]
                                                      for c in good]),
                        "schedstat_us_per_req": _range([c["loop_cpu_us_per_req"] for c in good])}
    return out


CSV_HEADER = ["arm", "category", "rounds",
              "samples_per_kreq_median", "samples_per_kreq_min", "samples_per_kreq_max",
              "share_pct_median", "share_pct_min", "share_pct_max"]


def csv_lines(lines: list[dict]) -> list[dict]:
    out = []
    for line in lines:
        row = {"arm": line["arm"], "category": line["category"], "rounds": line["rounds"]}
        for fig in ("samples_per_kreq", "share_pct"):
            for k in ("median", "min", "max"):
                row[f"{fig}_{k}"] = f"{line[fig][k]:.2f}"
        out.append(row)
    return out


# -- the run ----------------------------------------------------------------------------

def arms_and_row(repo_root: str) -> tuple[list[specfile.Arm], specfile.Row]:
    spec = specfile.load(os.path.join(repo_root, SPEC))
    by_name = {a.name: a for a in spec.arms}
    arms = [dataclasses.replace(by_name[theirs], name=ours) for ours, theirs in ARMS]
    row = next(r for r in spec.rows if r.name == ROW)
    return arms, row


def missing_parts(build_dir: str, repo_root: str) -> str | None:
    """Why the profile cannot run in this build or on this machine, or None."""
    why = perf_refusal(perf_path())
    if why:
        return why
    arms, row = arms_and_row(repo_root)
    # Every arm runs the same binary (handoff-03).
    gone = servers.Server(arms[0], build_dir, repo_root, "/nonexistent").missing()
    if gone:
        return f"arm {arms[0].name}: {gone}"
    return clients.missing(row, os.path.join(build_dir, "bin"))


def run_profile(*, build_dir: str, out_dir: str, repo_root: str, mode: str, argv: list[str],
                reproduce_argv: list[str], stream=sys.stdout) -> dict:
    """Run every round of every arm and write the record. Raises NotMeasured (nothing
    written) or ProfileError."""
    why = missing_parts(build_dir, repo_root)
    if why:
        raise NotMeasured(why)
    perf = perf_path()
    version = perf_version(perf)
    arms, row = arms_and_row(repo_root)
    settings = MODES[mode]
    for pid in servers.reap_stale(os.path.join(build_dir, "bench-tmp")):
        print(f"killed pid {pid}, left running by an earlier harness that was killed",
              file=sys.stderr)
    workdir = os.path.join(build_dir, "bench-tmp", f"{CHAPTER}-{NAME}-{os.getpid()}")
    os.makedirs(workdir, exist_ok=True)
    cells = []
    started = time.monotonic()
    try:
        preflight(perf, workdir)
        for r in range(settings.rounds):
            for arm in specfile.rotation(arms, r):
                cell = measure_cell(arm, row, r, settings, perf, build_dir, repo_root, workdir)
                cells.append(cell)
                if cell["ok"]:
                    per = 1000.0 / cell["requests"]
                    shares = "  ".join(f"{c} {per * cell['by_category'][c]:.2f}"
                                       for c in CATEGORIES)
                    print(f"[{r + 1}/{settings.rounds}] {arm.name:<10} "
                          f"{per * cell['samples']:.2f} samples/1000 req ({shares})",
                          file=sys.stderr, flush=True)
                else:
                    print(f"[{r + 1}/{settings.rounds}] {arm.name:<10} FAILED: "
                          f"{cell['error'].splitlines()[0]}", file=sys.stderr, flush=True)
    finally:
        CHILDREN.kill_all()
        shutil.rmtree(workdir, ignore_errors=True)
        try:
            os.rmdir(os.path.dirname(workdir))
        except OSError:
            pass
    failed = [c for c in cells if not c["ok"]]
    if len(failed) == len(cells):
        raise ProfileError("no cell succeeded: " + "; ".join(
            f"round {c['round']} {c['arm']}: {c['error']}" for c in failed))
    lines, tops = summarize(cells, [a.name for a in arms])
    base = report.results_base(out_dir, CHAPTER, NAME)
    doc = report.tool_record(mode=mode, settings={**dataclasses.asdict(settings),
                                                  "frequency_hz": FREQ, "row": ROW,
                                                  "connections": row.connections,
                                                  "order": "arms alternated, order rotated "
                                                           "every round"},
                             argv=argv, reproduce_argv=reproduce_argv, repo_root=repo_root,
                             build_dir=build_dir, out_dir=out_dir, tool_key="perf",
                             tool_argv=[perf, "record", "-F", str(FREQ), "-g", "-t", "<loop tid>",
                                        "-D", "-1", "--control", "fifo:<ctl>,<ack>"])
    doc.update(perf_version=version, frequency_hz=FREQ,
               events=sorted({c["event"] for c in cells if c["ok"] and c["event"]}),
               spec=SPEC, arms={ours: theirs for ours, theirs in ARMS},
               categories={"allocator": sorted(ALLOCATOR_SYMBOLS)
                           + [p + "*" for p in ALLOCATOR_PREFIXES]
                           + ["a kernel sample whose first user frame is one of these"],
                           "kernel": ["every other kernel sample"],
                           "hand-off": [p + "*" for p in HANDOFF_PREFIXES],
                           "http": [p + "*" for p in HTTP_PREFIXES],
                           "other": ["everything else"]},
               elapsed_s=time.monotonic() - started, cells=cells, results=lines,
               loop_cpu_check=loop_cpu_check(cells, [a.name for a in arms]),
               top_symbols=tops)
    report.write_json(base + ".json", doc)
    report.write_csv(base + ".csv", CSV_HEADER, csv_lines(lines))
    print(f"\n== {CHAPTER}/{NAME}: the loop's samples per 1000 requests at {ROW} "
          f"({mode}: {settings.rounds} rounds, {FREQ} Hz; {version}) ==", file=stream)
    for line in lines:
        s, p = line["samples_per_kreq"], line["share_pct"]
        print(f"  {line['arm']:<10} {line['category']:<10} {s['median']:7.2f} "
              f"[{s['min']:.2f}–{s['max']:.2f}]  {p['median']:5.1f}%", file=stream)
    print(f"  wrote {base}.json, {base}.csv", file=stream)
    if failed:
        raise ProfileError("; ".join(f"round {c['round']} {c['arm']}: {c['error']}"
                                     for c in failed))
    return doc
