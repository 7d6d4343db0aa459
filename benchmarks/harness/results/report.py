"""harness/results/report: the machine record, the JSON/CSV results, the plots, the stdout table (chapter 01).

Role: everything the harness writes. The JSON keeps every raw cell sample beside the
per-cell summary, the comparisons and the machine they came from; the CSV has one
line per row x arm (median and min/max over rounds) plus a verdict column per
declared comparison and the stall view (stall_runs, max_us_runs), and is what the
book's `results-table` directive renders; -runs.csv has one line per cell; the
PNGs are grouped bar charts with min-max error bars for the book's figures.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import platform
import shlex
import subprocess

from harness.results import summary as sm


def _first_line(argv: list[str], cwd: str | None = None) -> str:
    try:
        r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0] if text else ""


def _cmake_cache(build_dir: str) -> dict[str, str]:
    out = {}
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith(("#", "//")) or "=" not in line or ":" not in line:
                    continue
                key, value = line.rstrip("\n").split("=", 1)
                out[key.split(":", 1)[0]] = value
    except OSError:
        pass
    return out


def parse_porcelain(z: str) -> list[str]:
    """The paths `git status --porcelain=v1 -z` lists (a rename or copy names its new
    path; the old one that follows it is skipped)."""
    out = []
    entries = z.split("\0")
    i = 0
    while i < len(entries):
        e = entries[i]
        i += 1
        if len(e) < 4:
            continue
        out.append(e[3:])
        if e[0] in "RC":
            i += 1
    return out


def dirty_paths(repo_root: str, ignore: list[str] = ()) -> list[str] | None:
    """Files that differ from the checked-out revision (modified, staged, deleted or
    untracked), leaving out those under the folders in `ignore` (the build tree, the
    results being written) and under build/. None when git cannot say (not a
    checkout, no git)."""
    try:
        r = subprocess.run(["git", "status", "--porcelain=v1", "-z", "--untracked-files=all"],
                           cwd=repo_root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    skip = ["build"]
    for d in ignore:
        d = os.path.abspath(d)
        if os.path.commonpath([d, os.path.abspath(repo_root)]) == os.path.abspath(repo_root):
            rel = os.path.relpath(d, repo_root)
            if rel != ".":
                skip.append(rel.replace(os.sep, "/"))
    return [p for p in parse_porcelain(r.stdout)
            if not any(p == k or p.startswith(k.rstrip("/") + "/") for k in skip)]


def build_revision(build_dir: str) -> str:
    """The short git revision of the source tree a CMake build tree was configured from (its
    cache's CMAKE_HOME_DIRECTORY), with "+dirty" when that tree has changes (dirty_paths);
    "unknown" when the cache or git cannot say."""
    source = _cmake_cache(build_dir).get("CMAKE_HOME_DIRECTORY")
    changed = dirty_paths(source, [build_dir]) if source else None
    if changed is None:
        return "unknown"
    return _first_line(["git", "rev-parse", "--short", "HEAD"], cwd=source) + ("+dirty" if changed else "")


def machine_info(build_dir: str, repo_root: str, out_dir: str | None = None) -> dict:
    cpu_model = ""
    cpu_flags: list[str] = []
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name") and not cpu_model:
                    cpu_model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not cpu_flags:
                    cpu_flags = line.split(":", 1)[1].split()
                if cpu_model and cpu_flags:
                    break
    except OSError:
        pass
    mem_kib = 0
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_kib = int(line.split()[1])
                    break
    except OSError:
        pass
    cache = _cmake_cache(build_dir)
    build_type = cache.get("CMAKE_BUILD_TYPE", "")
    flags = " ".join(x for x in (cache.get("CMAKE_CXX_FLAGS", ""),
                                 cache.get(f"CMAKE_CXX_FLAGS_{build_type.upper()}", ""))
                     if x).strip()
    compiler = cache.get("CMAKE_CXX_COMPILER") or "c++"
    rev = _first_line(["git", "rev-parse", "--short", "HEAD"], cwd=repo_root)
    changed = dirty_paths(repo_root, [build_dir] + ([out_dir] if out_dir else []))
    dirty = None if changed is None else bool(changed)
    u = os.uname()
    return {
        "cpu_model": cpu_model,
        # Whether the CPU says a hypervisor runs it: the "hypervisor" flag of /proc/cpuinfo
        # (CPUID leaf 1, ECX bit 31, which hypervisors set and bare metal leaves clear).
        "virtualised": ("yes (cpuinfo flag: hypervisor)" if "hypervisor" in cpu_flags
                        else "not reported (no hypervisor flag in /proc/cpuinfo)" if cpu_flags
                        else "unknown (no /proc/cpuinfo flags)"),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)),
        "mem_total_mib": mem_kib // 1024,
        "kernel": f"{u.sysname} {u.release}",
        "machine": u.machine,
        "compiler": _first_line([compiler, "--version"]),
        "cxx_flags": flags,
        "build_type": build_type,
        "sanitize": cache.get("HANDOFF_SANITIZE", ""),
        "git_rev": rev,
        "git_dirty": dirty,
        "git_dirty_paths": (changed or [])[:20],
        "python": platform.python_version(),
        "nginx": _first_line(["/usr/sbin/nginx", "-v"]),
        "h2o": _first_line(["/usr/bin/h2o", "--version"]),
        "lighttpd": _first_line(["/usr/sbin/lighttpd", "-v"]),
        "haproxy": _first_line(["/usr/sbin/haproxy", "-v"]),
        "wrk": _first_line(["/usr/bin/wrk", "--version"]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def results_base(out_dir: str, chapter: str, name: str) -> str:
    """OUT/<chapter>/<name>, the folder made: the stem of a record's .json and .csv."""
    dest = os.path.join(out_dir, chapter)
    os.makedirs(dest, exist_ok=True)
    return os.path.join(dest, name)


def tool_record(*, mode: str, settings: dict, argv: list[str], reproduce_argv: list[str],
                repo_root: str, build_dir: str, out_dir: str, tool_key: str,
                tool_argv: list[str]) -> dict:
    """The harness's record around one tool's report (a probe, a micro-benchmark): the mode
    and its settings, the harness command that ran and the one that regenerates it, the
    tool's own command line (as `<tool_key>_command`) and the machine. The caller adds the
    tool's results."""
    return {
        "format": 1,
        "mode": mode,
        "settings": settings,
        "command": repo_relative(argv, repo_root),
        "reproduce": reproduce_command(reproduce_argv, repo_root),
        f"{tool_key}_command": repo_relative(tool_argv, repo_root),
        "machine": machine_info(build_dir, repo_root, out_dir),
    }


def machine_line(m: dict) -> str:
    """One line for captions: CPU, cores, kernel, compiler and flags, revision, date."""
    rev = m.get("git_rev", "") + ("+dirty" if m.get("git_dirty") else "")
    return (f"{m.get('cpu_model', '?')}, {m.get('cores', '?')} cores, {m.get('kernel', '?')}, "
            f"{m.get('compiler', '?')} {m.get('cxx_flags', '')}, rev {rev}, "
            f"{m.get('date', '')[:10]}")


def repo_relative(argv: list[str], repo_root: str) -> str:
    """A command line as a results file records it: every path inside the repository
    relative to its root, so that no record names the checkout it ran in."""
    return shlex.join(_relative(argv, repo_root))


def _relative(argv: list[str], repo_root: str) -> list[str]:
    out = []
    for a in argv:
        if os.path.isabs(a) and os.path.commonpath([a, repo_root]) == repo_root:
            a = os.path.relpath(a, repo_root)
        out.append(a)
    return out


def reproduce_command(argv: list[str], repo_root: str) -> str:
    """The command line with paths made relative to the repository root, so a reader
    can paste it from a checkout."""
    out = _relative(argv, repo_root)
    if out and out[0].endswith("bench.py"):
        out.insert(0, "/usr/bin/python3")   # Debian's: a pyenv python3 may lack matplotlib
    return shlex.join(out)


def write_json(path: str, doc: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=False, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


def csv_header(compares) -> list[str]:
    cols = ["row", "arm", "client", "model", "connections", "rounds"]
    for m in sm.CSV_METRICS:
        cols += [f"{m}_median", f"{m}_min", f"{m}_max"]
    cols += ["errors", "failed_rounds", "busy_rounds", "busy_pct_max", "stall_runs",
             "max_us_runs"]
    for c in compares:
        for m in c.metrics:
            names = [sm.verdict_column(m, c.b), sm.ratio_column(m, c.b)]
            base = sm.paired_ratio_column(m, c.b)
            names += [f"{base}_median", f"{base}_min", f"{base}_max"]
            for col in names:
                if col not in cols:
                    cols.append(col)
    return cols


def csv_rows(spec, summ: dict, comparisons: list[dict]) -> list[dict]:
    out = []
    for row in spec.rows:
        for arm in spec.arms:
            s = summ.get((row.name, arm.name))
            if s is None:
                continue
            line = {"row": row.name, "arm": arm.name, "client": row.client,
                    "model": row.model, "connections": row.connections,
                    "rounds": s["rounds"]}
            for m in sm.CSV_METRICS:
                r = s["metrics"][m]
                line[f"{m}_median"] = sm.fmt(m, r.median if r else None)
                line[f"{m}_min"] = sm.fmt(m, r.lo if r else None)
                line[f"{m}_max"] = sm.fmt(m, r.hi if r else None)
            busy = s["metrics"]["busy_pct"]
            line.update(errors=s["errors_total"], failed_rounds=s["failed_rounds"],
                        busy_rounds=s["busy_rounds"],
                        busy_pct_max=sm.fmt("busy_pct", busy.hi if busy else None),
                        stall_runs=s["stall_runs"],
                        max_us_runs=" ".join(sm.fmt("max_us", v) if v is not None else "-"
                                             for v in s["max_us_runs"]))
            for c in comparisons:
                mine = (c["over"] == "arms" and c["a"] == arm.name and c["within"] == row.name) \
                    or (c["over"] == "rows" and c["a"] == row.name and c["within"] == arm.name)
                if mine:
                    line[sm.verdict_column(c["metric"], c["b"])] = c["verdict"]
                    line[sm.ratio_column(c["metric"], c["b"])] = (
                        f"{c['ratio']:.3f}" if c["ratio"] is not None else "")
                    base = sm.paired_ratio_column(c["metric"], c["b"])
                    pr = c["paired_ratio"] or {}
                    for part, key in (("median", "median"), ("min", "min"), ("max", "max")):
                        line[f"{base}_{part}"] = (f"{pr[key]:.3f}" if key in pr else "")
            out.append(line)
    return out


# The per-run CSV (OUT/<chapter>/<name>-runs.csv): one line per cell, so that a run's
# worst latency, and whether it stalled, is not lost in the medians of the main CSV.
RUN_METRICS = ("rps", "p50_us", "p99_us", "p99_9_us", "max_us", "server_us_per_req",
               "loop_us_per_req", "stack_contends_per_req", "stack_deferred_per_req",
               "stack_wakes_per_req", "stack_pool_empty_per_req", "stack_handoffs_per_req",
               "stack_sleeps_per_req", "stack_wait_us_per_req", "stack_long_waits_per_req")
RUNS_HEADER = (["round", "order", "row", "arm", "ok"] + list(RUN_METRICS)
               + ["stall", "stall_samples", "error"])


def runs_rows(cells: list[dict], stall_us: float = sm.STALL_US) -> list[dict]:
    out = []
    for c in cells:
        m = c.get("metrics") or {}
        line = {"round": c["round"], "order": c.get("order", ""), "row": c["row"],
                "arm": c["arm"], "ok": int(bool(c.get("ok")))}
        for k in RUN_METRICS:
            line[k] = sm.fmt(k, m.get(k))
        if c.get("ok"):
            line["stall"] = int(sm.is_stall(m.get("max_us"), stall_us))
        line["stall_samples"] = (c.get("stall_samples") or {}).get("file", "")
        line["error"] = ((c.get("error") or "").splitlines() or [""])[0]
        out.append(line)
    return out


def write_csv(path: str, header: list[str], lines: list[dict]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, restval="")
        w.writeheader()
        for line in lines:
            w.writerow(line)
    os.replace(tmp, path)


# The plots are drawn to be read in the book's column (book/tools/check_widths.py measures
# them in Chromium at 1280 px): PLOT_WIDTH_IN wide at PLOT_DPI, so the browser
# shows them at about half their pixels in the 736 px column, and every text at PLOT_FONT_PT,
# which lands at or above the body text there. The smallest text's size in pixels of the
# image is recorded in the PNG (TEXT_KEY) for that check; the machine line, which the
# book's caption carries, is recorded as the PNG's Description rather than drawn. A label
# the canvas would cut is an error, not a figure.
PLOT_WIDTH_IN = 7.2
PLOT_DPI = 200
PLOT_FONT_PT = 12
PANEL_HEIGHT_IN = 2.9
MAX_ARMS_PER_PANEL = 6
TEXT_KEY = "handoff:min_text_px"


class PlotError(ValueError):
    pass


def readable_figure(panels: int = 1, sharey: bool = True, height_in: float | None = None):
    """A figure and its axes (one per panel, stacked), sized and styled for the column."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": PLOT_FONT_PT, "axes.titlesize": PLOT_FONT_PT,
                         "axes.labelsize": PLOT_FONT_PT, "xtick.labelsize": PLOT_FONT_PT,
                         "ytick.labelsize": PLOT_FONT_PT, "legend.fontsize": PLOT_FONT_PT,
                         "figure.titlesize": PLOT_FONT_PT})
    fig, axes = plt.subplots(panels, 1, sharey=sharey, squeeze=False, dpi=PLOT_DPI,
                             figsize=(PLOT_WIDTH_IN, height_in or PANEL_HEIGHT_IN * panels + 0.5),
                             layout="constrained")
    return fig, [a for (a,) in axes]


def _texts(fig):
    import matplotlib.text
    return [t for t in fig.findobj(matplotlib.text.Text)
            if t.get_visible() and t.get_text().strip() and t.figure is fig]


def _slant_crowded_ticks(fig, axes) -> None:
    """Slant an axis's tick labels when they would touch one another."""
    renderer = fig.canvas.get_renderer()
    for ax in axes:
        labels = [t for t in ax.get_xticklabels() if t.get_text().strip()]
        boxes = [t.get_window_extent(renderer) for t in labels]
        if any(a.x1 + 4 > b.x0 for a, b in zip(boxes, boxes[1:])):
            for t in labels:
                t.set_rotation(25)
                t.set_horizontalalignment("right")


def save_readable(fig, path: str, machine: dict) -> float:
    """Lay the figure out, refuse a text the canvas cuts, record the smallest text's size in
    pixels and the machine in the PNG, and save it. Returns that size."""
    import matplotlib.pyplot as plt

    fig.canvas.draw()
    _slant_crowded_ticks(fig, fig.axes)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    w, h = fig.canvas.get_width_height()
    # What is drawn (ticks outside the view are not), in pixels: it must lie on the canvas.
    drawn = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans)
    if drawn.x0 < -1 or drawn.y0 < -1 or drawn.x1 > w + 1 or drawn.y1 > h + 1:
        cut = [t.get_text() for t in _texts(fig)
               if (lambda b: b.x0 < -1 or b.y0 < -1 or b.x1 > w + 1 or b.y1 > h + 1)(
                   t.get_window_extent(renderer)) and not t.get_text().startswith("$")]
        plt.close(fig)
        raise PlotError(f"{path}: the canvas cuts a label ({', '.join(map(repr, cut)) or 'a tick label'}:"
                        f" drawn {drawn.x0:.0f}..{drawn.x1:.0f} of {w} px wide, "
                        f"{drawn.y0:.0f}..{drawn.y1:.0f} of {h} px high)")
    texts = _texts(fig)
    px = min(t.get_fontsize() for t in texts) * fig.dpi / 72 if texts else 0.0
    fig.savefig(path, metadata={TEXT_KEY: f"{px:.2f}", "Description": machine_line(machine),
                                "Software": "benchmarks/harness/results/report.py"})
    plt.close(fig)
    return px


def arm_panels(arms: list[str], most: int = MAX_ARMS_PER_PANEL) -> list[list[str]]:
    """The arms in panels of at most `most`, keeping a family (the names that differ only
    after their last dash: shared-1, shared-2, ...) together where it fits."""
    if len(arms) <= most:
        return [list(arms)]
    families: list[list[str]] = []
    for a in arms:
        stem = a.rsplit("-", 1)[0] if "-" in a else a
        if families and (families[-1][0].rsplit("-", 1)[0] if "-" in families[-1][0]
                         else families[-1][0]) == stem:
            families[-1].append(a)
        else:
            families.append([a])
    panels: list[list[str]] = []
    for fam in families:
        for i in range(0, len(fam), most):
            part = fam[i:i + most]
            if panels and len(panels[-1]) + len(part) <= most:
                panels[-1].extend(part)
            else:
                panels.append(list(part))
    return panels


def legend_above(ax, ncols: int) -> None:
    """The axes' legend above it, read row by row (matplotlib fills a legend column by
    column: the handles are reordered so that the arms read in their declared order)."""
    handles, labels = ax.get_legend_handles_labels()
    n, c = len(handles), max(1, ncols)
    r = -(-n // c)
    order = [i * c + j for j in range(c) for i in range(r) if i * c + j < n]
    ax.legend([handles[k] for k in order], [labels[k] for k in order], ncols=c,
              loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False, handlelength=1.2,
              columnspacing=1.0)


def plot_metric(path: str, spec, summ: dict, metric: str, machine: dict, mode: str) -> bool:
    """Grouped bars: one group per row, one bar per arm, height the median, whiskers
    the min-max over rounds; more than MAX_ARMS_PER_PANEL arms are drawn in stacked panels
    on one scale. Returns False when nothing of that metric was measured."""
    import textwrap

    arms = [a.name for a in spec.arms]
    rows = [r.name for r in spec.rows]
    have = any(summ.get((r, a), {}).get("metrics", {}).get(metric) for r in rows for a in arms)
    if not have:
        return False
    panels = arm_panels(arms)
    fig, axes = readable_figure(len(panels))
    label = sm.METRICS[metric][1]
    top = 0.0
    for ax, panel in zip(axes, panels):
        width = 0.8 / max(1, len(panel))
        for i, arm in enumerate(panel):
            xs, hs, lo, hi = [], [], [], []
            for j, row in enumerate(rows):
                r = summ.get((row, arm), {}).get("metrics", {}).get(metric)
                if r is None:
                    continue
                xs.append(j + (i - (len(panel) - 1) / 2) * width)
                hs.append(r.median)
                top = max(top, r.hi)
                lo.append(r.median - r.lo)
                hi.append(r.hi - r.median)
            if xs:
                ax.bar(xs, hs, width * 0.92, yerr=[lo, hi], capsize=3, label=arm,
                       color=f"C{i}")
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(rows)
        if len(label) <= 24:    # a longer one is the title's alone
            ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        if len(arms) > 1:
            # As many columns as fit a line of about 66 characters at PLOT_FONT_PT.
            per = max(len(a) for a in panel) + 4
            legend_above(ax, next((c for c in (len(panel), 3, 2) if c * per <= 66), 1))
    axes[0].set_ylim(0, top * 1.05 if top > 0 else 1)
    fig.suptitle("\n".join(textwrap.wrap(
        f"{label}: median of rounds, whiskers min–max"
        + ("" if mode == "full" else f" ({mode} mode)"), 60)))
    save_readable(fig, path, machine)
    return True


def print_table(spec, summ: dict, comparisons: list[dict], mode: str, out) -> None:
    """A compact fixed-width table: medians with [min–max] for the key metrics."""
    def cell(r, m):
        if r is None:
            return "–"
        if r.n > 1:
            return f"{sm.fmt(m, r.median)} [{sm.fmt(m, r.lo)}–{sm.fmt(m, r.hi)}]"
        return sm.fmt(m, r.median)

    def show(metrics: list[tuple[str, str]], flags: bool) -> None:
        head = ["row", "arm"] + [h for h, _ in metrics] + (["err", "busy"] if flags else [])
        table = [head]
        for row in spec.rows:
            for arm in spec.arms:
                s = summ.get((row.name, arm.name))
                if s is None:
                    continue
                line = [row.name, arm.name] + [cell(s["metrics"][m], m) for _, m in metrics]
                if flags:
                    line.append(str(s["errors_total"]))
                    f = f"{s['busy_rounds']}/{s['rounds']}" if s["busy_rounds"] else ""
                    if s["failed_rounds"]:
                        f += f" FAILED {s['failed_rounds']}"
                    line.append(f.strip())
                table.append(line)
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        for k, r in enumerate(table):
            print("  ".join(v.ljust(widths[i]) for i, v in enumerate(r)).rstrip(), file=out)
            if k == 0:
                print("  ".join("-" * w for w in widths), file=out)

    print(f"\n== {spec.chapter}/{spec.name}: {spec.title} ({mode}) ==", file=out)
    show([("rps", "rps"), ("loop µs/req", "loop_us_per_req"), ("pool µs/req", "pool_us_per_req"),
          ("pool %", "pool_cpu_pct"), ("srv µs/req", "server_us_per_req"), ("p50 µs", "p50_us"),
          ("p99 µs", "p99_us"), ("max µs", "max_us")], flags=True)
    print("  per request (sleeps: voluntary context switches from /proc; the rest: the "
          "stage's /stats):", file=out)
    show([("loop sleeps", "loop_sleeps_per_req"), ("pool sleeps", "pool_sleeps_per_req"),
          ("parks", "parks_per_req"), ("wakes", "wakes_sent_per_req"),
          ("spin catches", "spin_catches_per_req"), ("pokes", "completion_pokes_per_req"),
          ("stolen pokes", "stolen_pokes_per_req"), ("chained wakes", "chained_wakes_per_req"),
          ("age wakes", "age_wakes_per_req"),
          ("loop blocking waits", "loop_blocking_waits_per_req"),
          ("hand-off syscalls", "handoff_syscalls_per_req"),
          ("loop syscalls", "loop_syscalls_per_req"),
          ("pool syscalls", "pool_syscalls_per_req")], flags=False)
    stack = [("contends", "stack_contends_per_req"), ("deferred", "stack_deferred_per_req"),
             ("lock wakes", "stack_wakes_per_req"), ("pool empty", "stack_pool_empty_per_req"),
             ("hand-offs", "stack_handoffs_per_req"), ("sleeps", "stack_sleeps_per_req"),
             ("wait µs", "stack_wait_us_per_req"), ("long waits", "stack_long_waits_per_req")]
    if any((r := s["metrics"][m]) is not None and r.hi > 0
           for s in summ.values() for _, m in stack):
        print("  the stack lock, per request (the loops' /stats):", file=out)
        show(stack, flags=False)
    if any(s.get("stall_runs") for s in summ.values()):
        stall_us = next(iter(summ.values()))["stall_us"]
        print(f"  stalls (runs whose max exceeded {sm.fmt('max_us', stall_us)} µs), and each "
              "run's max in µs:", file=out)
        for s in summ.values():
            if s.get("stall_runs"):
                runs = " ".join(sm.fmt("max_us", v) if v is not None else "-"
                                for v in s["max_us_runs"])
                print(f"    {s['row']} x {s['arm']}: {s['stall_runs']} of {s['rounds']}: {runs}",
                      file=out)
    for c in comparisons:
        print(f"  {c['metric']}: {c['a']} vs {c['b']} in {c['within']}: "
              f"{c['verdict_text']}", file=out)
