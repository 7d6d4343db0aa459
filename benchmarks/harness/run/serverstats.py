"""harness/run/serverstats: the server's own counters around a measured window (chapter 01).

Role: the mechanism, counted. A stage serves its per-thread counters as JSON at
GET /stats ({"threads": [{"name", "role", "cpu_us", "counters": {...}}]}, written by
code/stats/thread_stats.cpp). The runner reads it just before and just after the
measured window; `delta` turns the two reads into each role's counts over the window,
which summary.py divides by the requests the client completed. The peers (nginx, the
epoll floor) have no /stats: their counter columns stay empty.

The two reads are requests themselves; their cost (a handful of system calls against
tens of thousands of requests per window) is left in the figures.
"""

from __future__ import annotations

import http.client
import json

from harness.run.specfile import check_loopback

PATH = "/stats"
TIMEOUT_S = 5.0


class StatsError(RuntimeError):
    pass


def fetch(host: str, port: int, timeout_s: float = TIMEOUT_S) -> dict:
    """GET /stats from a server on loopback; the parsed document."""
    c = http.client.HTTPConnection(check_loopback(host), port, timeout=timeout_s)
    try:
        c.request("GET", PATH)
        r = c.getresponse()
        body = r.read()
    except OSError as e:
        raise StatsError(f"GET {PATH}: {e}") from e
    finally:
        c.close()
    if r.status != 200:
        raise StatsError(f"GET {PATH}: status {r.status}")
    try:
        doc = json.loads(body)
    except ValueError as e:
        raise StatsError(f"GET {PATH}: not JSON: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("threads"), list):
        raise StatsError(f"GET {PATH}: no \"threads\" list")
    return doc


def _by_name(doc: dict) -> dict[str, dict]:
    return {t["name"]: t for t in doc["threads"] if isinstance(t, dict) and "name" in t}


def delta(before: dict, after: dict) -> dict:
    """Counts over the window: {"per_thread": [{name, role, counters}],
    "per_role": {role: {counter: n}}}. A thread registered inside the window counts
    from zero; a counter absent on either side (an older binary) counts as zero."""
    first = _by_name(before)
    per_thread = []
    per_role: dict[str, dict[str, int]] = {}
    for name, t in sorted(_by_name(after).items()):
        b = first.get(name, {}).get("counters", {})
        counts = {k: int(v) - int(b.get(k, 0)) for k, v in t.get("counters", {}).items()}
        role = t.get("role", "other")
        per_thread.append({"name": name, "role": role, "counters": counts})
        mine = per_role.setdefault(role, {})
        for k, v in counts.items():
            mine[k] = mine.get(k, 0) + v
    return {"per_thread": per_thread, "per_role": per_role}


def count(per_role: dict[str, dict[str, int]], counter: str, role: str | None = None) -> int:
    """One counter summed over every role, or over one role."""
    return sum(c.get(counter, 0) for r, c in per_role.items() if role is None or r == role)
