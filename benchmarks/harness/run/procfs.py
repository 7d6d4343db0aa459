"""harness/run/procfs: per-thread CPU and machine busy time, read from /proc (chapter 01).

Role: the harness's instrument. It snapshots every thread of the processes under
test: its CPU time in nanoseconds (the first field of /proc/PID/task/TID/schedstat, the
scheduler's own sum of time on a CPU; the 10 ms ticks of utime+stime in .../stat only
when schedstat is absent), the share of those ticks spent in the kernel (stime over
utime+stime, sampled at each tick: a split, not a clock), its voluntary context switches
(.../status: the times the thread blocked and really slept) and its involuntary ones (the
times the scheduler took its CPU from it while it could still run: a preemption). It names each thread's role from its comm (loop-0,
pool-0-1, floor-0, or the nginx worker process), and reads the machine's busy jiffies
from /proc/stat, so that a cell can say how much CPU each role spent per request, how
often each role slept per request, and how busy the rest of the machine was meanwhile.

Every reader takes a `root` argument (default "/proc") so that the unit tests can
feed it a fake /proc tree.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

CLK_TCK = os.sysconf("SC_CLK_TCK")

# Thread names the stages, the floor and the harness agree on: a role word followed by
# dash-separated indices ("loop-0", "pool-0-1", "floor-0"). "worker" is the role the
# harness gives a peer's answering threads (nginx's are all called "nginx"), and "balancer"
# HAProxy's (harness/run/peers.py).
_ROLE_RE = re.compile(r"^(loop|pool|floor|worker)(?:-\d+)*$")

# Which thread roles count towards the two columns every table carries. The floor's
# thread and a peer's workers are event loops, so they stand in the loop column; a
# balancer's threads have a column of their own, so that what it adds is seen apart.
LOOP_ROLES = frozenset({"loop", "floor", "worker"})
POOL_ROLES = frozenset({"pool"})
BALANCER_ROLES = frozenset({"balancer"})


def ticks_to_us(ticks: float) -> float:
    return ticks * 1_000_000.0 / CLK_TCK


# Where a snapshot's per-thread CPU came from.
SOURCE_SCHEDSTAT = "schedstat ns"
SOURCE_TICKS = "stat ticks"


def parse_schedstat(text: str) -> int:
    """The first field of /proc/.../schedstat: nanoseconds spent on a CPU (the other two
    are nanoseconds spent waiting for one and the count of time slices)."""
    return int(text.split()[0])


def parse_context_switches(text: str, kind: str = "voluntary") -> int | None:
    """A thread's context switches of one kind from /proc/.../status: voluntary_ctxt_switches
    (its sleeps) or, with kind="nonvoluntary", nonvoluntary_ctxt_switches (its preemptions);
    None when the line is absent."""
    for line in text.splitlines():
        if line.startswith(f"{kind}_ctxt_switches:"):
            return int(line.split(":", 1)[1])
    return None


@dataclass(frozen=True)
class StatLine:
    comm: str
    state: str
    ppid: int
    utime: int
    stime: int

    @property
    def ticks(self) -> int:
        return self.utime + self.stime


def parse_stat(text: str) -> StatLine:
    """Parse one /proc/.../stat line.

    The comm field sits in parentheses and may itself hold spaces or ')', so the
    fields after it are counted from the last ')'. Fields (1-based, proc(5)): 3 state,
    4 ppid, 14 utime, 15 stime; after the ')' the list starts at field 3.
    """
    lpar = text.index("(")
    rpar = text.rindex(")")
    rest = text[rpar + 2:].split()
    return StatLine(comm=text[lpar + 1:rpar], state=rest[0], ppid=int(rest[1]),
                    utime=int(rest[11]), stime=int(rest[12]))


def _read(path: str) -> str | None:
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            return f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


@dataclass(frozen=True)
class Target:
    """One process to sample.

    process_role: the role of every thread whose own name is not a role name (nginx
    worker processes: "worker"; the nginx master: "master"). main_role: the role of the
    main thread (tid == pid) when its name is not a role name and process_role is unset.
    """
    pid: int
    process_role: str | None = None
    main_role: str | None = None


def role_of(comm: str, tid: int, target: Target) -> str:
    m = _ROLE_RE.match(comm)
    if m:
        return m.group(1)
    if target.process_role:
        return target.process_role
    if tid == target.pid and target.main_role:
        return target.main_role
    return "other"


@dataclass
class ThreadSample:
    pid: int
    tid: int
    comm: str
    role: str
    ticks: int
    cpu_ns: int                 # from schedstat, else ticks converted
    sleeps: int | None          # voluntary context switches; None if unreadable
    stime: int = 0              # the ticks of `ticks` charged to the kernel
    preemptions: int | None = None  # involuntary context switches; None if unreadable


@dataclass
class Snapshot:
    threads: dict[tuple[int, int], ThreadSample] = field(default_factory=dict)
    # Whole-process utime+stime: includes threads that have already exited, so it is
    # the right number for "how much CPU did the arm take" in the busy accounting.
    process_ticks: dict[int, int] = field(default_factory=dict)
    # SOURCE_SCHEDSTAT when every thread's CPU came from schedstat, else SOURCE_TICKS.
    cpu_source: str = SOURCE_SCHEDSTAT


def snapshot(targets: list[Target], root: str = "/proc") -> Snapshot:
    snap = Snapshot()
    for t in targets:
        pstat = _read(f"{root}/{t.pid}/stat")
        if pstat is None:
            continue
        snap.process_ticks[t.pid] = parse_stat(pstat).ticks
        taskdir = f"{root}/{t.pid}/task"
        try:
            tids = sorted(int(x) for x in os.listdir(taskdir) if x.isdigit())
        except FileNotFoundError:
            continue
        for tid in tids:
            text = _read(f"{taskdir}/{tid}/stat")
            if text is None:
                continue  # the thread exited between listdir and read
            st = parse_stat(text)
            comm = _read(f"{taskdir}/{tid}/comm")
            comm = comm.strip() if comm is not None else st.comm
            sched = _read(f"{taskdir}/{tid}/schedstat")
            if sched is not None:
                cpu_ns = parse_schedstat(sched)
            else:
                cpu_ns = int(st.ticks * 1_000_000_000 // CLK_TCK)
                snap.cpu_source = SOURCE_TICKS
            status = _read(f"{taskdir}/{tid}/status")
            snap.threads[(t.pid, tid)] = ThreadSample(
                t.pid, tid, comm, role_of(comm, tid, t), st.ticks, cpu_ns,
                parse_context_switches(status) if status is not None else None, st.stime,
                parse_context_switches(status, "nonvoluntary") if status is not None else None)
    return snap


@dataclass
class CpuDelta:
    per_thread: list[dict]      # {"pid","tid","comm","role","us","sleeps"}
    per_role_us: dict[str, float]
    process_ticks: int          # sum over processes, whole-process accounting
    lost_threads: int           # threads seen before the window but gone after it
    # Voluntary context switches per role; a role whose threads' status could not be
    # read is absent.
    per_role_sleeps: dict[str, int] = field(default_factory=dict)
    cpu_source: str = SOURCE_SCHEDSTAT
    # utime+stime ticks per role, and the stime part of them: the kernel's share of a
    # role's CPU is their quotient (kernel_share).
    per_role_ticks: dict[str, int] = field(default_factory=dict)
    per_role_stime: dict[str, int] = field(default_factory=dict)
    # Involuntary context switches per role, read and left out as per_role_sleeps is.
    per_role_preemptions: dict[str, int] = field(default_factory=dict)

    @property
    def threads_us(self) -> float:
        """CPU of every thread sampled at the end of the window, from the per-thread
        (nanosecond) source."""
        return sum(self.per_role_us.values())

    def kernel_share(self, roles: frozenset[str]) -> float | None:
        """The share of `roles`' CPU ticks the kernel was charged with (stime over
        utime+stime), or None when those threads took no tick in the window."""
        ticks = sum(v for r, v in self.per_role_ticks.items() if r in roles)
        stime = sum(v for r, v in self.per_role_stime.items() if r in roles)
        return stime / ticks if ticks > 0 else None


def delta(before: Snapshot, after: Snapshot) -> CpuDelta:
    """CPU and sleeps between two snapshots, per thread and per role.

    A thread born inside the window counts all of its CPU and sleeps (it had none
    before). A thread that died inside the window is lost from the per-thread view (its
    time still shows in the whole-process ticks); the count of such threads is returned
    so that a table can say so.
    """
    per_thread = []
    per_role: dict[str, float] = {}
    ticks: dict[str, int] = {}
    stime: dict[str, int] = {}
    sleeps: dict[str, int] = {}
    no_sleeps: set[str] = set()
    preempted: dict[str, int] = {}
    no_preempted: set[str] = set()
    for key, a in sorted(after.threads.items()):
        b = before.threads.get(key)
        us = (a.cpu_ns - (b.cpu_ns if b else 0)) / 1000.0
        slept = None
        if a.sleeps is not None and (b is None or b.sleeps is not None):
            slept = a.sleeps - (b.sleeps if b else 0)
            sleeps[a.role] = sleeps.get(a.role, 0) + slept
        else:
            no_sleeps.add(a.role)
        if a.preemptions is not None and (b is None or b.preemptions is not None):
            preempted[a.role] = preempted.get(a.role, 0) + a.preemptions - (b.preemptions if b else 0)
        else:
            no_preempted.add(a.role)
        per_thread.append({"pid": a.pid, "tid": a.tid, "comm": a.comm, "role": a.role,
                           "us": us, "sleeps": slept})
        per_role[a.role] = per_role.get(a.role, 0.0) + us
        ticks[a.role] = ticks.get(a.role, 0) + a.ticks - (b.ticks if b else 0)
        stime[a.role] = stime.get(a.role, 0) + a.stime - (b.stime if b else 0)
    for role in no_sleeps:
        sleeps.pop(role, None)
    for role in no_preempted:
        preempted.pop(role, None)
    lost = sum(1 for key in before.threads if key not in after.threads)
    proc = sum(after.process_ticks[p] - before.process_ticks.get(p, 0)
               for p in after.process_ticks)
    source = SOURCE_TICKS if SOURCE_TICKS in (before.cpu_source, after.cpu_source) \
        else SOURCE_SCHEDSTAT
    return CpuDelta(per_thread, per_role, proc, lost, sleeps, source, ticks, stime, preempted)


def group_us(per_role: dict[str, float], roles: frozenset[str]) -> float | None:
    """Sum the roles in `roles` (µs, sleeps, or any per-role figure); None when no
    thread of those roles existed."""
    present = [v for r, v in per_role.items() if r in roles]
    return sum(present) if present else None


def children_of(pid: int, root: str = "/proc") -> list[int]:
    """Processes whose parent is `pid` (nginx's workers under its master)."""
    kids = []
    for name in os.listdir(root):
        if not name.isdigit():
            continue
        text = _read(f"{root}/{name}/stat")
        if text is None:
            continue
        try:
            if parse_stat(text).ppid == pid:
                kids.append(int(name))
        except (ValueError, IndexError):
            continue
    return sorted(kids)


@dataclass(frozen=True)
class MachineTimes:
    busy: int   # user+nice+system+irq+softirq+steal, jiffies, all CPUs
    total: int  # busy + idle + iowait


def machine_times(root: str = "/proc") -> MachineTimes:
    """The aggregate "cpu" line of /proc/stat.

    guest and guest_nice are already inside user and nice, so they are not added
    again. steal counts as busy: it is time this VM wanted a CPU and did not get one.
    """
    text = _read(f"{root}/stat") or ""
    for line in text.splitlines():
        if line.startswith("cpu "):
            v = [int(x) for x in line.split()[1:]]
            v += [0] * (8 - len(v))
            user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
            busy = user + nice + system + irq + softirq + steal
            return MachineTimes(busy=busy, total=busy + idle + iowait)
    raise RuntimeError(f"no aggregate cpu line in {root}/stat")


def other_busy_pct(before: MachineTimes, after: MachineTimes, accounted_ticks: float,
                   window_s: float) -> float:
    """How busy the rest of the machine was, in % of one core.

    The busy jiffies of the whole machine over the window, minus what the arm, the
    client and the harness itself spent (accounted_ticks), divided by the window. Tick
    granularity makes small negative results possible; they are clamped to zero.
    """
    if window_s <= 0:
        return 0.0
    other = (after.busy - before.busy) - accounted_ticks
    return max(0.0, other) / (window_s * CLK_TCK) * 100.0
