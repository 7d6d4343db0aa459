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
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile

# Starting prometheus with the chapter's file and reading it back is the harness's module,
# shared with the panel run (benchmarks/harness/run/prometheus.py, in the harness package).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                os.pardir, "benchmarks"))
from harness.run.prometheus import WAIT_S, Prometheus, PrometheusError, get  # noqa: E402

REQUESTS = 5


class Failed(AssertionError):
    pass


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

        prom = Prometheus(f"127.0.0.1:{stage_port}", tmp, prometheus, promtool)
        prom.start()
        prom.wait_scraped()

        series = prom.query('handoff_requests_total{job="handoff"}')
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
            prom.stop()
        stop(stage)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    try:
        tools = (sys.argv[2:] + ["prometheus", "promtool"][len(sys.argv[2:]):])[:2]
        sys.exit(main(sys.argv[1], *tools))
    except (Failed, PrometheusError) as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
