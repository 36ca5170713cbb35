#!/usr/bin/env python3
"""A million queued jobs in loopd, beside beanstalkd holding as many.

    python3 Benchmarks/million.py [--bin DIR] [--jobs N] [--quick] [--calls K]

  memory   N noop jobs submitted with delay_ms = one hour (wait: false,
           pipelined): the resident size (VmRSS) they add over loopd's idle
           start, per job. Beside it beanstalkd (`-l unix:PATH`, no binlog)
           given N empty jobs (`put 2147483648 3600 60 0`, pipelined): the
           resident size they add over its start, per job.
  requests with the N jobs held: the round trip of `status` of a held job,
           the first `jobs` page (limit 100) and `cancel` of a held job,
           p50/p99 over K calls each (K distinct jobs for status and cancel);
           beside beanstalkd's `stats-job` and `delete` of held jobs.
  replay   N durable delayed jobs (journal fsync on), loopd stopped with
           SIGTERM and started again: the time from the start until it
           answers `ping`, and until `stats` shows the N jobs back
           (journal.pending); jobs/s. Beside beanstalkd with `-b DIR`
           holding N jobs, stopped and started again: the time until `stats`
           shows N delayed jobs.

Defaults: N = 1,000,000, K = 1000; --quick: N = 50,000, K = 200 (CI). Needs
a release loopd (--bin, else .build/release) and `beanstalkd` on PATH.
Prints one line per figure and a summary table; compare figures of one run,
not across machines. Exit status 0 when everything ran, 1 on an error.
"""

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "reliability"))
# Where `make setup-bench` puts beanstalkd, taken out of its package without the unit.
os.environ["PATH"] = os.environ.get("PATH", "") + os.pathsep + os.path.join(REPO, ".build", "tools", "bin")
from loopdtest import Client, LoopdProcess, binary_dir, make_workdir, on_exit, wait_until  # noqa: E402

