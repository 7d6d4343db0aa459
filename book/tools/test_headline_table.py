#!/usr/bin/env python3
"""book/tools/test_headline_table: the seeds' headline table's verdicts and its errors (chapter 06).

Against a made-up seeds table and results folder whose record keeps five rounds per arm: a
row whose after the verdict rule (benchmarks/harness/results/verdict.py) calls ahead of its before
on the seed's side is ``reproduced``, one inside the margin ``level``, one beyond it on the
other side ``reversed``, a seed's reported cost paid here too ``reproduced``, noisy rounds
``undecided``, the same with a ``needs`` reason ``needs``, a record with no rounds
``undecided``, a count out of a total judged as two proportions, and an entry with
``not_measured`` says so; two entries on the same cells fail; bench.py
compare's section gives the new verdict beside the committed one, and "unreadable" for a row
the new results cannot answer. A seed id the
table lacks, a results line that is not there and a missing results file each fail with the
entry's name. Then a one-page book built with Sphinx -W: the directive renders every verdict
word, ``:records:`` keeps one record's rows, ``:totals:`` counts every row, a row no table
shows fails the build, and so does a missing id, with a message naming it.
"""
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sphinx_page import build_page  # noqa: E402

EXT = pathlib.Path(__file__).resolve().parent.parent / "_ext"
BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the harness package, which computes the rows
from harness.results import cells as rc  # noqa: E402
from harness.results import headline as ht  # noqa: E402

SEEDS = """record,id,value,unit,machine,file,line,quote
seed 9,s9.cpu-before,7.4, µs,a test rig,f.txt,1,q
seed 9,s9.cpu-after,6.3, µs,a test rig,f.txt,1,q
seed 9,s9.rate-before,131k, requests/s,a test rig,f.txt,2,q
seed 9,s9.rate-after,155k, requests/s,a test rig,f.txt,2,q
seed 9,s9.cost-before,0.20, µs,a test rig,f.txt,3,q
seed 9,s9.cost-after,0.51, µs,a test rig,f.txt,3,q
seed 9,s9.lost-before,2 of 10, rounds,a test rig,f.txt,4,q
seed 9,s9.lost-after,0 of 20, rounds,a test rig,f.txt,4,q
"""
CSV = """row,arm,cpu_median,cpu_min,cpu_max,rps_median,rps_min,rps_max,lost,rounds
c16,before,6.69,6.49,6.93,1000,990,1010,25,40
c16,after,5.71,5.47,6.13,1001,992,1012,0,40
c16,worse,7.50,7.20,7.90,800,700,850,30,40
c16,dearer,7.50,7.20,7.90,800,700,850,30,40
c16,noisy,6.70,5.50,8.00,1000,800,1200,30,40
"""
# Five rounds per arm, in the record beside t.csv (the rule pairs them round by round).
ROUNDS = {
    "before": {"cpu": [6.69, 6.49, 6.93, 6.6, 6.8], "rps": [1000, 1010, 990, 1005, 995]},
    "after": {"cpu": [5.71, 5.47, 6.13, 5.6, 5.8], "rps": [1001, 1012, 992, 1004, 996]},
    "worse": {"cpu": [7.5, 7.2, 7.9, 7.4, 7.6], "rps": [800, 700, 850, 790, 810]},
    "dearer": {"cpu": [7.5, 7.2, 7.9, 7.4, 7.6], "rps": [800, 700, 850, 790, 810]},
    "noisy": {"cpu": [8.0, 5.5, 7.9, 5.6, 6.7], "rps": [1200, 800, 1150, 850, 1000]},
}
CELLS = [{"round": r, "row": "c16", "arm": arm, "ok": True,
          "metrics": {m: values[m][r] for m in values}} for arm, values in ROUNDS.items() for r in range(5)]
MACHINE = {"cpu_model": "Test CPU", "cores": 2, "virtualised": "yes (test)"}


def toml(rows: list[str]) -> str:
    return "\n".join(rows)


def row(name, seed, better, ours=None, not_measured=None, ours_of=None, needs=None):
    text = [f'[[row]]\nname = "{name}"\nseed = {json.dumps(seed)}\ncompared = "what {name} compares"\nbetter = "{better}"']
    if ours:
        text.append(f"ours = {json.dumps(ours)}")
    if ours_of:
        text.append(f"ours_of = {json.dumps(ours_of)}")
    if not_measured:
        text.append(f'not_measured = "{not_measured}"')
    if needs:
        text.append(f'needs = "{needs}"')
    return "\n".join(text) + "\n"


