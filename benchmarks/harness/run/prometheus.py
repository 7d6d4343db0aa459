"""harness/run/prometheus: Debian's prometheus, started with chapter 06's prometheus.yml against one
stage, and read back through its HTTP API (chapter 06).

Role: the one way the project runs a real Prometheus. The chapter's example file
(chapters/06-full-system/prometheus.yml) is used as an operator would, with its one target
and its scrape interval and timeout changed to the stage under test and one second, nothing
else; `promtool check config` passes the result before the server starts. Used by the
chapter's scrape test (chapters/06-full-system/tests/prometheus_scrape.py) and by the
harness's panel run (harness/records/panel.py).

Every wait is bounded (WAIT_S): a Prometheus that never gets ready or never scrapes raises
PrometheusError naming what it last saw. The HTTP API is Prometheus's documented one
(https://prometheus.io/docs/prometheus/latest/querying/api/): /-/ready, /api/v1/query and
/api/v1/query_range.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import time
import urllib.parse

from harness import REPO_ROOT

CONFIG = os.path.join(REPO_ROOT, "chapters", "06-full-system", "prometheus.yml")
WAIT_S = 30.0
PACKAGE = "prometheus"      # Debian's, with promtool; in .ci/debian-packages


class PrometheusError(AssertionError):
    pass


def get(port: int, path: str, timeout: float = 10) -> tuple[int, str]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape_config(text: str, target: str) -> str:
    """The chapter's file with its target and interval changed, and nothing else."""
    out, n_target = re.subn(r'"localhost:8080"', f'"{target}"', text)
    out, n_interval = re.subn(r"^(\s*scrape_interval:) 15s$", r"\1 1s", out, flags=re.M)
    out, n_timeout = re.subn(r"^(\s*scrape_timeout:) 5s$", r"\1 1s", out, flags=re.M)
    if (n_target, n_interval, n_timeout) != (1, 1, 1):
        raise PrometheusError(
            f"{CONFIG}: expected one target localhost:8080, one scrape_interval: 15s and one "
            f"scrape_timeout: 5s, found {n_target}, {n_interval} and {n_timeout}")
    return out


def wait_for(what: str, probe, bound_s: float = WAIT_S):
    """probe() -> (got, seen) until got is true, at most bound_s; the last thing it saw names
    the failure."""
    deadline = time.monotonic() + bound_s
    seen = None
    while time.monotonic() < deadline:
        try:
            got, seen = probe()
        except (OSError, http.client.HTTPException) as e:
            got, seen = None, f"{type(e).__name__}: {e}"
        if got:
            return got
        time.sleep(0.2)
    raise PrometheusError(f"{what}: not within {bound_s:.0f} s; last seen: {seen}")


class Prometheus:
    """One prometheus process scraping `target` ("127.0.0.1:PORT") with the chapter's file,
    its data and log in `workdir`. spawn starts it (the harness passes its own, which kills
    the process however the harness exits)."""

    def __init__(self, target: str, workdir: str, prometheus: str = "prometheus",
                 promtool: str = "promtool", spawn=subprocess.Popen) -> None:
        self.target, self.workdir = target, workdir
        self.prometheus, self.promtool, self.spawn = prometheus, promtool, spawn
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.log_path = os.path.join(workdir, "prometheus.log")
        self.config_path = os.path.join(workdir, "prometheus.yml")

    def start(self) -> None:
        """Write and check the configuration, start the server and wait until it is ready."""
        os.makedirs(self.workdir, exist_ok=True)
        with open(CONFIG, encoding="utf-8") as f:
            config = scrape_config(f.read(), self.target)
        with open(self.config_path, "w", encoding="utf-8") as f:
            f.write(config)
        check = subprocess.run([self.promtool, "check", "config", self.config_path],
                               capture_output=True, text=True, timeout=WAIT_S)
        if check.returncode != 0:
            raise PrometheusError(f"promtool check config: {check.stdout}{check.stderr}")
        self.port = free_port()
        with open(self.log_path, "w") as log:
            self.proc = self.spawn([self.prometheus, f"--config.file={self.config_path}",
                                    f"--storage.tsdb.path={os.path.join(self.workdir, 'data')}",
                                    f"--web.listen-address=127.0.0.1:{self.port}"],
                                   stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)

        def ready():
            if self.proc.poll() is not None:
                with open(self.log_path) as f:
                    raise PrometheusError(f"prometheus exited {self.proc.returncode}: "
                                          f"{f.read()[-1500:]}")
            status, body = get(self.port, "/-/ready", timeout=2)
            return status == 200, f"/-/ready {status} {body.strip()[:100]}"
        wait_for("prometheus ready", ready)

    def wait_scraped(self, job: str = "handoff") -> list[dict]:
        """Until a scrape of the target has succeeded (`up` is 1)."""
        def scraped():
            up = self.query(f'up{{job="{job}"}}')
            return (up and up[0]["value"][1] == "1"), up
        return wait_for("a scrape of the stage with up == 1", scraped)

    def _api(self, path: str, params: dict) -> dict:
        status, body = get(self.port, f"/api/v1/{path}?" + urllib.parse.urlencode(params))
        if status != 200:
            raise PrometheusError(f"prometheus: {path} {params} answered {status}: {body[:300]}")
        doc = json.loads(body)
        if doc.get("status") != "success":
            raise PrometheusError(f"prometheus: {path} {params}: {doc}")
        return doc["data"]

    def query(self, expr: str) -> list[dict]:
        """An instant query's result: one {"metric", "value": [t, "v"]} per series."""
        return self._api("query", {"query": expr})["result"]

    def query_range(self, expr: str, start: float, end: float, step_s: float) -> list[dict]:
        """A range query's result: one {"metric", "values": [[t, "v"], ...]} per series,
        start and end in Unix seconds."""
        return self._api("query_range", {"query": expr, "start": f"{start:.3f}",
                                         "end": f"{end:.3f}", "step": f"{step_s:g}"})["result"]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
