#!/usr/bin/python3
"""peers/loops/loop_peer.py: the five loop workloads on CPython's asyncio and on uvloop
(chapter 04).

Role: the Python rows of the loop peers' table, the seed's own setting, where the
interpreter sits in front of every callback. One script, two loops: `--loop asyncio` runs
asyncio's default (selector) event loop, `--loop uvloop` the same code on uvloop's loop
(libuv underneath). The workloads' shape is README.md's, the same as loop_peer.h's for the
C++ peers: call_soon chains, call_soon_threadsafe from another thread answered through a
semaphore (threading.Semaphore: a lock and a condition in CPython, where the C++ peers use
a POSIX sem_t), call_later(1 s) then cancel(), run_in_executor on a ThreadPoolExecutor of 4
threads with the completion as a done-callback, and an echo over two protocols (client and
server) on the loop. CPU is time.process_time() (CLOCK_PROCESS_CPUTIME_ID, every thread);
sleeps are RUSAGE_SELF's voluntary context switches (every thread).

  loop_peer.py --loop asyncio|uvloop [--ops N] [--rounds R] [--only WORKLOAD] [--json PATH]
  loop_peer.py --check PATH

Run it with Debian's /usr/bin/python3 (python3-uvloop is Debian's package).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import platform
import resource
import socket
import statistics
import sys
import threading
import time

WORKLOADS = ["call_soon_chain", "threadsafe_ping_pong", "cancelled_timer",
             "executor_round_trip", "tcp_echo"]
MESSAGE = b"x" * 64   # the echo's message
TOOLS = {"asyncio": "loop-peer-asyncio", "uvloop": "loop-peer-uvloop"}


def ops_for(workload: str, ops: int) -> int:
    """N for the chain and the timers, N // 10 (at least 1) for the others."""
    return ops if workload in ("call_soon_chain", "cancelled_timer") else max(1, ops // 10)


def process_sleeps() -> int:
    """Every thread's voluntary context switches so far (RUSAGE_SELF ru_nvcsw)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw


class Span:
    """CPU (the whole process) and wall seconds, and the process's sleeps, from construction
    to stop()."""

    def __init__(self):
        self.cpu0, self.wall0 = time.process_time(), time.monotonic()
        self.sleeps0 = process_sleeps()

    def stop(self) -> tuple[float, float, int]:
        return (time.process_time() - self.cpu0, time.monotonic() - self.wall0,
                process_sleeps() - self.sleeps0)


def thread_sleeps() -> int:
    """The calling thread's voluntary context switches so far (RUSAGE_THREAD ru_nvcsw)."""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw


def never():
    sys.exit(f"{sys.argv[0]}: a cancelled timer fired")


# (1) Each callback schedules the next until `ops` have run.
def chain(loop, ops):
    left = ops

    def step():
        nonlocal left
        left -= 1
        if left > 0:
            loop.call_soon(step)
        else:
            loop.stop()

    span = Span()
    loop.call_soon(step)
    loop.run_forever()
    return span.stop()


# (2) Another thread posts; the loop's callback releases the semaphore it waits on.
# With --pin LOOP,POSTER the loop's thread and the poster run on those CPUs for this span
# only (os.sched_setaffinity(0, ...) sets the calling thread's CPUs on Linux). Each round trip
# is timed on the poster and appended to `trips` (ns).
def ping_pong(loop, ops, pin=None, trips=None):
    back = threading.Semaphore(0)

    def other():
        if pin:
            os.sched_setaffinity(0, {pin[1]})
        clock = time.monotonic_ns
        for _ in range(ops):
            t0 = clock()
            loop.call_soon_threadsafe(back.release)
            back.acquire()
            if trips is not None:
                trips.append(clock() - t0)
        loop.call_soon_threadsafe(loop.stop)

    mine = os.sched_getaffinity(0)
    if pin:
        os.sched_setaffinity(0, {pin[0]})
    span = Span()
    t = threading.Thread(target=other)
    t.start()
    loop.run_forever()
    t.join()
    result = span.stop()
    os.sched_setaffinity(0, mine)
    return result


def percentiles_us(xs):
    """p10, p50, p90 and p99 (nearest rank) of ns samples, in µs, as loop_peer.cpp gives them."""
    xs = sorted(xs)
    at = lambda p: xs[min(len(xs) - 1, int(p / 100 * (len(xs) - 1) + 0.5))] / 1000
    return {f"p{p}": at(p) for p in (10, 50, 90, 99)}


# (3) From one callback: call_later(1 s) and cancel(), `ops` times.
def cancelled_timers(loop, ops):
    def batch():
        for _ in range(ops):
            loop.call_later(1.0, never).cancel()
        loop.stop()

    span = Span()
    loop.call_soon(batch)
    loop.run_forever()
    return span.stop()


def wake_check(loop) -> int:
    for _ in range(100):
        loop.call_later(0.020, never).cancel()
    loop.call_later(0.060, loop.stop)
    before = thread_sleeps()
    loop.run_forever()
    return thread_sleeps() - before


# (4) A trivial job on the pool; its completion, a done-callback on the loop, submits the next.
def executor(loop, ops, pool):
    left = ops

    def job():
        return left + 1

    def done(fut):
        nonlocal left
        fut.result()
        left -= 1
        if left > 0:
            loop.run_in_executor(pool, job).add_done_callback(done)
        else:
            loop.stop()

    span = Span()
    loop.call_soon(lambda: loop.run_in_executor(pool, job).add_done_callback(done))
    loop.run_forever()
    return span.stop()


# (5) One connection on loopback, client and server on the loop: the client writes 64
# bytes, the server writes back what it reads, the client writes again once all 64 are in.
class Server(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)


class Client(asyncio.Protocol):
    def __init__(self, loop):
        self.loop, self.got, self.left = loop, 0, 0

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.got += len(data)
        if self.got < len(MESSAGE):
            return
        self.got = 0
        self.left -= 1
        if self.left > 0:
            self.transport.write(MESSAGE)
        else:
            self.loop.stop()


def echo(loop, ops):
    server = loop.run_until_complete(loop.create_server(Server, "127.0.0.1", 0))
    port = server.sockets[0].getsockname()[1]
    transport, client = loop.run_until_complete(
        loop.create_connection(lambda: Client(loop), "127.0.0.1", port))
    transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client.left = ops
    span = Span()
    transport.write(MESSAGE)
    loop.run_forever()
    got = span.stop()
    transport.close()
    server.close()
    loop.run_until_complete(server.wait_closed())
    return got


def new_loop(name: str):
    if name == "uvloop":
        import uvloop
        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def machine() -> dict:
    """The C++ probes' machine object: cpu, cores, kernel, arch."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    cpu = value.strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "arch": platform.machine()}


def figure(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def measure(args) -> dict:
    loop = new_loop(args.loop)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
    trips = []   # the measured rounds' ping-pong trips, ns
    run = {"call_soon_chain": lambda n: chain(loop, n),
           "threadsafe_ping_pong": lambda n: ping_pong(loop, n, args.pin, trips),
           "cancelled_timer": lambda n: cancelled_timers(loop, n),
           "executor_round_trip": lambda n: executor(loop, n, pool),
           "tcp_echo": lambda n: echo(loop, n)}
    chosen = [w for w in WORKLOADS if args.only in (None, w)]
    for w in chosen:   # warm-up, unmeasured, at a tenth of the count
        run[w](max(1, ops_for(w, args.ops) // 10))
    trips.clear()
    cpu = {w: [] for w in chosen}
    wall = {w: [] for w in chosen}
    sleeps = {w: [] for w in chosen}
    for _ in range(args.rounds):
        for w in chosen:
            n = ops_for(w, args.ops)
            c, t, z = run[w](n)
            cpu[w].append(c * 1e6 / n)
            wall[w].append(t * 1e6 / n)
            sleeps[w].append(z / n)
    results = []
    for w in chosen:
        r = {"loop": args.loop, "workload": w, "ops": ops_for(w, args.ops),
             "rounds": args.rounds, "cpu_us_per_op": figure(cpu[w]),
             "wall_us_per_op": figure(wall[w]), "sleeps_per_op": figure(sleeps[w])}
        if w == "threadsafe_ping_pong" and trips:
            r["trip_wall_us"] = percentiles_us(trips)
        if w == "cancelled_timer":
            r["timers_fired"] = 0   # a cancelled timer that fires ends the program at once
            r["wake_check_sleeps"] = wake_check(loop)
        results.append(r)
    pool.shutdown()
    loop.close()
    settings = {"ops": args.ops, "rounds": args.rounds}
    if args.pin:
        settings["pin"] = {"loop_cpu": args.pin[0], "poster_cpu": args.pin[1]}
    return {"tool": TOOLS[args.loop], "machine": machine(), "settings": settings,
            "results": results}


def is_figure(f) -> bool:
    return (isinstance(f, dict) and all(isinstance(f.get(k), (int, float)) for k in
                                        ("median", "min", "max"))
            and 0 <= f["min"] <= f["median"] <= f["max"])


def problems(doc) -> list[str]:
    """loop_peer.cpp's judge, for the Python peers' files: every workload once, for one
    loop, with the counts --ops asked for, ordered figures, positive wall spans, no
    cancelled timer fired, and the wake check's loop asleep at least once."""
    try:
        ops, rounds = doc["settings"]["ops"], doc["settings"]["rounds"]
        results, _, _ = doc["results"], doc["tool"], doc["machine"]
    except (KeyError, TypeError):
        return ["lacks tool, machine, settings.ops or results"]
    out, loops = [], set()
    for w in WORKLOADS:
        mine = [r for r in results if r.get("workload") == w]
        if len(mine) != 1:
            out.append(f"{w}: {len(mine)} results, not 1")
            continue
        r = mine[0]
        loops.add(r.get("loop"))
        if r.get("ops") != ops_for(w, ops):
            out.append(f"{w}: ops is not {ops_for(w, ops)}")
        if r.get("rounds") != rounds:
            out.append(f"{w}: rounds is not {rounds}")
        if not is_figure(r.get("cpu_us_per_op")):
            out.append(f"{w}: cpu_us_per_op is not an ordered median, min, max")
        if not is_figure(r.get("sleeps_per_op")):
            out.append(f"{w}: sleeps_per_op is not an ordered median, min, max")
        if not is_figure(r.get("wall_us_per_op")) or r["wall_us_per_op"]["min"] <= 0:
            out.append(f"{w}: wall_us_per_op is not an ordered, positive median, min, max")
        if w == "cancelled_timer":
            if r.get("timers_fired") != 0:
                out.append(f"{w}: a cancelled timer fired")
            if r.get("wake_check_sleeps", 0) < 1:
                out.append(f"{w}: the wake check's loop never slept (its live timer was not "
                           f"waited for)")
    if len(loops) > 1 or None in loops or "" in loops:
        out.append(f"results name more than one loop, or none: {sorted(map(str, loops))}")
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="loop_peer.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--loop", choices=sorted(TOOLS))
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", choices=WORKLOADS)
    ap.add_argument("--json")
    ap.add_argument("--pin", type=lambda v: [int(c) for c in v.split(",")], metavar="LOOP,POSTER",
                    help="in the ping-pong, pin the loop's thread and the poster to these two CPUs")
    ap.add_argument("--check", metavar="PATH")
    args = ap.parse_args(argv)
    if args.check:
        try:
            with open(args.check, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"loop_peer.py --check: {args.check}: {e}", file=sys.stderr)
            return 1
        found = problems(doc)
        for p in found:
            print(f"loop_peer.py --check: {p}", file=sys.stderr)
        if not found:
            print(f"loop_peer.py --check: {args.check} lists every workload for "
                  f"{doc['results'][0]['loop']}")
        return 1 if found else 0
    if args.loop is None or args.ops < 10 or args.rounds < 1:
        ap.error("measuring needs --loop, --ops >= 10 and --rounds >= 1")
    doc = measure(args)
    text = json.dumps(doc, indent=2) + "\n"
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
