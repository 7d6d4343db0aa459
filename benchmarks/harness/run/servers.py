"""harness/run/servers: start, watch and stop the servers under test (chapter 01).

Role: every process the harness starts goes through `Children`, which kills them all
on exit, on an exception and on SIGINT/SIGTERM, and asks the kernel to kill each one
if the harness itself dies (PR_SET_PDEATHSIG). A `Server` starts one arm on loopback
port 0 (a peer with a configuration file: on a free port the harness picks, harness/run/peers.py),
waits for the ready line `handoff: listening on http://127.0.0.1:PORT` with a bound,
confirms with one GET, names the processes whose threads are sampled, and stops it with
SIGTERM (SIGKILL after a bound), keeping the exit status. A balancer arm (HAProxy) first
starts its backends, each a Server of its own, and stops them after itself.
"""

from __future__ import annotations

import atexit
import ctypes
import http.client
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import time

from harness.run import procfs
from harness.run.peers import PEERS, fill
from harness.run.specfile import LOOPBACK_HOST, Arm, SpecError, check_loopback

READY_RE = re.compile(rb"^handoff: listening on http://(\[[^\]]+\]|[^/:\s]+):(\d+)\s*$",
                      re.M)
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    # Runs in the child between fork and exec. The harness is single-threaded, so
    # "the thread that forked" is the harness itself.
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class Children:
    """Every process the harness started, each in its own process group."""

    def __init__(self) -> None:
        self._procs: list[subprocess.Popen] = []
        self._installed = False

    def install(self) -> None:
        if self._installed:
            return
        self._installed = True
        atexit.register(self.kill_all)

        def on_signal(signum, _frame):
            self.kill_all()
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGHUP, on_signal)

    def spawn(self, argv: list[str], **kw) -> subprocess.Popen:
        self.install()
        p = subprocess.Popen(argv, start_new_session=True, preexec_fn=_die_with_parent,
                             stdin=subprocess.DEVNULL, **kw)
        self._procs.append(p)
        return p

    def forget(self, p: subprocess.Popen) -> None:
        if p in self._procs:
            self._procs.remove(p)

    def kill_all(self) -> None:
        for p in list(self._procs):
            if p.returncode is None and p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    pass
            self.forget(p)


CHILDREN = Children()


def wait_exit(p: subprocess.Popen, timeout_s: float):
    """Wait for a child with a bound, returning (exit code, rusage) or None on timeout.

    Uses a pidfd so the wait costs no polling, then os.wait4 for the child's own CPU
    (ru_utime + ru_stime), which /proc can no longer show once it has exited.
    """
    if p.returncode is not None:
        return p.returncode, None
    fd = os.pidfd_open(p.pid)
    try:
        ready, _, _ = select.select([fd], [], [], max(0.0, timeout_s))
    finally:
        os.close(fd)
    if not ready:
        return None
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    CHILDREN.forget(p)
    return p.returncode, usage


def run_logged(argv: list[str], log_path: str, timeout_s: float):
    """Run a measuring tool to its end with its stdout and stderr in `log_path`: (exit code,
    rusage, the log's text), the log removed; None when it ran past timeout_s (it is then
    stopped, and the log kept)."""
    with open(log_path, "wb") as log:
        p = CHILDREN.spawn(argv, stdout=log, stderr=log)
    got = wait_exit(p, timeout_s)
    if got is None:
        stop(p)
        return None
    with open(log_path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    os.unlink(log_path)
    return got[0], got[1], text


def stop(p: subprocess.Popen, timeout_s: float = STOP_TIMEOUT_S,
         sig: int = signal.SIGTERM) -> int:
    """`sig` (SIGTERM unless the program stops cleanly on another), a bounded wait, then
    SIGKILL of the whole group. Returns the exit code (negative: killed by that signal)."""
    if p.returncode is None:
        try:
            p.send_signal(sig)
        except ProcessLookupError:
            pass
        got = wait_exit(p, timeout_s)
        if got is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            got = wait_exit(p, timeout_s)
            if got is None:
                raise RuntimeError(f"pid {p.pid} survived SIGKILL for {timeout_s}s")
    # Whatever the group leader left behind (nginx workers, say) goes too.
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    CHILDREN.forget(p)
    return p.returncode


def _is_harness(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"bench.py" in f.read()
    except OSError:
        return False


def reap_stale(bench_tmp: str) -> list[int]:
    """Clean up after a harness that was killed outright (SIGKILL, OOM).

    Its direct children die with it (PR_SET_PDEATHSIG), but a grandchild such as an
    nginx worker does not. Every scratch directory is named <spec>-<harness pid>, and
    every server runs with its cwd inside it; a directory whose harness is gone is
    stale, and each process still working in it was started by that harness. Those
    processes are killed by pid and the directory is removed. Returns the pids killed.
    """
    killed = []
    try:
        entries = os.listdir(bench_tmp)
    except FileNotFoundError:
        return killed
    for name in entries:
        m = re.search(r"-(\d+)$", name)
        if not m or _is_harness(int(m.group(1))):
            continue
        stale = os.path.join(bench_tmp, name)
        for proc in os.listdir("/proc"):
            if not proc.isdigit():
                continue
            try:
                cwd = os.readlink(f"/proc/{proc}/cwd")
            except OSError:
                continue
            if cwd == stale or cwd.startswith(stale + os.sep):
                try:
                    os.kill(int(proc), signal.SIGKILL)
                    killed.append(int(proc))
                except ProcessLookupError:
                    pass
        shutil.rmtree(stale, ignore_errors=True)
    return killed


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK_HOST, 0))
        return s.getsockname()[1]


