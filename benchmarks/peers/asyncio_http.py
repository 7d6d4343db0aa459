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

Run as a stage is: `asyncio_http.py --host 127.0.0.1 --port 0 [--loop uvloop]`; it prints the
stage's ready line, `handoff: listening on http://HOST:PORT`, and stops on SIGTERM.
"""

import argparse
import asyncio
import signal
import sys

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


class Http(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        self.buffer = b""

    def data_received(self, data):
        self.buffer += data
        out = []
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    return self.refuse(out)
                break
            head, self.buffer = self.buffer[:end], self.buffer[end + 4:]
            parts = head.split(b"\r\n", 1)[0].split(b" ")
            if len(parts) != 3 or parts[0] != b"GET" or not parts[2].startswith(b"HTTP/1."):
                return self.refuse(out)
            out.append(ANSWERS.get(parts[1], NOT_FOUND))
        if out:
            self.transport.write(b"".join(out))

    def refuse(self, out):
        out.append(BAD)
        self.transport.write(b"".join(out))
        self.transport.close()


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
    args = p.parse_args()
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
