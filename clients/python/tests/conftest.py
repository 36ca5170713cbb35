"""A real loopd for the tests: the binary from $LOOPD_BIN, else the repository's
.build/release/loopd or .build/debug/loopd (nothing is built here; `make
test-python` builds it), on a config written into a temporary directory."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the package from this tree, installed or not

REPO = HERE.parents[2]

# Exec actions beside the built-ins (echo, noop, sleep, fail).
ACTIONS = """
[actions.printf]
argv = ["/usr/bin/printf", "%s\\n"]
max_client_args = 8
env = { LC_ALL = "C.UTF-8" }
allow_users = ["*"]

[actions.exit3]
argv = ["/bin/sh", "-c", "exit 3"]
allow_users = ["*"]

# Uses some CPU time, for the usage tests.
[actions.spin]
argv = ["/bin/sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"]
allow_users = ["*"]

# Exec without allow lists: root and loopd's own uid only.
[actions.rootonly]
argv = ["/usr/bin/id", "-u"]
"""


def loopd_binary() -> str:
    env = os.environ.get("LOOPD_BIN")
    candidates = [env] if env else [str(REPO / ".build/release/loopd"), str(REPO / ".build/debug/loopd")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    raise RuntimeError("no loopd binary: set LOOPD_BIN or build one (swift build --product loopd); tried "
                       + ", ".join(candidates))


class Daemon:
    """loopd on a private config, socket and state directory."""

    def __init__(self, workdir: str, *, workers: int = 3, limits: str = "", server: str = "",
                 quotas: str = "", tables: str = "") -> None:
        self.binary = loopd_binary()
        self.workdir = workdir
        self.socket_path = os.path.join(workdir, "loopd.sock")
        self.config_path = os.path.join(workdir, "loopd.toml")
        self.log_path = os.path.join(workdir, "loopd.log")
        self.proc: Optional[subprocess.Popen] = None
        worker_tables = "".join(f'[[workers]]\nname = "w{i + 1}"\n\n' for i in range(workers))
        with open(self.config_path, "w") as f:
            f.write(f"""[server]
socket = {json.dumps(self.socket_path)}
state_dir = {json.dumps(os.path.join(workdir, "state"))}
log_level = "warning"
{server}

[limits]
{limits}

[quotas]
{quotas}

[journal]
fsync = false

# Exec children never run as loopd's own user: as root, nobody; a loopd
# that cannot switch users is told to run them as itself.
[exec]
user = {json.dumps("nobody" if os.geteuid() == 0 else "")}

{worker_tables}
[[workers]]
name = "ops"
placement = "explicit"

{ACTIONS}
{tables}
""")

    def start(self, timeout: float = 30) -> "Daemon":
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen([self.binary, "--config", self.config_path], stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=log, cwd=self.workdir)
        log.close()
        deadline = time.monotonic() + timeout
        while not self._answers_ping():
            if self.proc.poll() is not None:
                raise RuntimeError(f"loopd exited with {self.proc.returncode}: {self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"loopd did not answer within {timeout}s: {self.log_tail()}")
            time.sleep(0.02)
        return self

    def _answers_ping(self) -> bool:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                s.connect(self.socket_path)
                s.sendall(b'{"id":1,"op":"ping"}\n')
                return b'"ok":true' in s.recv(4096)
        except OSError:
            return False

    def signal(self, signum: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(signum)

    def stop(self, timeout: float = 30) -> Optional[int]:
        """SIGTERM and reap; SIGKILL if it does not stop in time."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def restart(self) -> None:
        self.stop()
        self.start()

    def log_tail(self) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-20:])
        except OSError:
            return ""


def as_nobody(fn: Callable[[], object]) -> object:
    """What ``fn`` returns when a child process that has become ``nobody``
    calls it (a JSON value; ``{}`` if the child failed). Needs root."""
    import pwd
    nobody = pwd.getpwnam("nobody")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            os.write(w, json.dumps(fn()).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        got = json.loads(f.read() or "{}")
    os.waitpid(pid, 0)
    return got


def _workdir(prefix: str) -> str:
    d = tempfile.mkdtemp(prefix=prefix)
    os.chmod(d, 0o755)  # another uid may reach the socket (the forbidden test)
    return d


@pytest.fixture(scope="session")
def daemon() -> Iterator[Daemon]:
    """One loopd for the tests that leave it as they found it."""
    d = _workdir("loopd-py-")
    daemon = Daemon(d, server='socket_mode = "0666"').start()
    yield daemon
    daemon.stop()
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def make_daemon() -> Iterator:
    """A factory for a private loopd (its own limits), stopped after the test."""
    made = []

    def make(**kw) -> Daemon:
        d = Daemon(_workdir("loopd-py-"), **kw)
        made.append(d)
        return d.start()

    yield make
    for d in made:
        d.stop()
        shutil.rmtree(d.workdir, ignore_errors=True)


@pytest.fixture
def client(daemon: Daemon) -> Iterator:
    import loopd
    with loopd.Client(daemon.socket_path, timeout=60) as c:
        yield c
