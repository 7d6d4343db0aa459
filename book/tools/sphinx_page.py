"""book/tools/sphinx_page: build one throwaway page with Sphinx -W, for the book's extension tests (book tooling).

Role: the one home of the tests' mini-build. A test writes its conf.py and results into a
temporary ROOT; build_page() writes the page, runs Sphinx on it with HANDOFF_RESULTS_DIR
pointing at ROOT/results (or another folder under ROOT), and returns the exit status, stderr and the rendered HTML ("" when
nothing was written), so that each test only says what the page holds and what it expects.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys


def build_page(root: pathlib.Path, page: str, results: str = "results") -> tuple[int, str, str]:
    """Build ROOT/index.md with the results folder ROOT/RESULTS."""
    (root / "index.md").write_text(page, encoding="utf-8")
    out = root / "out"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-E", "-q", "-b", "html", str(root), str(out)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HANDOFF_RESULTS_DIR": str(root / results)})
    html = (out / "index.html").read_text(encoding="utf-8") if (out / "index.html").exists() else ""
    return proc.returncode, proc.stderr, html
