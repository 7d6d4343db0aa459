"""harness/run/stalls: the raw samples of a run that stalled, kept small (chapter 05).

Role: seed 004's stall view. A spec with `stall_samples = true` has loadgen write one CSV
line per response (--raw-samples: send_time_us, due_time_us, latency_us, connection,
status) for each measured run; when that run's worst latency exceeds the spec's stall_us,
`keep` copies its slowest samples next to the results
(OUT/<chapter>/<name>-stalls/r<round>-<row>-<arm>.csv, the same columns, in send order)
and says what the stall looked like: when its slow samples were sent and ended, and on how
many connections. That is what placed seed 004's stall on the eight sessions of one pool
worker, ending at the same instant on all eight. The full CSV (a line per response) is
never kept: it stays in the cell's scratch folder, which the runner removes.
"""

from __future__ import annotations

import csv
import heapq
import os

KEEP = 500           # samples kept per stalled run: the slowest, at most this many (~20 KB)
COLUMNS = ("send_time_us", "due_time_us", "latency_us", "connection", "status")


class SamplesError(ValueError):
    pass


def _rows(path: str):
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        head = next(reader, None)
        if head is None or tuple(head) != COLUMNS:
            raise SamplesError(f"{path}: not loadgen's raw-samples CSV (header {head!r})")
        for i, line in enumerate(reader):
            if len(line) != len(COLUMNS):
                raise SamplesError(f"{path}: line {i + 2} has {len(line)} fields")
            yield i, line, float(line[2])


def keep(samples_csv: str, dest_csv: str, stall_us: float, limit: int = KEEP) -> dict:
    """Write the `limit` slowest samples of samples_csv to dest_csv, in send order, and
    return what the JSON keeps of them: counts, the slow samples' span and connections."""
    total = 0
    over = 0
    over_conns: set[str] = set()
    first_send = last_end = None
    slowest: list[tuple[float, int, list[str]]] = []   # a min-heap of (latency, index, line)
    for i, line, latency in _rows(samples_csv):
        total += 1
        if latency > stall_us:
            over += 1
            over_conns.add(line[3])
            send = float(line[0])
            first_send = send if first_send is None else min(first_send, send)
            last_end = send + latency if last_end is None else max(last_end, send + latency)
        item = (latency, i, line)
        if len(slowest) < limit:
            heapq.heappush(slowest, item)
        elif item > slowest[0]:
            heapq.heapreplace(slowest, item)
    kept = sorted(slowest, key=lambda t: t[1])           # back into send order
    os.makedirs(os.path.dirname(dest_csv) or ".", exist_ok=True)
    tmp = dest_csv + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for _, _, line in kept:
            w.writerow(line)
    os.replace(tmp, dest_csv)
    return {"samples": total, "kept": len(kept),
            "rule": f"the {limit} slowest samples, in send order",
            "over_stall_us": over, "over_connections": len(over_conns),
            "over_first_send_us": first_send, "over_last_end_us": last_end,
            "worst_us": max((t[0] for t in kept), default=None)}


def dest_dir(out_dir: str, chapter: str, name: str) -> str:
    return os.path.join(out_dir, chapter, f"{name}-stalls")


def file_name(round_index: int, row: str, arm: str) -> str:
    return f"r{round_index}-{row}-{arm}.csv"
