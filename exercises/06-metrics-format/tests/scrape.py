#!/usr/bin/env python3
"""exercises/06-metrics-format/tests/scrape.py: an exercise's exposition text read as a scraper
reads it (chapter 06).

Role: the grader's reader. Prometheus's own Python parser (Debian's python3-prometheus-client)
reads the text, and every sample the server reported must come back from it with its labels
and its exact value; the parser is lenient where Prometheus's server is not, so the format's
grouping rules are checked line by line first: each family announced once (one HELP, one
TYPE) before its samples, its samples together, a counter named ..._total on every line, and
the last line ended by a line feed. Each refusal is one sentence naming the rule.

    scrape.py EXPOSITION_FILE EXPECTED_JSON

EXPECTED_JSON lists the samples given to exposition(): family, type, labels ([name, value]
pairs) and value. Exit status 0 and "ok" when the text passes; 1 and one line per problem.
"""
import json
import re
import sys

from prometheus_client.parser import text_string_to_metric_families

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def metric_name(sample):
    return sample["family"] + "_total" if sample["type"] == "counter" else sample["family"]


def grouping_problems(text, expected):
    """The format's line rules, which Prometheus's server enforces and this parser does not."""
    problems = []
    if not text.endswith("\n"):
        return ["the text does not end with a line feed: the format ends every line with '\\n', the last one too"]
    families = {metric_name(s): s for s in expected}
    announced, helped = set(), set()
    current = None
    for number, line in enumerate(text[:-1].split("\n"), start=1):
        where = f"line {number} ({line[:60]!r})"
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            words = line.split(" ", 3)
            name = words[2] if len(words) > 2 else ""
            if name not in families:
                wanted = [n for n in families if n.startswith(name)]
                hint = f" (a counter's name ends in _total: {wanted[0]})" if wanted else ""
                problems.append(f"{where}: announces '{name}', which is no family's name{hint}")
                continue
            seen = helped if words[1] == "HELP" else announced
            if name in seen:
                problems.append(f"{where}: a second {words[1]} line for {name}: announce each family once, "
                                "then all of its samples")
            seen.add(name)
            if words[1] == "TYPE" and (len(words) < 4 or words[3] != families[name]["type"]):
                problems.append(f"{where}: {name} is a {families[name]['type']}, and its TYPE line must say so")
            current = name
            continue
        if line.startswith("#") or line == "":
            continue
        m = NAME.match(line)
        name = m.group(0) if m else ""
        if name not in families:
            wanted = [n for n in families if n.startswith(name)]
            hint = f" (a counter's samples are named ..._total: {wanted[0]})" if wanted else ""
            problems.append(f"{where}: a sample named '{name}', which is no family's name{hint}")
            continue
        if name not in announced:
            problems.append(f"{where}: a sample of {name} before its TYPE line: the HELP and TYPE lines come first")
        elif current != name:
            problems.append(f"{where}: a sample of {name} after another family's lines: a family's samples come "
                            "together, right after its HELP and TYPE lines, whichever thread they came from")
    for name in families:
        if name not in helped:
            problems.append(f"no HELP line for {name}: each family has one, before its TYPE line")
    return problems


def sample_problems(text, expected):
    """Every sample, read back by Prometheus's parser, with its labels and its exact value."""
    try:
        read = [(s.name, s.labels, s.value) for f in text_string_to_metric_families(text) for s in f.samples]
    except Exception as e:  # the parser raises ValueError and others on a line it cannot read
        return [f"Prometheus's parser cannot read the text ({type(e).__name__}: {e}): a raw line feed, quote or "
                "backslash in a label value breaks the line; escape them as \\n, \\\" and \\\\"]
    problems = []
    for s in expected:
        name, labels = metric_name(s), dict(s["labels"])
        match = [v for n, l, v in read if n == name and l == labels]
        if not match:
            problems.append(f"no sample {name}{labels} in what the parser read: a label value is read back exactly "
                            "only if its backslashes, double quotes and line feeds are escaped, and nothing else (a tab, "
                            "for one, is written as it is)")
        elif match[0] != s["value"]:
            problems.append(f"{name}{labels} was read back as {match[0]!r}, where the server counted {s['value']!r}: "
                            "write the value with every digit it needs (printf's %g keeps six)")
    if len(read) != len(expected):
        problems.append(f"the parser read {len(read)} samples where {len(expected)} were given")
    return problems


def main(text_path, expected_path):
    with open(text_path, encoding="utf-8", newline="") as f:
        text = f.read()
    with open(expected_path, encoding="utf-8") as f:
        expected = json.load(f)
    problems = grouping_problems(text, expected) or sample_problems(text, expected)
    for p in problems[:4]:
        print(p)
    if len(problems) > 4:
        print(f"... and {len(problems) - 4} more of the same kinds")
    if problems:
        print("the exposition text is not what a scraper reads")
        return 1
    print("ok: the text reads back, sample for sample")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
