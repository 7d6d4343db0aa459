"""Sphinx configuration of the handoff book.

The source directory is the repository root (see book/CMakeLists.txt): chapter notes and
exercise READMEs are pages where they stand, and literalinclude paths such as
/code/pool/datagram_pool.cpp are real paths. include_patterns keeps everything else out.
"""
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
sys.path.insert(0, str(ROOT / "benchmarks"))  # the harness package, whose results the book reads

project = "handoff"
author = "the handoff authors"
copyright = "2026, the handoff authors"
root_doc = "book/index"

extensions = ["myst_parser", "breathe", "sphinx.ext.graphviz", "results_cell", "figure_check", "excerpts"]
if (ROOT / "book" / "_ext" / "results_table.py").exists():
    extensions.append("results_table")
extensions.append("conformance_table")
extensions.append("trail_timeline")
extensions.append("answer_block")
extensions.append("headline_table")
extensions.append("chapter_files")
# Every figure role carries its figure as its text, {result}`12.3 <FILE: cell>` (the title form,
# written by `python3 book/tools/refresh_figures.py`), so that a raw note on a forge reads as
# prose; a role without its text fails the build.
figure_text_required = True
# The prose checked for a typed figure: the chapter notes and the headline page.
figure_check_docs = [r"chapters/[^/]+/note", r"book/headline"]

include_patterns = ["book/**", "chapters/*/note.md", "exercises/*/README.md"]
exclude_patterns = ["build/**", "book/_ext/**", "book/tools/**", "**/__pycache__"]
source_suffix = {".md": "markdown"}

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

breathe_projects = {"handoff": os.environ.get("HANDOFF_DOXYGEN_XML", str(ROOT / "build/release/book/doxygen/xml"))}
breathe_default_project = "handoff"
breathe_default_members = ("members",)

graphviz_output_format = "svg"

html_theme = "furo"
html_static_path = ["_static"]
html_css_files = ["book.css"]
html_title = "handoff: a server that learns to hand off"
primary_domain = "cpp"
highlight_language = "cpp"
