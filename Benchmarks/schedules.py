#!/usr/bin/env python3
"""What schedules that are not due cost loopd, measured on the real binary:
the figures behind docs/OPERATIONS.md ("Schedules").

    python3 Benchmarks/schedules.py [--bin DIR] [--schedules N] [--seconds S]

Starts loopd twice, one after the other on the same machine: without
schedules, then with N (default 10,000) declared, none due within the run
(half `every = "1d"`, half yearly cron, each with its own jitter). For each
it prints the resident size once started, then the CPU time and the context
switches (voluntary and involuntary, every thread: each is a wake-up or a
preemption) over S idle seconds (default 60), and the per-schedule cost of
the difference. A loop that sleeps until the earliest slot wakes no more
with 10,000 schedules than with none.
"""

import argparse
import glob
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "reliability"))
from loopdtest import LoopdProcess, binary_dir, make_workdir  # noqa: E402


def switches(pid):
    """Context switches of every thread of `pid`, voluntary and not."""
    total = 0
    for status in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            with open(status) as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except OSError:
            pass  # a thread that ended while we read
    return total


def schedules_toml(n):
    tables = []
    for i in range(n):
        when = 'every = "1d"' if i % 2 else 'cron = "%d %d 1 1 *"' % (i % 60, i % 24)
        tables.append(f'[schedules.s{i}]\naction = "noop"\n{when}\njitter = "1h"\n')
    return "\n".join(tables)


def measure(bindir, n, seconds):
    work = make_workdir("loopd-sched-bench-")
    d = LoopdProcess(bindir, work, extra_toml=schedules_toml(n))
    started = time.monotonic()
    d.start(ready_timeout=300)
    ready = time.monotonic() - started
    try:
        time.sleep(1)  # past start-up's own work
        rss = d.rss_kb()
        cpu0, sw0 = d.cpu_seconds(), switches(d.pid)
        time.sleep(seconds)
        cpu, sw = d.cpu_seconds() - cpu0, switches(d.pid) - sw0
    finally:
        d.terminate()
    return {"ready_s": ready, "rss_kb": rss, "cpu_s": cpu, "switches": sw}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", help="directory with loopd (default $LOOPD_BIN_DIR, else .build/release)")
    ap.add_argument("--schedules", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=60)
    a = ap.parse_args()
    bindir = binary_dir(a.bin)
    none = measure(bindir, 0, a.seconds)
    many = measure(bindir, a.schedules, a.seconds)
    for label, m in (("0 schedules", none), (f"{a.schedules} schedules", many)):
        print(f"{label:>18}: ready in {m['ready_s']:.2f} s, RSS {m['rss_kb']} kB; over {a.seconds:g} s idle: "
              f"CPU {m['cpu_s']:.2f} s, {m['switches']} context switches")
    per = (many["rss_kb"] - none["rss_kb"]) * 1024 / max(1, a.schedules)
    print(f"{'per schedule':>18}: {per:.0f} bytes of RSS; "
          f"{many['switches'] - none['switches']:+d} context switches and "
          f"{many['cpu_s'] - none['cpu_s']:+.2f} s CPU over the idle run")


if __name__ == "__main__":
    main()
