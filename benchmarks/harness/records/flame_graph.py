"""harness/records/flame_graph: flame graphs of the profiles the book shows, from `perf record -g` (chapters 04 and 06).
Changed in chapter 06: the hand-off price's flame graph.

Role: the picture beside the book's profiles. For each entry of FLAMES, record the process
with `perf record -F FREQ --call-graph dwarf` (the build keeps no frame pointers, so the
stacks are unwound from DWARF), fold the samples into a tree with perf's own flame graph
script (`perf script -s .../flamegraph.py --format json`, Debian's linux-perf), and write:

  OUT/CHAPTER/flame-NAME.json  the record: machine, commands, and the tree of stacks
  OUT/CHAPTER/flame-NAME.html  the interactive page: that tree in the d3-flame-graph
                               template (npm's d3-flame-graph, as perf's script fills it)
  OUT/CHAPTER/flame-NAME.png   the page as the browser draws it (headless Chromium under
                               chromium-driver), for the book, with its smallest text
                               recorded as the harness's plots record theirs

`bench.py profile` records and renders; `bench.py replot` renders the HTML and the PNG
again from the JSON. The template is npm's d3-flame-graph at TEMPLATE_VERSION, installed
into BUILD/npm on first use (`npm install`); without npm or perf, the flame graphs are not
measured and the tool says why.

The profiles: chapter 04's timer accounting (`loop-peer-ourloop --only cancelled_timer`,
the "perf record -g" its note cites) and its executor round trip (`--only
executor_round_trip`); chapter 06's hand-off price (stage 06 with one worker handing hello
to one pool thread, `specs/06-handoff-price.toml`'s pool-1 arm at 256 connections, the whole
process sampled over a window of the load).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from harness.results import report
from harness.run import clients
from harness.run import servers
from harness.run import specfile
from harness.run.servers import CHILDREN, wait_exit

FREQ = 999
KIND = "flame-graph"
TEMPLATE_VERSION = "4.1.3"
TEMPLATE = os.path.join("node_modules", "d3-flame-graph", "dist", "templates", "d3-flamegraph-base.html")
PERF_SCRIPT = "/usr/lib/perf-core/scripts/python/flamegraph.py"
TIMEOUT_S = 120.0
# The PNG: the chart drawn WIDTH_PX wide at twice the pixels, its labels LABEL_PX high (so
# the book's 736 px column shows them at the body's size).
WIDTH_PX = 736
SCALE = 2
LABEL_PX = 16


class NotMeasured(RuntimeError):
    """perf, its flame graph script or npm is missing: nothing is written."""


class FlameError(RuntimeError):
    pass


@dataclass(frozen=True)
class Flame:
    chapter: str
    name: str
    title: str
    peer_argv: tuple[str, ...] = ()   # a command under BUILD/bin, run under perf to its end
    spec: str = ""                    # or a spec's arm and row, served under load
    arm: str = ""
    row: str = ""
    window_s: float = 0.0


FLAMES = (
    Flame("04-turn-shape", "flame-cancelled-timer", "ourloop: schedule and cancel a timer",
          peer_argv=("loop-peer-ourloop", "--only", "cancelled_timer", "--ops", "5000000", "--rounds", "3")),
    Flame("04-turn-shape", "flame-executor-round-trip", "ourloop: run_in_executor round trips",
          peer_argv=("loop-peer-ourloop", "--only", "executor_round_trip", "--ops", "200000", "--rounds", "3")),
    Flame("06-full-system", "flame-handoff-price", "stage 06, one worker handing hello to one pool thread, c256",
          spec=os.path.join("benchmarks", "specs", "06-handoff-price.toml"), arm="pool-1", row="c256",
          window_s=3.0),
)


def missing(build_dir: str) -> str | None:
    if shutil.which("perf") is None:
        return "perf not found on PATH (Debian: linux-perf)"
    if not os.path.isfile(PERF_SCRIPT):
        return f"{PERF_SCRIPT} missing (Debian: linux-perf)"
    if shutil.which("npm") is None and not os.path.isfile(os.path.join(build_dir, "npm", TEMPLATE)):
        return "npm not found (the d3-flame-graph template comes from the npm registry)"
    return None


def template(build_dir: str) -> str:
    """npm's d3-flame-graph template, installed into BUILD/npm on first use."""
    prefix = os.path.join(build_dir, "npm")
    path = os.path.join(prefix, TEMPLATE)
    if not os.path.isfile(path):
        os.makedirs(prefix, exist_ok=True)
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", prefix,
                            f"d3-flame-graph@{TEMPLATE_VERSION}"], capture_output=True, text=True,
                           timeout=TIMEOUT_S)
        if r.returncode != 0 or not os.path.isfile(path):
            raise NotMeasured(f"npm install d3-flame-graph@{TEMPLATE_VERSION} failed: {r.stderr.strip()[-400:]}")
    return path


