"""book/_ext/excerpts: code excerpts a reader can place (the reader pass over chapters 01-02).

Role: Sphinx's ``literalinclude``, widened in three ways so that every excerpt in the book
says where it comes from and shows only code:

- an excerpt without a ``:caption:`` is captioned with its file's path in the repository
  (``code/pool/ring_pool.cpp``), so no excerpt floats free of its file;
- the region marker lines (``// [ring.pop]``) are dropped from what is shown: an excerpt
  may start at a function's signature (``:start-at:``) when the region that the book's
  checker guards sits inside the function's body;
- a ``:diff:`` excerpt names both files by their repository paths, not by where the
  checkout happens to live.

Everything else (options, errors, the region checker's rules) is Sphinx's.
"""

from __future__ import annotations

import os
import re

from docutils import nodes
from sphinx.directives.code import LiteralInclude

__version__ = "1"

MARKER_LINE = re.compile(r"^[-+ ]?\s*// \[[A-Za-z0-9_.-]+\]\s*$")


class PlacedLiteralInclude(LiteralInclude):
    def run(self):
        path = self.arguments[0].lstrip("/")
        if "caption" not in self.options:
            self.options["caption"] = path
        result = super().run()
        srcdir = os.path.abspath(self.env.srcdir) + os.sep
        for block in (n for node in result for n in node.findall(nodes.literal_block)):
            text = block.astext()
            kept = [line for line in text.split("\n") if not MARKER_LINE.match(line)]
            new = "\n".join(kept).replace(srcdir, "")
            if new != text:
                block[:] = [nodes.Text(new)]
                block.rawsource = new
        return result


def setup(app):
    app.add_directive("literalinclude", PlacedLiteralInclude, override=True)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
