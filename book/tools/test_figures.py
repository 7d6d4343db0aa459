#!/usr/bin/env python3
"""book/tools/test_figures: the figure roles render from their sources and the build fails on a typed figure.

Builds a one-page book with Sphinx -W in a temporary directory, once per case, with the
roles of book/_ext/results_cell.py and the check of book/_ext/figure_check.py: each good case
must render its figure; each bad case (a verdict the data contradicts, a seed figure the
table lacks, an undecided verdict its phrases cannot say, a missing constant, a range with no min/max, a figure typed into prose, a
multiplier word, a count of rounds, a verdict column quoted as a number, a ratio past its
expectation) must fail the build with a message that names the problem.
"""
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sphinx_page import build_page  # noqa: E402

EXT = pathlib.Path(__file__).resolve().parent.parent / "_ext"
BENCHMARKS = EXT.parent.parent / "benchmarks"   # the harness package the roles read through
CSV = """row,arm,p99_us_median,p99_us_min,p99_us_max,rps_median,verdict_rps_vs_b
c16,a,560,543,592,100,level
c16,b,300,295,305,120,
c16,c,300,297,303,90,
"""
# The record beside t.csv: five rounds of p99 per arm (the verdict role pairs them by round;
# rps has no rounds here, so a verdict on it is "undecided: no rounds kept").
ROUNDS = {"a": [560, 543, 592, 555, 570], "b": [300, 305, 295, 302, 298], "c": [300, 303, 297, 301, 299]}
RECORD = json.dumps({"cells": [{"round": r, "row": "c16", "arm": arm, "ok": True, "metrics": {"p99_us": v}}
                               for arm, values in ROUNDS.items() for r, v in enumerate(values)]})
