#!/usr/bin/env python3
"""What loopd's memory costs per job, measured on the real binary: the
figures behind `limits.max_retained_bytes`, the unit's MemoryMax= advice and
docs/OPERATIONS.md ("Memory").

    python3 Benchmarks/memory.py [--bin DIR] [--jobs N] [--burst M]

  queued    N noop jobs (wait: false) held on w1 (switched to mode
            "maintenance", so none runs): the resident size (VmRSS) they
            add, per job.
  retained  w1 back in "default": the N jobs run and are kept for `status`;
            once loopd is idle and has trimmed (stats: idle_trims), the
            resident size they add over the start, per retained job.
  burst     M more noop jobs through both workers: the resident size when
            the last one has ended (the peak malloc keeps), then once the
            idle trim has returned the free memory.

Defaults: N = 100,000, M = 200,000. Every step waits for the event it
needs (the queue count, the completed count, idle_trims) through `stats`.
Prints one line per figure; compare figures of one run, not across machines.
"""

import argparse
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "reliability"))
from loopdtest import Client, LoopdProcess, binary_dir, make_workdir, wait_until  # noqa: E402

BATCH = 2000


def submit_many(path, count, **fields):
    """Sends `count` noop submits in batches, reading every reply."""
    with Client(path, timeout=120) as c:
        sent = 0
        while sent < count:
            n = min(BATCH, count - sent)
            c.send_many([dict({"id": sent + k, "op": "submit", "action": "noop", "wait": False}, **fields)
                         for k in range(n)])
            for _ in range(n):
                r = c.read_reply()
                if not r or r.get("ok") is not True:
                    raise SystemExit(f"submit refused: {r}")
            sent += n


def stats(path):
    with Client(path) as c:
        return c.call({"op": "stats"})


def until(path, what, predicate, timeout=600):
    last = {}

    def check():
        nonlocal last
        last = stats(path)
        return predicate(last)

    if not wait_until(check, timeout, 0.05):
        raise SystemExit(f"timed out waiting for {what}: {last}")
    return last


def mib(kb):
    return f"{kb / 1024:.1f} MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin")
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--burst", type=int, default=200_000)
    args = ap.parse_args()
    bindir = binary_dir(args.bin)
    n, m = args.jobs, args.burst
    work = make_workdir("loopd-memory-")
    d = LoopdProcess(bindir, work, fsync=False,
                     limits=f"max_queued_jobs_per_worker = {max(n, m) + 1}\nmax_retained_bytes = 1073741824")
    if not d.start():
        raise SystemExit("loopd did not start: " + d.log_tail())
    path = d.socket_path
    try:
        # Warm up (allocator arenas, the table's arrays), then idle and trim.
        submit_many(path, 2_000)
        s = until(path, "the warm-up's trim", lambda s: s["completed"] == 2_000 and s["idle_trims"] >= 1)
        trims = s["idle_trims"]
        base, base_retained = d.rss_kb(), s["retained"]["jobs"]
        print(f"start                 RSS {mib(base)} ({base_retained} finished jobs retained)")

        with Client(path) as c:
            c.call({"op": "mode", "worker": "w1", "mode": "maintenance"})
        submit_many(path, n, worker="w1")
        until(path, f"{n} jobs queued", lambda s: s["queued"] == n)
        queued = d.rss_kb()
        print(f"queued   {n:>7} held  RSS {mib(queued)}: +{mib(queued - base)}, "
              f"{(queued - base) * 1024 / n:.0f} bytes per queued job")

        with Client(path) as c:
            c.call({"op": "mode", "worker": "w1", "mode": "default"})
        s = until(path, "the queued jobs' end and a trim",
                  lambda s: s["completed"] == 2_000 + n and s["idle_trims"] > trims)
        trims = s["idle_trims"]
        retained, kept = d.rss_kb(), s["retained"]["jobs"]
        added = kept - base_retained
        print(f"retained {added:>7} more RSS {mib(retained)}: +{mib(retained - base)}, "
              f"{(retained - base) * 1024 / added:.0f} bytes per retained job "
              f"(loopd's estimate: {s['retained']['bytes'] / kept:.0f})")

        done = s["completed"]
        t0 = time.monotonic()
        half = m // 2
        for worker in ("w1", "w2"):
            submit_many(path, half, worker=worker)
        s = until(path, "the burst's end", lambda s: s["completed"] == done + 2 * half)
        peak = d.rss_kb()
        secs = time.monotonic() - t0
        print(f"burst    {2 * half:>7} jobs RSS {mib(peak)} when the last ended ({secs:.1f} s), "
              f"idle_trims {s['idle_trims']}")
        s = until(path, "the idle trim", lambda s: s["idle_trims"] > trims)
        after = d.rss_kb()
        print(f"idle trim             RSS {mib(after)}: {mib(peak - after)} returned to the kernel")
    finally:
        d.terminate()


if __name__ == "__main__":
    main()
