"""harness/run/postgres: a throwaway PostgreSQL for the measurements that need one (chapter 04).

Role: a spec that says `needs = ["postgres"]` (04-churn) and a records tool that says so
(pool-churn) measure against a real PostgreSQL whose every new session is a password (SCRAM)
login over TCP. bench.py gets one by running itself again inside `pg_virtualenv` (Debian's
postgresql-common: a cluster in a temporary directory on a free port, the PG* variables
exported, the cluster dropped when the command ends); `inside()` tells the inner run that it
has one. No PostgreSQL of the user's is ever touched.

PostgreSQL's own count of new sessions. `pg_stat_database.sessions` (PostgreSQL 14+) counts a
session when it starts, but a backend publishes its counts only now and then (at most once a
second while busy) and always as it exits; so a cell's count is read before its server starts
and again after the server has stopped and every backend it had has exited (SessionCounter).
That count covers the server's whole life (its pool's first connections and the warm-up
included), so the runner divides it by every request served in that life. The counter's own
reads are sessions too, each published when it exits; they are counted and subtracted.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time

MARK = "HANDOFF_PG_CLUSTER"  # set by reexec_inside: this process runs inside the cluster
MONITOR = "host=127.0.0.1 application_name=handoff-monitor"


def inside() -> bool:
    return os.environ.get(MARK) == "1"


def missing() -> str | None:
    """Why no throwaway PostgreSQL can be had here, or None."""
    if inside():
        return None
    if shutil.which("pg_virtualenv") is None:
        return "pg_virtualenv not found (Debian package postgresql)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reexec_inside(argv: list[str]) -> int:
    """Run `argv` (a command line) inside a throwaway cluster; its exit status."""
    env = dict(os.environ, **{MARK: "1"})
    cmd = ["pg_virtualenv", "-t", "-c", f"--port={_free_port()}", *argv]
    print(f"postgres: starting a throwaway cluster for: {' '.join(argv)}", file=sys.stderr,
          flush=True)
    return subprocess.run(cmd, env=env).returncode


def _psql(sql: str) -> str:
    return subprocess.run(["psql", "-Atc", sql, MONITOR], check=True, capture_output=True,
                          text=True, timeout=30).stdout.strip()


class SessionCounter:
    """New sessions PostgreSQL counted between start() and stop(), less this counter's own."""

    def __init__(self) -> None:
        self._reads = 0
        self._before = 0

    def _sessions(self) -> int:
        self._reads += 1
        return int(_psql("SELECT coalesce(sum(sessions), 0) FROM pg_stat_database") or 0)

    def start(self) -> None:
        self._reads = 0
        self._before = self._sessions()

    def stop(self, timeout_s: float = 10.0) -> int:
        """Read once no other client backend is left (each publishes its counts before it
        leaves pg_stat_activity: its stats hook runs before its activity slot is cleared).
        Raises TimeoutError if backends outlive `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._reads += 1
            left, after = _psql(
                "SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = "
                "'client backend' AND pid <> pg_backend_pid()), "
                "(SELECT coalesce(sum(sessions), 0) FROM pg_stat_database)").split("|")
            if int(left) == 0:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{left} PostgreSQL backends still open {timeout_s} s after "
                                   "the server stopped")
            time.sleep(0.05)
        # Every read but this last one has exited and been published; this one has not.
        return int(after) - self._before - (self._reads - 1)
