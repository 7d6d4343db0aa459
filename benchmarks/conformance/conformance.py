#!/usr/bin/python3
"""benchmarks/conformance/conformance.py: RFC 9112/9110 server requirements, rule by rule (chapter 01).

Role: send each rule of rules.toml (raw request bytes) to a running server over loopback,
record what came back (the status of every response, and whether the server closed the
connection), judge it against the rule's expected outcome, and write the results as JSON.

  conformance.py check --binary build/release/bin/handoff-01 --out FILE
      start the stage on port 0, run every rule, write FILE, exit 1 if a MUST fails
  conformance.py table --binary build/release/bin/handoff-01 --nginx /usr/sbin/nginx --out FILE
      the same against the stage and a throwaway nginx (the book's table); never fails on
      an answer, only when a server cannot be started
  conformance.py self-test
      the negative control: a server that answers every head with 200 and never closes
      must break the MUSTs it obviously breaks, and keep those it obviously keeps

A rule expects a list of responses in order (1xx interim ones included), each written as
alternatives joined by "|": "200" (exactly), "4xx" (a class), "!400" (anything but 400;
every "!" alternative must hold), e.g. "200|400" or "!400". An expected close is
true (the server must close after its last response), false (it must keep the
connection open), or absent (either). A rule's request is one string or a list of
strings sent PAUSE_S apart (to let a server answer between them, e.g. 100 Continue);
"{c*N}" in it stands for N copies of the character c.

A rule may carry `known`: why the stage breaks it on purpose (what it would take to keep).
`check` does not fail on such a rule, but does fail when it starts to hold, so that the
note cannot outlive the break.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(HERE, "rules.toml")
NGINX_CONF = os.path.join(HERE, "..", "peers", "nginx.conf.in")
READY_RE = re.compile(rb"handoff: listening on http://(?:\[[^\]\s]+\]|[^\s:\[]+):(\d+)")  # [::1]:PORT too
LEVELS = ("MUST", "SHOULD", "MAY")

PAUSE_S = 0.15        # between the parts of a request sent in pieces
QUIET_S = 0.3         # after the expected responses: no EOF within this means "kept open"
DEADLINE_S = 5.0      # per rule, whatever happens
START_S = 10.0        # for a server to become ready
CONCURRENT_RULES = 8  # connections open at once (each server under test takes far more)


# ---------------------------------------------------------------- one exchange

def request_methods(wire: bytes) -> list[str]:
    """The method of every request line in the bytes, in order (decides HEAD bodies)."""
    return [m.decode() for m in re.findall(rb"(?:^|\n)([A-Za-z]+) \S* HTTP/", wire)]


class Parsed:
    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.junk = False  # bytes that are not a well-formed response


def parse_responses(data: bytes, methods: list[str], eof: bool) -> Parsed:
    """Every complete response in data: 1xx interim ones too, bodies skipped by their framing."""
    out = Parsed()
    pos = 0
    final = 0
    while pos < len(data):
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            out.junk = eof
            break
        lines = data[pos:end].split(b"\r\n")
        m = re.match(rb"HTTP/1\.[01] (\d{3}) ", lines[0] + b" ")
        if not m:
            out.junk = True
            break
        status = int(m.group(1))
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers.setdefault(name.strip().lower(), value.strip())
        body = end + 4
        method = methods[final] if final < len(methods) else "GET"
        if 100 <= status < 200 or status in (204, 304) or method == "HEAD":
            nxt = body
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            nxt = skip_chunked(data, body)
            if nxt is None:
                out.junk = eof
                break
        elif b"content-length" in headers:
            nxt = body + int(headers[b"content-length"])
            if nxt > len(data):
                out.junk = eof
                break
        else:  # read to the close
            if not eof:
                break
            nxt = len(data)
        out.statuses.append(status)
        if status >= 200:
            final += 1
        pos = nxt
    return out


def skip_chunked(data: bytes, pos: int) -> int | None:
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            return None
        size = int(data[pos:eol].split(b";")[0], 16)
        pos = eol + 2
        if size == 0:
            end = data.find(b"\r\n\r\n", pos - 2)
            return None if end < 0 else end + 4
        pos += size + 2
        if pos > len(data):
            return None


def final_count(spec: list[str]) -> int:
    """How many final (non-1xx) responses the expectation names; at least one."""
    return max(1, sum(1 for s in spec if not s.startswith("1")))


def exchange(host: str, port: int, parts: list[bytes], expected_finals: int) -> dict:
    """Send the parts, read until the server closes or has answered and gone quiet."""
    wire = b"".join(parts)
    methods = request_methods(wire)
    data = b""
    closed = False
    start = time.monotonic()
    with socket.create_connection((host, port), timeout=DEADLINE_S) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i, part in enumerate(parts):
            if i > 0:
                data, closed = read_for(s, data, PAUSE_S)
                if closed:
                    break
            try:
                s.sendall(part)
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
        quiet_since = time.monotonic()
        while not closed and time.monotonic() - start < DEADLINE_S:
            before = len(data)
            data, closed = read_for(s, data, 0.05)
            if len(data) != before:
                quiet_since = time.monotonic()
            finals = sum(1 for st in parse_responses(data, methods, False).statuses if st >= 200)
            if finals >= expected_finals and time.monotonic() - quiet_since >= QUIET_S:
                break
    parsed = parse_responses(data, methods, True)
    return {"statuses": parsed.statuses, "closed": closed, "junk": parsed.junk,
            "first_line": data.split(b"\r\n", 1)[0].decode("latin-1")}


def read_for(s: socket.socket, data: bytes, seconds: float) -> tuple[bytes, bool]:
    """Read what arrives within `seconds`; True once the peer closed (EOF or reset)."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return data, False
        ready, _, _ = select.select([s], [], [], left)
        if not ready:
            return data, False
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk


