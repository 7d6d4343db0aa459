#!/usr/bin/python3
"""book/tools/check_widths: every book page read in a real browser at a reader's width (book tooling).

Role: the book build's last step. It loads every page of the built HTML in Debian's headless
Chromium under its WebDriver (chromium-driver, driven through python3-selenium), runs the
project's own measuring script in each page (MEASURE_JS) and fails when a page cannot be
read. Both widths, 1280 px (a laptop) and 390 px (a phone), are judged by the same rules:

- nothing makes the page itself scroll sideways;
- no table, figure, diagram or code block is wider than the text column, whether it sticks
  out of the column (clipped by the page) or hides behind a horizontal scroll of its own
  box; on a phone alone a table, figure or diagram may scroll inside its own box when the
  box shows it (a shadow or gradient at the edge it hides: scroll bars are hidden on phones)
  and a table's key columns (its first, and any headed "verdict") stay in sight: first,
  sticky, or scrolled to beside a sticky first column that keeps the row's name in sight;
- no number is cut across two lines;
- no figure's smallest text is rendered smaller than the body text beside it. For a PNG
  plot the harness records its smallest text in pixels of the image (the
  ``handoff:min_text_px`` text chunk, benchmarks/harness/results/report.py, read here with Pillow);
  its size on the page is that times the scale the browser drew the image at. For an SVG
  diagram (graphviz) it is the smallest ``font-size`` in the file times the scale of its
  viewBox in the box the browser gave it.

    check_widths.py HTML_DIR [--chromium PATH] [--chromedriver PATH] [--timeout-s S]
                             [--page GLOB] [--screenshots DIR]
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
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.parse

WIDE, PHONE = 1280, 390
HEIGHT = 900
# Layout is measured in CSS pixels, which are fractional; half a pixel is rounding.
SLACK_PX = 0.5
# The PNG text chunk in which the harness records the smallest text of a plot, in pixels
# of the image (benchmarks/harness/results/report.py, TEXT_KEY).
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
      if (ox !== 'visible' && n.scrollWidth > n.clientWidth + 1) {
        // A visible sign that the box scrolls (scroll bars are hidden on phones and here):
        // a shadow or gradient the box draws at the edge that hides something.
        const cs = getComputedStyle(n);
        out.push({tag: n.tagName.toLowerCase(), cls: n.className || '', overflow: ox,
                  hidden_px: n.scrollWidth - n.clientWidth,
                  sign: cs.backgroundImage !== 'none' || cs.boxShadow !== 'none'});
      }
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
      // Its key columns, the first (what a row is) and any headed "verdict": each must be in
      // sight with the table scrolled to its start, or sticky (it stays in sight).
      const head = el.tHead ? el.tHead.rows[0] : el.rows[0];
      const box = b.scrollers.length ? (() => { let n = el.parentElement;
        while (n && !(getComputedStyle(n).overflowX !== 'visible' && n.scrollWidth > n.clientWidth + 1)) n = n.parentElement;
        return n; })() : null;
      b.keys = [];
      if (head) Array.from(head.cells).forEach((c, i) => {
        const name = c.textContent.replace('¶', '').trim();
        if (i !== 0 && !/^verdict/i.test(name)) return;
        const cells = Array.from(el.rows).map(r => r.cells[i]).filter(x => x);
        const sticky = cells.every(x => getComputedStyle(x).position === 'sticky');
        let shown = true;
        if (box) {
          const sl = box.scrollLeft; box.scrollLeft = 0;
          const br = box.getBoundingClientRect(), cr = c.getBoundingClientRect();
          shown = cr.left >= br.left - 0.5 && cr.right <= br.right + 0.5;
          box.scrollLeft = sl;
        }
        b.keys.push({name: name.slice(0, 40) || `column ${i + 1}`, index: i, sticky, shown});
      });
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
  // A number cut mid-number: its characters laid out on more than one line.
  const cut = [];
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {acceptNode: t =>
    t.parentElement.closest('pre, code, script, style, .highlight') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const number = /(?:(?<![\w.])[-−])?\d+(?:[.,]\d+)*(?:[\u00a0\u2009\u202f]\d{3})*(?:[.,]\d+)?[×%]?/g;
  for (let t = walker.nextNode(); t && cut.length < 20; t = walker.nextNode()) {
    for (const m of t.data.matchAll(number)) {
      if (m[0].length < 2) continue;
      const r = document.createRange();
      r.setStart(t, m.index); r.setEnd(t, m.index + m[0].length);
      const tops = new Set(Array.from(r.getClientRects()).filter(q => q.width > 0).map(q => Math.round(q.bottom)));
      if (tops.size > 1) cut.push({text: m[0], ...where(t.parentElement)});
    }
  }
  return {col, body_px, viewport: window.innerWidth, cut_numbers: cut,
          page_scroll_width: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
          page_client_width: document.documentElement.clientWidth, blocks};
})()
"""


