#!/usr/bin/env python3
"""book/tools/check_tryit: the book's "try it" boxes cannot drift from the tools (the reader pass).

A box includes a file from book/tryit/: a console session, each command on a line that
starts with "$ ", followed by a trimmed sample of what it prints. This checker runs every
file's commands against a release build and checks that each sample line still matches a
line of the command's real output, with every number allowed to differ ("…" marks a
trimmed part and matches anything). Rules for the files:

- a command whose first word is `cmake` is shown to the reader but not run (the test runs
  against a build that already exists);
- a command that ends with " &" runs in the background, the checker waits until the port
  it names (8080 to 8089) accepts connections, and the process is stopped (SIGINT, the
  stages' drain) at the end;
- `build/release` is replaced by the build directory, and each port 8080 to 8089 by a
  free port of its own.

With --self-test it proves that a changed key fails and a changed number passes.
"""
import concurrent.futures
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

PORT = re.compile(r"\b808\d\b")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
TRIMMED = "…"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pattern(sample: str) -> re.Pattern:
    """A sample line as a regex: numbers may be any number, '…' anything, spacing free."""
    out = []
    for i, part in enumerate(sample.strip().split(TRIMMED)):
        pieces, last = [], 0
        for m in NUMBER.finditer(part):
            pieces.append(re.escape(part[last:m.start()]))
            pieces.append(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
            last = m.end()
        pieces.append(re.escape(part[last:]))
        out.append("".join(pieces))
    text = ".*".join(out)
    text = re.sub(r"(\\ )+", r"\\s+", text)
    return re.compile(text)


def parse(path: pathlib.Path) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("$ "):
            steps.append((line[2:].strip(), []))
        elif steps and line.strip() and line.strip() != TRIMMED:
            steps[-1][1].append(line)
        elif not steps and line.strip():
            raise ValueError(f"{path}: output before the first command")
    return steps


def wait_port(port: int, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.1)
    return False


def run_file(path: pathlib.Path, build_dir: str, root: pathlib.Path) -> list[str]:
    problems = []
    ports: dict[str, int] = {}
    background: list[subprocess.Popen] = []
    try:
        for command, samples in parse(path):
            if command.split()[0] == "cmake":
                continue
            named = PORT.findall(command)
            for p in named:
                ports.setdefault(p, free_port())
            real = PORT.sub(lambda m: str(ports[m.group(0)]), command.replace("build/release", build_dir))
            if real.endswith("&"):
                background.append(subprocess.Popen(real[:-1], shell=True, cwd=root, start_new_session=True,
                                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                if not named or not wait_port(ports[named[0]]):
                    problems.append(f"{path.name}: `{command}` never listened on the port")
                    return problems
                continue
            proc = subprocess.run(["bash", "-o", "pipefail", "-c", real], cwd=root, capture_output=True,
                                  text=True, timeout=120)
            if proc.returncode != 0:
                problems.append(f"{path.name}: `{command}` exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
                continue
            lines = [ln.strip() for ln in proc.stdout.splitlines()]
            for sample in samples:
                rx = pattern(sample)
                if not any(rx.fullmatch(ln) for ln in lines):
                    problems.append(f"{path.name}: `{command}` printed no line like {sample.strip()!r}")
    finally:
        for p in background:
            try:
                os.killpg(p.pid, signal.SIGINT)
                p.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    return problems


def self_test() -> int:
    failed = 0
    good = pattern('"handoff_sends": 41234,')
    if not good.fullmatch('"handoff_sends": 7,'):
        print("self-test: a changed number failed")
        failed += 1
    if good.fullmatch('"handoff_send": 7,'):
        print("self-test: a changed key passed")
        failed += 1
    if not pattern("dgram_socketpair  50.680 … 38.495").fullmatch("dgram_socketpair   12.1 [1-2]   9.0"):
        print("self-test: a trimmed part did not match")
        failed += 1
    with tempfile.TemporaryDirectory() as d:
        f = pathlib.Path(d) / "t.txt"
        f.write_text("$ echo '\"rps\": 12.5'\n\"rps\": 99\n$ echo hello\nhullo\n", encoding="utf-8")
        problems = run_file(f, "build/release", pathlib.Path(d))
        if len(problems) != 1 or "hullo" not in problems[0]:
            print(f"self-test: expected exactly the 'hullo' line to fail, got {problems}")
            failed += 1
    print("self-test:", "failed" if failed else "a changed key fails, a changed number passes")
    return 1 if failed else 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 3:
        print("usage: check_tryit.py REPO_ROOT BUILD_DIR | --self-test")
        return 2
    root, build_dir = pathlib.Path(sys.argv[1]).resolve(), str(pathlib.Path(sys.argv[2]).resolve())
    files = sorted((root / "book" / "tryit").glob("*.txt"))
    # The files are independent (each command gets ports of its own), so they run side by
    # side; their problems are still reported in file order.
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        problems = [p for found in pool.map(lambda f: run_file(f, build_dir, root), files) for p in found]
    for p in problems:
        print(p)
    print(f"{len(files)} try-it files run, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
