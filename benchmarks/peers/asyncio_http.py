#!/usr/bin/python3
"""peers/asyncio_http: CPython's asyncio, or uvloop, answering our stage's two fixed bodies
(chapter 06).

Role: the Python peer of chapter 06's whole-server table. It answers GET / ("Hello, World!",
text/plain) and GET /json ({"message":"Hello, World!"}, application/json) over keep-alive
HTTP/1.1, on one thread, in the way asyncio's documentation recommends for a fast server: an
asyncio.Protocol whose data_received parses what arrived and writes the answers (the
low-level "transports and protocols" API; streams add a coroutine per connection on top). The
parse is the least HTTP/1.1 that the load generator's requests need: a request ends at its
blank line, a GET has no body, and anything else is answered 400 and the connection closed.
It is what a Python service on these loops pays for its loop and its protocol code, not a
Python web framework (those add routing, header objects and middleware on top).

GET /sleep?ms=N is the stage's blocking route done the way an asyncio service does it: the
blocking call (time.sleep, as the stage's handler calls sleep_for) runs on a thread of the
loop's executor (loop.run_in_executor, a concurrent.futures.ThreadPoolExecutor of
--blocking-threads threads, the stage's flag of the same name), and the answer is written
when its future completes, in request order on each connection. It is asyncio's hand-off
from a loop to a pool and back, beside the stage's.

Run as a stage is: `asyncio_http.py --host 127.0.0.1 --port 0 [--loop uvloop]
[--blocking-threads N]`; it prints the stage's ready line, `handoff: listening on
http://HOST:PORT`, and stops on SIGTERM.
"""

import argparse
import asyncio
import concurrent.futures
import signal
import sys
import time

BODIES = {
    b"/": (b"text/plain", b"Hello, World!"),
    b"/json": (b"application/json", b'{"message":"Hello, World!"}'),
}


def response(status: bytes, content_type: bytes, body: bytes) -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\nServer: asyncio-peer\r\nContent-Type: " + content_type
            + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


ANSWERS = {path: response(b"200 OK", t, b) for path, (t, b) in BODIES.items()}
NOT_FOUND = response(b"404 Not Found", b"text/plain", b"not found")
BAD = response(b"400 Bad Request", b"text/plain", b"bad request")
MAX_HEAD = 16 * 1024


MAX_SLEEP_MS = 30_000  # the stage's bound on ?ms=


def sleep_ms(target: bytes) -> int | None:
    """N of /sleep?ms=N (0 without it, as the stage reads it), or None for another path."""
    path, _, query = target.partition(b"?")
    if path != b"/sleep":
        return None
    for pair in query.split(b"&"):
        key, _, value = pair.partition(b"=")
        if key == b"ms" and value.isdigit():
            return min(int(value), MAX_SLEEP_MS)
    return 0


class Http(asyncio.Protocol):
    """One connection. Answers go out in request order: `pending` holds each request's
    answer, bytes or the future of a blocking one, and the ready prefix is written whenever
    an answer arrives."""

    executor: concurrent.futures.Executor | None = None

    def connection_made(self, transport):
        self.transport = transport
        self.buffer = b""
        self.pending = []
        self.closing = False  # a refused request: close once the answers before it are out

    def data_received(self, data):
        if self.closing:
            return
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    return self.refuse()
                break
            head, self.buffer = self.buffer[:end], self.buffer[end + 4:]
            parts = head.split(b"\r\n", 1)[0].split(b" ")
            if len(parts) != 3 or parts[0] != b"GET" or not parts[2].startswith(b"HTTP/1."):
                return self.refuse()
            ms = sleep_ms(parts[1])
            if ms is None:
                self.pending.append(ANSWERS.get(parts[1], NOT_FOUND))
            else:
                loop = asyncio.get_running_loop()
                future = loop.run_in_executor(self.executor, time.sleep, ms / 1000)
                future.add_done_callback(lambda _f: self.flush())
                self.pending.append((future, ms))
        self.flush()

    def flush(self):
        out = []
        while self.pending:
            answer = self.pending[0]
            if isinstance(answer, tuple):
                future, ms = answer
                if not future.done():
                    break
                answer = response(b"200 OK", b"text/plain", b"slept %d ms" % ms)
            out.append(answer)
            self.pending.pop(0)
        if self.transport.is_closing():
            return
        if out:
            self.transport.write(b"".join(out))
        if self.closing and not self.pending:
            self.transport.close()

    def refuse(self):
        self.pending.append(BAD)
        self.closing = True
        self.flush()


async def serve(host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Http, host, port, reuse_address=True, backlog=1024)
    bound = server.sockets[0].getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    print(f"handoff: listening on http://{shown}:{bound[1]}", flush=True)
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    loop.add_signal_handler(signal.SIGINT, stop.set_result, None)
    async with server:
        await stop


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    p.add_argument("--blocking-threads", type=int, default=1,
                   help="threads of the executor that runs /sleep (the stage's flag)")
    args = p.parse_args()
    if not 1 <= args.blocking_threads <= 256:
        print("asyncio_http: --blocking-threads must be in [1, 256]", file=sys.stderr)
        return 64  # EX_USAGE
    Http.executor = concurrent.futures.ThreadPoolExecutor(max_workers=args.blocking_threads)
    if args.loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            print("asyncio_http: uvloop is not installed (Debian: python3-uvloop)", file=sys.stderr)
            return 69  # EX_UNAVAILABLE
        uvloop.install()
    asyncio.run(serve(args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