SEEDS = """record,id,value,unit,machine,file,line,quote
seed 000,s.off,7.4, µs,Apple M4,000.txt,28,7.4 µs off
seed 000,s.on,6.3, µs,Apple M4,000.txt,28,6.3 on
"""
CODE = """constexpr std::int64_t kBudget = std::int64_t{1} << 20;
std::int64_t spin_ns = 10'000;  ///< spin
app.add_option("--pipeline", o.pipeline)->default_val(64);
"""
CONF = f"""
import sys

sys.path.insert(0, {str(EXT)!r})
sys.path.insert(0, {str(BENCHMARKS)!r})
extensions = ["myst_parser", "results_cell", "figure_check"]
exclude_patterns = ["results/**", "out/**"]
source_suffix = {{".md": "markdown"}}
figure_check_docs = ["index"]
seeds_table = "seeds.csv"
"""
GOOD = [
    ("{range}`t.csv: p99_us[row=c16, arm=a]; .0f µs`", "543–592\u00a0µs"),
    ("{verdict}`t.csv: p99_us[row=c16, arm=a] vs p99_us[row=c16, arm=b]; lower; expected=behind`", ">behind<"),
    ("{verdict}`t.csv: p99_us[row=c16, arm=b] vs p99_us[row=c16, arm=c]; lower; expected=level; words=ahead of|level with|behind`", ">level with<"),
    ("{verdict}`t.csv: verdict_rps_vs_b[row=c16, arm=a]; expected=level`", ">level<"),
    ("{verdict}`t.csv: rps[row=c16, arm=a] vs rps[row=c16, arm=b]; higher; expected=undecided`", "undecided: no rounds kept"),
    ("{verdict}`t.csv: p99_us[row=c16, arm=b] vs p99_us[row=c16, arm=c]; lower; expected=level; show=detail`", ">level: a/b 1.000"),
    ("{count}`t.csv: [row=c16, arm!=a]`", ">2<"),
    ("{count}`t.csv: p99_us[arm=c] vs p99_us[arm=a] and p99_us[arm=b]; lower; by=row; verdict!=ahead`", ">1<"),
    ("{result}`t.csv: p99_us_median[row=c16, arm=a] / p99_us_median[row=c16, arm=c]; ×`", ">1.9×<"),
    ("{result}`t.csv: rps_median[row=c16, arm=b] / rps_median[row=c16, arm=a]; .2f; expect>1`", ">1.20<"),
    ("{seed}`s.off -> s.on`", "(seed 000, Apple M4)"),
    ("{seed}`s.on / s.off; .2f`", ">0.85<"),
    ("{param}`code.h: kBudget / 1048576; .0f MiB`", ">1\u00a0MiB<"),
    ("{param}`code.h: spin_ns / 1000; .0f µs`", ">10\u00a0µs<"),
    ("{param}`code.h: /\"--pipeline\".*?default_val\\((\\d+)\\)/`", ">64<"),
    ("a spin of {param}`code.h: spin_ns / 1000; .0f µs` is typed by nobody", ">10\u00a0µs<"),
]
BAD = [
    ("a verdict the data contradicts", "{verdict}`t.csv: p99_us[row=c16, arm=a] vs p99_us[row=c16, arm=b]; lower; expected=ahead`",
     "the sentence says 'ahead' but the data says 'behind'"),
    ("an undecided verdict with three phrases", "{verdict}`t.csv: rps[row=c16, arm=a] vs rps[row=c16, arm=b]; higher; expected=undecided; words=a|b|c`",
     "give words= a fourth phrase"),
    ("a verdict with no expectation", "{verdict}`t.csv: p99_us[row=c16, arm=a] vs p99_us[row=c16, arm=b]; lower`",
     "write the verdict the sentence claims"),
    ("a verdict column as a number", "{result}`t.csv: verdict_rps_vs_b[row=c16, arm=a]`", "quote it with the verdict role"),
    ("a ratio past its expectation", "{result}`t.csv: rps_median[row=c16, arm=b] / rps_median[row=c16, arm=a]; .2f; expect<1`",
     "the sentence expects < 1"),
    ("a range with no min and max", "{range}`t.csv: rps[row=c16, arm=a]`", "no rps_min and rps_max columns"),
    ("a seed figure the table lacks", "{seed}`s.nope`", "no figure 's.nope' in the seeds table"),
    ("a constant the code lacks", "{param}`code.h: kNope`", "defines no constant 'kNope'"),
    ("a deleted cell", "{result}`t.csv: p99_us_median[row=c64, arm=a]`", "no line with row=c64"),
    ("a figure typed into prose", "the loop took 6.3 µs", "figure typed into prose: a number with a unit, '6.3 µs'"),
    ("a typed ratio", "it was 12× slower", "a number with a unit, '12×'"),
    ("a multiplier word", "six times slower", "a multiplier word, 'six times'"),
    ("another multiplier word", "it twice lost", "a multiplier word, 'twice'"),
    ("a count of rounds", "it lost 2 of 10 rounds", "a count, '2 of 10'"),
    ("a figure split by emphasis", "it took **27.5** µs", "'27.5 µs'"),
]


def build(root: pathlib.Path, text: str) -> tuple[int, str, str]:
    return build_page(root, f"# t\n\nThe value is {text}.\n")


def main() -> int:
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "results").mkdir()
        (root / "results" / "t.csv").write_text(CSV, encoding="utf-8")
        (root / "results" / "t.json").write_text(RECORD, encoding="utf-8")
        (root / "seeds.csv").write_text(SEEDS, encoding="utf-8")
        (root / "code.h").write_text(CODE, encoding="utf-8")
        (root / "conf.py").write_text(CONF, encoding="utf-8")
        for text, want in GOOD:
            rc, err, html = build(root, text)
            if rc != 0 or want not in html:
                failures.append(f"good {text!r}: rc={rc}, wanted {want!r} in the page; stderr: {err.strip()}")
        for what, text, want in BAD:
            rc, err, _ = build(root, text)
            if rc == 0 or want not in err:
                failures.append(f"{what}: rc={rc}, wanted a failed build saying {want!r}; stderr: {err.strip()}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(GOOD) + len(BAD) - len(failures)} of {len(GOOD) + len(BAD)} cases behave")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
