#!/usr/bin/env python3
"""The fleet's PostgreSQL client beside postgres-nio, on a private server.

    python3 Benchmarks/pgclients.py [--bin PATH] [--transport unix|tcp] [PGClientBench options]

Starts a PostgreSQL cluster of its own (Tests/fleet/pgcluster.py: a temporary
directory, Unix socket and 127.0.0.1 port), creates the database `bench`,
runs PGClientBench over the Unix socket and then over TCP (scram-sha-256),
each printing its runs and its table of medians, and stops the cluster.
Builds nothing: --bin is the PGClientBench executable (default
Benchmarks/.build/release/PGClientBench, from `swift build -c release
--product PGClientBench` in Benchmarks/). Other options (--count, --warmup,
--rounds, --depth, --only) go to PGClientBench as they are. After each run a
line gives the CPU time PGClientBench, the server and the rest of the
machine used meanwhile: the last says how quiet the machine was. Exit
status: 0 when every run finished, else 1.
"""

import argparse
import os
import resource
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Tests", "fleet"))
from pgcluster import Cluster  # noqa: E402


def busy_seconds() -> float:
    """CPU time the whole machine has spent busy (/proc/stat: user, nice, system, irq, softirq)."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = [int(v) for v in f.readline().split()[1:8]]
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(HERE, ".build", "release", "PGClientBench"))
    ap.add_argument("--transport", choices=["unix", "tcp"], help="one of them (default both)")
    args, passed = ap.parse_known_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no PGClientBench at {args.bin}: build it (cd Benchmarks && swift build -c release "
                 "--product PGClientBench) or give --bin")
    status = 0
    with Cluster() as pg:
        pg.create_database("bench")
        version = pg.psql("SHOW server_version;").strip()
        print(f"PostgreSQL {version} ({pg.bindir}), fsync off, synchronous_commit on", flush=True)
        for transport in [args.transport] if args.transport else ["unix", "tcp"]:
            tcp = transport == "tcp"
            conninfo = pg.conninfo("bench", password=pg.password if tcp else None, tcp=tcp)
            print(flush=True)
            server0, busy0 = pg.cpu_seconds(), busy_seconds()
            own0, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
            done = subprocess.run([args.bin, "--database", conninfo, f"--{transport}", *passed])
            own1, wall, busy = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic() - started, busy_seconds() - busy0
            time.sleep(0.5)  # the postmaster reaps the benchmark's backends: their CPU time joins its own
            bench = own1.ru_utime + own1.ru_stime - own0.ru_utime - own0.ru_stime
            server = pg.cpu_seconds() - server0
            print(f"CPU during the {transport} run ({wall:.0f} s): PGClientBench {bench:.1f} s, the server {server:.1f} s, "
                  f"the rest of the machine {max(busy - bench - server, 0):.1f} s", flush=True)
            if done.returncode != 0:
                print(f"PGClientBench --{transport} exited with {done.returncode}", file=sys.stderr)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