def _run(argv: list[str], cwd: str, what: str) -> str:
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        raise FlameError(f"{what} exited with {r.returncode}: {r.stderr.strip()[-600:]}")
    return r.stdout


def record_argv(data: str) -> list[str]:
    return ["perf", "record", "-q", "-F", str(FREQ), "--call-graph", "dwarf,16384", "-o", data]


def record(flame: Flame, build_dir: str, repo_root: str, workdir: str) -> tuple[str, list[str]]:
    """perf.data for one flame (in workdir) and the command that sampled."""
    data = "perf.data"   # in workdir, where perf runs
    bin_dir = os.path.join(build_dir, "bin")
    if flame.peer_argv:
        argv = record_argv(data) + ["--", os.path.join(bin_dir, flame.peer_argv[0]), *flame.peer_argv[1:]]
        _run(argv, workdir, "perf record")
        return data, argv
    spec = specfile.load(os.path.join(repo_root, flame.spec))
    arm = next(a for a in spec.arms if a.name == flame.arm)
    row = next(r for r in spec.rows if r.name == flame.row)
    server = servers.Server(arm, build_dir, repo_root, os.path.join(workdir, "server"))
    load = perf = None
    try:
        server.start()
        url = server.url(row.path)
        clients.run(row, url, 0.5, bin_dir, server.workdir, "warmup")
        load = CHILDREN.spawn(clients.loadgen_argv(bin_dir, url, row, flame.window_s + 2.0,
                                                   os.path.join(server.workdir, "load.json")),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        argv = record_argv(data) + ["-p", str(server.proc.pid), "--", "sleep", str(flame.window_s)]
        with open(os.path.join(workdir, "perf.log"), "wb") as log:
            perf = CHILDREN.spawn(argv, cwd=workdir, stdout=log, stderr=log)
        got = wait_exit(perf, flame.window_s + TIMEOUT_S)
        if got is None or got[0] != 0:
            raise FlameError(f"perf record exited with {got[0] if got else 'a timeout'}: "
                             f"{servers._tail(os.path.join(workdir, 'perf.log'), 600).strip()}")
        return data, record_argv(data) + ["-p", "<the server's pid>", "--", "sleep", str(flame.window_s)]
    finally:
        for p in (perf, load):
            if p is not None:
                servers.stop(p)
        if server.proc is not None:
            server.stop()
        server.cleanup()


def stacks(data: str, workdir: str) -> dict:
    """The tree of stacks perf's flame graph script folds from perf.data."""
    out = os.path.join(workdir, "stacks.json")
    _run(["perf", "script", "-i", os.path.join(workdir, data), "-s", PERF_SCRIPT, "--", "--format", "json", "-o", out],
         workdir, "perf script (flamegraph.py)")
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def samples(node: dict) -> int:
    """The samples in a tree (perf's script counts each at its leaf: a node's own value)."""
    return node.get("v", 0) + sum(samples(c) for c in node.get("c", []))


def render(doc: dict, base: str, template_path: str) -> list[str]:
    """flame-NAME.html (the template filled as perf's script fills it) and flame-NAME.png
    (the chart drawn in headless Chromium)."""
    with open(template_path, encoding="utf-8") as f:
        page = f.read()
    options = {"colorscheme": "blue-green", "context": f"{doc['title']} ({report.machine_line(doc['machine'])})"}
    page = (page.replace("/** @options_json **/", json.dumps(options))
            .replace("/** @flamegraph_json **/", json.dumps(doc["stacks"])))
    with open(base + ".html", "w", encoding="utf-8") as f:
        f.write(page)
    draw_png(base + ".html", base + ".png")
    return [base + ".html", base + ".png"]


# The template's own chart settings, and the book's: the column's width and labels at the
# body's size (the page itself keeps the template's).
CHART_CALL = ".width(this.chart.clientWidth).cellHeight(16)"
BOOK_CALL = f".width({WIDTH_PX}).cellHeight({LABEL_PX + 8})"
BOOK_STYLE = f"<style>.d3-flame-graph-label {{ font-size: {LABEL_PX}px !important; }}</style></head>"


def draw_png(html: str, png: str) -> None:
    from PIL import Image, PngImagePlugin
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    with open(html, encoding="utf-8") as f:
        page = f.read()
    if page.count(CHART_CALL) != 1:
        raise FlameError(f"the template's chart call {CHART_CALL!r} is not in {html} once "
                         f"(d3-flame-graph other than {TEMPLATE_VERSION}?)")
    page = page.replace(CHART_CALL, BOOK_CALL).replace("</head>", BOOK_STYLE, 1)
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              "--allow-file-access-from-files", f"--force-device-scale-factor={SCALE}",
              f"--window-size={WIDTH_PX + 60},1400"):
        opts.add_argument(a)
    with tempfile.TemporaryDirectory() as tmp:
        book_page = os.path.join(tmp, "book.html")
        with open(book_page, "w", encoding="utf-8") as f:
            f.write(page)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                                  options=opts)
        try:
            driver.set_page_load_timeout(TIMEOUT_S)
            driver.get("file://" + book_page)
            time.sleep(1.5)   # d3's entering transition
            shot = driver.find_element(By.ID, "chart").screenshot_as_png
        finally:
            driver.quit()
        raw = os.path.join(tmp, "chart.png")
        with open(raw, "wb") as f:
            f.write(shot)
        info = PngImagePlugin.PngInfo()
        info.add_text(report.TEXT_KEY, f"{LABEL_PX * SCALE:.2f}")
        with Image.open(raw) as im:
            im.save(png, pnginfo=info)


