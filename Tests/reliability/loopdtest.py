"""Shared helpers for the reliability scripts (docs/RELIABILITY.md).

Standard library only: python3 is on every machine, pip packages are not.

What lives here:
  - Checks: counts passed/failed checks and prints the final
    "N passed, M failed" line every script ends with.
  - LoopdProcess: the real `loopd` binary on a private config, socket and
    state directory; started, pinged until ready (bounded), SIGKILLed or
    stopped; its /proc figures (fd count, VmRSS, CPU time).
  - Client: a blocking JSON-lines client with a receive timeout, so no
    check can hang.
  - cleanup: every process started and mount made is undone at exit, also
    on SIGINT/SIGTERM (the scripts' `trap`).
"""

import atexit
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# ---------------------------------------------------------------- cleanup

_cleanups = []


def on_exit(fn):
    """Runs `fn` at exit (last registered first), also after SIGINT/SIGTERM."""
    _cleanups.append(fn)
    return fn


def _run_cleanups():
    while _cleanups:
        fn = _cleanups.pop()
        try:
            fn()
        except Exception as e:  # cleanup must go on whatever one step does
            print(f"cleanup: {e}", file=sys.stderr)


def in_child_process():
    """For a forked helper process: the parent owns every cleanup."""
    _cleanups.clear()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _on_signal(signum, _frame):
    _run_cleanups()
    os._exit(128 + signum)


atexit.register(_run_cleanups)
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)

# ---------------------------------------------------------------- checks


class Checks:
    """Named checks; `finish()` prints the totals and exits 0 or 1."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"  ok    {what}", flush=True)
        else:
            self.failed += 1
            print(f"  FAIL  {what}" + (f": {detail}" if detail else ""), flush=True)
        return ok

    def skip(self, what, why):
        print(f"  skip  {what}: {why}", flush=True)

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed", flush=True)
        _run_cleanups()
        sys.exit(1 if self.failed else 0)


def section(title):
    print(f"== {title}", flush=True)


# ---------------------------------------------------------------- options


def binary_dir(argv_value=None):
    """Where loopd and loopctl are: --bin, else $LOOPD_BIN_DIR, else .build/release."""
    d = argv_value or os.environ.get("LOOPD_BIN_DIR") or ".build/release"
    d = os.path.abspath(d)
    if not os.access(os.path.join(d, "loopd"), os.X_OK):
        print(f"no executable loopd in {d}: build it (swift build -c release --product loopd) "
              "or pass --bin DIR / LOOPD_BIN_DIR", file=sys.stderr)
        sys.exit(2)
    return d


def make_workdir(prefix, mode=0o700):
    d = tempfile.mkdtemp(prefix=prefix)
    os.chmod(d, mode)
    keep = os.environ.get("LOOPD_KEEP_WORKDIR")
    if not keep:
        on_exit(lambda: subprocess.run(["rm", "-rf", d], check=False))
    return d


def wait_until(predicate, timeout, interval=0.02):
    """Polls `predicate` until it returns a true value or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return value
        time.sleep(interval)


# ---------------------------------------------------------------- the daemon


def toml_string(s):
    return json.dumps(s)  # a JSON string is a valid TOML basic string for our paths


def child_user():
    """Whom exec children run as: `nobody` when loopd runs as root (it
    never runs them as itself), else loopd's own user, which a loopd that
    cannot switch users is told with "" ([exec] user)."""
    return "nobody" if os.geteuid() == 0 else ""


def children_may_write(path):
    """Creates the file `path` so that exec children, who run as another
    user, may append to it: the file is 0666 and its directory (a work
    directory of 0700) becomes 0711, reachable but not listable."""
    open(path, "a").close()
    os.chmod(path, 0o666)
    os.chmod(os.path.dirname(path), 0o711)
    return path


def default_workers(n=2):
    return "\n".join(f'[[workers]]\nname = "w{i + 1}"\n' for i in range(n))


