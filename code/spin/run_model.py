#!/usr/bin/env python3
"""code/spin/run_model: check one variant of a Promela model with spin, and judge the verdict (chapter 03).

Copies the model (and every .pml beside it or beside this script, code/spin/: tso.pml, the
machine every chapter's models run on, for #include) into WORKDIR, generates the
verifier (`spin -a -DNAME=VALUE ... model.pml`), compiles it (`cc -O0 -DSAFETY`: safety
only, assertions and invalid end states; these models are small, so an optimising compile
costs more than the search it speeds up), runs it, and reads its `errors:` line.

  --expect pass   exit 0 when pan finds no error.
  --expect fail   exit 0 only when pan finds the error (a negative control). The verifier
                  is then built with -DREACH and run with -i, so that the trail it keeps
                  is the shortest it can find; the trail is replayed (`spin -T -t`) and
                  rendered as a timeline by trail_table.py into WORKDIR/trail.md.
  --trail FILE    with --expect fail: FILE must hold exactly that rendered timeline
                  (the committed copy under trails/); --write-trail rewrites FILE instead.
  --workers NAME  the timeline's name for the model's columns 1.. (default pool: pool-1, ...).
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="the .pml file")
    ap.add_argument("--define", "-D", action="append", default=[], help="NAME=VALUE, passed to spin as -D")
    ap.add_argument("--expect", choices=["pass", "fail"], required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--trail", help="the committed rendered trail to compare with (fail only)")
    ap.add_argument("--write-trail", action="store_true", help="rewrite --trail instead of comparing")
    ap.add_argument("--title", default="", help="the rendered trail's title")
    ap.add_argument("--workers", default="pool", help="the trail's name for columns 1.. (NAME-1, ...)")
    ap.add_argument("--spin", default="spin")
    ap.add_argument("--cc", default="cc")
    args = ap.parse_args()

    model = os.path.abspath(args.model)
    name = os.path.basename(model)
    label = name + "".join(f" -D{d}" for d in args.define)
    os.makedirs(args.workdir, exist_ok=True)
    # The .pml files beside this script (tso.pml, the machine every chapter's models run
    # on), then those beside the model, which may replace them.
    for folder in (HERE, os.path.dirname(model)):
        for f in os.listdir(folder):
            if f.endswith(".pml"):
                shutil.copy(os.path.join(folder, f), args.workdir)
    for stale in (name + ".trail", "pan"):
        if os.path.exists(os.path.join(args.workdir, stale)):
            os.remove(os.path.join(args.workdir, stale))

    defines = [f"-D{d}" for d in args.define]
    t0 = time.monotonic()
    r = sh([args.spin, "-a"] + defines + [name], args.workdir)
    if r.returncode != 0:
        print(f"run_model: spin -a failed for {label}:\n{r.stdout}{r.stderr}", file=sys.stderr)
        return 2
    cflags = ["-O0", "-w", "-DSAFETY"] + (["-DREACH"] if args.expect == "fail" else [])
    r = sh([args.cc] + cflags + ["-o", "pan", "pan.c"], args.workdir)
    if r.returncode != 0:
        print(f"run_model: cc failed for {label}:\n{r.stdout}{r.stderr}", file=sys.stderr)
        return 2
    t1 = time.monotonic()
    r = sh(["./pan"] + (["-i"] if args.expect == "fail" else []), args.workdir)
    t2 = time.monotonic()
    out = r.stdout + r.stderr
    errors = None
    for line in out.splitlines():
        if "errors:" in line:
            errors = int(line.rsplit("errors:", 1)[1].split()[0])
    stored = next((line.split()[0] for line in out.splitlines() if "states, stored" in line), "?")
    if errors is None or "pan: out of memory" in out or "max search depth too small" in out:
        print(f"run_model: pan gave no complete verdict for {label}:\n{out}", file=sys.stderr)
        return 2
    print(f"run_model: {label}: errors {errors}, {stored} states, "
          f"spin+cc {t1 - t0:.1f} s, pan {t2 - t1:.2f} s")

    if args.expect == "pass":
        if errors != 0:
            print(f"run_model: {label} should hold but pan found an error:\n{out}", file=sys.stderr)
            return 1
        print(f"run_model: {label}: the property holds")
        return 0

    if errors == 0:
        print(f"run_model: {label} should fail (a negative control) but pan found no error", file=sys.stderr)
        return 1
    if not os.path.exists(os.path.join(args.workdir, name + ".trail")):
        print(f"run_model: {label}: pan reported an error but left no trail", file=sys.stderr)
        return 1
    r = sh([args.spin, "-T", "-t"] + defines + [name], args.workdir)
    replay = r.stdout
    with open(os.path.join(args.workdir, "replay.txt"), "w", encoding="utf-8") as f:
        f.write(replay)
    r = subprocess.run([sys.executable, os.path.join(HERE, "trail_table.py"), "--title", args.title,
                        "--workers", args.workers],
                       input=replay, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"run_model: {label}: could not render the trail:\n{r.stderr}", file=sys.stderr)
        return 1
    table = r.stdout
    with open(os.path.join(args.workdir, "trail.md"), "w", encoding="utf-8") as f:
        f.write(table)
    print(f"run_model: {label}: refuted, as expected; timeline in {os.path.join(args.workdir, 'trail.md')}")
    if not args.trail:
        return 0
    if args.write_trail:
        with open(args.trail, "w", encoding="utf-8") as f:
            f.write(table)
        print(f"run_model: wrote {args.trail}")
        return 0
    try:
        with open(args.trail, encoding="utf-8") as f:
            committed = f.read()
    except OSError as e:
        print(f"run_model: {label}: cannot read the committed trail: {e}", file=sys.stderr)
        return 1
    if committed != table:
        print(f"run_model: {label}: the committed trail {args.trail} is stale; the model now gives:\n{table}"
              f"(regenerate: cmake --build --preset release --target spin-trails)", file=sys.stderr)
        return 1
    print(f"run_model: {label}: the committed trail {os.path.basename(args.trail)} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
