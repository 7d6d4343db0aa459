#!/usr/bin/env python3
"""exercises/check_lessons.py: every exercise grades every lesson it names (issue 24).

Introduced with chapters 03-05's closing lessons ("an exercise whose README names a lesson
with no mutant, or a mutant that passes, fails `ctest -L solution`"). The second half, a
mutant that passes, is each mutant's own CTest test; this script is the first half. For
each exercises/NN-slug/ it reads

  * README.md's section "## Lessons and mutants": one "### Lesson: ..." heading per lesson
    (or a "**Lesson: ...**" line, where the section is folded in a <details> block, which a
    heading cannot sit in), and under it one "- mutant `NAME`" line per mutant that grades it;
  * CMakeLists.txt's add_exercise(): the names after MUTANTS and RACE_MUTANTS,
    and add_exercise_model()'s (exercises/model/exercise_model.cmake) after MUTANTS;

and fails when a lesson has no mutant, a README names a mutant the build does not make, or
the build makes a mutant no lesson names. An exercise whose README has no such section
fails too.

    exercises/check_lessons.py [EXERCISES_DIR]      (default: the directory of this script)

Exit status 0 when every exercise passes, 1 otherwise; one line per exercise either way.
"""
import pathlib
import re
import sys

KEYWORDS = {"STARTER", "SOLUTION", "TESTS", "TSAN", "STAGE", "MODEL", "MUTANTS", "RACE_MUTANTS", "LEARNER",
            "TESTS_CATCH"}
MUTANT_KEYS = {"MUTANTS", "RACE_MUTANTS"}


def built_mutants(cmake: str) -> set:
    """The mutant names in add_exercise(...) and add_exercise_model(...), comments stripped."""
    text = "\n".join(line.split("#", 1)[0] for line in cmake.splitlines())
    names = set()
    for m in re.finditer(r"add_exercise(?:_model)?\s*\(([^)]*)\)", text):
        key = None
        for token in m.group(1).split():
            if token in KEYWORDS:
                key = token
            elif key in MUTANT_KEYS:
                names.add(token)
    return names


def lessons(readme: str):
    """{lesson title: [mutant names]} from "## Lessons and mutants", or None without it."""
    section = re.search(r"^## Lessons and mutants\s*$(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if not section:
        return None
    found, current = {}, None
    for line in section.group(1).splitlines():
        heading = re.match(r"^### Lesson:\s*(.+?)\s*$", line) or re.match(r"^\*\*Lesson:\s*(.+?)\*\*\s*$", line)
        if heading:
            current = heading.group(1)
            found[current] = []
            continue
        mutant = re.match(r"^- mutant `([A-Z0-9_]+)`", line)
        if mutant and current is not None:
            found[current].append(mutant.group(1))
    return found


def check(directory: pathlib.Path):
    """(ok, message) for one exercise."""
    cmake = (directory / "CMakeLists.txt").read_text()
    built = built_mutants(cmake)
    found = lessons((directory / "README.md").read_text())
    if found is None:
        return False, "README.md has no section '## Lessons and mutants'"
    problems = []
    if not found:
        problems.append("the section names no '### Lesson:'")
    for lesson, mutants in found.items():
        if not mutants:
            problems.append(f"lesson '{lesson}' has no mutant")
    named = {m for ms in found.values() for m in ms}
    for m in sorted(named - built):
        problems.append(f"README names mutant {m}, which CMakeLists.txt does not build")
    for m in sorted(built - named):
        problems.append(f"CMakeLists.txt builds mutant {m}, which no lesson names")
    if problems:
        return False, "; ".join(problems)
    return True, f"{len(found)} lessons, {len(named)} mutants"


def main() -> int:
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent
    failed = 0
    for directory in sorted(p for p in root.iterdir() if re.match(r"^\d\d-", p.name) and p.is_dir()):
        ok, message = check(directory)
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {directory.name}: {message}")
    print(f"{failed} exercises fail the lesson check")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
