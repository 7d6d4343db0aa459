"""harness/run/peers: the servers measured beside ours, and how each is started (chapter 01 for
nginx; chapter 06 for h2o, lighttpd, HAProxy and CPython's asyncio and uvloop).
Changed in chapter 06: h2o, lighttpd, HAProxy, asyncio and uvloop.

Role: one table, PEERS, of every peer an arm's `kind` may name: the program Debian installs,
the configuration template kept in benchmarks/peers/ that the harness fills in, the command
line that runs it in the foreground with everything it writes under a scratch prefix, how to
tell it is ready, and which of its threads stand in which column. servers.Server starts an
arm through this table; nothing else knows a peer's command line.

Templates hold placeholders the harness replaces: @PORT@ (a free loopback port the harness
picks), @PREFIX@ (the arm's scratch directory, absolute), @DOCROOT@ (benchmarks/peers/docroot:
the same two bodies our stage answers on / and /json, as files, for the peers that serve
files) and, for a balancer, @SERVERS@ (one `server` line per backend the harness started) and
@STATS_PORT@ (a second free port, for its statistics page).

Layouts: "master" is a master process whose children answer (nginx: the harness waits for
`workers` children and samples them); "process" is one process whose every thread answers
(h2o's threads, lighttpd's one thread, HAProxy's thread); "script" is a program of ours in
benchmarks/peers/ that takes --host and --port like a stage and prints the stage's ready line
(the asyncio and uvloop servers), whose main thread is its loop.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

PYTHON = "/usr/bin/python3"
DOCROOT = "benchmarks/peers/docroot"


@dataclass(frozen=True)
class Peer:
    kind: str
    program: str             # what Debian installs
    template: str            # default configuration template, relative to the repository
    layout: str              # "master" | "process" | "script"
    role: str                # the role its answering threads get (procfs): worker | balancer
    package: str             # the Debian package that installs `program`
    # The signal that stops it cleanly (the others' SIGTERM is a hard stop, lighttpd's SIGINT
    # a graceful one), and the exit status that stop gives (the harness's verify checks it).
    # HAProxy in the foreground (-db) dies by SIGTERM itself, its hard stop: -15. Its soft
    # stop, SIGUSR1, segfaulted in Debian's 2.6.12 in 2 of about 14 stops after 256
    # connections behind two backends (the kernel log's "haproxy[...]: segfault at 8"), a
    # fault of the balancer that says nothing of the servers measured behind it.
    stop_signal: int = signal.SIGTERM
    clean_exit: int = 0

    def argv(self, conf_path: str, prefix: str) -> list[str]:
        """The foreground command line for a filled-in configuration at conf_path."""
        if self.kind == "nginx":
            return [self.program, "-p", prefix + "/", "-c", conf_path,
                    "-e", os.path.join(prefix, "logs", "error.log")]
        if self.kind == "h2o":
            return [self.program, "-c", conf_path]            # h2o's default mode is the foreground
        if self.kind == "lighttpd":
            return [self.program, "-D", "-f", conf_path]      # -D: do not daemonize
        if self.kind == "haproxy":
            return [self.program, "-db", "-f", conf_path]     # -db: foreground, no background mode
        raise ValueError(f"{self.kind} takes no configuration file")

    @property
    def needs_conf(self) -> bool:
        return self.layout != "script"


PEERS: dict[str, Peer] = {p.kind: p for p in (
    Peer("nginx", "/usr/sbin/nginx", "benchmarks/peers/nginx.conf.in", "master", "worker",
         "nginx-light"),
    Peer("h2o", "/usr/bin/h2o", "benchmarks/peers/h2o.conf.in", "process", "worker", "h2o"),
    Peer("lighttpd", "/usr/sbin/lighttpd", "benchmarks/peers/lighttpd.conf.in", "process",
         "worker", "lighttpd", signal.SIGINT),
    Peer("haproxy", "/usr/sbin/haproxy", "benchmarks/peers/haproxy.cfg.in", "process",
         "balancer", "haproxy", signal.SIGTERM, -signal.SIGTERM),
    # CPython's asyncio, and the same server on uvloop (`--loop uvloop` in the arm's args).
    Peer("python", PYTHON, "benchmarks/peers/asyncio_http.py", "script", "loop",
         "python3 (uvloop: python3-uvloop)"),
)}


def fill(template_text: str, *, port: int, prefix: str, repo_root: str,
         servers: list[tuple[str, int]] = (), stats_port: int = 0) -> str:
    """A template with its placeholders replaced. servers: (host, port) of each backend, for
    a balancer's line that starts with @SERVERS@, which becomes one `server` line per backend,
    each with the options written after the placeholder."""
    lines = []
    for line in template_text.splitlines(keepends=True):
        if line.lstrip().startswith("@SERVERS@"):
            indent, _, options = line.partition("@SERVERS@")
            for i, (host, p) in enumerate(servers):
                lines.append(f"{indent}server b{i} {host}:{p}{options.rstrip()}\n")
            continue
        lines.append(line)
    text = "".join(lines)
    return (text.replace("@PORT@", str(port)).replace("@PREFIX@", prefix)
            .replace("@STATS_PORT@", str(stats_port))
            .replace("@DOCROOT@", os.path.join(repo_root, DOCROOT)))
