#!/usr/bin/env python3
"""probes/pipelined_flood: the memory reproducer of issue 38 (chapter 06).

Role: N connections each write M pipelined GETs (as much as the kernel takes, without
reading an answer), are held, then close (a reset, since answers are unread) or shut their
side; the server's VmRSS is printed before, during (held), at its peak while they close,
and after, and a fresh client checks that it still serves. Run it against a stage started
by hand, e.g.

    build/release/bin/handoff-06 --port 8080 & \
        benchmarks/probes/pipelined_flood.py $! 8080 --conns 400 --requests 20000

Before the read-ahead cap a closing flood parsed a whole read into requests on every
connection; the README's "Memory" section gives the bound this checks by eye, and
chapters/06-full-system/tests/pressure_test.cpp checks it in CTest, scaled.
"""
import argparse
import socket
import time


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pid", type=int, help="the server's process id (for /proc/PID/status)")
    ap.add_argument("port", type=int)
    ap.add_argument("--conns", type=int, default=400)
    ap.add_argument("--requests", type=int, default=20000, help="pipelined GETs per connection")
    ap.add_argument("--stall", type=float, default=1.0, help="stop writing after this many s without progress")
    ap.add_argument("--hold", type=float, default=1.0, help="s to hold the connections open before closing")
    ap.add_argument("--close", choices=["reset", "shutdown"], default="reset",
                    help="close with answers unread (the kernel resets) or shut the write side first")
    a = ap.parse_args()

    request = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"
    burst = memoryview(request * a.requests)
    print(f"before: {rss_kib(a.pid)} KiB", flush=True)
    conns = []
    for _ in range(a.conns):
        s = socket.create_connection(("127.0.0.1", a.port))
        s.setblocking(False)
        conns.append([s, 0])
    last_progress = time.monotonic()
    while time.monotonic() - last_progress < a.stall and any(sent < len(burst) for _, sent in conns):
        for c in conns:
            if c[1] == len(burst):
                continue
            try:
                c[1] += c[0].send(burst[c[1]:])
                last_progress = time.monotonic()
            except BlockingIOError:
                pass
        time.sleep(0.01)
    sent = sum(sent for _, sent in conns) // len(request)
    time.sleep(a.hold)
    print(f"during: {rss_kib(a.pid)} KiB ({sent} requests written, connections held)", flush=True)
    start = time.monotonic()
    for s, _ in conns:
        if a.close == "shutdown":
            s.shutdown(socket.SHUT_WR)
        else:
            s.close()
    peak = 0
    while time.monotonic() - start < 3:
        peak = max(peak, rss_kib(a.pid))
        time.sleep(0.02)
    print(f"closing: peak {peak} KiB within 3 s", flush=True)
    for s, _ in conns:
        s.close()
    time.sleep(2)
    print(f"after: {rss_kib(a.pid)} KiB", flush=True)
    with socket.create_connection(("127.0.0.1", a.port), timeout=5) as probe:
        probe.sendall(request)
        print("still serving:", probe.recv(100).split(b"\r\n")[0].decode(), flush=True)


if __name__ == "__main__":
    main()