HOUR_MS = 3_600_000


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pipelined(path_or_sock, requests, count, reply_end, check, keep=()):
    """Writes `count` requests (requests(i) -> bytes) from a thread while
    this thread reads the replies; each reply ends with `reply_end`. Returns
    {i: reply} for the indexes in `keep` (replies come in request order)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path_or_sock)
    sock.settimeout(300)
    errors = []

    def writer():
        try:
            chunk = 4096
            for start in range(0, count, chunk):
                sock.sendall(b"".join(requests(i) for i in range(start, min(count, start + chunk))))
        except OSError as e:
            errors.append(e)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    kept, keep = {}, set(keep)
    got, buf = 0, b""
    while got < count:
        data = sock.recv(1 << 20)
        if not data:
            raise SystemExit(f"connection closed after {got} of {count} replies: {errors}")
        buf += data
        lines = buf.split(reply_end)
        buf = lines.pop()
        for line in lines:
            if not check(line):
                raise SystemExit(f"request {got} refused: {line[:300]!r}")
            if got in keep:
                kept[got] = line
            got += 1
    t.join()
    sock.close()
    return kept


def pct(samples, p):
    s = sorted(samples)
    return s[min(len(s) - 1, int(len(s) * p / 100))]


def timed(fn, calls):
    """Round trips of fn(k) for k in range(calls), in microseconds."""
    out = []
    for k in range(calls):
        t0 = time.perf_counter_ns()
        fn(k)
        out.append((time.perf_counter_ns() - t0) / 1000)
    return out


# ---------------------------------------------------------------- loopd


def submit_line(durable):
    extra = ',"durable":true' if durable else ""
    return lambda i: (b'{"id":%d,"op":"submit","action":"noop","wait":false,"delay_ms":%d%s}\n'
                      % (i, HOUR_MS, extra.encode()))


def loopd_ok(line):
    return b'"ok":true' in line


def loopd_job_id(line):
    import json
    return json.loads(line)["job"]


def new_loopd(bindir, n, fsync):
    work = make_workdir("loopd-million-")
    return LoopdProcess(bindir, work, fsync=fsync,
                        limits=f"max_queued_jobs_per_worker = {n + 1}\nmax_pending_reply_bytes = 16777216")


def loopd_stats(path):
    with Client(path, timeout=120) as c:
        return c.call({"op": "stats"})


def loopd_memory_and_requests(bindir, n, calls, rng, out):
    d = new_loopd(bindir, n, fsync=False)
    if not d.start():
        raise SystemExit("loopd did not start: " + d.log_tail())
    path = d.socket_path
    try:
        # The idle start: after a small warm-up (allocator arenas) and its trim.
        pipelined(path, lambda i: b'{"id":%d,"op":"submit","action":"noop","wait":false}\n' % i, 2000, b"\n", loopd_ok)
        if not wait_until(lambda: (lambda s: s["completed"] == 2000 and s["idle_trims"] >= 1)(loopd_stats(path)),
                          120, 0.05):
            raise SystemExit("loopd did not settle after the warm-up: " + str(loopd_stats(path)))
        base = rss_kb(d.pid)
        sample = rng.sample(range(n), min(n, 2 * calls))
        t0 = time.monotonic()
        kept = pipelined(path, submit_line(False), n, b"\n", loopd_ok, keep=sample)
        secs = time.monotonic() - t0
        s = loopd_stats(path)
        if s["accepted"] != 2000 + n:
            raise SystemExit(f"loopd accepted {s['accepted'] - 2000} of {n}")
        held = rss_kb(d.pid)
        per = (held - base) * 1024 / n
        out["loopd_bytes"] = per
        print(f"loopd      {n:>9} delayed jobs: RSS {base / 1024:.1f} -> {held / 1024:.1f} MiB, "
              f"{per:.0f} bytes per job (submitted in {secs:.1f} s, {n / secs:,.0f}/s)", flush=True)

        ids = [loopd_job_id(kept[i]) for i in sample]
        with Client(path, timeout=120) as c:
            st = timed(lambda k: c.call({"op": "status", "job": ids[k]}), calls)
            pages = timed(lambda k: c.call({"op": "jobs", "limit": 100}), calls)
            page = c.call({"op": "jobs", "limit": 100})
            if len(page["jobs"]) != 100:
                raise SystemExit(f"a jobs page held {len(page['jobs'])} jobs")
            replies = []
            cancels = timed(lambda k: replies.append(c.call({"op": "cancel", "job": ids[calls + k]})), calls)
            if not all(r.get("cancelled") is True for r in replies):
                raise SystemExit("a cancel did not cancel: " + str(next(r for r in replies if r.get("cancelled") is not True)))
        out["loopd_lat"] = {"status": st, "jobs": pages, "cancel": cancels}
        for name, xs in out["loopd_lat"].items():
            print(f"loopd      {name:<7} p50 {pct(xs, 50):7.1f} us  p99 {pct(xs, 99):7.1f} us  ({calls} calls)",
                  flush=True)
    finally:
        d.kill()


def loopd_replay(bindir, n, out):
    d = new_loopd(bindir, n, fsync=True)
    if not d.start():
        raise SystemExit("loopd did not start: " + d.log_tail())
    path = d.socket_path
    try:
        t0 = time.monotonic()
        pipelined(path, submit_line(True), n, b"\n", loopd_ok)
        secs = time.monotonic() - t0
        s = loopd_stats(path)
        if s["journal"]["pending"] != n:
            raise SystemExit(f"journal.pending is {s['journal']['pending']}, not {n}")
        print(f"loopd      {n:>9} durable delayed jobs journaled in {secs:.1f} s ({n / secs:,.0f}/s), "
              f"journal {s['journal']['bytes'] / 1e6:.0f} MB", flush=True)
        status = d.terminate(timeout=600)
        if status != 0:
            raise SystemExit(f"loopd exited with {status} at SIGTERM: " + d.log_tail())
        t0 = time.monotonic()
        if not d.start(ready_timeout=600):
            raise SystemExit("loopd did not answer after the restart: " + d.log_tail())
        ping = time.monotonic() - t0
        if not wait_until(lambda: loopd_stats(path)["journal"]["pending"] == n, 600, 0.01):
            raise SystemExit("the replay did not bring back every job: " + str(loopd_stats(path)))
        ready = time.monotonic() - t0
        s = loopd_stats(path)
        out["loopd_replay"] = (ping, ready)
        print(f"loopd      replay: ping after {ping:.2f} s, {n} jobs back after {ready:.2f} s "
              f"({n / ready:,.0f} jobs/s), {s['accepted']} accepted", flush=True)
    finally:
        d.kill()


# ---------------------------------------------------------------- beanstalkd


class Beanstalkd:
    def __init__(self, work, binlog):
        self.sock = os.path.join(work, f"beanstalkd-{'binlog' if binlog else 'mem'}.sock")
        self.binlog = os.path.join(work, "binlog") if binlog else None
        if self.binlog:
            os.makedirs(self.binlog, exist_ok=True)
        self.proc = None
        on_exit(self.kill)

    def start(self, timeout=600):
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        argv = ["beanstalkd", "-l", f"unix:{self.sock}"] + (["-b", self.binlog] if self.binlog else [])
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

        def answers():
            if self.proc.poll() is not None:
                raise SystemExit(f"beanstalkd exited with {self.proc.returncode}")
            try:
                self.stats()
                return True
            except OSError:
                return False

        return wait_until(answers, timeout, 0.01)

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(120)
        s.connect(self.sock)
        return s

    def stats(self):
        with self.connect() as s:
            return parse_stats(call(s, b"stats\r\n"))

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=120)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def read_reply(s, buf):
    """One beanstalkd reply (with its body, for OK), and the rest of buf."""
    while b"\r\n" not in buf:
        buf += s.recv(65536)
    head, rest = buf.split(b"\r\n", 1)
    if head.startswith(b"OK "):
        size = int(head[3:]) + 2
        while len(rest) < size:
            rest += s.recv(65536)
        return head + b"\r\n" + rest[:size], rest[size:]
    return head, rest


def call(s, request):
    s.sendall(request)
    reply, rest = read_reply(s, b"")
    assert not rest
    return reply


def parse_stats(reply):
    out = {}
    for line in reply.decode().splitlines()[1:]:
        if ": " in line:
            k, v = line.split(": ", 1)
            out[k] = v.strip()
    return out


PUT = b"put 2147483648 3600 60 0\r\n\r\n"


def beanstalk_memory_and_requests(work, n, calls, rng, out):
    b = Beanstalkd(work, binlog=False)
    if not b.start():
        raise SystemExit("beanstalkd did not start")
    try:
        base = rss_kb(b.proc.pid)
        sample = rng.sample(range(n), min(n, 2 * calls))
        t0 = time.monotonic()
        kept = pipelined(b.sock, lambda i: PUT, n, b"\r\n", lambda line: line.startswith(b"INSERTED "), keep=sample)
        secs = time.monotonic() - t0
        st = b.stats()
        if int(st["current-jobs-delayed"]) != n:
            raise SystemExit(f"beanstalkd holds {st['current-jobs-delayed']} delayed jobs, not {n}")
        held = rss_kb(b.proc.pid)
        per = (held - base) * 1024 / n
        out["bean_bytes"] = per
        print(f"beanstalkd {n:>9} delayed jobs: RSS {base / 1024:.1f} -> {held / 1024:.1f} MiB, "
              f"{per:.0f} bytes per job (put in {secs:.1f} s, {n / secs:,.0f}/s)", flush=True)
        ids = [int(kept[i].split()[1]) for i in sample]
        with b.connect() as s:
            st = timed(lambda k: call(s, b"stats-job %d\r\n" % ids[k]), calls)
            replies = []
            dels = timed(lambda k: replies.append(call(s, b"delete %d\r\n" % ids[calls + k])), calls)
            if not all(r == b"DELETED" for r in replies):
                raise SystemExit("a delete failed: " + str(replies[:3]))
        out["bean_lat"] = {"status": st, "cancel": dels}
        for name, what, xs in (("stats-job", "status", st), ("delete", "cancel", dels)):
            print(f"beanstalkd {name:<9} p50 {pct(xs, 50):7.1f} us  p99 {pct(xs, 99):7.1f} us  ({calls} calls)",
                  flush=True)
    finally:
        b.kill()


def beanstalk_replay(work, n, out):
    b = Beanstalkd(work, binlog=True)
    if not b.start():
        raise SystemExit("beanstalkd did not start")
    try:
        t0 = time.monotonic()
        pipelined(b.sock, lambda i: PUT, n, b"\r\n", lambda line: line.startswith(b"INSERTED "))
        secs = time.monotonic() - t0
        size = sum(os.path.getsize(os.path.join(b.binlog, f)) for f in os.listdir(b.binlog))
        print(f"beanstalkd {n:>9} jobs into its binlog in {secs:.1f} s ({n / secs:,.0f}/s), "
              f"binlog {size / 1e6:.0f} MB", flush=True)
        b.stop()
        t0 = time.monotonic()
        if not b.start():
            raise SystemExit("beanstalkd did not answer after the restart")
        ping = time.monotonic() - t0
        if not wait_until(lambda: int(b.stats()["current-jobs-delayed"]) == n, 600, 0.01):
            raise SystemExit("beanstalkd did not bring back every job: " + str(b.stats()))
        ready = time.monotonic() - t0
        out["bean_replay"] = (ping, ready)
        print(f"beanstalkd replay: stats after {ping:.2f} s, {n} jobs back after {ready:.2f} s "
              f"({n / ready:,.0f} jobs/s)", flush=True)
    finally:
        b.kill()


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin")
    ap.add_argument("--quick", action="store_true", help="50,000 jobs, 200 calls (CI)")
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--calls", type=int)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n = args.jobs or (50_000 if args.quick else 1_000_000)
    calls = args.calls or (200 if args.quick else 1000)
    if 2 * calls > n:
        raise SystemExit("--calls must be at most half of --jobs")
    if not shutil.which("beanstalkd"):
        raise SystemExit("beanstalkd is not on PATH (make setup-bench puts it in .build/tools/bin)")
    bindir = binary_dir(args.bin)
    work = make_workdir("beanstalkd-million-")
    rng = random.Random(args.seed)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"{n:,} jobs, {calls} calls per request; load average {' '.join(load)}; {os.cpu_count()} CPUs", flush=True)
    out = {}
    loopd_memory_and_requests(bindir, n, calls, rng, out)
    beanstalk_memory_and_requests(work, n, calls, rng, out)
    loopd_replay(bindir, n, out)
    beanstalk_replay(work, n, out)

    lb, bb = out["loopd_bytes"], out["bean_bytes"]
    ll, bl = out["loopd_lat"], out["bean_lat"]
    (lp, lr), (bp, br) = out["loopd_replay"], out["bean_replay"]

    def lat(xs):
        return f"{pct(xs, 50):.0f} / {pct(xs, 99):.0f} us"

    print()
    print(f"| {n:,} jobs held | loopd | beanstalkd | loopd / beanstalkd |")
    print("|---|---|---|---|")
    print(f"| bytes per delayed job (RSS) | {lb:.0f} | {bb:.0f} | {lb / bb:.2f} |")
    print(f"| `status` / `stats-job` p50 / p99 | {lat(ll['status'])} | {lat(bl['status'])} | |")
    print(f"| `jobs` page of 100 p50 / p99 | {lat(ll['jobs'])} | — | |")
    print(f"| `cancel` / `delete` p50 / p99 | {lat(ll['cancel'])} | {lat(bl['cancel'])} | |")
    print(f"| replay: answers after | {lp:.2f} s | {bp:.2f} s | |")
    print(f"| replay: all jobs back after | {lr:.2f} s ({n / lr:,.0f} jobs/s) | {br:.2f} s ({n / br:,.0f} jobs/s) "
          f"| {lr / br:.2f} |")
    print()
    for what, ok in (("bytes per job no more than beanstalkd's", lb <= bb), ("replay faster than beanstalkd's", lr < br)):
        print(f"target {what}: {'met' if ok else 'MISS'}")


if __name__ == "__main__":
    main()
