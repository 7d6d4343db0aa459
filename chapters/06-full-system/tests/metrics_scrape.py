#!/usr/bin/env python3
"""chapters/06-full-system/tests/metrics_scrape.py: stage 06's /metrics read by Prometheus's own
parser (Debian's python3-prometheus-client), as a fleet's scraper would read it (chapter 06).

Starts the stage on a free port, serves a few requests, then scrapes /metrics and /stats from
one connection each and checks that the text parses, that every family has the type its name
says (counters end in _total in the text), and that the per-thread figures agree with /stats.

    metrics_scrape.py STAGE_BINARY
"""
import http.client
import json
import re
import subprocess
import sys

from prometheus_client.parser import text_string_to_metric_families


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read().decode()
    return r.status, r.getheader("Content-Type"), body


def main(binary):
    proc = subprocess.Popen([binary, "--port", "0", "--like", "seed000-ring"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # bounded by CTest's TIMEOUT
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        assert m, f"no readiness line: {line!r}"
        port = int(m.group(1))
        for _ in range(5):
            assert get(port, "/")[0] == 200
        status, ctype, text = get(port, "/metrics")
        assert status == 200, status
        assert ctype.startswith("text/plain; version=0.0.4"), ctype
        families = {f.name: f for f in text_string_to_metric_families(text)}
        stats = json.loads(get(port, "/stats")[2])
    finally:
        proc.terminate()
        proc.wait(timeout=20)

    # The parser drops a counter's _total from the family's name; the samples keep it.
    requests = families["handoff_requests"]
    assert requests.type == "counter", requests.type
    by_thread = {s.labels["thread"]: s.value for s in requests.samples if s.name == "handoff_requests_total"}
    threads = {t["name"]: t for t in stats["threads"]}
    assert set(by_thread) == set(threads), (by_thread, threads)
    # The five requests before the scrape were counted when /metrics was rendered (the scrape
    # itself and /stats come after), and pool threads ran them: --pool-all-routes.
    pool_jobs = sum(v for name, v in by_thread.items() if threads[name]["role"] == "pool")
    assert pool_jobs >= 5, by_thread
    assert families["handoff_pg_peak_open"].type == "gauge"
    assert families["handoff_thread_cpu_seconds"].type == "counter"
    info = families["handoff_settings_info"]
    assert info.samples[0].labels.get("profile") == "seed000-ring", info.samples
    print(f"ok: {len(families)} families, {sum(len(f.samples) for f in families.values())} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