class BrowserError(RuntimeError):
    pass


class Browser:
    """Debian's headless Chromium under its WebDriver (chromium-driver), through Selenium
    (python3-selenium). The whole session is bounded: a watchdog kills chromedriver's
    process group (the browser with it) at the deadline, and the call then in flight fails."""

    def __init__(self, exe: str, driver: str, deadline: float):
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
        self.deadline = deadline
        self.timed_out = False
        opts = webdriver.ChromeOptions()
        opts.binary_location = exe
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                  "--allow-file-access-from-files", "--font-render-hinting=none",
                  f"--window-size={WIDE},{HEIGHT}"):
            opts.add_argument(a)
        # Its own process group, so that the watchdog's kill takes the browser too.
        self.service = Service(executable_path=driver, popen_kw={"start_new_session": True})
        self.watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), self._expire)
        self.watchdog.daemon = True
        self.watchdog.start()
        try:
            self.driver = webdriver.Chrome(service=self.service, options=opts)
        except (WebDriverException, OSError) as e:
            self.close()
            raise BrowserError(self._why(f"cannot start {driver} with {exe}: {e}")) from e

    def _expire(self) -> None:
        self.timed_out = True
        self._kill()

    def _kill(self) -> None:
        proc = getattr(self.service, "process", None)
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def _why(self, said: str) -> str:
        return "timed out (the run's bound, --timeout-s)" if self.timed_out else said.strip().splitlines()[0]

    def _bounded(self, what: str, call):
        from selenium.common.exceptions import WebDriverException
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise BrowserError(f"timed out before {what}")
        try:
            self.driver.set_page_load_timeout(left)
            self.driver.set_script_timeout(left)
            return call()
        except (WebDriverException, OSError) as e:   # a killed driver: a refused connection
            raise BrowserError(self._why(f"{what}: {e}")) from e

    def load(self, url: str, width: int) -> None:
        def go():
            self.driver.set_window_size(width, HEIGHT)
            self.driver.get(url)
        self._bounded(f"loading {url}", go)

    def measure(self) -> dict:
        script = ("const done = arguments[arguments.length - 1];\n"
                  f"{MEASURE_JS.strip()}.then(done, e => done({{error: String(e && e.stack || e)}}));")
        m = self._bounded("measuring", lambda: self.driver.execute_async_script(script))
        if not isinstance(m, dict) or "error" in m:
            raise BrowserError(f"page script failed: {m.get('error') if isinstance(m, dict) else m}")
        return m

    def screenshot(self, path: str, width: int) -> None:
        def shoot():
            h = self.driver.execute_script("return document.documentElement.scrollHeight")
            self.driver.set_window_size(width, int(h))
            self.driver.save_screenshot(path)
        self._bounded("taking a screenshot", shoot)

    def close(self) -> None:
        self.watchdog.cancel()
        driver = getattr(self, "driver", None)
        if driver is not None and not self.timed_out:
            try:
                driver.quit()
            except Exception:  # noqa: BLE001 -- the browser may be gone already; the kill follows
                pass
        self._kill()


# --- what a figure's text measures ----------------------------------------------------------

