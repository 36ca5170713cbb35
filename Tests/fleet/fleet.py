"""loopd nodes for the fleet's tests: each a real loopd process (LOOPD_BIN)
with its own socket, state directory, configuration and node name, joined
to a database of a private cluster (pgcluster.py).

    node = Node(workdir, "a", pg.conninfo("fleet"))
    node.start()                        # returns once its socket answers
    node.request({"op": "fleet"})       # one JSON line, its reply
    node.kill()                         # SIGKILL; stop() is SIGTERM
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time

LOOPD = os.environ.get("LOOPD_BIN", "loopd")
LOOPCTL = os.environ.get("LOOPCTL_BIN", "loopctl")
# The bound on every wait: generous, for a loaded CI machine. Tests pass on
# events, never on how fast they came.
WAIT = 60.0


def wait_for(what: str, predicate, timeout: float = WAIT, interval: float = 0.05):
    """Polls predicate until it returns something truthy (returned), or fails naming what was awaited."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last!r}")


class Node:
    """One loopd of the fleet. `fleet` is the body of its [fleet] table
    after `database` and `node` (e.g. "heartbeat_interval_ms = 200")."""

    def __init__(self, workdir: str, name: str, database: str | None, fleet: str = "",
                 heartbeat_ms: int = 200, dead_after_ms: int = 1_500, socket_mode: str = "0660") -> None:
        self.name = name
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        os.chmod(self.dir, 0o755)  # clients of other uids reach the socket, where its mode lets them
        self.socket = os.path.join(self.dir, "loopd.sock")
        self.config = os.path.join(self.dir, "loopd.toml")
        self.logfile = os.path.join(self.dir, "loopd.log")
        self.process: subprocess.Popen | None = None
        text = f"""
[server]
socket = "{self.socket}"
socket_mode = "{socket_mode}"
state_dir = "{os.path.join(self.dir, 'state')}"
log_level = "info"

[journal]
fsync = false

[[workers]]
name = "w1"

[[workers]]
name = "w2"
mode = "maint"
"""
        if database is not None:
            text += f"""
[fleet]
database = {json.dumps(database)}
node = "{name}"
heartbeat_interval_ms = {heartbeat_ms}
dead_after_ms = {dead_after_ms}
{fleet}
"""
        with open(self.config, "w") as f:
            f.write(text)

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Starts the process without waiting for it."""
        with open(self.logfile, "a") as log:
            self.process = subprocess.Popen([LOOPD, "--config", self.config], stdout=log, stderr=subprocess.STDOUT)

    def wait_ready(self) -> None:
        wait_for(f"node {self.name}'s socket", self._answers)

    def wait_joined(self) -> None:
        """Until the node lists itself alive: it has registered."""
        wait_for(f"node {self.name} to join", lambda: self.nodes().get(self.name, {}).get("state") == "alive")

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"loopd {self.name} exited with {self.process.returncode}:\n{self.log()}")
        try:
            return self.request({"op": "ping"})["ok"]
        except OSError:
            return False

    def request(self, body: dict, timeout: float = WAIT) -> dict:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(timeout)
            s.connect(self.socket)
            s.sendall((json.dumps(body) + "\n").encode())
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    raise OSError("loopd closed the connection")
                reply += chunk
        return json.loads(reply)

    def fleet(self) -> dict:
        return self.request({"op": "fleet"})

    def nodes(self) -> dict[str, dict]:
        """The fleet's nodes by name, as this node lists them ({} while it cannot)."""
        reply = self.fleet()
        return {n["name"]: n for n in reply["nodes"]} if reply["ok"] else {}

    def loopctl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([LOOPCTL, *args, "--socket", self.socket, "--server-uid", "any"],
                              capture_output=True, text=True, timeout=WAIT)

    def metric(self, name: str) -> float:
        text = self.request({"op": "metrics"})["text"]
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        raise AssertionError(f"no {name} in node {self.name}'s metrics")

    def log(self) -> str:
        with open(self.logfile) as f:
            return f.read()

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(WAIT)

    def stop(self) -> int:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            return self.process.wait(WAIT)
        return self.process.returncode if self.process else 0


class Proxy:
    """A TCP proxy to 127.0.0.1:target that a test can freeze, as a network
    that drops everything would: while frozen nothing is forwarded either
    way and new connections get no reply (the bytes wait, unread)."""

    def __init__(self, target_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.flowing = threading.Event()
        self.flowing.set()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        self.flowing.clear()

    def heal(self) -> None:
        self.flowing.set()

    def close(self) -> None:
        self.closed = True
        self.flowing.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        self.flowing.wait()
        try:
            upstream = socket.create_connection(self.target)
        except OSError:
            client.close()
            return
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                self.flowing.wait()
                data = source.recv(65536)
                if not data:
                    break
                self.flowing.wait()
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
