"""harness/run/progress: the progress line and the time left of a long run (chapter 01).

Role: what `bench.py reproduce` prints as it goes. Every piece of work (a spec's cell, a
probe, a record) comes with an estimate of its seconds (specfile.Spec.estimate_s and the
parts' own estimates); the time left starts as the sum of the estimates of what is left and
is then refined by the pace measured so far:

    pace = seconds elapsed when the last piece finished / estimated seconds finished by then
    left = (estimated seconds not yet finished) x pace - seconds since the last piece finished

so a machine half as fast as the estimates' doubles the figure after the first piece, and
the seconds already spent on the piece under way come off it. Before anything has
finished the pace is 1. A piece without an estimate (full mode's probes) is counted apart
and named in the line, since no figure covers it.
"""

from __future__ import annotations

import sys
import time


def clock_text(seconds: float) -> str:
    """74 -> '1m14s'; 3725 -> '1h02m'."""
    s = max(0, int(round(seconds)))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class Progress:
    def __init__(self, *, parts: int, cells: int, estimate_s: float, unestimated: int = 0,
                 clock=time.monotonic, stream=None):
        self.parts, self.cells, self.estimate_s = parts, cells, estimate_s
        self.unestimated = unestimated
        self.parts_done = self.cells_done = 0
        self.done_s = 0.0          # estimated seconds of the pieces finished
        self.clock, self.stream = clock, stream
        self.start = self.last = clock()
        self.elapsed_at_last = 0.0

    def finished(self, estimate_s: float | None, *, cell: bool = False, part: bool = False) -> None:
        """A piece finished: a cell of a spec, or a part (a spec's last cell finishes both)."""
        now = self.clock()
        if estimate_s is not None:
            self.done_s += estimate_s
        elif part:
            self.unestimated = max(0, self.unestimated - 1)
        self.cells_done += cell
        self.parts_done += part
        self.last, self.elapsed_at_last = now, now - self.start

    def kept(self, estimate_s: float) -> None:
        """A cell an earlier run measured (a resumed spec): done, but it says nothing of the pace."""
        self.estimate_s -= estimate_s
        self.cells_done += 1

    def pace(self) -> float:
        return self.elapsed_at_last / self.done_s if self.done_s > 0 else 1.0

    def left_s(self) -> float:
        rest = max(0.0, self.estimate_s - self.done_s) * self.pace()
        return max(0.0, rest - (self.clock() - self.last))

    def line(self, what: str) -> str:
        elapsed = self.clock() - self.start
        text = (f"reproduce [part {self.parts_done}/{self.parts}, cell {self.cells_done}/{self.cells}] "
                f"{what}: {clock_text(elapsed)} elapsed, about {clock_text(self.left_s())} left")
        if self.done_s > 0:
            text += f" (at {self.pace():.2f}x the estimates' pace)"
        if self.unestimated:
            text += f", and {self.unestimated} part(s) with no estimate"
        return text

    def show(self, what: str) -> None:
        print(self.line(what), file=self.stream or sys.stderr, flush=True)
