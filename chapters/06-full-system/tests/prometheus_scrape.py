#!/usr/bin/env python3
"""chapters/06-full-system/tests/prometheus_scrape.py: a real Prometheus scrapes stage 06 (chapter 06).

Starts the stage on a free port and serves it a few requests; checks its /metrics text with
`promtool check metrics` (Prometheus's own linter); then starts Debian's `prometheus` with
the chapter's example configuration (chapters/06-full-system/prometheus.yml, its one target
and its scrape interval changed to this stage and one second, nothing else), waits for a
scrape, and reads the stage's own series back through Prometheus's HTTP API: `up` is 1, and
`handoff_requests_total` has one series per thread of /stats, each carrying the job and
the labels the file gives, with the requests served before the scrape on the pool threads.

Every wait is bounded (WAIT_S each, and CTest's TIMEOUT over the whole): a Prometheus that
never scrapes fails the test, naming what it last saw.

    prometheus_scrape.py STAGE_BINARY [PROMETHEUS [PROMTOOL]]
"""
import http.client
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "prometheus.yml")
WAIT_S = 30.0
REQUESTS = 5


class Failed(AssertionError):
    pass


def get(port, path, timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_stage(binary):
    proc = subprocess.Popen([binary, "--port", "0", "--like", "seed000-ring"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    ready, _, _ = select.select([proc.stdout], [], [], WAIT_S)
    line = proc.stdout.readline() if ready else ""
    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
    if not m:
        proc.kill()
        raise Failed(f"stage: no readiness line within {WAIT_S:.0f} s: {line!r}")
    return proc, int(m.group(1))


def scrape_config(text, stage_port):
    """The chapter's file with its target and interval changed, and nothing else."""
    out, n_target = re.subn(r'"localhost:8080"', f'"127.0.0.1:{stage_port}"', text)
    out, n_interval = re.subn(r"^(\s*scrape_interval:) 15s$", r"\1 1s", out, flags=re.M)
    out, n_timeout = re.subn(r"^(\s*scrape_timeout:) 5s$", r"\1 1s", out, flags=re.M)
    if (n_target, n_interval, n_timeout) != (1, 1, 1):
        raise Failed(f"{CONFIG}: expected one target localhost:8080, one scrape_interval: 15s and "
                     f"one scrape_timeout: 5s, found {n_target}, {n_interval} and {n_timeout}")
    return out


def query(port, expr):
    status, body = get(port, "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    if status != 200:
        raise Failed(f"prometheus: query {expr!r} answered {status}: {body[:300]}")
    doc = json.loads(body)
    if doc.get("status") != "success":
        raise Failed(f"prometheus: query {expr!r}: {doc}")
    return doc["data"]["result"]


def wait_for(what, probe):
    """probe() until it returns something true, at most WAIT_S; the last thing it saw names
    the failure."""
    deadline = time.monotonic() + WAIT_S
    seen = None
    while time.monotonic() < deadline:
        try:
            got, seen = probe()
        except (OSError, http.client.HTTPException) as e:
            got, seen = None, f"{type(e).__name__}: {e}"
        if got:
            return got
        time.sleep(0.2)
    raise Failed(f"{what}: not within {WAIT_S:.0f} s; last seen: {seen}")


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(binary, prometheus, promtool):
    for tool in (prometheus, promtool):
        if not shutil.which(tool):
            raise Failed(f"{tool} not found (Debian: prometheus, in .ci/debian-packages)")
    stage, stage_port = start_stage(binary)
    tmp = tempfile.mkdtemp(prefix="prometheus-scrape-")
    prom = None
    try:
        for _ in range(REQUESTS):
            if get(stage_port, "/")[0] != 200:
                raise Failed("stage: GET / did not answer 200")
        status, exposition = get(stage_port, "/metrics")
        if status != 200:
            raise Failed(f"stage: GET /metrics answered {status}")
        lint = subprocess.run([promtool, "check", "metrics"], input=exposition, capture_output=True,
                              text=True, timeout=WAIT_S)
        if lint.returncode != 0:
            raise Failed(f"promtool check metrics exited {lint.returncode}: {(lint.stdout + lint.stderr)[:2000]}")
        threads = {t["name"]: t["role"] for t in json.loads(get(stage_port, "/stats")[1])["threads"]}

        with open(CONFIG, encoding="utf-8") as f:
            config = scrape_config(f.read(), stage_port)
        config_path = os.path.join(tmp, "prometheus.yml")
        with open(config_path, "w", encoding="utf-8") as f:
            f.write(config)
        check = subprocess.run([promtool, "check", "config", config_path], capture_output=True,
                               text=True, timeout=WAIT_S)
        if check.returncode != 0:
            raise Failed(f"promtool check config: {check.stdout}{check.stderr}")
        prom_port = free_port()
        with open(os.path.join(tmp, "prometheus.log"), "w") as log:
            prom = subprocess.Popen([prometheus, f"--config.file={config_path}",
                                     f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                                     f"--web.listen-address=127.0.0.1:{prom_port}"],
                                    stdout=log, stderr=subprocess.STDOUT, cwd=tmp)

        def ready():
            if prom.poll() is not None:
                with open(os.path.join(tmp, "prometheus.log")) as f:
                    raise Failed(f"prometheus exited {prom.returncode}: {f.read()[-1500:]}")
            status, body = get(prom_port, "/-/ready", timeout=2)
            return status == 200, f"/-/ready {status} {body.strip()[:100]}"
        wait_for("prometheus ready", ready)

        def scraped():
            up = query(prom_port, 'up{job="handoff"}')
            return (up and up[0]["value"][1] == "1"), up
        wait_for("a scrape of the stage with up == 1", scraped)

        series = query(prom_port, 'handoff_requests_total{job="handoff"}')
        by_thread = {s["metric"]["thread"]: float(s["value"][1]) for s in series}
        if set(by_thread) != set(threads):
            raise Failed(f"scraped threads {sorted(by_thread)} are not /stats' {sorted(threads)}")
        for s in series:
            labels = s["metric"]
            if labels.get("stage") != "06" or labels.get("instance") != f"127.0.0.1:{stage_port}" \
                    or labels.get("role") != threads[labels["thread"]]:
                raise Failed(f"a scraped series does not carry the file's and the stage's labels: {labels}")
        pool = sum(v for t, v in by_thread.items() if threads[t] == "pool")
        if pool < REQUESTS:
            raise Failed(f"the pool threads' scraped requests_total is {pool}, below the {REQUESTS} served")
        print(f"ok: promtool passed /metrics; prometheus scraped {len(series)} handoff_requests_total "
              f"series ({pool:.0f} on the pool threads) from 127.0.0.1:{stage_port}")
        return 0
    finally:
        if prom is not None:
            stop(prom)
        stop(stage)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    try:
        tools = (sys.argv[2:] + ["prometheus", "promtool"][len(sys.argv[2:]):])[:2]
        sys.exit(main(sys.argv[1], *tools))
    except Failed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