def png_text(path: str) -> dict[str, str]:
    """The text chunks (tEXt, zTXt, iTXt) of a PNG file, by keyword, read with Pillow."""
    from PIL import Image, UnidentifiedImageError
    try:
        with Image.open(path) as im:
            if im.format != "PNG":
                raise ValueError(f"{path} is not a PNG file")
            im.load()   # the text chunks after the image data are read with it
            return dict(getattr(im, "text", {}))
    except UnidentifiedImageError as e:
        raise ValueError(f"{path} is not a PNG file") from e


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
    """Findings for one page measured at one width (an empty list: it reads). Both widths
    are judged alike, but for one thing: on a phone a table, figure or diagram may scroll in
    a box of its own when the box shows that it scrolls, and a table's key columns are in
    sight (first, or sticky)."""
    out = []
    col_l, col_r = m["col"]["left"], m["col"]["right"]
    col_w = col_r - col_l
    if m["page_scroll_width"] > m["page_client_width"] + 1:
        out.append(f"{page} @{width}px: the page scrolls sideways by "
                   f"{m['page_scroll_width'] - m['page_client_width']} px")
    for n in m.get("cut_numbers", []):
        where = f" under “{n['heading']}”" if n.get("heading") else ""
        out.append(f"{page} @{width}px: the number {n['text']} is cut across two lines{where}")
    for b in m["blocks"]:
        # An element inside a figure or table is judged through its container.
        may_scroll = width < WIDE and b["kind"] in ("table", "figure", "diagram")
        sticks = max(b["right"] - col_r, col_l - b["left"])
        # Past the column with no box of its own that scrolls: the page clips it (or scrolls).
        if sticks > SLACK_PX and not b["scrollers"]:
            out.append(f"{page} @{width}px: {describe(b)} is {b['width']:.0f} px wide, "
                       f"{sticks:.0f} px past the {col_w:.0f} px column (clipped)")
        for s in b["scrollers"]:
            box = f"{s['tag']}.{s['cls'].split()[0] if s['cls'] else ''}"
            if may_scroll and s["tag"] not in ("html", "body"):
                if not s.get("sign"):
                    out.append(f"{page} @{width}px: {describe(b)} hides {s['hidden_px']} px behind "
                               f"a horizontal scroll of its {box} box with no visible sign "
                               f"(no shadow or gradient at the hidden edge)")
                continue
            out.append(f"{page} @{width}px: {describe(b)} is {b['width']:.0f} px wide and hides "
                       f"{s['hidden_px']} px behind a horizontal scroll of its {box} box "
                       f"(overflow-x: {s['overflow']}; the column is {col_w:.0f} px)")
        keys = b.get("keys", [])
        # A verdict scrolled to still reads with its row when the row's name stays in sight.
        row_name_stays = bool(keys) and keys[0]["index"] == 0 and keys[0]["sticky"]
        for k in keys:
            if not (k["shown"] or k["sticky"] or (row_name_stays and k["index"] != 0)):
                out.append(f"{page} @{width}px: {describe(b)}: its key column “{k['name']}” is "
                           f"out of sight behind the scroll, and neither it nor the first column "
                           f"is sticky")
        if b["tag"] in ("img", "object"):
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
          shots: str | None = None, widths=(WIDE, PHONE), driver: str | None = None) -> tuple[list[str], int]:
    browser = Browser(exe, driver or default_driver(), time.monotonic() + timeout_s)
    findings: list[str] = []
    todo = pages(html_dir, pattern)
    current = "(starting the browser)"
    try:
        for p in todo:
            rel = p.relative_to(html_dir).as_posix()
            for width in widths:
                current = f"{rel} at {width} px"
                browser.load(p.resolve().as_uri(), width)
                m = browser.measure()
                findings += judge(rel, width, m)
                if shots:
                    os.makedirs(shots, exist_ok=True)
                    stem = os.path.join(shots, rel.replace("/", "_")[:-5] + f"-{width}")
                    pathlib.Path(stem + ".json").write_text(json.dumps(m, indent=1), encoding="utf-8")
                    browser.screenshot(stem + ".png", width)
    except BrowserError as e:
        raise BrowserError(f"{current}: {e}") from e
    finally:
        browser.close()
    return findings, len(todo)


def default_driver() -> str:
    return shutil.which("chromedriver") or "/usr/bin/chromedriver"


# --- self-test: the verdicts on measured fixtures, without a browser --------------------------