def run_flames(*, build_dir: str, out_dir: str, repo_root: str, mode: str, argv: list[str],
               reproduce_argv: list[str]) -> list[str]:
    """Record and render every flame graph; returns the files written."""
    why = missing(build_dir)
    if why:
        raise NotMeasured(why)
    build_dir = os.path.abspath(build_dir)
    template_path = template(build_dir)
    written = []
    for flame in FLAMES:
        workdir = tempfile.mkdtemp(prefix=f"{flame.name}-", dir=build_dir)
        try:
            data, perf_argv = record(flame, build_dir, repo_root, workdir)
            tree = stacks(data, workdir)
        finally:
            CHILDREN.kill_all()
            shutil.rmtree(workdir, ignore_errors=True)
        doc = report.tool_record(mode=mode, settings={"frequency_hz": FREQ, **dataclasses.asdict(flame)},
                                 argv=argv, reproduce_argv=reproduce_argv, repo_root=repo_root,
                                 build_dir=build_dir, out_dir=out_dir, tool_key="perf", tool_argv=perf_argv)
        doc.update(kind=KIND, title=flame.title, template=f"d3-flame-graph@{TEMPLATE_VERSION}",
                   stacks=tree)
        base = report.results_base(out_dir, flame.chapter, flame.name)
        report.write_json(base + ".json", doc)
        written += [base + ".json", *render(doc, base, template_path)]
        print(f"  {flame.chapter}/{flame.name}: {samples(tree)} samples", file=sys.stderr)
    return written


def replot(json_path: str, build_dir: str) -> list[str]:
    """The HTML and PNG of one flame graph again, from its record."""
    with open(json_path, encoding="utf-8") as f:
        doc = json.load(f)
    return render(doc, json_path[:-len(".json")], template(build_dir))
