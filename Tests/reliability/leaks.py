#!/usr/bin/env python3
"""RESOURCES, per job kind: does a kind of job leave memory
behind? The regression test of the leaks the load test found.

loopd keeps the last 100,000 finished jobs queryable by design, so RSS is
only comparable when that window holds the same jobs. The script fills it
with echo jobs, then for each kind runs --jobs jobs of that kind, runs as
many echo jobs again (they push exactly those jobs out of the window), and
measures VmRSS. Each kind runs three rounds; a leak grows RSS every round
by its size times the job count, while allocator retention (glibc keeps
freed memory in its arenas, and a kind's first rounds may enlarge them)
shrinks from round to round. The checks:

  the smaller of rounds 2 and 3 <= --round-slack-kb   (default 4096 kB: 200 B/job at 20,000 jobs)
  all three rounds               <= --total-slack-kb   (default 16384 kB)

Leaks found with it (bytes per job, 40,000 jobs a round, before the fix):
  exec-run-leak        ~2,400 B/job  an exec job's run, its sources and
                                     output stayed in a reference cycle
  perform-token-cycle  ~900 B/job    every delayed job (run or cancelled):
                                     LoopRuntime's PerformToken and its
                                     timer referenced each other

    Tests/reliability/leaks.py [--bin DIR] [--jobs 20000] [--kinds exec,delay_cancel,...]
"""

import argparse
import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loopdtest import (Checks, Client, LoopdProcess, binary_dir, make_workdir, run_threads, section,  # noqa: E402
                       wait_idle, wait_until)
from load import PHASE_LIMITS, WORKERS, config_actions, warm_up  # noqa: E402

KINDS = {
    "echo": lambda n: {"op": "submit", "action": "echo", "args": [f"e{n}", "w" * 40]},
    "exec": lambda n: {"op": "submit", "action": "exit0"},
    "exec_output": lambda n: {"op": "submit", "action": "printf", "args": [f"p{n}"]},
    "delay_cancel": None,  # submit delayed a minute, then cancel
    "delayed": lambda n: {"op": "submit", "action": "echo", "args": [f"d{n}"], "delay_ms": 1},
    "durable": lambda n: {"op": "submit", "action": "echo", "args": [f"u{n}"], "durable": True},
    "timeout": lambda n: {"op": "submit", "action": "sleep", "args": ["1000"], "timeout_ms": 1},
    "fail": lambda n: {"op": "submit", "action": "fail", "args": [f"f{n}"]},
    "disconnect": None,  # pipelined waits, then an abrupt close
}


def run_kind(path, kind, jobs, connections=4):
    def one(k):
        per = jobs // connections
        if kind == "disconnect":
            for start in range(0, per, 50):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                s.sendall(b"".join(b'{"id":%d,"op":"submit","action":"sleep","args":["0"]}\n' % i
                                   for i in range(50)))
                s.close()
            return
        with Client(path, timeout=60) as c:
            for start in range(0, per, 100):
                n = min(100, per - start)
                if kind == "delay_cancel":
                    c.send_many([{"id": i, "op": "submit", "action": "echo", "args": ["x"], "delay_ms": 60000,
                                  "wait": False} for i in range(n)])
                    jobs_ = [c.read_reply()["job"] for _ in range(n)]
                    c.send_many([{"id": i, "op": "cancel", "job": j} for i, j in enumerate(jobs_)])
                    for _ in range(n):
                        r = c.read_reply()
                        if r.get("cancelled") is not True:
                            raise RuntimeError(f"cancel {r}")
                    continue
                c.send_many([dict(KINDS[kind](f"{k}.{start + i}"), id=i) for i in range(n)])
                for _ in range(n):
                    if c.read_reply() is None:
                        raise RuntimeError("closed")

    run_threads(one, connections)


def idle_trims(path):
    with Client(path) as c:
        return c.call({"op": "stats"}).get("idle_trims", 0)


def settle(d, path, base_fd, trims):
    """RSS once loopd is idle and has handed its free memory back: loopd
    trims malloc's free lists a second after a burst goes quiet, so every
    measurement waits for the trim after the burst (the stats'
    `idle_trims` passes `trims`, read before it) rather than landing
    before the trim one round and after it the next."""
    wait_idle(path, 120)
    wait_until(lambda: d.fd_count() <= base_fd, 10, 0.05)
    wait_until(lambda: idle_trims(path) > trims, 30, 0.1)
    time.sleep(0.3)
    return d.rss_kb()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin")
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--kinds", default="exec,exec_output,delay_cancel,delayed,durable,timeout,fail,disconnect")
    ap.add_argument("--round-slack-kb", type=int, default=4096)
    ap.add_argument("--total-slack-kb", type=int, default=16384)
    args = ap.parse_args()
    bindir = binary_dir(args.bin)
    checks = Checks("leaks")
    work = make_workdir("loopd-leaks-")
    # retention 0: finished durable jobs leave the journal's memory at once
    # (keeping them for retention_seconds is by design, not a leak).
    d = LoopdProcess(bindir, work, fsync=False, workers=len(WORKERS), journal_extra="retention_seconds = 0",
                     extra_toml=config_actions(os.path.join(work, "record.log")))
    section(f"leaks: {args.jobs} jobs a round, three rounds a kind; loopd from {bindir}")
    checks.check(d.start(), "loopd starts")
    path = d.socket_path
    t0 = time.monotonic()
    warm_up(path, 110_000, PHASE_LIMITS["warm-up"])
    wait_idle(path, 120)
    base_fd = d.idle_fd_count()
    trims = idle_trims(path)
    for _ in range(2):  # until echo itself is steady
        warm_up(path, args.jobs, PHASE_LIMITS["warm-up"])
    rss = settle(d, path, base_fd, trims)
    print(f"  info  window filled in {time.monotonic() - t0:.0f} s: VmRSS {rss} kB, fds {base_fd}", flush=True)
    for kind in args.kinds.split(","):
        growth = []
        for rnd in range(3):
            t = time.monotonic()
            trims = idle_trims(path)
            run_kind(path, kind, args.jobs)
            warm_up(path, args.jobs, PHASE_LIMITS["warm-up"])  # pushes this round's jobs out of the window again
            now = settle(d, path, base_fd, trims)
            growth.append(now - rss)
            rss = now
            print(f"  info  {kind} round {rnd + 1}: VmRSS {now} kB ({growth[-1]:+d} kB, "
                  f"{growth[-1] * 1024 / args.jobs:+.0f} B/job) in {time.monotonic() - t:.1f} s", flush=True)
        later = min(growth[1:])
        checks.check(later <= args.round_slack_kb and sum(growth) <= args.total_slack_kb,
                     f"{kind}: no memory left behind per job (rounds 2-3 at least {later:+d} kB <= {args.round_slack_kb}, "
                     f"total {sum(growth):+d} kB <= {args.total_slack_kb})")
        fds = d.idle_fd_count()
        checks.check(fds == base_fd, f"{kind}: descriptors back to {base_fd}", str(fds))
    checks.check(d.terminate() == 0, "loopd stops cleanly")
    checks.finish()


if __name__ == "__main__":
    main()
