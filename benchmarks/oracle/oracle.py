#!/usr/bin/python3
"""benchmarks/oracle/oracle.py: CPython's asyncio as the ordering oracle of the callback loop (chapter 04).

Role: run a scheduling scenario (scenarios/*.scenario, format in README.md) on a real
event loop and print the order in which its callbacks ran, one label a line; the
committed *.expected logs are asyncio's, and a runner over our own loop must print the
same (loop_oracle.cpp, which `compare` runs, reads the same files).

  oracle.py SCENARIO [--loop asyncio|uvloop|drain|split]
      print SCENARIO's log under that loop
  oracle.py check [--loop asyncio|uvloop]
      run every scenario and compare with its committed log: NAME.expected for asyncio;
      for uvloop the same, except the scenarios in UVLOOP_DIFFERS, which must print
      NAME.uvloop instead (and must still differ from asyncio, so the note cannot outlive
      the difference); exit 1 on any mismatch, with a diff
  oracle.py self-test
      the negative controls: asyncio reshaped the two wrong ways of seed 003's "before"
      (drain: a turn runs to quiescence; split: thread-posted callbacks wait in their own
      queue and join behind the local ones at the next turn) must fail exactly the
      scenarios listed in BROKEN_FAILS, so the scenarios can tell those shapes apart
  oracle.py compare RUNNER SCENARIO [--turn generation|drain]
      our own loop: run `RUNNER SCENARIO --turn T` (loop-oracle, the C++ runner over
      evloop::EventLoop) and compare its output with SCENARIO's committed asyncio log, byte
      for byte; exit 1 on a mismatch (with a diff) or a failed run
  oracle.py compare RUNNER --turn drain --fails-exactly drain
      our loop's negative control: run every scenario as above and require the mismatches
      to be exactly BROKEN_FAILS["drain"], the scenarios that tell the turn shapes apart

`drain` and `split` exist only for self-test; they are not loops anyone should compare
against.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import difflib
import faulthandler
import queue
import socket
import subprocess
import sys
import threading
import time
from asyncio import events
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"

# A scenario that must finish well within this, or the run is a hang.
WATCHDOG_S = 20

# Where uvloop's order is not asyncio's, and why (README.md, "uvloop").
UVLOOP_DIFFERS = {
    "stop_mid_turn": "uvloop's stop() is itself a queued callback, so it takes effect one turn "
                     "later: the callbacks scheduled before it (A1, T1, B1) still run in run 1",
    "restart_keeps_fifo": "the same queued stop(): run 1 also runs A1 and T0",
    "timers_and_ready": "libuv runs due timers in its timer phase, before the idle handler "
                        "that runs uvloop's ready queue; asyncio appends them behind it",
    "chain_beside_socket": "libuv polls for I/O in the same iteration, right after the idle "
                           "handler that ran the callback which made the socket readable; "
                           "uvloop runs the reader from the poll, before the chain's first step",
}

# Which scenarios each wrong loop must fail (self-test): exactly these, no more, no fewer.
BROKEN_FAILS = {
    "drain": {"chain_beside_socket", "restart_keeps_fifo", "stop_mid_turn", "timers_and_ready"},
    "split": {"alternate_local_thread", "restart_keeps_fifo", "stop_mid_turn", "two_producers"},
}


class DrainLoop(asyncio.SelectorEventLoop):
    """Seed 003's "before": after asyncio's turn, keep running what the turn scheduled
    (up to 1024 callbacks) before the next poll."""

    def _run_once(self):
        super()._run_once()
        ran = 0
        while self._ready and ran < 1024:
            handle = self._ready.popleft()
            if not handle._cancelled:
                handle._run()
            ran += 1


class SplitLoop(asyncio.SelectorEventLoop):
    """Seed 003's unmerged queues: thread-posted callbacks go to their own queue, which
    joins the ready queue behind the local callbacks when the next turn starts."""

    def __init__(self):
        super().__init__()
        self._remote = collections.deque()

    def call_soon_threadsafe(self, callback, *args, context=None):
        handle = events.Handle(callback, args, self, context)
        self._remote.append(handle)
        self._write_to_self()
        return handle

    def _run_once(self):
        while self._remote:
            self._ready.append(self._remote.popleft())
        super()._run_once()


def new_loop(kind: str) -> asyncio.AbstractEventLoop:
    if kind == "asyncio":
        return asyncio.SelectorEventLoop()
    if kind == "uvloop":
        import uvloop
        return uvloop.new_event_loop()
    return {"drain": DrainLoop, "split": SplitLoop}[kind]()


class Scenario:
    """main: the actions run on the loop's thread outside any run; bodies: label -> the
    actions its callback runs after logging the label."""

    def __init__(self, path: Path):
        self.name = path.stem
        self.main: list[list[str]] = []
        self.bodies: dict[str, list[list[str]]] = {}
        section, seen_main = None, False
        for number, raw in enumerate(path.read_text().splitlines(), 1):
            line = raw.split("#", 1)[0].rstrip()
            if not line:
                continue
            where = f"{path.name}:{number}"
            if not line[0].isspace():
                words = line[:-1].split() if line.endswith(":") else []
                if words == ["main"] and not seen_main:
                    section, seen_main = self.main, True
                elif len(words) == 2 and words[0] == "on" and words[1] not in self.bodies:
                    section = self.bodies[words[1]] = []
                else:
                    raise SystemExit(f"{where}: a section is 'main:' (once) or 'on LABEL:' (once per label)")
                continue
            if section is None:
                raise SystemExit(f"{where}: an action outside a section")
            action = line.split()
            check_action(action, where, in_main=section is self.main)
            section.append(action)
        if not seen_main:
            raise SystemExit(f"{path.name}: no 'main:' section")


# Each verb's arguments: W a word (a label or a producer), N a decimal integer; a final
# "+" means one or more of the last kind.
SIGNATURES = {"soon": "W", "at": "NW", "cancel": "W", "block": "N", "stop": "", "run": "",
              "chain": "WN", "watch": "W", "post": "WW+", "post-later": "NWW+"}


def check_action(action: list[str], where: str, in_main: bool) -> None:
    verb, args = action[0], action[1:]
    if verb not in SIGNATURES:
        raise SystemExit(f"{where}: unknown action {verb}")
    kinds = SIGNATURES[verb].rstrip("+")
    if SIGNATURES[verb].endswith("+"):
        kinds += kinds[-1] * max(0, len(args) - len(kinds))
    if len(args) != len(kinds) or any(k == "N" and not a.isdigit() for k, a in zip(kinds, args)):
        raise SystemExit(f"{where}: {verb} takes {SIGNATURES[verb] or 'nothing'} (W a word, N a number)")
    if verb == "run" and not in_main:
        raise SystemExit(f"{where}: run is for main only")


class Producer:
    """A named thread that posts with call_soon_threadsafe when told to."""

    def __init__(self, loop, runner: "Runner"):
        self.loop, self.runner = loop, runner
        self.orders: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while (order := self.orders.get()) is not None:
            delay_s, labels, done = order
            time.sleep(delay_s)
            for label in labels:
                self.loop.call_soon_threadsafe(self.runner.callback(label))
            if done is not None:
                done.set()

    def post(self, labels, delay_s=0.0, wait=True):
        done = threading.Event() if wait else None
        self.orders.put((delay_s, labels, done))
        if done is not None and not done.wait(WATCHDOG_S):
            raise SystemExit("a producer did not post in time")

    def close(self):
        self.orders.put(None)
        self.thread.join(WATCHDOG_S)


class Runner:
    def __init__(self, scenario: Scenario, loop):
        self.scenario, self.loop = scenario, loop
        self.log: list[str] = []
        self.handles: dict[str, asyncio.Handle] = {}
        self.producers: dict[str, Producer] = {}
        self.sockets: list[socket.socket] = []
        self.runs = 0
        self.errors: list[str] = []
        loop.set_exception_handler(self.on_error)
        self.t0 = loop.time()

    def on_error(self, loop, context):
        """A callback that raised is a broken scenario or runner, never an order to print."""
        self.errors.append(f"{context.get('message')}: {context.get('exception')!r}")
        loop.stop()

    def callback(self, label: str):
        def run():
            self.log.append(label)
            self.perform(self.scenario.bodies.get(label, []))
        return run

    def chain_step(self, name: str, k: int, n: int):
        def run():
            self.log.append(f"{name}.{k}")
            if k < n:
                self.loop.call_soon(self.chain_step(name, k + 1, n))
            else:
                self.perform(self.scenario.bodies.get(name, []))
        return run

    def watch(self, label: str):
        ours, theirs = socket.socketpair()
        self.sockets += [ours, theirs]
        ours.setblocking(False)

        def fired():
            self.loop.remove_reader(ours.fileno())
            ours.recv(1)
            self.callback(label)()
        self.loop.add_reader(ours.fileno(), fired)
        theirs.send(b"x")

    def producer(self, name: str) -> Producer:
        if name not in self.producers:
            self.producers[name] = Producer(self.loop, self)
        return self.producers[name]

    def perform(self, actions):
        for verb, *args in actions:
            if verb == "soon":
                self.handles[args[0]] = self.loop.call_soon(self.callback(args[0]))
            elif verb == "at":
                when = self.t0 + int(args[0]) / 1000
                self.handles[args[1]] = self.loop.call_at(when, self.callback(args[1]))
            elif verb == "cancel":
                self.handles[args[0]].cancel()
            elif verb == "post":
                self.producer(args[0]).post(args[1:])
            elif verb == "post-later":
                self.producer(args[1]).post(args[2:], delay_s=int(args[0]) / 1000, wait=False)
            elif verb == "block":
                time.sleep(int(args[0]) / 1000)
            elif verb == "stop":
                self.loop.stop()
            elif verb == "chain":
                self.loop.call_soon(self.chain_step(args[0], 1, int(args[1])))
            elif verb == "watch":
                self.watch(args[0])
            elif verb == "run":
                self.runs += 1
                self.log.append(f"-- run {self.runs}")
                self.loop.run_forever()
                if self.errors:
                    raise SystemExit(f"{self.scenario.name}: " + "; ".join(self.errors))

    def execute(self) -> list[str]:
        try:
            self.perform(self.scenario.main)
        finally:
            for p in self.producers.values():
                p.close()
            for s in self.sockets:
                s.close()
            self.loop.close()
        return self.log


def run_scenario(path: Path, kind: str) -> list[str]:
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    try:
        return Runner(Scenario(path), new_loop(kind)).execute()
    finally:
        faulthandler.cancel_dump_traceback_later()


def scenario_paths() -> list[Path]:
    return sorted(SCENARIOS.glob("*.scenario"))


def mismatches(kind: str, quiet: bool = False) -> set[str]:
    """The scenarios whose log under `kind` is not the committed one; prints each diff."""
    bad = set()
    for path in scenario_paths():
        expected = path.with_suffix(".expected").read_text().splitlines()
        want = expected
        if kind == "uvloop" and path.stem in UVLOOP_DIFFERS:
            want = path.with_suffix(".uvloop").read_text().splitlines()
        got = run_scenario(path, kind)
        failed = got != want
        if kind == "uvloop" and path.stem in UVLOOP_DIFFERS and got == expected:
            failed = True
            if not quiet:
                print(f"{path.stem}: uvloop now agrees with asyncio; drop it from UVLOOP_DIFFERS")
        if failed:
            bad.add(path.stem)
            if not quiet:
                print("\n".join(difflib.unified_diff(want, got, f"{path.stem} (committed)",
                                                     f"{path.stem} ({kind})", lineterm="")))
        elif not quiet:
            print(f"{path.stem}: {kind} prints the committed log")
    return bad


def runner_verdict(runner: str, path: Path, turn: str, quiet: bool = False) -> str:
    """"same" when our loop's runner prints the committed asyncio log for `path` byte for
    byte, "differs" when it prints another (the diff, unless `quiet`), "failed" when it
    exits non-zero or hangs (always said)."""
    want = path.with_suffix(".expected").read_bytes()
    try:
        run = subprocess.run([runner, str(path), "--turn", turn], capture_output=True,
                             timeout=WATCHDOG_S + 10)
    except subprocess.TimeoutExpired:
        print(f"{path.stem}: {runner} ran past {WATCHDOG_S + 10} s")
        return "failed"
    if run.returncode != 0:
        print(f"{path.stem}: {runner} exited with {run.returncode}: "
              f"{run.stderr.decode(errors='replace').strip()}")
        return "failed"
    if run.stdout == want:
        if not quiet:
            print(f"{path.stem}: our loop ({turn}) prints asyncio's log")
        return "same"
    if not quiet:
        print("\n".join(difflib.unified_diff(
            want.decode().split("\n"), run.stdout.decode(errors="replace").split("\n"),
            f"{path.stem} (asyncio, committed)", f"{path.stem} (our loop, {turn})", lineterm="")))
    return "differs"


def compare(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="oracle.py compare")
    parser.add_argument("runner", help="the runner over our loop (BUILD/bin/loop-oracle)")
    parser.add_argument("scenario", nargs="?", type=Path)
    parser.add_argument("--turn", choices=("generation", "drain"), default="generation")
    parser.add_argument("--fails-exactly", choices=sorted(BROKEN_FAILS),
                        help="run every scenario; the mismatches must be BROKEN_FAILS[this]")
    args = parser.parse_args(argv)
    if args.fails_exactly is None:
        if args.scenario is None:
            parser.error("a scenario, or --fails-exactly")
        return 0 if runner_verdict(args.runner, args.scenario, args.turn) == "same" else 1
    verdicts = {p.stem: runner_verdict(args.runner, p, args.turn, quiet=True) for p in scenario_paths()}
    if "failed" in verdicts.values():
        return 1  # a crash or a hang is not the mismatch this control looks for
    want = BROKEN_FAILS[args.fails_exactly]
    got = {name for name, v in verdicts.items() if v == "differs"}
    verdict = "as required" if got == want else f"but must fail exactly {sorted(want)}"
    print(f"our loop ({args.turn}): fails {sorted(got)} {verdict}")
    return 0 if got == want else 1


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "compare":
        return compare(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] in ("check", "self-test"):
        parser = argparse.ArgumentParser()
        parser.add_argument("mode")
        parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
        args = parser.parse_args()
        if args.mode == "check":
            if len(scenario_paths()) < 8:
                print("fewer than 8 scenarios")
                return 1
            return 1 if mismatches(args.loop) else 0
        status = 0
        for kind, want in BROKEN_FAILS.items():
            got = mismatches(kind, quiet=True)
            verdict = "as required" if got == want else f"but must fail exactly {sorted(want)}"
            print(f"{kind}: fails {sorted(got)} {verdict}")
            status |= got != want
        return status
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", type=Path)
    parser.add_argument("--loop", choices=("asyncio", "uvloop", "drain", "split"), default="asyncio")
    args = parser.parse_args()
    print("\n".join(run_scenario(args.scenario, args.loop)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
