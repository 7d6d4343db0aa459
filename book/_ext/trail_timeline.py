"""book/_ext/trail_timeline: a model's counter-example as a timeline diagram (chapter 03).

Role: a Sphinx extension with one directive, ``trail-timeline``, that reads a trail file
committed under chapters/03-lost-wakes/models/trails/ (the Markdown table
code/spin/trail_table.py renders from spin's replay, which CTest keeps equal to a fresh run)
and draws it with Graphviz, so the timeline in the book is the model's and cannot drift
from it::

    ```{trail-timeline} /chapters/03-lost-wakes/models/trails/pool_wake-shared-lane.md
    :caption: An awake thread's lane poll takes the poke sent for its parked sibling.
    ```

The picture: one column (lane) per thread, headed by the table's column name (loop,
pool-1, ...); one row per step in trail order, numbered as in the table, each step a box in
its thread's lane; arrows down each lane from one step of that thread to its next. Steps
of the store buffer, ``(x = 1 reaches memory)``, are dashed: the memory system acts there,
not the thread. A lane's last step that blocks (``blocks in recv``) is red: the sleep the
trail ends in. Below the lanes, the trail's verdict ("Then nothing can move: ...", or
"Then the check fails: ..." for a trail that ends in a failed assertion).

Arrows between lanes say only what the trail's words say (:func:`links`):

- a poke: a step that ``pokes`` to the next step in another lane that takes ``a poke``
  (``lane poll takes a poke``, ``woken by a poke``), first sent to first taken;
- a store seen: ``(x = v reaches memory)`` to a later ``reads x = v`` in another lane;
- a store missed: a buffered store (a step ending ``buffered)``, matched to its lane's
  ``reaches memory`` steps in first-in first-out order) to a read in another lane that
  comes after the store was issued and before it reached memory, and read the old value
  (``reads x = w``, w not v; ``ring looks empty`` reads ``pushed`` of the job ring,
  ``completion ring looks empty`` reads ``cell0`` of the completion ring, the names the
  models print).

Without ``:caption:`` the trail's bold title is the caption. A trail file that is missing
or does not parse (no step table, a row with no step or two, steps out of order) is an
error at the directive's line, which the book's ``-W`` build turns into a failure.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.ext.graphviz import figure_wrapper, graphviz
from sphinx.util.docutils import SphinxDirective

__version__ = "1"


class TrailError(ValueError):
    pass


@dataclass(frozen=True)
class Link:
    src: int    # step index (0-based) the arrow starts at
    dst: int    # step index it ends at
    kind: str   # "poke", "seen" or "missed"


@dataclass
class Trail:
    title: str
    lanes: list[str]                  # column names, left to right
    steps: list[tuple[int, str]]      # (lane index, text), in trail order
    verdict: str = ""
    links: list[Link] = field(default_factory=list)


CELL_SPLIT = re.compile(r"(?<!\\)\|")
DRAIN = re.compile(r"^\((\S+) = (\S+) reaches memory\)$")
BUFFERED = re.compile(r"\bbuffered\)$")
READ = re.compile(r"\breads (\S+) = (\S+)$")
# The reads the models print as an empty ring, by the variable whose store they miss.
EMPTY_RING_READS = {"ring looks empty": "pushed", "completion ring looks empty": "cell0"}


def _cells(line: str, lineno: int) -> list[str]:
    body = line.strip()
    if not (body.startswith("|") and body.endswith("|")):
        raise TrailError(f"line {lineno}: a table row must start and end with '|'")
    return [c.strip().replace("\\|", "|") for c in CELL_SPLIT.split(body[1:-1])]


def parse(text: str) -> Trail:
    """A trail file as trail_table.py writes it: an optional ``**title**`` line, a table
    ``| step | lane | lane ... |`` with one text per row, and an optional verdict line,
    ``Then nothing can move: ...`` (a deadlock) or ``Then the check fails: ...`` (an
    assertion, as trail_table.py's VERDICTS print it; chapter 03's wake against cancel)."""
    title, verdict = "", ""
    lanes: list[str] | None = None
    steps: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line, lineno = lines[i].strip(), i + 1
        i += 1
        if not line:
            continue
        if lanes is None and line.startswith("**") and line.endswith("**") and len(line) > 4:
            title = line[2:-2].strip()
            continue
        if line.startswith(("Then nothing can move:", "Then the check fails:")):
            verdict = line
            continue
        if not line.startswith("|"):
            raise TrailError(f"line {lineno}: neither the title, a table row nor the verdict: {line[:60]!r}")
        cells = _cells(line, lineno)
        if lanes is None:
            if cells[0] != "step" or len(cells) < 2 or not all(cells[1:]):
                raise TrailError(f"line {lineno}: the table must open with '| step | <lane> | ... |'")
            lanes = cells[1:]
            if i >= len(lines) or not set(lines[i].strip()) <= set("|-: "):
                raise TrailError(f"line {lineno + 1}: the header must be followed by a '|---|' line")
            i += 1
            continue
        if len(cells) != len(lanes) + 1:
            raise TrailError(f"line {lineno}: {len(cells)} cells, the header has {len(lanes) + 1}")
        if cells[0] != str(len(steps) + 1):
            raise TrailError(f"line {lineno}: step {cells[0]!r} where step {len(steps) + 1} comes next")
        filled = [k for k, c in enumerate(cells[1:]) if c]
        if len(filled) != 1:
            raise TrailError(f"line {lineno}: step {cells[0]} has text in {len(filled)} lanes, not one")
        steps.append((filled[0], cells[1 + filled[0]]))
    if lanes is None or not steps:
        raise TrailError("no step table ('| step | <lane> | ... |' and at least one step)")
    trail = Trail(title=title, lanes=lanes, steps=steps, verdict=verdict)
    trail.links = links(trail.steps)
    return trail


def _read_of(text: str) -> tuple[str, str | None] | None:
    """(variable, value read) for a step that reads one; value None for an empty ring."""
    m = READ.search(text)
    if m:
        return m.group(1), m.group(2)
    bare = text.removeprefix("re-check:").strip()
    if bare in EMPTY_RING_READS:
        return EMPTY_RING_READS[bare], None
    return None


def links(steps: list[tuple[int, str]]) -> list[Link]:
    """The cross-lane arrows the trail's words justify (see the module's comment)."""
    out: list[Link] = []
    # Pokes: first sent, first taken, by a step in another lane.
    taken: set[int] = set()
    for p, (lane, text) in enumerate(steps):
        if "pokes" not in text:
            continue
        for q in range(p + 1, len(steps)):
            if q not in taken and steps[q][0] != lane and "a poke" in steps[q][1]:
                taken.add(q)
                out.append(Link(p, q, "poke"))
                break
    # Stores through a lane's buffer: the n-th buffered store of a lane reaches memory at
    # the lane's n-th drain step. Each: (lane, issued at, drained at or None, var, value).
    stores = []
    for lane in {s[0] for s in steps}:
        issued = [k for k, (ln, t) in enumerate(steps) if ln == lane and BUFFERED.search(t)]
        drains = [k for k, (ln, t) in enumerate(steps) if ln == lane and DRAIN.match(t)]
        for n, k in enumerate(issued):
            if n < len(drains):
                var, value = DRAIN.match(steps[drains[n]][1]).groups()
                stores.append((lane, k, drains[n], var, value))
    for lane, issued, drained, var, value in stores:
        for r, (other, text) in enumerate(steps):
            read = _read_of(text)
            if other == lane or read is None or read[0] != var:
                continue
            if issued < r < drained and read[1] != value:
                out.append(Link(issued, r, "missed"))
            elif r > drained and read[1] == value:
                out.append(Link(drained, r, "seen"))
                break
    return sorted(out, key=lambda link: (link.src, link.dst))


def _label(text: str, width: int = 24) -> str:
    return "\\n".join(textwrap.wrap(text, width)).replace('"', '\\"')


LINK_STYLE = {
    "poke": 'color="#1f5fbf", fontcolor="#1f5fbf", penwidth=1.4, label="poke"',
    "seen": 'color="#2e7d32", fontcolor="#2e7d32", label="visible"',
    "missed": 'color="#c62828", fontcolor="#c62828", style=dashed, label="not yet\\nvisible"',
}


# The book's column at 1280 px is 552 pt (736 px) wide, and its text 12 pt (16 px): a
# timeline drawn any wider is scaled down and its text with it (book/tools/check_widths.py
# fails the build on text smaller than the body's). So every text is FONT_PT, and a lane's
# boxes share what the column leaves after the step numbers.
FONT_PT = 12
COLUMN_IN = 7.2
CHAR_IN = 0.095   # an average character of Helvetica at FONT_PT, for wrapping


def to_dot(trail: Trail) -> str:
    """Graphviz source: a grid whose rows are steps and whose columns are lanes."""
    n_lanes = len(trail.lanes)
    box_in = min(1.75, (COLUMN_IN - 2.5) / max(1, n_lanes) - 0.2)   # room for the links' labels
    wrap = max(12, int((box_in - 0.16) / CHAR_IN))
    last = {}
    for k, (lane, _) in enumerate(trail.steps):
        last[lane] = k
    out = [
        "digraph trail {",
        "  rankdir=TB; newrank=true; nodesep=0.2; ranksep=0.18;",
        f'  node [fontname="Helvetica", fontsize={FONT_PT}, shape=box, style="rounded", width={box_in:.2f},'
        ' height=0.3, margin="0.08,0.04"];',
        f'  edge [fontname="Helvetica", fontsize={FONT_PT}, color="#888888", arrowsize=0.6];',
        '  hs [label="step", shape=plaintext, fontcolor="#666666"];',
    ]
    for c, name in enumerate(trail.lanes):
        out.append(f'  h{c} [label="{_label(name, wrap)}", shape=plaintext];')
    out.append("  {rank=same; hs; " + " ".join(f"h{c};" for c in range(n_lanes)) + "}")
    out.append("  hs -> " + " -> ".join(f"h{c}" for c in range(n_lanes)) + " [style=invis];")
    for k, (lane, text) in enumerate(trail.steps):
        out.append(f'  n{k} [label="{k + 1}", shape=plaintext, fontcolor="#666666", width=0.3];')
        for c in range(n_lanes):
            if c != lane:
                look = 'color="#888888"' if k < last.get(c, -1) else "style=invis"  # the line runs through
                out.append(f"  g{k}_{c} [shape=point, width=0.015, {look}];")
        attrs = [f'label="{_label(text, wrap)}"']
        if DRAIN.match(text):
            attrs.append('style="rounded,dashed", fontcolor="#555555", color="#777777"')
        elif text.startswith("blocks in") and last[lane] == k:
            attrs.append('color="#c62828", fontcolor="#c62828", penwidth=1.6')
        out.append(f"  s{k} [{', '.join(attrs)}];")
        row = [f"n{k}"] + [f"s{k}" if c == lane else f"g{k}_{c}" for c in range(n_lanes)]
        out.append("  {rank=same; " + " ".join(f"{x};" for x in row) + "}")
        out.append("  " + " -> ".join(row) + " [style=invis];")
    # The columns: each lane a line from its header down to its last step, an arrowhead
    # into each of its steps, through points in the grid's empty cells; below its last
    # step, and in the step-number column, the same chain unseen, to keep the column.
    out.append("  hs -> " + " -> ".join(f"n{k}" for k in range(len(trail.steps))) + " [style=invis, weight=100];")
    for c in range(n_lanes):
        prev = f"h{c}"
        for k in range(len(trail.steps)):
            here = f"s{k}" if trail.steps[k][0] == c else f"g{k}_{c}"
            if k > last.get(c, -1):
                look = "style=invis"
            else:
                look = "arrowhead=normal" if here.startswith("s") else "arrowhead=none"
            out.append(f"  {prev} -> {here} [{look}, weight=100];")
            prev = here
    for link in trail.links:
        out.append(f"  s{link.src} -> s{link.dst} [constraint=false, {LINK_STYLE[link.kind]}];")
    if trail.verdict:
        out.append(f'  label="{_label(trail.verdict, int(COLUMN_IN / CHAR_IN) - 6)}"; labelloc=b;'
                   f' fontname="Helvetica"; fontsize={FONT_PT}; fontcolor="#c62828";')
    out.append("}")
    return "\n".join(out) + "\n"


class TrailTimeline(SphinxDirective):
    required_arguments = 1
    has_content = False
    option_spec = {"caption": directives.unchanged, "name": directives.unchanged}

    def run(self):
        rel, path = self.env.relfn2path(self.arguments[0])
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise self.error(f"trail-timeline: cannot read the trail file {self.arguments[0]} ({e.strerror})")
        self.env.note_dependency(rel)
        try:
            trail = parse(text)
        except TrailError as e:
            raise self.error(f"trail-timeline: {self.arguments[0]} is not a trail table: {e}")
        node = graphviz()
        node["code"] = to_dot(trail)
        node["options"] = {"docname": self.env.docname}
        node["alt"] = trail.title or f"timeline of {self.arguments[0]}"
        caption = self.options.get("caption") or trail.title
        result: nodes.Element = figure_wrapper(self, node, caption) if caption else node
        self.add_name(result)
        return [result]


def setup(app):
    app.setup_extension("sphinx.ext.graphviz")
    app.add_directive("trail-timeline", TrailTimeline)
    return {"version": __version__, "parallel_read_safe": True}