def self_test() -> int:
    fails = []

    def expect(name, cond):
        if not cond:
            fails.append(name)

    base = {"col": {"left": 100.0, "right": 836.0}, "body_px": 16.0, "viewport": 1280,
            "page_scroll_width": 1280, "page_client_width": 1280, "blocks": []}
    scroll = {"tag": "div", "cls": "table-wrapper", "overflow": "auto", "hidden_px": 169, "sign": True}
    table = {"kind": "table", "tag": "table", "cls": "", "left": 100.0, "right": 1005.0,
             "width": 905.0, "height": 100, "heading": "Churn", "caption": "churn",
             "scrollers": [scroll], "keys": [{"name": "row", "index": 0, "sticky": False, "shown": True}]}
    fits = dict(table, right=836.0, width=736.0, scrollers=[])
    expect("a fitting table passes", judge("p", WIDE, dict(base, blocks=[fits])) == [])
    f = judge("p", WIDE, dict(base, blocks=[table]))
    expect("a table behind a scroll at 1280 fails, naming the pixels", len(f) == 1 and "169 px" in f[0])
    f = judge("p", WIDE, dict(base, blocks=[dict(table, scrollers=[])]))
    expect("a table past the column with no scroll box is clipped", len(f) == 1 and "clipped" in f[0])
    expect("the same table may scroll in its box at 390, with a sign and its key in sight",
           judge("p", PHONE, dict(base, blocks=[table])) == [])
    f = judge("p", PHONE, dict(base, blocks=[dict(table, scrollers=[dict(scroll, sign=False)])]))
    expect("a table scrolling at 390 with no visible sign fails", len(f) == 1 and "no visible sign" in f[0])
    hidden = dict(table, keys=table["keys"] + [{"name": "verdict", "index": 5, "sticky": False, "shown": False}])
    f = judge("p", PHONE, dict(base, blocks=[hidden]))
    expect("a verdict column out of sight at 390 fails", len(f) == 1 and "“verdict”" in f[0])
    hidden["keys"][1]["sticky"] = True
    expect("a sticky verdict column passes", judge("p", PHONE, dict(base, blocks=[hidden])) == [])
    hidden["keys"][1]["sticky"], hidden["keys"][0]["sticky"] = False, True
    expect("a verdict beyond the scroll passes beside a sticky first column",
           judge("p", PHONE, dict(base, blocks=[hidden])) == [])
    expect("the page scrolling sideways at 390 fails",
           len(judge("p", PHONE, dict(base, page_scroll_width=520, page_client_width=390))) == 1)
    code = dict(table, kind="code block", tag="pre", keys=[], right=836.0, scrollers=[
        {"tag": "pre", "cls": "", "overflow": "auto", "hidden_px": 40, "sign": True}])
    expect("a code block behind a scroll fails at 390 too", len(judge("p", PHONE, dict(base, blocks=[code]))) == 1)
    f = judge("p", PHONE, dict(base, cut_numbers=[{"text": "5369", "heading": "h", "caption": ""}]))
    expect("a number cut across two lines fails", len(f) == 1 and "5369" in f[0])

    svg = ('<svg width="620pt" height="100pt" viewBox="0.00 0.00 620.00 100.00">'
           '<text font-size="14.00">a</text><text font-size="10.00">b</text></svg>')
    mf, vbw, vbh, w, h = svg_text_scale(svg)
    expect("svg: smallest font and intrinsic px", (mf, vbw, round(w, 2)) == (10.0, 620.0, 826.67))
    expect("svg: scale in a narrower box", abs(rendered_svg_text_px(mf, vbw, vbh, 310, 50) - 5.0) < 1e-9)

    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "good.png")
        write_png(good, 1, {PNG_TEXT_KEY: "33.3"})
        bare = os.path.join(tmp, "bare.png")
        write_png(bare, 1, {})
        img = {"kind": "figure", "tag": "img", "cls": "", "left": 100.0, "right": 836.0, "width": 736.0,
               "height": 300, "scrollers": [], "heading": "h", "caption": "c",
               "natural_width": 1472, "box_width": 736, "box_height": 300}
        ok = dict(img, src=pathlib.Path(good).as_uri())
        expect("png: recorded text × scale (33.3 × 0.5 = 16.65 px) reads",
               judge("p", WIDE, dict(base, blocks=[ok])) == [])
        small = dict(ok, box_width=600, right=700.0, width=600.0)
        f = judge("p", WIDE, dict(base, blocks=[small]))
        expect("png: the same plot drawn at 600 px is too small", len(f) == 1 and "13.6 px" in f[0])
        phone = dict(ok, box_width=343, right=443.0, width=343.0)
        f = judge("p", PHONE, dict(base, blocks=[phone]))
        expect("png: the same plot shrunk to a phone's column is too small", len(f) == 1 and "7.8 px" in f[0])
        f = judge("p", WIDE, dict(base, blocks=[dict(img, src=pathlib.Path(bare).as_uri())]))
        expect("png: a plot that records no text size fails", len(f) == 1 and PNG_TEXT_KEY in f[0])
    cases = 18
    for name in fails:
        print(f"check_widths self-test FAILED: {name}")
    print(f"check_widths self-test: {cases - len(fails)} of {cases} cases hold")
    return 1 if fails else 0


def write_png(path: str, width: int, text: dict[str, str]) -> None:
    """A blank PNG `width` pixels wide carrying these text chunks (as the harness's plots
    carry their smallest text size), written with Pillow; for the tests."""
    from PIL import Image, PngImagePlugin
    info = PngImagePlugin.PngInfo()
    for k, v in text.items():
        info.add_text(k, v)
    Image.new("RGBA", (width, 4), (255, 255, 255, 255)).save(path, pnginfo=info)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("html_dir", nargs="?")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--chromedriver", default=default_driver(),
                    help="Chromium's WebDriver (Debian: chromium-driver)")
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
        findings, n = check(html_dir, args.chromium, args.timeout_s, args.page, args.screenshots,
                            driver=args.chromedriver)
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
