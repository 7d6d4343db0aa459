"""harness/run/busy: whether the machine is quiet enough to reproduce the book's tables (chapter 01).

Role: the refusal that `bench.py reproduce` makes before it measures anything. Figures taken
beside someone else's compiler or benchmark say more about that neighbour than about the
servers, and a report that compares them with the committed ones would flag changes that
are only noise. Two readings decide, both from /proc:

- the 1-minute load average (/proc/loadavg), against LOAD_PER_CORE x the number of cores:
  what has been runnable over the last minute, including what is asleep just now;
- the CPU the rest of the machine spends over a short sample (/proc/stat's aggregate line,
  SAMPLE_S seconds, in % of one core, steal included: procfs.machine_times), against
  OTHERS_PCT: what is running now, which the load average is slow to show.

Either above its threshold makes the machine busy; `--busy-ok` measures anyway, and the
reading is kept in the run's manifest so that the report says the run was on a busy machine.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from harness.run import procfs

LOAD_PER_CORE = 0.5     # a 1-minute load average above half a runnable task per core
OTHERS_PCT = 25.0       # others using more than a quarter of one core over the sample
SAMPLE_S = 2.0


@dataclass
class Reading:
    load1: float         # the 1-minute load average
    cores: int
    others_pct: float    # the rest of the machine's CPU over the sample, % of one core
    sample_s: float

    def reasons(self) -> list[str]:
        """Why the machine counts as busy; empty when it is quiet."""
        why = []
        if self.load1 > LOAD_PER_CORE * self.cores:
            why.append(f"the 1-minute load average is {self.load1:.2f}, above "
                       f"{LOAD_PER_CORE:g} per core ({LOAD_PER_CORE * self.cores:g} on "
                       f"{self.cores} cores)")
        if self.others_pct > OTHERS_PCT:
            why.append(f"other processes used {self.others_pct:.0f}% of a core over a "
                       f"{self.sample_s:.1f} s sample, above {OTHERS_PCT:g}%")
        return why

    def as_dict(self) -> dict:
        return {"load1": self.load1, "cores": self.cores, "others_pct_of_core": self.others_pct,
                "sample_s": self.sample_s, "reasons": self.reasons(),
                "thresholds": {"load_per_core": LOAD_PER_CORE, "others_pct": OTHERS_PCT}}


def load_average(root: str = "/proc") -> float:
    with open(os.path.join(root, "loadavg"), encoding="ascii") as f:
        return float(f.read().split()[0])


def sample(root: str = "/proc", sample_s: float = SAMPLE_S, sleep=time.sleep,
           cores: int | None = None, clock=time.monotonic) -> Reading:
    """Read the load average, then the machine's busy time over sample_s seconds (this
    process sleeps through it, so all of it is someone else's). root, sleep, cores and clock
    are there for the tests' fake /proc."""
    load1 = load_average(root)
    t0, m0 = clock(), procfs.machine_times(root)
    sleep(sample_s)
    m1, t1 = procfs.machine_times(root), clock()
    others = procfs.other_busy_pct(m0, m1, 0.0, t1 - t0)
    return Reading(load1=load1, cores=cores or os.cpu_count() or 1, others_pct=others, sample_s=t1 - t0)
