"""harness/records/micro: run a Google Benchmark binary and file its results with a chapter's tables
(chapter 02).

Role: the micro-benchmarks' price lists. It runs BUILD/bin/<binary> with repetitions,
reads Google Benchmark's JSON, and writes OUT/<chapter>/<name>.json (the harness's
record: machine, command, mode, and the raw report) and .csv (one line per benchmark:
median and min/max over repetitions of ns per operation, and items per second).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from harness.results import report

# (chapter, record name, binary) of every micro-benchmark the book renders.
BENCHES = [("02-ring-handoff", "ring-bench", "ring-bench")]
# Repetitions and minimum time per repetition (s), by mode.
SETTINGS = {"quick": (3, 0.05), "full": (10, 0.5)}
TIMEOUT_S = 600


class MicroError(RuntimeError):
    pass


def _summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarize(raw: dict) -> list[dict]:
    """Per benchmark (in first-seen order): ns per operation and items/s over repetitions."""
    seen: dict[str, dict] = {}
    for b in raw.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        name = b.get("run_name") or b["name"]
        unit = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        entry = seen.setdefault(name, {"benchmark": name, "ns": [], "cpu_ns": [], "items": []})
        entry["ns"].append(b["real_time"] * unit)
        entry["cpu_ns"].append(b["cpu_time"] * unit)
        if "items_per_second" in b:
            entry["items"].append(b["items_per_second"])
    out = []
    for e in seen.values():
        line = {"benchmark": e["benchmark"], "repetitions": len(e["ns"]),
                "ns_per_op": _summary(e["ns"]), "cpu_ns_per_op": _summary(e["cpu_ns"])}
        if e["items"]:
            line["items_per_second"] = _summary(e["items"])
        out.append(line)
    return out


def csv_lines(results: list[dict]) -> tuple[list[str], list[dict]]:
    header = ["benchmark", "repetitions"]
    for f in ("ns_per_op", "cpu_ns_per_op", "items_per_second"):
        header += [f"{f}_median", f"{f}_min", f"{f}_max"]
    lines = []
    for r in results:
        line = {"benchmark": r["benchmark"], "repetitions": r["repetitions"]}
        for f in ("ns_per_op", "cpu_ns_per_op", "items_per_second"):
            if f in r:
                for k in ("median", "min", "max"):
                    line[f"{f}_{k}"] = f"{r[f][k]:.1f}" if f != "items_per_second" else f"{r[f][k]:.0f}"
        lines.append(line)
    return header, lines


def run_micro(*, build_dir: str, out_dir: str, repo_root: str, mode: str, argv: list[str],
              reproduce_argv: list[str], stream=sys.stdout) -> list[str]:
    """Run every micro-benchmark that is built; return the names of those that are not."""
    reps, min_time = SETTINGS[mode]
    missing = []
    for chapter, name, binary in BENCHES:
        exe = os.path.join(build_dir, "bin", binary)
        if not os.access(exe, os.X_OK):
            missing.append(f"{name}: {exe} not built")
            continue
        base = report.results_base(out_dir, chapter, name)
        bench_argv = [exe, f"--benchmark_repetitions={reps}", f"--benchmark_min_time={min_time}",
                      "--benchmark_format=json"]
        try:
            p = subprocess.run(bench_argv, capture_output=True, timeout=TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as e:
            raise MicroError(f"{binary} ran past {TIMEOUT_S}s") from e
        if p.returncode != 0:
            raise MicroError(f"{binary} exited with {p.returncode}: {p.stderr.decode()[-1500:]}")
        raw = json.loads(p.stdout)
        results = summarize(raw)
        if not results:
            raise MicroError(f"{binary} reported no benchmarks")
        doc = report.tool_record(mode=mode, settings={"repetitions": reps, "min_time_s": min_time},
                                 argv=argv, reproduce_argv=reproduce_argv, repo_root=repo_root,
                                 build_dir=build_dir, out_dir=out_dir, tool_key="bench",
                                 tool_argv=bench_argv)
        doc.update(results=results, raw=raw)
        report.write_json(base + ".json", doc)
        header, lines = csv_lines(results)
        report.write_csv(base + ".csv", header, lines)
        print(f"\n== {chapter}/{name} ({mode}: {reps} repetitions) ==", file=stream)
        for r in results:
            ns = r["ns_per_op"]
            print(f"  {r['benchmark']:<32} {ns['median']:10.1f} ns [{ns['min']:.1f}–{ns['max']:.1f}]", file=stream)
        print(f"  wrote {base}.json, {base}.csv", file=stream)
    return missing
