"""harness/run/journal: a spec's cells kept as each one finishes, so that a run resumes (chapter 01).

Role: what lets `bench.py reproduce` pick up after an interruption without remeasuring what
it had. runner.run_spec, asked to resume, appends every finished cell to
OUT/<chapter>/<name>.cells.jsonl, one JSON line written and flushed to disk before the
next cell starts; the first line is a header naming the run (mode, settings, host, the arms
and rows that can run). A later run of the same spec into the same OUT reads the journal
back and measures only the cells it lacks:

- a cell that was measured and succeeded is kept;
- a cell interrupted while it ran never reached the journal, and one that failed is not
  kept, so both are measured again;
- a torn last line (the process killed while writing it) is ignored, like an interrupted
  cell;
- a journal whose header differs (another mode, other settings, arms added) is ignored and
  started over: its cells were measured under other conditions.

When the spec's results are written, the journal has served and is removed.
"""

from __future__ import annotations

import json
import os

Key = tuple[int, str, str]   # (round, row, arm)


def path_for(out_dir: str, chapter: str, name: str) -> str:
    return os.path.join(out_dir, chapter, f"{name}.cells.jsonl")


def key(cell: dict) -> Key:
    return (cell["round"], cell["row"], cell["arm"])


def read(path: str, header: dict) -> dict[Key, dict]:
    """The successful cells of a journal written under this header; {} without one."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return {}
    docs = []
    for line in lines:
        try:
            docs.append(json.loads(line))
        except ValueError:
            break   # a torn line: the process was killed while writing it
    if not docs or docs[0].get("journal") != header:
        return {}
    return {key(c): c for c in docs[1:] if c.get("ok")}


class Writer:
    """Appends cells to a journal; starts it over (header first) unless `kept` is what the
    journal already holds under the same header."""

    def __init__(self, path: str, header: dict, kept: dict[Key, dict]):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.path = path
        # The kept cells are rewritten beside the journal and moved over it, so that an
        # interruption now loses nothing the old journal held.
        self.f = open(path + ".tmp", "w", encoding="utf-8")
        self._write({"journal": header})
        for cell in kept.values():
            self._write(cell)
        os.replace(path + ".tmp", path)

    def _write(self, doc: dict) -> None:
        self.f.write(json.dumps(doc, ensure_ascii=False) + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())

    def append(self, cell: dict) -> None:
        self._write(cell)

    def close(self) -> None:
        self.f.close()