class LoopdProcess:
    """The real loopd binary on a config written into `workdir`."""

    def __init__(self, bindir, workdir, extra_toml="", socket_path=None, state_dir=None,
                 fsync=True, workers=2, server_extra="", limits="", journal_extra="", exec_extra=""):
        self.bindir = bindir
        self.workdir = workdir
        self.socket_path = socket_path or os.path.join(workdir, "loopd.sock")
        self.state_dir = state_dir or os.path.join(workdir, "state")
        self.config_path = os.path.join(workdir, "loopd.toml")
        self.log_path = os.path.join(workdir, "loopd.log")
        self.proc = None
        self.starts = 0
        with open(self.config_path, "w") as f:
            f.write(f"""[server]
socket = {toml_string(self.socket_path)}
state_dir = {toml_string(self.state_dir)}
log_level = "warning"
{server_extra}
[limits]
{limits}
[journal]
fsync = {"true" if fsync else "false"}
{journal_extra}
[exec]
user = {toml_string(child_user())}
{exec_extra}
{default_workers(workers)}
{extra_toml}
""")
        on_exit(self.kill)

    def start(self, preexec=None, wrapper=None, ready_timeout=30, expect_ready=True, pass_fds=(), env=None):
        """Starts loopd; returns True once a ping is answered (bounded).
        `pass_fds` are inherited (without CLOEXEC); `env` replaces the environment."""
        argv = [os.path.join(self.bindir, "loopd"), "--config", self.config_path]
        if wrapper:
            argv = wrapper + argv
        self.starts += 1
        log = open(self.log_path, "a")
        log.write(f"--- start {self.starts} ---\n")
        log.flush()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     preexec_fn=preexec, close_fds=True, pass_fds=pass_fds, env=env)
        log.close()
        if not expect_ready:
            return True
        return bool(wait_until(self._answers_ping, ready_timeout, 0.01))

    def _answers_ping(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"loopd exited with {self.proc.returncode} at start; see {self.log_path}: "
                               + self.log_tail())
        try:
            with Client(self.socket_path, timeout=2) as c:
                return c.call({"op": "ping"}).get("ok") is True
        except OSError:
            return False

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        """SIGKILL and reap (no-op when not running)."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def terminate(self, timeout=30):
        """SIGTERM; returns the exit status (None if it had to be killed)."""
        if not self.proc or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def log_tail(self, lines=20):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    # /proc figures
    def fd_count(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def rss_kb(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def cpu_seconds(self):
        """User + system CPU time of the whole process (all threads)."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        return ticks / os.sysconf("SC_CLK_TCK")

    def idle_fd_count(self, settle=0.3):
        """The descriptor count once closed connections are gone: the
        smallest of a few samples over `settle` seconds."""
        counts = []
        deadline = time.monotonic() + settle
        while True:
            counts.append(self.fd_count())
            if time.monotonic() >= deadline:
                return min(counts)
            time.sleep(0.02)

    def threads(self):
        return len(os.listdir(f"/proc/{self.pid}/task"))


# ---------------------------------------------------------------- a client


class Client:
    """A blocking JSON-lines client; every read is bounded by `timeout`."""

    _ids = 0

    def __init__(self, path, timeout=20):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.buf = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, obj):
        if "id" not in obj:
            Client._ids += 1
            obj = dict(obj, id=Client._ids)
        self.sock.sendall(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
        return obj["id"]

    def send_many(self, objs):
        self.sock.sendall(b"".join(json.dumps(o, separators=(",", ":")).encode() + b"\n" for o in objs))

    def read_line(self):
        """The next line (without the newline); None on end of file."""
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def read_reply(self):
        line = self.read_line()
        return None if line is None else json.loads(line)

    def call(self, obj):
        """Sends one request and returns the reply with its id (others are an error)."""
        rid = self.send(obj)
        reply = self.read_reply()
        if reply is None:
            raise ConnectionError("loopd closed the connection")
        if reply.get("id") != rid:
            raise AssertionError(f"reply {reply} does not match request id {rid}")
        return reply


def run_threads(body, count):
    """Runs body(k) for k in range(count), each on its own thread, all at
    once; waits for them and re-raises the first exception any of them raised."""
    errors = []

    def guarded(k):
        try:
            body(k)
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def wait_idle(path, timeout=60):
    """Waits until loopd has nothing queued or running; returns the last stats."""
    last = {}

    def idle():
        nonlocal last
        try:
            with Client(path, timeout=5) as c:
                last = c.call({"op": "stats"})
        except OSError:
            return False
        return last.get("queued") == 0 and last.get("running") == 0

    wait_until(idle, timeout, 0.1)
    return last


def is_root():
    return os.geteuid() == 0


def seeded_random(default_seed=None):
    seed = int(os.environ.get("LOOPD_SEED", default_seed or int(time.time())))
    print(f"seed {seed} (repeat with LOOPD_SEED={seed})", flush=True)
    return random.Random(seed)