GOOD = [
    row("reproduced", ["s9.cpu-before", "s9.cpu-after"], "lower",
        ["t.csv: cpu_median[row=c16, arm=before]", "t.csv: cpu_median[row=c16, arm=after]"]),
    row("level", ["s9.rate-before", "s9.rate-after"], "higher",
        ["t.csv: rps_median[row=c16, arm=before]", "t.csv: rps_median[row=c16, arm=after]"]),
    row("reversed", ["s9.cpu-before", "s9.cpu-after"], "lower",
        ["t.csv: cpu_median[row=c16, arm=before]", "t.csv: cpu_median[row=c16, arm=worse]"]),
    row("cost", ["s9.cost-before", "s9.cost-after"], "lower",
        ["t.csv: cpu_median[row=c16, arm=before]", "t.csv: cpu_median[row=c16, arm=dearer]"]),
    row("undecided", ["s9.rate-before", "s9.rate-after"], "higher",
        ["t.csv: rps_median[row=c16, arm=before]", "t.csv: rps_median[row=c16, arm=noisy]"]),
    row("needs", ["s9.cpu-before", "s9.cpu-after"], "lower",
        ["t.csv: cpu_median[row=c16, arm=before]", "t.csv: cpu_median[row=c16, arm=noisy]"],
        needs="more cores"),
    row("norounds", ["s9.cpu-before", "s9.cpu-after"], "lower",
        ["u.csv: cpu_median[row=c16, arm=before]", "u.csv: cpu_median[row=c16, arm=after]"]),
    row("counted", ["s9.lost-before", "s9.lost-after"], "lower",
        ["t.csv: lost[row=c16, arm=before]", "t.csv: lost[row=c16, arm=after]"],
        ours_of=["t.csv: rounds[row=c16, arm=before]", "t.csv: rounds[row=c16, arm=after]"]),
    row("absent", ["s9.rate-before", "s9.rate-after"], "higher", not_measured="no such rig here"),
]
WANT = {"reproduced": "reproduced", "level": "level", "reversed": "reversed", "cost": "reproduced",
        "undecided": "undecided", "needs": "needs", "norounds": "undecided",
        "counted": "reproduced", "absent": "not measured"}
COUNTS = {"reproduced": 3, "reversed": 1, "level": 1, "undecided": 2, "not measured": 1, "needs": 1}

failed = 0


def check(what: str, ok: bool, detail: str = "") -> None:
    global failed
    if not ok:
        failed += 1
        print(f"FAIL: {what} {detail}")


