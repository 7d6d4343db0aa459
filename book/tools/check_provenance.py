#!/usr/bin/env python3
"""book/tools/check_provenance: every results record was measured from main, on a clean tree, one machine a file.

Role: the provenance half of "every figure comes from its data". For every record under
benchmarks/results/ (*.json with a "machine"), report:

- a git_rev that is not an ancestor of main (`git merge-base --is-ancestor REV main`), or
  that this clone does not have;
- a dirty tree (git_dirty);
- a chapter whose records name more than one machine (CPU model and kernel), so that the
  chapter's note must say which table ran where.

Exit 1 when any revision or dirty tree is found, unless --warn-only (the state while known
records wait to be measured again: 04-turn-shape/churn.json and pool-churn.json record
e79f2f5). Machines per chapter are always reported, never an error: the rule is one machine
per table, and a table reads one record.
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def in_main(rev: str) -> str | None:
    """None when rev is in main's history, else why not."""
    if subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=ROOT,
                      capture_output=True).returncode != 0:
        return "not in this clone"
    rc = subprocess.run(["git", "merge-base", "--is-ancestor", rev, "main"], cwd=ROOT,
                        capture_output=True).returncode
    return None if rc == 0 else "not an ancestor of main"


def main(argv: list[str]) -> int:
    problems, machines = [], {}
    for path in sorted((ROOT / "benchmarks" / "results").glob("*/*.json")):
        rel = path.relative_to(ROOT / "benchmarks" / "results")
        m = json.loads(path.read_text(encoding="utf-8")).get("machine")
        if not isinstance(m, dict):
            continue
        machines.setdefault(rel.parts[0], {}).setdefault(f"{m.get('cpu_model')} / {m.get('kernel')}", []).append(rel.name)
        rev = m.get("git_rev") or ""
        why = in_main(rev) if rev else "no git_rev"
        if why:
            problems.append(f"{rel}: git_rev {rev or '?'} is {why}")
        if m.get("git_dirty"):
            problems.append(f"{rel}: measured on a dirty tree {m.get('git_dirty_paths') or ''}")
    for p in problems:
        print("PROVENANCE", p)
    for chapter, ms in machines.items():
        if len(ms) > 1:
            print(f"MACHINES {chapter}: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in ms.items()))
    print(f"{len(problems)} provenance problems")
    return 1 if problems and "--warn-only" not in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