# ---------------------------------------------------------------- judging

def status_ok(item_list: list[str], status: int) -> bool:
    positives = [i for i in item_list if not i.startswith("!")]
    negatives = [int(i[1:]) for i in item_list if i.startswith("!")]
    if status in negatives:
        return False
    if not positives:
        return True
    for item in positives:
        if item.endswith("xx") and status // 100 == int(item[0]):
            return True
        if item.isdigit() and status == int(item):
            return True
    return False


def judge(rule: dict, got: dict) -> tuple[bool, str]:
    """(holds, why not)."""
    expect = rule["expect"]
    statuses = got["statuses"]
    if got["junk"]:
        return False, "bytes that are not a well-formed response"
    # Every expected response in order; a list of alternatives per position.
    want = expect["status"]
    if len(statuses) != len(want):
        return False, f"{len(statuses)} responses, expected {len(want)}"
    for st, alternatives in zip(statuses, want):
        if not status_ok(alternatives.split("|"), st):
            return False, f"status {st}, expected {alternatives}"
    if "close" in expect and expect["close"] != got["closed"]:
        return False, "closed" if got["closed"] else "kept open"
    return True, ""


def load_rules(path: str = RULES) -> list[dict]:
    with open(path, "rb") as f:
        rules = tomllib.load(f)["rule"]
    seen = set()
    for r in rules:
        for key in ("id", "rfc", "level", "text", "request", "expect"):
            if key not in r:
                raise SystemExit(f"rule {r.get('id', '?')}: no {key}")
        if r["level"] not in LEVELS:
            raise SystemExit(f"rule {r['id']}: level {r['level']} is not one of {LEVELS}")
        if r["id"] in seen:
            raise SystemExit(f"rule {r['id']}: duplicate id")
        seen.add(r["id"])
    return rules


def expand(text: str) -> str:
    return re.sub(r"\{(.)\*(\d+)\}", lambda m: m.group(1) * int(m.group(2)), text)


def run_rule(host: str, port: int, rule: dict) -> dict:
    req = rule["request"]
    parts = [expand(p).encode("latin-1") for p in (req if isinstance(req, list) else [req])]
    got = exchange(host, port, parts, final_count(rule["expect"]["status"]))
    holds, why = judge(rule, got)
    return {**got, "holds": holds, "why": why}


def run_rules(host: str, port: int, rules: list[dict]) -> list[dict]:
    """Every rule on its own connection, CONCURRENT_RULES at a time, results in rule order.

    Most of a rule's time is QUIET_S of silence (the wait that tells "kept open" from a
    late close), so the rules run side by side; each one's verdict is about its own
    connection only, which is what makes that safe."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=CONCURRENT_RULES) as pool:
        return list(pool.map(lambda r: run_rule(host, port, r), rules))


# ---------------------------------------------------------------- servers

class Server:
    def __init__(self, argv: list[str], port: int | None, tmp: str | None = None, host: str = "127.0.0.1") -> None:
        self.tmp = tmp
        self.host = host
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     start_new_session=True, cwd=tmp or None)
        self.port = port if port is not None else self._read_port()
        self._wait_listening()

    def _read_port(self) -> int:
        ready, _, _ = select.select([self.proc.stdout], [], [], START_S)
        line = self.proc.stdout.readline() if ready else b""
        m = READY_RE.search(line)
        if not m:
            self.stop()
            raise SystemExit(f"server did not become ready: {line!r}")
        return int(m.group(1))

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            try:
                socket.create_connection((self.host, self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise SystemExit(f"nothing listens on port {self.port}")

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


def start_stage(binary: str, host: str = "127.0.0.1") -> Server:
    return Server([binary, "--host", host, "--port", "0"], None, host=host)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(nginx: str) -> Server:
    """nginx with the peers' `return 200` configuration, on a free port, in a temp prefix."""
    tmp = tempfile.mkdtemp(prefix="conformance-nginx-")
    port = free_port()
    with open(NGINX_CONF) as f:
        conf = f.read().replace("@PORT@", str(port)).replace("@PREFIX@", tmp)
    with open(os.path.join(tmp, "nginx.conf"), "w") as f:
        f.write(conf)
    return Server([nginx, "-p", tmp, "-c", os.path.join(tmp, "nginx.conf"), "-e", os.path.join(tmp, "error.log")],
                  port, tmp)


