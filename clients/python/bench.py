#!/usr/bin/env python3
"""Sequential submit+wait through the Python client beside a raw socket loop.

Both run against the same loopd, one request at a time on one connection:
`{"op":"submit","action":"echo","args":["x"]}` (waited for: the reply comes
when the job has run). The raw loop is the least Python can do per request
(a preformatted line, sendall, recv until newline, json.loads), so the
difference is the client's own cost. Prints jobs/s and the p50/p99 round
trip of each.

    python3 clients/python/bench.py                 # starts a loopd of its own
    python3 clients/python/bench.py --socket PATH   # against a running loopd

The loopd it starts: --bin, else $LOOPD_BIN, else the repository's
.build/release/loopd, else .build/debug/loopd (two workers, fsync off).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import loopd  # noqa: E402

REPO = HERE.parents[1]


def find_binary(given: Optional[str]) -> str:
    for c in [given, os.environ.get("LOOPD_BIN"), str(REPO / ".build/release/loopd"),
              str(REPO / ".build/debug/loopd")]:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("no loopd binary: pass --bin or build one (swift build -c release --product loopd)")


def start_loopd(binary: str, workdir: str) -> subprocess.Popen:
    sock = os.path.join(workdir, "loopd.sock")
    config = os.path.join(workdir, "loopd.toml")
    with open(config, "w") as f:
        f.write(f'[server]\nsocket = {json.dumps(sock)}\nstate_dir = {json.dumps(workdir + "/state")}\n'
                'log_level = "warning"\n[journal]\nfsync = false\n'
                '[[workers]]\nname = "w1"\n[[workers]]\nname = "w2"\n')
    proc = subprocess.Popen([binary, "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            loopd.Client(sock, timeout=2).ping()
            return proc
        except loopd.LoopdError:
            time.sleep(0.02)
    proc.kill()
    sys.exit("loopd did not start")


def measure(n: int, once: Callable[[], None]) -> List[float]:
    times = []
    clock = time.perf_counter
    for _ in range(n):
        t = clock()
        once()
        times.append(clock() - t)
    return times


def raw_loop(path: str) -> Callable[[], None]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    line = b'{"id":1,"op":"submit","action":"echo","args":["x"]}\n'
    buf = [b""]

    def once() -> None:
        s.sendall(line)
        data = buf[0]
        while b"\n" not in data:
            data += s.recv(65536)
        reply, buf[0] = data.split(b"\n", 1)
        if json.loads(reply)["ok"] is not True:
            raise RuntimeError(reply)

    return once


def client_loop(path: str) -> Callable[[], None]:
    c = loopd.Client(path)

    def once() -> None:
        c.submit("echo", ["x"])

    return once


def report(name: str, times: List[float]) -> None:
    times = sorted(times)
    p50 = times[len(times) // 2] * 1e6
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1e6
    rate = len(times) / sum(times)
    print(f"{name:<14} {rate:>9.0f} jobs/s   p50 {p50:>6.0f} µs   p99 {p99:>6.0f} µs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", help="a running loopd's socket (else one is started)")
    ap.add_argument("--bin", help="the loopd binary to start")
    ap.add_argument("-n", type=int, default=20000, help="jobs per round (default 20000)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, alternating the two loops (default 3)")
    args = ap.parse_args()

    workdir = proc = None
    path = args.socket
    if path is None:
        binary = find_binary(args.bin)
        workdir = tempfile.mkdtemp(prefix="loopd-pybench-")
        proc = start_loopd(binary, workdir)
        path = os.path.join(workdir, "loopd.sock")
        print(f"loopd: {binary}")
    try:
        print(f"python {sys.version.split()[0]}, {args.rounds} rounds of {args.n} sequential echo jobs each")
        raw, client = raw_loop(path), client_loop(path)
        measure(1000, raw), measure(1000, client)  # warm up
        raw_times: List[float] = []
        client_times: List[float] = []
        for _ in range(args.rounds):
            raw_times += measure(args.n, raw)
            client_times += measure(args.n, client)
        report("raw socket", raw_times)
        report("loopd.Client", client_times)
        print(f"client overhead: {statistics.median(client_times) / statistics.median(raw_times) - 1:+.0%} "
              "at the median")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