def http_get_status(host: str, port: int, path: str, timeout_s: float) -> int:
    c = http.client.HTTPConnection(check_loopback(host), port, timeout=timeout_s)
    try:
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        return r.status
    finally:
        c.close()


def _tail(path: str, n: int = 2000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


class StartError(RuntimeError):
    pass


class Server:
    """One running instance of an arm."""

    def __init__(self, arm: Arm, build_dir: str, repo_root: str, workdir: str,
                 host: str = LOOPBACK_HOST, port: int = 0) -> None:
        self.arm = arm
        self.peer = PEERS.get(arm.kind)
        self.build_dir = build_dir
        self.repo_root = repo_root
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None
        self.host = check_loopback(host.strip("[]"))  # what --host gets; the ready line may refine it
        self.port = port                               # 0: the kernel's (a stage) or a free one
        self.argv: list[str] = []
        self.backends: list[Server] = []
        self.stats_port = 0                            # a balancer's statistics page
        self.stdout_path = os.path.join(workdir, "stdout.log")
        self.stderr_path = os.path.join(workdir, "stderr.log")

    # -- what to run -------------------------------------------------------------

    def binary_path(self) -> str:
        if self.peer:
            return self.peer.program
        return os.path.join(self.build_dir, "bin", self.arm.binary)

    def _template_path(self) -> str:
        return os.path.join(self.repo_root, self.arm.template or self.peer.template)

    def backend_arm(self, i: int) -> Arm:
        """The i-th backend of a balancer arm: a stage arm of its binary and args."""
        return Arm(name=f"{self.arm.name}-b{i}", kind="stage", binary=self.arm.binary,
                   args=self.arm.args, env=self.arm.env)

    def missing(self) -> str | None:
        """Why this arm cannot run here, or None."""
        b = self.binary_path()
        if not os.access(b, os.X_OK):
            return (f"{b} not installed (Debian package {self.peer.package})" if self.peer
                    else f"{b} not built")
        if self.peer and not os.path.isfile(self._template_path()):
            return f"{self.arm.kind} template {self._template_path()} missing"
        if self.peer and self.peer.kind == "python" and "uvloop" in self.arm.args:
            got = subprocess.run([self.peer.program, "-c", "import uvloop"], capture_output=True)
            if got.returncode != 0:
                return "uvloop not importable (Debian package python3-uvloop)"
        if self.arm.backends:
            return Server(self.backend_arm(0), self.build_dir, self.repo_root,
                          self.workdir).missing()
        return None

    def _peer_argv(self) -> list[str]:
        if not self.peer.needs_conf:        # our script: a stage's flags, a stage's ready line
            return [self.peer.program, self._template_path(), "--host", self.host,
                    "--port", str(self.port), *self.arm.args]
        self.port = self.port or free_port()
        prefix = os.path.join(self.workdir, self.arm.kind)
        os.makedirs(os.path.join(prefix, "logs"), exist_ok=True)
        with open(self._template_path(), encoding="utf-8") as f:
            text = f.read()
        if "@STATS_PORT@" in text:
            self.stats_port = free_port()
        conf = fill(text, port=self.port, prefix=prefix, repo_root=self.repo_root,
                    servers=[(b.host, b.port) for b in self.backends], stats_port=self.stats_port)
        conf_path = os.path.join(prefix, os.path.basename(self._template_path())[:-3])
        with open(conf_path, "w", encoding="utf-8") as f:
            f.write(conf)
        return self.peer.argv(conf_path, prefix)

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> None:
        os.makedirs(self.workdir, exist_ok=True)
        for i in range(self.arm.backends):
            b = Server(self.backend_arm(i), self.build_dir, self.repo_root,
                       os.path.join(self.workdir, f"b{i}"), self.host)
            self.backends.append(b)
            b.start()
        if self.peer:
            self.argv = self._peer_argv()
        else:
            self.argv = [self.binary_path(), "--host", self.host, "--port", str(self.port),
                         *self.arm.args]
        env = dict(os.environ)
        env.update(dict(self.arm.env))
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = CHILDREN.spawn(self.argv, stdout=out, stderr=err, env=env,
                                       cwd=self.workdir)
        deadline = time.monotonic() + READY_TIMEOUT_S
        if not self.peer or not self.peer.needs_conf:
            self._wait_ready_line(deadline)
        self._wait_get(deadline)
        if self.peer and self.peer.layout == "master":
            self._wait_workers(deadline)

    def _fail(self, why: str) -> None:
        raise StartError(f"arm {self.arm.name}: {why}\n  argv: {' '.join(self.argv)}\n"
                         f"  stderr tail:\n{_tail(self.stderr_path)}")

    def _wait_ready_line(self, deadline: float) -> None:
        while True:
            with open(self.stdout_path, "rb") as f:
                m = READY_RE.search(f.read())
            if m:
                host = m.group(1).decode()
                try:
                    self.host = check_loopback(host.strip("[]"))  # "[::1]" in a URL, "::1" to connect
                except SpecError as e:
                    self._fail(str(e))
                self.port = int(m.group(2))
                return
            if self.proc.poll() is not None:
                self._fail(f"exited with {self.proc.returncode} before its ready line")
            if time.monotonic() > deadline:
                self._fail(f"no ready line within {READY_TIMEOUT_S:.0f}s")
            time.sleep(0.02)

    def _wait_get(self, deadline: float) -> None:
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail(f"exited with {self.proc.returncode} before answering")
            try:
                status = http_get_status(self.host, self.port, self.arm.ready_path, 2.0)
                if status == 200:
                    return
                last = f"status {status}"
            except OSError as e:
                last = str(e)
            time.sleep(0.05)
        self._fail(f"readiness GET {self.arm.ready_path} failed: {last}")

    def _wait_workers(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if len(procfs.children_of(self.proc.pid)) >= self.arm.workers:
                return
            time.sleep(0.02)
        self._fail(f"fewer than {self.arm.workers} worker processes")

    def alive(self) -> bool:
        return (self.proc is not None and self.proc.poll() is None
                and all(b.alive() for b in self.backends))

    def targets(self) -> list[procfs.Target]:
        """The processes whose threads are sampled: a balancer's and its backends'."""
        pid = self.proc.pid
        if self.peer and self.peer.layout == "master":
            return [procfs.Target(pid, process_role="master")] + [
                procfs.Target(k, process_role=self.peer.role) for k in procfs.children_of(pid)]
        if self.peer and self.peer.layout == "process":
            mine = [procfs.Target(pid, process_role=self.peer.role)]
        else:
            mine = [procfs.Target(pid, main_role=self.peer.role if self.peer
                                  else self.arm.main_role)]
        return mine + [t for b in self.backends for t in b.targets()]

    def url(self, path: str) -> str:
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{path}"

    def stop(self) -> int:
        """Stop it (and a balancer's backends): 0 when it stopped as it should, else its exit
        status, or a backend's when the balancer's was clean (a crash at stop is a finding)."""
        code = (stop(self.proc, sig=self.peer.stop_signal if self.peer else signal.SIGTERM)
                if self.proc else 0)
        if self.peer and code == self.peer.clean_exit:
            code = 0
        for b in self.backends:
            backend = b.stop()
            code = code or backend
        return code

    def cleanup(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)