def measure(server: Server, rules: list[dict]) -> list[dict]:
    try:
        return run_rules(server.host, server.port, rules)
    finally:
        server.stop()


# ---------------------------------------------------------------- negative control

def yes_server() -> tuple[socket.socket, threading.Thread]:
    """Answers 200 to every blank line it reads (so every head), never closes."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve(conn: socket.socket) -> None:
        with conn:
            seen = b""
            while chunk := conn.recv(65536):
                seen += chunk
                while b"\r\n\r\n" in seen:
                    seen = seen.split(b"\r\n\r\n", 1)[1]
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return listener, thread


def self_test(rules: list[dict]) -> int:
    must_break = ["host-missing", "te-http10", "cl-not-a-number", "connection-close", "target-too-long"]
    must_keep = ["persistent-by-default", "value-ows", "cl-body"]
    rules = [r for r in rules if r["id"] in must_break + must_keep]
    listener, _ = yes_server()
    try:
        results = dict(zip((r["id"] for r in rules), run_rules("127.0.0.1", listener.getsockname()[1], rules)))
    finally:
        listener.close()
    wrong = [i for i in must_break if results[i]["holds"]] + [i for i in must_keep if not results[i]["holds"]]
    print("self-test:", "the judge is wrong about " + ", ".join(wrong) if wrong else "ok")
    return 1 if wrong else 0


# ---------------------------------------------------------------- main

def write(path: str, rules: list[dict], servers: dict[str, list[dict]]) -> None:
    rows = []
    for i, r in enumerate(rules):
        rows.append({"id": r["id"], "rfc": r["rfc"], "level": r["level"], "text": r["text"],
                     "request": r["request"], "expect": r["expect"], "known": r.get("known", ""),
                     "results": {name: res[i] for name, res in servers.items()}})
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"servers": list(servers), "rules": rows}, f, indent=1)


def describe(got: dict) -> str:
    return " ".join(map(str, got["statuses"])) + (", closed" if got["closed"] else ", open")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["check", "table", "self-test"])
    ap.add_argument("--binary", help="the stage binary (started with --port 0)")
    ap.add_argument("--host", default="127.0.0.1", help="the stage's --host, and where the rules connect (::1: IPv6)")
    ap.add_argument("--nginx", default="/usr/sbin/nginx", help="nginx, for `table`")
    ap.add_argument("--rules", default=RULES)
    ap.add_argument("--only", help="run only rules whose id matches this regex")
    ap.add_argument("--out", help="results JSON to write")
    args = ap.parse_args()

    rules = load_rules(args.rules)
    if args.mode == "self-test":
        return self_test(rules)
    if not args.binary or not args.out:
        ap.error("check and table need --binary and --out")
    if args.only:
        rules = [r for r in rules if re.search(args.only, r["id"])]
    servers = {"handoff": measure(start_stage(args.binary, args.host), rules)}
    if args.mode == "table":
        servers["nginx"] = measure(start_nginx(args.nginx), rules)
    write(args.out, rules, servers)

    failed = 0
    for r, got in zip(rules, servers["handoff"]):
        if got["holds"] and "known" in r:
            failed += 1
            print(f"{r['level']:6} {r['id']:32} holds now: remove its `known` note")
        elif not got["holds"]:
            failed += r["level"] == "MUST" and "known" not in r
            note = f"  [known: {r['known']}]" if "known" in r else ""
            print(f"{r['level']:6} {r['id']:32} {describe(got):20} {got['why']}  ({r['rfc']}){note}")
    print(f"{len(rules)} rules, {sum(g['holds'] for g in servers['handoff'])} hold; "
          f"{failed} failures that count; results in {args.out}")
    return 1 if args.mode == "check" and failed else 0


if __name__ == "__main__":
    sys.exit(main())
