#!/usr/bin/python3
"""book/tools/check_widths: every book page read in a real browser at a reader's width (book tooling).

Role: the book build's last step. It loads every page of the built HTML in Debian's headless
Chromium, driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: no port,
no websocket, nothing beyond the standard library), and fails when a page cannot be read:

- at 1280 px (a laptop): a table, figure, diagram or code block wider than the text column,
  whether it sticks out of the column (clipped by the page) or hides behind a horizontal
  scroll bar of its own box; and a figure whose smallest text is rendered smaller than the
  body text beside it. For a PNG plot the harness records its smallest text in pixels of the
  image (the ``handoff:min_text_px`` text chunk, benchmarks/harness/report.py); its size on
  the page is that times the scale the browser drew the image at. For an SVG diagram
  (graphviz) it is the smallest ``font-size`` in the file times the scale of its viewBox in
  the box the browser gave it.
- at 390 px (a phone): a wide table may scroll inside its own box, but nothing may make the
  page itself scroll sideways, and nothing else (code, figures, diagrams) may be wider than
  the column.

    check_widths.py HTML_DIR [--chromium PATH] [--timeout-s S] [--page GLOB]
                             [--screenshots DIR]
    check_widths.py --self-test

The whole run is bounded (--timeout-s, default 240): a browser that hangs is killed and the
check fails, naming the page it was on. Exit status 0 when every page reads at both widths,
1 when some page does not (one line per finding), 2 when the browser could not be driven.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import pathlib
import queue
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zlib

WIDE, PHONE = 1280, 390
HEIGHT = 900
# Layout is measured in CSS pixels, which are fractional; half a pixel is rounding.
SLACK_PX = 0.5
# The PNG text chunk in which the harness records the smallest text of a plot, in pixels
# of the image (benchmarks/harness/report.py, TEXT_KEY).
PNG_TEXT_KEY = "handoff:min_text_px"

# What the page reports, measured in the browser: the text column (furo's article), the
# body text size, the page's scroll width and every block that can be too wide.
MEASURE_JS = r"""
(async () => {
  await document.fonts.ready;
  // A collapsed answer (book/_ext/answer_block.py) is measured open: what a reader opens must fit too.
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
  const main = document.querySelector('article[role=main]') || document.body;
  const ms = getComputedStyle(main);
  const mr = main.getBoundingClientRect();
  const col = {left: mr.left + parseFloat(ms.paddingLeft), right: mr.right - parseFloat(ms.paddingRight)};
  const para = Array.from(main.querySelectorAll('p')).find(p => !p.closest('table, figure, .admonition, .highlight, caption, .caption, .results-provenance'));
  const body_px = parseFloat(getComputedStyle(para || main).fontSize);
  const where = el => {
    let h = el, heading = '';
    for (let n = el; n && n !== main && !heading; n = n.parentElement) {
      for (let s = n.previousElementSibling; s && !heading; s = s.previousElementSibling) {
        const t = s.matches('h1,h2,h3,h4,h5,h6') ? s : s.querySelector && s.querySelector('h1,h2,h3,h4,h5,h6');
        if (t) heading = t.textContent.replace('#', '').replace('¶', '').trim();
      }
      if (n.matches('section') && !heading) { const t = n.querySelector('h1,h2,h3,h4,h5,h6'); if (t) heading = t.textContent.replace('¶', '').trim(); }
    }
    const cap = el.closest('table, figure, .literal-block-wrapper, .graphviz');
    let caption = '';
    if (cap) {
      const c = cap.querySelector('caption, figcaption, .code-block-caption');
      if (c) caption = c.textContent.replace('¶', '').trim().replace(/#$/, '').slice(0, 70);
    }
    return {heading: heading.slice(0, 70), caption};
  };
  const scrollers = el => {
    const out = [];
    for (let n = el; n && n !== document.documentElement; n = n.parentElement) {
      const ox = getComputedStyle(n).overflowX;
      if (ox !== 'visible' && n.scrollWidth > n.clientWidth + 1)
        out.push({tag: n.tagName.toLowerCase(), cls: n.className || '', overflow: ox,
                  hidden_px: n.scrollWidth - n.clientWidth});
      if (n === main) break;
    }
    return out;
  };
  const blocks = [];
  const seen = new Set();
  for (const el of main.querySelectorAll('table, div.highlight pre, img, object, svg, figure, div.graphviz')) {
    if (el.tagName === 'svg' && el.closest('object')) continue;
    if (seen.has(el)) continue;
    seen.add(el);
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const kind = el.tagName === 'TABLE' ? 'table'
      : el.tagName === 'PRE' ? 'code block'
      : (el.tagName === 'OBJECT' || el.tagName === 'svg' || el.classList.contains('graphviz')) ? 'diagram'
      : 'figure';
    const b = {kind, tag: el.tagName.toLowerCase(), cls: String(el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className || ''),
               left: r.left, right: r.right, top: r.top + window.scrollY, width: r.width, height: r.height,
               scrollers: scrollers(el), ...where(el)};
    if (el.tagName === 'TABLE') {
      // The narrowest this table can be laid out (its words unbroken): the headroom left.
      const w = el.style.width; el.style.width = 'min-content';
      b.min_width = el.getBoundingClientRect().width; el.style.width = w;
    }
    if (el.tagName === 'IMG') {
      b.src = el.currentSrc || el.src; b.natural_width = el.naturalWidth; b.natural_height = el.naturalHeight;
      b.box_width = el.clientWidth; b.box_height = el.clientHeight;
    }
    if (el.tagName === 'OBJECT') {
      b.src = new URL(el.getAttribute('data'), document.baseURI).href;
      b.box_width = el.clientWidth; b.box_height = el.clientHeight;
    }
    blocks.push(b);
  }
  return {col, body_px, viewport: window.innerWidth,
          page_scroll_width: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
          page_client_width: document.documentElement.clientWidth, blocks};
})()
"""


class BrowserError(RuntimeError):
    pass


class Chromium:
    """Headless Chromium driven over --remote-debugging-pipe: the browser reads commands
    from its fd 3 and writes replies and events to its fd 4, each a JSON text ended by NUL."""

    def __init__(self, exe: str, deadline: float):
        self.deadline = deadline
        self.profile = tempfile.mkdtemp(prefix="check-widths-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def child_fds():
            # Runs in the child before exec: put the pipe ends where Chromium looks.
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        argv = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--hide-scrollbars", "--allow-file-access-from-files",
                "--font-render-hinting=none", f"--user-data-dir={self.profile}", "about:blank"]
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, close_fds=False,
                                         preexec_fn=child_fds, start_new_session=True)
        except OSError as e:
            raise BrowserError(f"cannot start {exe}: {e}") from e
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next_id = 0
        self._replies: dict[int, dict] = {}
        self._events: "queue.Queue[dict]" = queue.Queue()
        self._cond = threading.Condition()
        self._stderr_tail: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self._stderr_tail = (self._stderr_tail + [line.decode(errors="replace").rstrip()])[-20:]

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._replies[-1] = {"error": {"message": "the browser closed its pipe"}}
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                text, buf = buf.split(b"\0", 1)
                msg = json.loads(text)
                if "id" in msg:
                    with self._cond:
                        self._replies[msg["id"]] = msg
                        self._cond.notify_all()
                else:
                    self._events.put(msg)

    def _left(self, what: str) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise BrowserError(f"timed out {what}")
        return left

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        mid = self._next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        with self._cond:
            while mid not in self._replies and -1 not in self._replies:
                self._cond.wait(min(self._left(f"waiting for {method}"), 1.0))
            reply = self._replies.pop(mid, None) or self._replies[-1]
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}; browser said: "
                               + " | ".join(self._stderr_tail[-3:]))
        return reply.get("result", {})

    def wait_event(self, method: str, session: str) -> dict:
        while True:
            try:
                ev = self._events.get(timeout=min(self._left(f"waiting for {method}"), 1.0))
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise BrowserError("the browser exited: " + " | ".join(self._stderr_tail[-3:]))
                continue
            if ev.get("method") == method and ev.get("sessionId") == session:
                return ev

    def close(self):
        try:
            os.write(self._to_browser, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


class Tab:
    def __init__(self, browser: Chromium):
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.send("Page.enable", session=self.session)

    def load(self, url: str, width: int) -> None:
        self.b.send("Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": width < 700},
                    session=self.session)
        self.b.send("Page.navigate", {"url": url}, session=self.session)
        self.b.wait_event("Page.loadEventFired", self.session)

    def evaluate(self, expression: str):
        r = self.b.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                             "returnByValue": True}, session=self.session)
        if "exceptionDetails" in r:
            raise BrowserError(f"page script failed: {r['exceptionDetails'].get('text')} "
                               f"{r['exceptionDetails'].get('exception', {}).get('description', '')}")
        return r["result"].get("value")

    def screenshot(self, path: str, width: int) -> None:
        import base64
        h = self.evaluate("document.documentElement.scrollHeight")
        self.b.send("Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": int(h), "deviceScaleFactor": 1, "mobile": width < 700},
                    session=self.session)
        data = self.b.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                           session=self.session)["data"]
        pathlib.Path(path).write_bytes(base64.b64decode(data))


# --- what a figure's text measures ----------------------------------------------------------

def png_text(path: str) -> dict[str, str]:
    """The tEXt/iTXt/zTXt chunks of a PNG file, by keyword."""
    out = {}
    with open(path, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            raise ValueError(f"{path} is not a PNG file")
        while True:
            head = f.read(8)
            if len(head) < 8:
                break
            n, kind = struct.unpack(">I4s", head)
            data = f.read(n)
            f.read(4)
            if kind == b"tEXt":
                k, _, v = data.partition(b"\0")
                out[k.decode("latin-1")] = v.decode("latin-1")
            elif kind == b"zTXt":
                k, _, v = data.partition(b"\0")
                out[k.decode("latin-1")] = zlib.decompress(v[1:]).decode("latin-1")
            elif kind == b"iTXt":
                k, _, rest = data.partition(b"\0")
                compressed, rest = rest[0], rest[2:]
                _lang, _, rest = rest.partition(b"\0")
                _tkey, _, text = rest.partition(b"\0")
                out[k.decode("utf-8")] = (zlib.decompress(text) if compressed else text).decode("utf-8")
            elif kind == b"IEND":
                break
    return out


_LENGTH = re.compile(r"^\s*([0-9.]+)\s*(pt|px|in|cm|mm)?\s*$")
_TO_PX = {None: 1.0, "px": 1.0, "pt": 96 / 72, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4}


def svg_text_scale(svg_text: str) -> tuple[float | None, float, float, float, float]:
    """(smallest font-size in user units or None when there is no text, viewBox width and
    height, intrinsic width and height in CSS px) of an SVG document."""
    m = re.search(r"<svg\b[^>]*>", svg_text, re.S)
    if not m:
        raise ValueError("no <svg> element")
    head = m.group(0)

    def attr(name):
        a = re.search(rf'\s{name}="([^"]*)"', head)
        return a.group(1) if a else None

    def length(text):
        lm = _LENGTH.match(text or "")
        return float(lm.group(1)) * _TO_PX[lm.group(2)] if lm else None

    width, height = length(attr("width")), length(attr("height"))
    vb = attr("viewBox")
    if vb:
        _, _, vbw, vbh = (float(x) for x in vb.replace(",", " ").split())
    else:
        vbw, vbh = width or 0.0, height or 0.0
    sizes = [float(s) for s in re.findall(r'<text\b[^>]*\sfont-size="([0-9.]+)', svg_text)]
    sizes += [float(s) for s in re.findall(r"font-size:\s*([0-9.]+)px", svg_text)]
    return (min(sizes) if sizes else None), vbw, vbh, width or vbw, height or vbh


def rendered_svg_text_px(min_font: float, vbw: float, vbh: float, box_w: float, box_h: float) -> float:
    """The smallest text's CSS size when an SVG of that viewBox is drawn in a box of that size
    (preserveAspectRatio's default, xMidYMid meet: the smaller of the two scales)."""
    scale = min(box_w / vbw if vbw else 1.0, box_h / vbh if vbh else 1.0)
    return min_font * scale


def local_path(url: str) -> str | None:
    u = urllib.parse.urlparse(url)
    return urllib.parse.unquote(u.path) if u.scheme == "file" else None


def figure_text_px(block: dict) -> tuple[float | None, str]:
    """The smallest text of one figure or diagram as drawn on the page, in CSS px, and how
    it was found (or why it could not be)."""
    path = local_path(block.get("src", ""))
    if not path:
        return None, "not a local file"
    if block["tag"] == "img":
        if path.endswith(".svg"):
            min_font, vbw, vbh, _, _ = svg_text_scale(pathlib.Path(path).read_text(encoding="utf-8"))
            if min_font is None:
                return None, "no text"
            return rendered_svg_text_px(min_font, vbw, vbh, block["box_width"], block["box_height"]), "svg"
        try:
            recorded = png_text(path).get(PNG_TEXT_KEY)
        except (OSError, ValueError) as e:
            return None, str(e)
        if recorded is None:
            return None, (f"the image records no {PNG_TEXT_KEY} (a plot the harness drew before it "
                          f"recorded its text size: redraw it with benchmarks/harness/bench.py replot)")
        scale = block["box_width"] / block["natural_width"] if block.get("natural_width") else 1.0
        return float(recorded) * scale, f"{float(recorded):.1f} px in the image × scale {scale:.2f}"
    if block["tag"] == "object":
        min_font, vbw, vbh, _, _ = svg_text_scale(pathlib.Path(path).read_text(encoding="utf-8"))
        if min_font is None:
            return None, "no text"
        px = rendered_svg_text_px(min_font, vbw, vbh, block["box_width"], block["box_height"])
        return px, f"font-size {min_font:g} × scale {px / min_font:.2f}"
    return None, "inline"


# --- the verdicts ---------------------------------------------------------------------------

def describe(block: dict) -> str:
    what = block["kind"]
    if block.get("caption"):
        what += f" “{block['caption']}”"
    if block.get("src"):
        what += f" ({os.path.basename(local_path(block['src']) or block['src'])})"
    if block.get("heading"):
        what += f" under “{block['heading']}”"
    return what


def judge(page: str, width: int, m: dict, text_ratio: float = 1.0) -> list[str]:
    """Findings for one page measured at one width (an empty list: it reads)."""
    out = []
    col_l, col_r = m["col"]["left"], m["col"]["right"]
    col_w = col_r - col_l
    if m["page_scroll_width"] > m["page_client_width"] + 1:
        out.append(f"{page} @{width}px: the page scrolls sideways by "
                   f"{m['page_scroll_width'] - m['page_client_width']} px")
    for b in m["blocks"]:
        # An element inside a figure or table is judged through its container.
        may_scroll = width < WIDE and b["kind"] == "table"
        sticks = max(b["right"] - col_r, col_l - b["left"])
        # Past the column with no box of its own that scrolls: the page clips it (or scrolls).
        if sticks > SLACK_PX and not b["scrollers"]:
            out.append(f"{page} @{width}px: {describe(b)} is {b['width']:.0f} px wide, "
                       f"{sticks:.0f} px past the {col_w:.0f} px column (clipped)")
        for s in b["scrollers"]:
            if may_scroll and s["tag"] != "html" and s["tag"] != "body":
                continue
            out.append(f"{page} @{width}px: {describe(b)} is {b['width']:.0f} px wide and hides "
                       f"{s['hidden_px']} px behind a horizontal scroll of its "
                       f"{s['tag']}.{s['cls'].split()[0] if s['cls'] else ''} box "
                       f"(overflow-x: {s['overflow']}; the column is {col_w:.0f} px)")
        if width == WIDE and b["tag"] in ("img", "object"):
            px, how = figure_text_px(b)
            need = m["body_px"] * text_ratio
            if px is None:
                if how != "no text":
                    out.append(f"{page} @{width}px: {describe(b)}: its text size cannot be measured: {how}")
            elif px + 0.05 < need:
                out.append(f"{page} @{width}px: {describe(b)}: its smallest text is drawn at "
                           f"{px:.1f} px ({how}), smaller than the {m['body_px']:.0f} px body text")
    return out


def pages(html_dir: pathlib.Path, pattern: str | None) -> list[pathlib.Path]:
    out = []
    for p in sorted(html_dir.rglob("*.html")):
        rel = p.relative_to(html_dir).as_posix()
        if rel.startswith(("_", "genindex", "search")) or "/_" in rel:
            continue
        if pattern and not fnmatch.fnmatch(rel, pattern):
            continue
        out.append(p)
    return out


def check(html_dir: pathlib.Path, exe: str, timeout_s: float, pattern: str | None = None,
          shots: str | None = None, widths=(WIDE, PHONE), log=sys.stdout) -> tuple[list[str], int]:
    deadline = time.monotonic() + timeout_s
    browser = Chromium(exe, deadline)
    findings: list[str] = []
    todo = pages(html_dir, pattern)
    current = "(starting the browser)"
    try:
        tab = Tab(browser)
        for p in todo:
            rel = p.relative_to(html_dir).as_posix()
            for width in widths:
                current = f"{rel} at {width} px"
                tab.load(p.resolve().as_uri(), width)
                m = tab.evaluate(MEASURE_JS)
                findings += judge(rel, width, m)
                if shots:
                    os.makedirs(shots, exist_ok=True)
                    stem = os.path.join(shots, rel.replace("/", "_")[:-5] + f"-{width}")
                    pathlib.Path(stem + ".json").write_text(json.dumps(m, indent=1), encoding="utf-8")
                    tab.screenshot(stem + ".png", width)
    except BrowserError as e:
        raise BrowserError(f"{current}: {e}") from e
    finally:
        browser.close()
    return findings, len(todo)


# --- self-test: the verdicts on measured fixtures, without a browser --------------------------

def self_test() -> int:
    fails = []

    def expect(name, cond):
        if not cond:
            fails.append(name)

    base = {"col": {"left": 100.0, "right": 836.0}, "body_px": 16.0, "viewport": 1280,
            "page_scroll_width": 1280, "page_client_width": 1280, "blocks": []}
    table = {"kind": "table", "tag": "table", "cls": "", "left": 100.0, "right": 1005.0,
             "width": 905.0, "height": 100, "heading": "Churn", "caption": "churn",
             "scrollers": [{"tag": "div", "cls": "table-wrapper", "overflow": "auto", "hidden_px": 169}]}
    fits = dict(table, right=836.0, width=736.0, scrollers=[])
    expect("a fitting table passes", judge("p", WIDE, dict(base, blocks=[fits])) == [])
    f = judge("p", WIDE, dict(base, blocks=[table]))
    expect("a table behind a scroll at 1280 fails, naming the pixels", len(f) == 1 and "169 px" in f[0])
    f = judge("p", WIDE, dict(base, blocks=[dict(table, scrollers=[])]))
    expect("a table past the column with no scroll box is clipped", len(f) == 1 and "clipped" in f[0])
    expect("the same table may scroll in its box at 390",
           judge("p", PHONE, dict(base, blocks=[table])) == [])
    expect("the page scrolling sideways at 390 fails",
           len(judge("p", PHONE, dict(base, page_scroll_width=520, page_client_width=390))) == 1)
    code = dict(table, kind="code block", tag="pre", scrollers=[
        {"tag": "pre", "cls": "", "overflow": "auto", "hidden_px": 40}], right=836.0)
    expect("a code block behind a scroll fails at 390 too", len(judge("p", PHONE, dict(base, blocks=[code]))) == 1)

    svg = ('<svg width="620pt" height="100pt" viewBox="0.00 0.00 620.00 100.00">'
           '<text font-size="14.00">a</text><text font-size="10.00">b</text></svg>')
    mf, vbw, vbh, w, h = svg_text_scale(svg)
    expect("svg: smallest font and intrinsic px", (mf, vbw, round(w, 2)) == (10.0, 620.0, 826.67))
    expect("svg: scale in a narrower box", abs(rendered_svg_text_px(mf, vbw, vbh, 310, 50) - 5.0) < 1e-9)

    with tempfile.TemporaryDirectory() as tmp:
        def png(path, key=None, value=None):
            def chunk(kind, data):
                return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
            raw = zlib.compress(b"\0\0\0\0" * 1)
            body = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))
            if key:
                body += chunk(b"tEXt", key.encode() + b"\0" + value.encode())
            body += chunk(b"IDAT", raw) + chunk(b"IEND", b"")
            pathlib.Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" + body)
        good = os.path.join(tmp, "good.png")
        png(good, PNG_TEXT_KEY, "33.3")
        bare = os.path.join(tmp, "bare.png")
        png(bare)
        img = {"kind": "figure", "tag": "img", "cls": "", "left": 100.0, "right": 836.0, "width": 736.0,
               "height": 300, "scrollers": [], "heading": "h", "caption": "c",
               "natural_width": 1472, "box_width": 736, "box_height": 300}
        ok = dict(img, src=pathlib.Path(good).as_uri())
        expect("png: recorded text × scale (33.3 × 0.5 = 16.65 px) reads",
               judge("p", WIDE, dict(base, blocks=[ok])) == [])
        small = dict(ok, box_width=600, right=700.0, width=600.0)
        f = judge("p", WIDE, dict(base, blocks=[small]))
        expect("png: the same plot drawn at 600 px is too small", len(f) == 1 and "13.6 px" in f[0])
        f = judge("p", WIDE, dict(base, blocks=[dict(img, src=pathlib.Path(bare).as_uri())]))
        expect("png: a plot that records no text size fails", len(f) == 1 and PNG_TEXT_KEY in f[0])
    for name in fails:
        print(f"check_widths self-test FAILED: {name}")
    print(f"check_widths self-test: {12 - len(fails)} of 12 cases hold")
    return 1 if fails else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("html_dir", nargs="?")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--timeout-s", type=float, default=240.0)
    ap.add_argument("--page", help="only pages whose path (relative to HTML_DIR) matches this glob")
    ap.add_argument("--screenshots", help="also save a full-page screenshot of each page at each "
                    "width here, with what was measured beside it (.json)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.html_dir:
        ap.error("HTML_DIR is required")
    html_dir = pathlib.Path(args.html_dir)
    t0 = time.monotonic()
    try:
        findings, n = check(html_dir, args.chromium, args.timeout_s, args.page, args.screenshots)
    except BrowserError as e:
        print(f"check_widths: {e}", file=sys.stderr)
        return 2
    for f in findings:
        print(f"check_widths: {f}")
    took = time.monotonic() - t0
    if findings:
        print(f"check_widths: {len(findings)} finding(s) on {n} pages at {WIDE} and {PHONE} px "
              f"({took:.0f} s): split, transpose or trim the table (results-table :columns:), "
              f"redraw the diagram, or redraw the plot (bench.py replot)", file=sys.stderr)
        return 1
    print(f"check_widths: {n} pages read at {WIDE} and {PHONE} px ({took:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
