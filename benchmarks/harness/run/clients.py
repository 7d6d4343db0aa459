"""harness/run/clients: run a load generator against one server and read its counts (chapter 01).

Role: the two clients a row may name. "loadgen" is the project's own generator
(BUILD/bin/loadgen, JSON report); "wrk" is Debian's wrk with one thread, whose
summary is read through a small Lua `done` hook (wrk_report.lua) rather than scraped
from its text. Both come back as one `ClientResult`: requests completed, rate,
latency percentiles in µs, errors by kind, and the client's own CPU (from wait4's
rusage, since /proc forgets a process once it is reaped).
"""

from __future__ import annotations

import json
import math
import os
import time
import urllib.parse
from dataclasses import dataclass, field

from harness.run import procfs
from harness.run.servers import CHILDREN, stop, wait_exit
from harness.run.specfile import Row, check_loopback

WRK = "/usr/bin/wrk"
HERE = os.path.dirname(os.path.abspath(__file__))
WRK_SCRIPT = os.path.join(HERE, "wrk_report.lua")
# Bound on a client run beyond its nominal duration: connection set-up, the final
# drain, and a loaded 2-core machine.
GRACE_S = 30.0


class ClientError(RuntimeError):
    pass


@dataclass
class ClientResult:
    argv: list[str]
    requests: int
    rps: float
    duration_s: float
    latency_us: dict
    errors: dict
    errors_total: int
    cpu_ticks: float            # client's utime+stime, in clock ticks
    wall_s: float
    raw: dict = field(default_factory=dict)


def _url_ok(url: str) -> str:
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http" or u.hostname is None:
        raise ClientError(f"refusing target {url!r}")
    check_loopback(u.hostname)
    return url


def loadgen_argv(bin_dir: str, url: str, row: Row, duration_s: float,
                 json_path: str, samples_path: str | None = None) -> list[str]:
    """loadgen's command line; with samples_path it also writes one CSV line per response
    there (--raw-samples; the harness's stall view, harness/run/stalls.py)."""
    argv = [os.path.join(bin_dir, "loadgen"), "--url", _url_ok(url),
            "-c", str(row.connections), "-t", str(row.threads),
            "--duration", f"{duration_s:g}", "--warmup", "0", "--model", row.model,
            "--progress", "off"]
    if row.rate > 0:
        argv += ["--rate", f"{row.rate:g}"]
    if row.interval_us > 0:
        argv += ["--interval-us", str(row.interval_us)]
    if row.pipeline != 1:
        argv += ["--pipeline", str(row.pipeline)]
    if row.method != "GET":
        argv += ["--method", row.method, "--body-size", str(row.body_size)]
    if samples_path:
        argv += ["--raw-samples", samples_path]
    return argv + ["--json", json_path]


def wrk_seconds(duration_s: float) -> int:
    """wrk takes whole seconds."""
    return max(1, int(math.ceil(duration_s - 1e-9)))


def wrk_argv(url: str, row: Row, duration_s: float) -> list[str]:
    return [WRK, "-t", str(row.threads), "-c", str(row.connections),
            "-d", f"{wrk_seconds(duration_s)}s", "-s", WRK_SCRIPT, _url_ok(url)]


def _run(argv: list[str], timeout_s: float, stdout_path: str, stderr_path: str):
    t0 = time.monotonic()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        p = CHILDREN.spawn(argv, stdout=out, stderr=err)
    got = wait_exit(p, timeout_s)
    if got is None:
        stop(p)
        raise ClientError(f"{os.path.basename(argv[0])} ran past {timeout_s:.0f}s")
    code, usage = got
    wall = time.monotonic() - t0
    ticks = (usage.ru_utime + usage.ru_stime) * procfs.CLK_TCK if usage else 0.0
    if code != 0:
        with open(stderr_path, "rb") as f:
            tail = f.read()[-1500:].decode("utf-8", "replace")
        raise ClientError(f"{os.path.basename(argv[0])} exited with {code}: {tail}")
    return ticks, wall


def parse_loadgen(doc: dict) -> dict:
    """Check a loadgen JSON report against the contract and normalise it."""
    for key in ("requests", "errors", "duration_s", "rps", "latency_us"):
        if key not in doc:
            raise ClientError(f"loadgen JSON lacks '{key}'")
    errors = {k: int(v) for k, v in doc["errors"].items()}
    lat = {k: float(v) for k, v in doc["latency_us"].items() if v is not None}
    return {"requests": int(doc["requests"]), "rps": float(doc["rps"]),
            "duration_s": float(doc["duration_s"]), "latency_us": lat,
            "errors": errors, "errors_total": sum(errors.values())}


def parse_wrk(stdout: str) -> dict:
    """Find the WRK-JSON line our Lua hook printed and normalise it."""
    for line in stdout.splitlines():
        if line.startswith("WRK-JSON "):
            doc = json.loads(line[len("WRK-JSON "):])
            break
    else:
        raise ClientError("wrk printed no WRK-JSON summary line")
    duration_s = doc["duration_us"] / 1e6
    errors = {k: int(v) for k, v in doc["errors"].items()}
    lat = {k: float(v) for k, v in doc["latency_us"].items()}
    return {"requests": int(doc["requests"]),
            "rps": doc["requests"] / duration_s if duration_s > 0 else 0.0,
            "duration_s": duration_s, "latency_us": lat, "errors": errors,
            "errors_total": sum(errors.values())}


def missing(row: Row, bin_dir: str) -> str | None:
    path = WRK if row.client == "wrk" else os.path.join(bin_dir, "loadgen")
    return None if os.access(path, os.X_OK) else f"{path} not available"


def run(row: Row, url: str, duration_s: float, bin_dir: str, workdir: str,
        tag: str, samples_path: str | None = None) -> ClientResult:
    """One client run. samples_path (loadgen only; wrk has no raw samples) asks loadgen for
    its per-response CSV; it is written after the measured window, so its cost lands in the
    client's CPU but not in the server's or the latencies."""
    out = os.path.join(workdir, f"{tag}.stdout")
    err = os.path.join(workdir, f"{tag}.stderr")
    if row.client == "wrk":
        argv = wrk_argv(url, row, duration_s)
        ticks, wall = _run(argv, wrk_seconds(duration_s) + GRACE_S, out, err)
        with open(out, encoding="utf-8", errors="replace") as f:
            parsed = parse_wrk(f.read())
        raw = dict(parsed)
    else:
        json_path = os.path.join(workdir, f"{tag}.json")
        if os.path.exists(json_path):
            os.unlink(json_path)
        argv = loadgen_argv(bin_dir, url, row, duration_s, json_path, samples_path)
        ticks, wall = _run(argv, duration_s + GRACE_S, out, err)
        try:
            with open(json_path, encoding="utf-8") as f:
                raw = json.load(f)
        except (OSError, ValueError) as e:
            raise ClientError(f"loadgen JSON unreadable: {e}") from e
        parsed = parse_loadgen(raw)
    return ClientResult(argv=argv, cpu_ticks=ticks, wall_s=wall, raw=raw, **parsed)
