#!/usr/bin/env python3
"""book/tools/test_trail_timeline: the trail-timeline directive reads a model's trail, or fails the build.

Two parts. The parser, on the committed trails: the lanes, the steps in order, the verdict
and the arrows between lanes that the words justify (the poke the wrong thread takes in
pool_wake-shared-lane.md; the two stores the no-fence loop_flag trail reads before they
land), and a refusal, with the line, of a table with a step in two lanes, a step out of
order and a file with no table. Then Sphinx -W on a one-page book, once per case: a good
trail renders an SVG with its steps in it; a missing file and an unparsable one each fail
the build with a message that names the problem.
"""
import os
import pathlib
import subprocess
import sys
import tempfile

BOOK = pathlib.Path(__file__).resolve().parent.parent
ROOT = BOOK.parent
TRAILS = ROOT / "chapters" / "03-lost-wakes" / "models" / "trails"
sys.path.insert(0, str(BOOK / "_ext"))

import trail_timeline  # noqa: E402

CONF = f"""
import sys
sys.path.insert(0, {str(BOOK / "_ext")!r})
extensions = ["myst_parser", "trail_timeline"]
exclude_patterns = ["out/**", "trails/**"]
source_suffix = {{".md": "markdown"}}
graphviz_output_format = "svg"
"""
GOOD_TRAIL = """**a two-step race**

| step | loop | pool-1 |
|---:|---|---|
| 1 |  | pushes completion 1 (buffered) |
| 2 | re-check: completion ring looks empty |  |
| 3 |  | (cell0 = 1 reaches memory) |
| 4 | blocks in epoll_wait |  |

Then nothing can move: 1 completion(s) wait in the ring
"""
TWO_LANES = GOOD_TRAIL.replace("| 2 | re-check: completion ring looks empty |  |",
                               "| 2 | re-check: completion ring looks empty | fence |")
OUT_OF_ORDER = GOOD_TRAIL.replace("| 3 |", "| 5 |")


def check_parser(failures: list[str]) -> None:
    shared = trail_timeline.parse((TRAILS / "pool_wake-shared-lane.md").read_text(encoding="utf-8"))
    got = (shared.lanes, len(shared.steps), shared.steps[17],
           [(k.src + 1, k.dst + 1, k.kind) for k in shared.links], shared.verdict.startswith("Then nothing can move"))
    want = (["loop", "pool-1", "pool-2"], 20, (1, "lane poll takes a poke: credit back to 0"),
            [(11, 18, "poke")], True)
    if got != want:
        failures.append(f"pool_wake-shared-lane.md parsed as {got}, wanted {want}")
    loop = trail_timeline.parse((TRAILS / "loop_flag-no-fence-loop.md").read_text(encoding="utf-8"))
    got_links = [(k.src + 1, k.dst + 1, k.kind) for k in loop.links]
    if got_links != [(1, 3, "missed"), (2, 6, "missed")]:
        failures.append(f"loop_flag-no-fence-loop.md: arrows {got_links}, wanted the two missed stores")
    seen = trail_timeline.links([(0, "raises loop_waiting (buffered)"), (0, "(loop_waiting = 1 reaches memory)"),
                                 (1, "reads loop_waiting = 1")])
    if seen != [trail_timeline.Link(1, 2, "seen")]:
        failures.append(f"a read after the store landed: arrows {seen}, wanted one 'seen' from the drain")
    for what, text, want in (("a step in two lanes", TWO_LANES, "line 6: step 2 has text in 2 lanes"),
                             ("a step out of order", OUT_OF_ORDER, "line 7: step '5' where step 3 comes next"),
                             ("no table", "**title**\n\nsome prose\n", "line 3: neither the title")):
        try:
            trail_timeline.parse(text)
            failures.append(f"{what}: parsed, wanted a TrailError")
        except trail_timeline.TrailError as e:
            if want not in str(e):
                failures.append(f"{what}: error {e!s}, wanted {want!r}")


def build(root: pathlib.Path, argument: str) -> tuple[int, str, str]:
    (root / "index.md").write_text(f"# t\n\n```{{trail-timeline}} {argument}\n:caption: The race.\n```\n",
                                   encoding="utf-8")
    out = root / "out"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-E", "-q", "-b", "html", str(root), str(out)],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    svgs = "".join(p.read_text(encoding="utf-8") for p in (out / "_images").glob("*.svg")) \
        if (out / "_images").exists() else ""
    return proc.returncode, proc.stderr, svgs


def check_build(failures: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "conf.py").write_text(CONF, encoding="utf-8")
        (root / "trails").mkdir()
        (root / "trails" / "good.md").write_text(GOOD_TRAIL, encoding="utf-8")
        (root / "trails" / "bad.md").write_text(TWO_LANES, encoding="utf-8")
        rc, err, svg = build(root, "/trails/good.md")
        if rc != 0 or "completion 1" not in svg or "not yet" not in svg:
            failures.append(f"good trail: rc={rc}, wanted an SVG with its steps and arrow; stderr: {err.strip()}")
        for what, arg, want in (("missing file", "/trails/nope.md", "cannot read the trail file /trails/nope.md"),
                                ("unparsable file", "/trails/bad.md", "/trails/bad.md is not a trail table: line 6")):
            rc, err, _ = build(root, arg)
            if rc == 0 or want not in err:
                failures.append(f"{what}: rc={rc}, wanted a failed build saying {want!r}; stderr: {err.strip()}")


def main() -> int:
    failures: list[str] = []
    check_parser(failures)
    check_build(failures)
    for f in failures:
        print("FAIL", f)
    print("trail-timeline: " + ("all cases behave" if not failures else f"{len(failures)} case(s) misbehave"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
