#!/usr/bin/python3
"""book/tools/test_check_widths: the width check against real pages in Chromium (book tooling).

Writes a few pages shaped like the book's (furo's ``article role=main``, a 736 px column,
16 px body text) into a temporary directory and runs book/tools/check_widths.py over them.
Each page breaks one rule, and the check must name it, at the width where it breaks; a page
that keeps every rule must pass at both widths. So the check is not vacuous: deleting a
measurement from it fails this test.

    test_check_widths.py [--chromium PATH] [--chromedriver PATH]
"""
import argparse
import pathlib
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_widths as cw  # noqa: E402

PAGE = """<!doctype html><html><head><meta name="viewport" content="width=device-width">
<style>
body {{ margin: 0; font: 16px sans-serif; }}
article {{ max-width: 736px; margin: 0 auto; padding: 0 12px; box-sizing: content-box; }}
.table-wrapper {{ overflow-x: auto; }}
table {{ border-collapse: collapse; }} td {{ padding: 4px 8px; }}
img, object {{ max-width: 100%; height: auto; }} figure {{ margin: 0; }}
div.highlight pre {{ white-space: pre; overflow: auto; }}
@media (max-width: 600px) {{
  .table-wrapper.sign, figure {{ overflow-x: auto; background: linear-gradient(to left, #888, transparent) right / 1em 100% no-repeat; }}
  figure img {{ width: 736px; max-width: none; }}
  .sticky {{ position: sticky; right: 0; background: #fff; }}
}}
</style></head><body><article role="main"><section><h1>{title}</h1>
<p>Body text of the page, at the body's size.</p>
{body}
</section></article></body></html>
"""
FITS = """<div class="table-wrapper"><table><caption>fits</caption>
<tr><td>c16</td><td>ring</td><td>5691 (5369–6417)</td></tr></table></div>
<div class="highlight"><pre>short line</pre></div>
<figure><img src="plot-good.png" alt="good plot"></figure>"""
WIDE_TABLE = """<div class="table-wrapper"><table style="min-width: 905px"><caption>wide</caption>
<tr><td>c16</td><td>ring</td><td>5691 (5369–6417)</td></tr></table></div>"""
CODE = """<div class="highlight"><pre>""" + "x" * 200 + """</pre></div>"""
SMALL_PLOT = """<figure><img src="plot-small.png" alt="small plot"></figure>"""
SMALL_SVG = """<div class="graphviz"><object data="wide.svg" type="image/svg+xml"></object></div>"""
# On a phone: a table that scrolls with no sign; one whose verdict is beyond the scroll;
# the same with the verdict sticky and a sign (it reads); a number cut across two lines.
PHONE_ROWS = "".join(f"<tr><td>c{n}</td><td>ring-{n}</td><td>5691 (5369–6417)</td><td>5691 (5369–6417)</td>"
                     "<td class='sticky'>ahead</td></tr>" for n in (16, 256))
NO_SIGN = ("""<div class="table-wrapper"><table style="min-width: 600px"><caption>no sign</caption><tr><th>row</th><th>arm</th>"""
           """<th>rate</th><th>cpu</th><th class='sticky'>verdict</th></tr>""" + PHONE_ROWS + "</table></div>")
VERDICT_HIDDEN = NO_SIGN.replace('table-wrapper"', 'table-wrapper sign"').replace("class='sticky'", "")
VERDICT_STICKY = NO_SIGN.replace('table-wrapper"', 'table-wrapper sign"')
CUT_NUMBER = """<p style="width: 4em; word-break: break-all">a figure of 123.4567890 µs in a narrow box</p>"""
SIDEWAYS = """<div style="width: 600px; height: 20px; background: #eee"></div>"""
WIDE_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="1100pt" height="100pt" '
            'viewBox="0.00 0.00 1100.00 100.00"><text x="10" y="50" font-size="12.00">a wide diagram</text></svg>')

# (page, what it holds, the findings wanted: (width, words every such line holds))
CASES = [
    ("fits.html", FITS, []),
    ("wide-table.html", WIDE_TABLE, [(1280, "behind a horizontal scroll"), (390, "with no visible sign")]),
    ("code.html", CODE, [(1280, "code block"), (390, "code block")]),
    ("small-plot.html", SMALL_PLOT, [(1280, "smallest text is drawn at 10.0 px"),
                                     (390, "smallest text is drawn at 10.0 px")]),
    ("small-svg.html", SMALL_SVG, [(1280, "smallest text is drawn at"), (390, "smallest text is drawn at")]),
    ("sideways.html", SIDEWAYS, [(390, "the page scrolls sideways")]),
    ("no-sign.html", NO_SIGN, [(390, "with no visible sign")]),
    ("verdict-hidden.html", VERDICT_HIDDEN, [(390, "key column “verdict” is out of sight")]),
    ("verdict-sticky.html", VERDICT_STICKY, []),
    ("cut-number.html", CUT_NUMBER, [(1280, "is cut across two lines"), (390, "is cut across two lines")]),
]


def png(path: pathlib.Path, width: int, text_px: float) -> None:
    """A blank PNG `width` pixels wide that records its smallest text as the harness does."""
    cw.write_png(str(path), width, {cw.PNG_TEXT_KEY: f"{text_px:.2f}"})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--chromedriver", default=cw.default_driver())
    args = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        png(root / "plot-good.png", 1472, 33.3)    # shown at 736 px: 16.7 px text
        png(root / "plot-small.png", 1472, 20.0)   # shown at 736 px: 10 px text
        (root / "wide.svg").write_text(WIDE_SVG, encoding="utf-8")
        for name, body, _ in CASES:
            (root / name).write_text(PAGE.format(title=name, body=body), encoding="utf-8")
        findings, n = cw.check(root, args.chromium, timeout_s=90, driver=args.chromedriver)
        if n != len(CASES):
            failures.append(f"read {n} pages, wanted {len(CASES)}")
        for name, _, wanted in CASES:
            got = [f for f in findings if f.startswith(name + " ")]
            for width, words in wanted:
                if not any(f"@{width}px" in f and words in f for f in got):
                    failures.append(f"{name}: no finding at {width} px with {words!r}; got {got}")
            extra = [f for f in got if not any(f"@{w}px" in f and words in f for w, words in wanted)]
            if extra:
                failures.append(f"{name}: unexpected findings {extra}")
    for f in failures:
        print(f"test_check_widths FAILED: {f}")
    print(f"test_check_widths: {len(CASES)} pages, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