with tempfile.TemporaryDirectory() as tmp:
    root = pathlib.Path(tmp)
    (root / "results").mkdir()
    (root / "results" / "t.csv").write_text(CSV, encoding="utf-8")
    (root / "results" / "t.json").write_text(json.dumps({"mode": "full", "machine": MACHINE, "cells": CELLS}),
                                             encoding="utf-8")
    (root / "results" / "u.csv").write_text(CSV, encoding="utf-8")           # a record with no rounds
    (root / "results" / "u.json").write_text(json.dumps({"mode": "full", "machine": MACHINE}), encoding="utf-8")
    (root / "seeds.csv").write_text(SEEDS, encoding="utf-8")
    results, seeds = str(root / "results"), str(root / "seeds.csv")

    def compute(rows: list[str]):
        path = root / "h.toml"
        path.write_text(toml(rows), encoding="utf-8")
        return ht.compute(results, ht.load_entries(str(path)), seeds)

    got = {r.name: r for r in compute(GOOD)}
    for name, word in WANT.items():
        check(f"the {name!r} row's verdict", got[name].verdict == word, f"{got[name].verdict!r} != {word!r}")
    check("our machine from the record", got["reproduced"].ours.machine == "Test CPU, 2 cores, virtual machine",
          repr(got["reproduced"].ours.machine))
    check("a median with its range", got["reproduced"].ours.before == "6.69 (6.49–6.93)", repr(got["reproduced"].ours.before))
    check("a count out of a total", got["counted"].ours.before == "25 of 40", repr(got["counted"].ours.before))
    check("the seed's ratio", ht.ratio_text(got["reproduced"].seed.ratio) == "0.85×",
          ht.ratio_text(got["reproduced"].seed.ratio))
    check("the counts", ht.counts(got.values()) == COUNTS, repr(ht.counts(got.values())))
    check("an undecided row says what would decide it", ht.verdict_aside(got["undecided"]).endswith(
        "rounds would decide it"), ht.verdict_aside(got["undecided"]))
    check("a record without rounds says so", ht.verdict_aside(got["norounds"]) == "no rounds kept",
          ht.verdict_aside(got["norounds"]))
    check("a needs row says what", ht.verdict_aside(got["needs"]) == "more cores", ht.verdict_aside(got["needs"]))

    for what, rows, needle in [
        ("a missing seed id", [row("gone", ["s9.nope", "s9.cpu-after"], "lower",
                                   ["t.csv: cpu_median[row=c16, arm=before]", "t.csv: cpu_median[row=c16, arm=after]"])],
         "'s9.nope'"),
        ("a missing results line", [row("noline", ["s9.cpu-before", "s9.cpu-after"], "lower",
                                        ["t.csv: cpu_median[row=c16, arm=before]", "t.csv: cpu_median[row=c99, arm=after]"])],
         "no line with"),
        ("two rows on the same cells", [GOOD[0], GOOD[0].replace('name = "reproduced"', 'name = "again"')],
         "read the same cells"),
        ("a missing results file", [row("nofile", ["s9.cpu-before", "s9.cpu-after"], "lower",
                                        ["t.csv: cpu_median[row=c16, arm=before]", "v.csv: cpu_median[row=c16, arm=after]"])],
         "does not exist"),
    ]:
        try:
            compute(rows)
            check(what, False, "raised nothing")
        except rc.CellError as e:
            check(what, needle in str(e) and ("headline entry" in str(e) or "entries" in str(e)), str(e))

    # bench.py compare's section: the new results' verdicts beside the committed ones; a row
    # the new folder cannot answer says so and the report goes on.
    (root / "h.toml").write_text(toml(GOOD), encoding="utf-8")
    (root / "empty").mkdir()
    lines = ht.report(results, results, str(root / "h.toml"), seeds)
    check("the report's rows", sum(ln.startswith("| reproduced |") for ln in lines) == 1
          and any("3 reproduced, 1 reversed, 1 level, 2 undecided, 1 not measured, 1 needs" in ln for ln in lines),
          "\n".join(lines))
    lines = ht.report(results, str(root / "empty"), str(root / "h.toml"), seeds)
    check("an unreadable row in the report", any(ln.startswith("| level |") and "does not exist" in ln
                                                 and ln.endswith("| unreadable | level |") for ln in lines),
          "\n".join(lines))

    conf = f"""
import sys

sys.path.insert(0, {str(EXT)!r})
sys.path.insert(0, {str(BENCHMARKS)!r})
extensions = ["myst_parser", "results_cell", "headline_table"]
exclude_patterns = ["results/**", "out/**"]
source_suffix = {{".md": "markdown"}}
seeds_table = "seeds.csv"
"""
    (root / "conf.py").write_text(conf, encoding="utf-8")
    page = "# t\n\n```{headline-table}\n:file: h.toml\n:caption: Headline\n```\n"
    (root / "h.toml").write_text(toml(GOOD), encoding="utf-8")
    rc_, err, html = build_page(root, page)
    check("the page builds", rc_ == 0, err)
    for word in ("reproduced", "level", "reversed", "undecided", "needs", "not measured"):
        check(f"the page shows {word!r}", f">{word}<" in html)
    check("the page names our machine", "Test CPU, 2 cores, virtual machine" in html)
    # One record's rows (:records:), the totals line over all, and a row no table shows.
    (root / "h.toml").write_text(toml(GOOD), encoding="utf-8")
    rc_, err, html = build_page(root, page.replace(":caption:", ":records: seed 9\n:caption:")
                                + "\n```{headline-table}\n:file: h.toml\n:totals:\n```\n")
    check("a :records: table and the totals", rc_ == 0 and "9 rows: 3 reproduced, 1 reversed, 1 level, "
          "2 undecided, 1 not measured, 1 needs (more cores); ours measured on Test CPU, 2 cores, "
          "virtual machine (8 rows)." in html, err)
    (root / "h.toml").write_text(toml(GOOD + [row("other", ["s8.a", "s8.b"], "lower", not_measured="x")]),
                                 encoding="utf-8")
    (root / "seeds.csv").write_text(SEEDS + "seed 8,s8.a,1, µs,r,f.txt,5,q\nseed 8,s8.b,2, µs,r,f.txt,5,q\n",
                                    encoding="utf-8")
    rc_, err, _ = build_page(root, page.replace(":caption:", ":records: seed 9\n:caption:"))
    check("a row no table shows fails the build", rc_ != 0 and "no table shows the rows other" in err, err)
    (root / "seeds.csv").write_text(SEEDS, encoding="utf-8")

    (root / "h.toml").write_text(toml([row("gone", ["s9.nope", "s9.cpu-after"], "lower", not_measured="x")]),
                                 encoding="utf-8")
    rc_, err, _ = build_page(root, page)
    check("a missing id fails the build", rc_ != 0 and "s9.nope" in err and "headline-table" in err, err)

print(f"test_headline_table: {failed} check(s) failed" if failed else "test_headline_table: every check passed")
sys.exit(1 if failed else 0)
