#!/usr/bin/env python3
"""The fleet running empty jobs, beside PostgreSQL job queues: a backlog
drained, and a stream of submissions.

    python3 Benchmarks/fleet.py [--scenario drain|stream|all] [--bin DIR]
                                [--jobs N] [--seconds S] [--quick]

  drain    N empty jobs are enqueued first, with nothing consuming them;
           then the consumers start and drain them. jobs/s from the
           consumers' start (process launch included) until every job has
           ended, and PostgreSQL's CPU (utime + stime of the postmaster and
           all its children, exited backends included) over the drain, per
           job, less that of the backend serving this script's own polling
           for the end (a count every 10 ms, whose cost differs with each
           subject's table and would otherwise be charged to it). Each run
           is checked: every job ran once.

           loopd, 1, 2 and 3 nodes, each with two `default` lanes, action
           `noop`. The jobs are made by `SELECT loopd.submit_job('noop', ...)
           FROM generate_series(...)`, 5,000 a statement, while one node
           whose only lane runs mode `maint` is up (submit_job wants a live
           node with the action; that lane never claims a `default` job); it
           stops before the drain.
           pgqueuer: `pgq install`, `pgq autovac` (its README's advice),
           batch enqueue of 1,000, one consumer process (PgQueuer.run with
           batch_size 10, an async no-op entrypoint).
           procrastinate: its schema, batch_defer_async of 1,000, one worker
           process (run_worker_async, concurrency 10, an async no-op task).

  stream   the consumers are up first (the same ones as in drain); then
           producers submit one job per request for S seconds: 1 producer,
           then 50 (50 asyncio tasks in one producer process, each with its
           own connection: a loopd socket, spread over the nodes; an asyncpg
           connection; procrastinate's pool of 50). loopd: `submit` with
           `fleet: true, wait: false` over a persistent connection; pgqueuer:
           `Queries.enqueue` of one job; procrastinate: `defer_async`.
           Reported: jobs submitted, jobs ended within the window per second,
           enqueue-to-start p50/p99 of every submitted job from the subject's
           own tables (loopd: started_at - submitted_at; pgqueuer: its log's
           `picked` row - its `queued` row; procrastinate: its `started`
           event - its `deferred` event), PostgreSQL's CPU over the window
           per job ended in it. Then the backlog is let finish and every job
           checked to have run once.

Defaults: N = 20,000, S = 10; --quick: N = 2,000, S = 3. The PostgreSQL server is a private
one (Tests/fleet/pgcluster.py: owned by nobody, fsync off, the same for
every subject), one database per run. pgqueuer and procrastinate come from
a venv at .build/fleet-bench-venv:

    python3 -m venv .build/fleet-bench-venv
    .build/fleet-bench-venv/bin/pip install pgqueuer procrastinate asyncpg 'psycopg[binary]'

The script runs itself with that venv's python. It builds nothing: loopd
comes from --bin, else .build-benchrel/release, .build/release, .build/debug
(the first that has one; a debug build's figures say little). Compare the
figures of one run, not across machines.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(REPO, ".build", "fleet-bench-venv")
VENV_PY = os.path.join(VENV, "bin", "python")

if os.path.realpath(sys.prefix) != os.path.realpath(VENV):
    if not os.access(VENV_PY, os.X_OK):
        raise SystemExit(f"no venv at {VENV}: see this script's doc for the two commands that make it")
    os.execv(VENV_PY, [VENV_PY] + sys.argv)

import psycopg  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "Tests", "fleet"))
from pgcluster import Cluster, _stat_fields  # noqa: E402
import fleet  # noqa: E402

BATCH = 5_000


def pick_bindir(given):
    for d in ([given] if given else [".build-benchrel/release", ".build/release", ".build/debug"]):
        path = os.path.join(REPO, d) if not os.path.isabs(d) else d
        if os.access(os.path.join(path, "loopd"), os.X_OK):
            return path
    raise SystemExit("no loopd: give --bin DIR")


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def node(workdir, name, conninfo, lanes):
    """A fleet.Node whose config has the given [[workers]] (name, mode) pairs."""
    n = fleet.Node(workdir, name, conninfo)
    workers = "".join(f'\n[[workers]]\nname = "{w}"\nmode = "{m}"\n' for w, m in lanes)
    with open(n.config, "w") as f:
        f.write(f"""[server]
socket = "{n.socket}"
socket_mode = "0660"
state_dir = "{os.path.join(n.dir, 'state')}"
log_level = "info"

[journal]
fsync = false
{workers}
[fleet]
database = "{conninfo}"
node = "{name}"
""")
    return n


def backend_cpu_seconds(conn):
    """CPU time of the server process behind `conn` (this script's polling)."""
    fields = _stat_fields(conn.info.backend_pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") if fields else 0.0


def wait_drained(conn, sql, timeout=600):
    deadline = time.monotonic() + timeout
    while conn.execute(sql).fetchone()[0] != 0:
        if time.monotonic() > deadline:
            raise SystemExit(f"not drained after {timeout} s: {sql}")
        time.sleep(0.01)
    return time.monotonic()


def run_loopd(pg, bindir, workdir, n_nodes, jobs):
    db = f"loopd{n_nodes}"
    pg.create_database(db)
    conninfo = pg.conninfo(db)
    conn = psycopg.connect(conninfo, autocommit=True)
    enq = node(workdir, f"enq{n_nodes}", conninfo, [("m1", "maint")])
    enq.start()
    enq.wait_joined()
    t = time.monotonic()
    for start in range(0, jobs, BATCH):
        k = min(BATCH, jobs - start)
        conn.execute("SELECT count(loopd.submit_job('noop', owner_name => 'root')) FROM generate_series(1, %s)", (k,))
    enqueue_s = time.monotonic() - t
    enq.stop()
    nodes = [node(workdir, f"d{n_nodes}-{i}", conninfo, [("w1", "default"), ("w2", "default")])
             for i in range(n_nodes)]
    cpu0, poll0, t0 = pg.cpu_seconds(), backend_cpu_seconds(conn), time.monotonic()
    for n in nodes:
        n.launch()
    t1 = wait_drained(conn, "SELECT count(*) FROM loopd.jobs WHERE finished_at IS NULL")
    cpu1 = pg.cpu_seconds() - (backend_cpu_seconds(conn) - poll0)
    ok, total, span = conn.execute(
        "SELECT count(*) FILTER (WHERE state = 'completed' AND attempt = 1), count(*),"
        " extract(epoch FROM max(finished_at) - min(started_at)) FROM loopd.jobs").fetchone()
    per_node = conn.execute("SELECT claimed_by, count(*) FROM loopd.jobs GROUP BY 1 ORDER BY 1").fetchall()
    for n in nodes:
        n.stop()
    conn.close()
    check = f"{ok}/{total} completed at attempt 1" + ("" if ok == total == jobs else "  ** FAILED **")
    note = "by node " + " ".join(str(c) for _, c in per_node) + f"; first start to last end {float(span):.2f} s"
    return dict(name=f"loopd, {n_nodes} node{'s' if n_nodes > 1 else ''} ({2 * n_nodes} lanes)",
                jobs=jobs, enqueue_s=enqueue_s, drain_s=t1 - t0, cpu_s=cpu1 - cpu0,
                ok=ok == total == jobs, check=check, note=note)


# The consumers of the Python queues: each imports and connects, says "ready",
# and starts consuming when a line comes on its stdin.
PGQ_WORKER = """
import asyncio, sys, asyncpg
from pgqueuer import PgQueuer
from pgqueuer.db import AsyncpgDriver
async def main():
    conn = await asyncpg.connect(sys.argv[1])
    pgq = PgQueuer(AsyncpgDriver(conn))
    @pgq.entrypoint("empty")
    async def empty(job):
        pass
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await pgq.run(batch_size=int(sys.argv[2]))
asyncio.run(main())
"""

PROC_APP = """
import asyncio, sys
import procrastinate
app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=sys.argv[1]))
@app.task(name="empty")
async def empty():
    pass
"""

PROC_WORKER = PROC_APP + """
async def main():
    async with app.open_async():
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        await app.run_worker_async(concurrency=int(sys.argv[2]))
asyncio.run(main())
"""

PROC_ENQUEUE = PROC_APP + """
async def main():
    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        for start in range(0, int(sys.argv[2]), 1000):
            await empty.batch_defer_async(*[{}] * min(1000, int(sys.argv[2]) - start))
asyncio.run(main())
"""

PGQ_ENQUEUE = """
import asyncio, sys, asyncpg
from pgqueuer.db import AsyncpgDriver
from pgqueuer.queries import Queries
async def main():
    q = Queries(AsyncpgDriver(await asyncpg.connect(sys.argv[1])))
    for start in range(0, int(sys.argv[2]), 1000):
        k = min(1000, int(sys.argv[2]) - start)
        await q.enqueue(["empty"] * k, [None] * k, [0] * k)
asyncio.run(main())
"""


def run_python_queue(pg, workdir, name, db, jobs, setup, enqueue, worker, worker_arg, remaining, verify):
    pg.create_database(db)
    url = pg.url(db)
    env = dict(os.environ, PGHOST=pg.socketdir, PGPORT=str(pg.port), PGUSER=pg.superuser, PGDATABASE=db)
    for argv in setup:
        subprocess.run(argv, env=env, check=True, capture_output=True)
    t = time.monotonic()
    subprocess.run([VENV_PY, "-c", enqueue, url, str(jobs)], env=env, check=True)
    enqueue_s = time.monotonic() - t
    conn = psycopg.connect(pg.conninfo(db), autocommit=True)
    proc = subprocess.Popen([VENV_PY, "-c", worker, url, str(worker_arg)], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(os.path.join(workdir, f"{db}.log"), "w"))
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"{name}'s consumer did not start: see {workdir}/{db}.log")
    cpu0, poll0, t0 = pg.cpu_seconds(), backend_cpu_seconds(conn), time.monotonic()
    proc.stdin.write("go\n")
    proc.stdin.flush()
    t1 = wait_drained(conn, remaining)
    cpu1 = pg.cpu_seconds() - (backend_cpu_seconds(conn) - poll0)
    time.sleep(0.5)  # what the consumer writes after the job's own end (logs, events)
    ok, check = verify(conn, jobs)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    conn.close()
    return dict(name=name, jobs=jobs, enqueue_s=enqueue_s, drain_s=t1 - t0, cpu_s=cpu1 - cpu0,
                ok=ok, check=check + ("" if ok else "  ** FAILED **"), note=f"consumer: {worker_arg}")


def verify_pgqueuer(conn, jobs):
    left, done, distinct, picked = conn.execute(
        "SELECT (SELECT count(*) FROM pgqueuer),"
        " count(*) FILTER (WHERE status = 'successful'),"
        " count(DISTINCT job_id) FILTER (WHERE status = 'successful'),"
        " count(*) FILTER (WHERE status = 'picked') FROM pgqueuer_log").fetchone()
    ok = left == 0 and done == distinct == jobs and picked in (0, jobs)
    return ok, f"{distinct} distinct jobs successful ({done} log rows), {picked} picks logged, {left} left"


def verify_procrastinate(conn, jobs):
    done, total, started, distinct = conn.execute(
        "SELECT count(*) FILTER (WHERE status = 'succeeded'), count(*),"
        " (SELECT count(*) FROM procrastinate_events WHERE type = 'started'),"
        " (SELECT count(DISTINCT job_id) FROM procrastinate_events WHERE type = 'started')"
        " FROM procrastinate_jobs").fetchone()
    ok = done == total == started == distinct == jobs
    return ok, f"{done}/{total} succeeded, {started} starts of {distinct} jobs"


# The producers of the stream: argv = target, seconds, producers. Each says
# "ready" once connected, starts on a line on stdin, and prints how many jobs
# it submitted.
STREAM_MAIN = """
async def main():
    conns = await asyncio.gather(*[connect(i) for i in range(int(sys.argv[3]))])
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    end = time.monotonic() + float(sys.argv[2])
    async def produce(c):
        n = 0
        while time.monotonic() < end:
            await submit(c)
            n += 1
        return n
    print(sum(await asyncio.gather(*[produce(c) for c in conns])), flush=True)
"""

LOOPD_PRODUCER = """
import asyncio, json, sys, time
LINE = json.dumps({"op": "submit", "action": "noop", "fleet": True, "wait": False}).encode() + b"\\n"
async def connect(i):
    sockets = sys.argv[1].split(",")
    return await asyncio.open_unix_connection(sockets[i % len(sockets)])
async def submit(c):
    c[1].write(LINE)
    reply = json.loads(await c[0].readline())
    if not reply.get("ok"):
        raise SystemExit(f"submit refused: {reply}")
""" + STREAM_MAIN + """
asyncio.run(main())
"""

PGQ_PRODUCER = """
import asyncio, sys, time, asyncpg
from pgqueuer.db import AsyncpgDriver
from pgqueuer.queries import Queries
async def connect(i):
    return Queries(AsyncpgDriver(await asyncpg.connect(sys.argv[1])))
async def submit(q):
    await q.enqueue("empty", None)
""" + STREAM_MAIN + """
asyncio.run(main())
"""

PROC_PRODUCER = """
import asyncio, sys, time
import procrastinate
app = procrastinate.App(connector=procrastinate.PsycopgConnector(
    conninfo=sys.argv[1], min_size=int(sys.argv[3]), max_size=int(sys.argv[3])))
@app.task(name="empty")
async def empty():
    pass
async def connect(i):
    return None
async def submit(_):
    await empty.defer_async()
""" + STREAM_MAIN.replace("async def main():", "async def main_():") + """
async def main():
    async with app.open_async():
        await main_()
asyncio.run(main())
"""


def stream(pg, producer, target, seconds, producers, env=None):
    """Runs the producers for `seconds`: (submitted, wall-clock window, PG CPU seconds over it)."""
    proc = subprocess.Popen([VENV_PY, "-c", producer, target, str(seconds), str(producers)], env=env,
                            text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit("a producer did not start")
    cpu0, w0 = pg.cpu_seconds(), time.time()
    proc.stdin.write("go\n")
    proc.stdin.flush()
    time.sleep(seconds)
    cpu1, w1 = pg.cpu_seconds(), time.time()
    submitted = int(proc.stdout.readline())
    if proc.wait(30) != 0:
        raise SystemExit("a producer failed")
    return submitted, (w0, w1), cpu1 - cpu0


def stream_row(name, submitted, window, cpu_s, ended, p50, p99, ok, check, note):
    w = window[1] - window[0]
    return dict(name=name, submitted=submitted, rate=ended / w, p50=p50, p99=p99,
                cpu_us=cpu_s / ended * 1e6 if ended else float("nan"),
                ok=ok, check=check + ("" if ok else "  ** FAILED **"), note=note)


def stream_loopd(pg, workdir, n_nodes, seconds, producers):
    db = f"sloopd{n_nodes}p{producers}"
    pg.create_database(db)
    conninfo = pg.conninfo(db)
    conn = psycopg.connect(conninfo, autocommit=True)
    nodes = [node(workdir, f"s{n_nodes}p{producers}-{i}", conninfo, [("w1", "default"), ("w2", "default")])
             for i in range(n_nodes)]
    for n in nodes:
        n.start()
    for n in nodes:
        n.wait_joined()
    submitted, window, cpu_s = stream(pg, LOOPD_PRODUCER, ",".join(n.socket for n in nodes), seconds, producers)
    wait_drained(conn, "SELECT count(*) FROM loopd.jobs WHERE finished_at IS NULL")
    ended, p50, p99, ok, total = conn.execute(
        "SELECT count(*) FILTER (WHERE finished_at BETWEEN to_timestamp(%s) AND to_timestamp(%s)),"
        " percentile_cont(0.5) WITHIN GROUP (ORDER BY started_at - submitted_at),"
        " percentile_cont(0.99) WITHIN GROUP (ORDER BY started_at - submitted_at),"
        " count(*) FILTER (WHERE state = 'completed' AND attempt = 1), count(*) FROM loopd.jobs",
        window).fetchone()
    per_node = conn.execute("SELECT claimed_by, count(*) FROM loopd.jobs GROUP BY 1 ORDER BY 1").fetchall()
    for n in nodes:
        n.stop()
    conn.close()
    return stream_row(f"loopd, {n_nodes} node{'s' if n_nodes > 1 else ''} ({2 * n_nodes} lanes)",
                      submitted, window, cpu_s, ended, p50, p99, ok == total == submitted,
                      f"{ok}/{total} completed at attempt 1", "by node " + " ".join(str(c) for _, c in per_node))


def stream_python(pg, workdir, name, db, seconds, producers, setup, producer, worker, worker_arg,
                  remaining, measure, verify, note):
    pg.create_database(db)
    url = pg.url(db)
    env = dict(os.environ, PGHOST=pg.socketdir, PGPORT=str(pg.port), PGUSER=pg.superuser, PGDATABASE=db)
    for argv in setup:
        subprocess.run(argv, env=env, check=True, capture_output=True)
    conn = psycopg.connect(pg.conninfo(db), autocommit=True)
    proc = subprocess.Popen([VENV_PY, "-c", worker, url, str(worker_arg)], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(os.path.join(workdir, f"{db}.log"), "w"))
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"{name}'s consumer did not start: see {workdir}/{db}.log")
    proc.stdin.write("go\n")
    proc.stdin.flush()
    time.sleep(1)  # the consumer polling
    submitted, window, cpu_s = stream(pg, producer, url, seconds, producers, env)
    wait_drained(conn, remaining)
    time.sleep(0.5)  # what the consumer writes after the job's own end (logs, events)
    ended, p50, p99 = conn.execute(measure, window).fetchone()
    ok, check = verify(conn, submitted)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    conn.close()
    return stream_row(name, submitted, window, cpu_s, ended, p50, p99, ok, check, note)


PGQ_MEASURE = """
SELECT count(*) FILTER (WHERE e.created BETWEEN to_timestamp(%s) AND to_timestamp(%s)),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY p.created - q.created),
       percentile_cont(0.99) WITHIN GROUP (ORDER BY p.created - q.created)
FROM pgqueuer_log q
JOIN pgqueuer_log p ON p.job_id = q.job_id AND p.status = 'picked'
JOIN pgqueuer_log e ON e.job_id = q.job_id AND e.status = 'successful'
WHERE q.status = 'queued'
"""

PROC_MEASURE = """
SELECT count(*) FILTER (WHERE e.at BETWEEN to_timestamp(%s) AND to_timestamp(%s)),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY s.at - d.at),
       percentile_cont(0.99) WITHIN GROUP (ORDER BY s.at - d.at)
FROM procrastinate_events d
JOIN procrastinate_events s ON s.job_id = d.job_id AND s.type = 'started'
JOIN procrastinate_events e ON e.job_id = d.job_id AND e.type = 'succeeded'
WHERE d.type = 'deferred'
"""


def ms(interval):
    return "" if interval is None else f"{interval.total_seconds() * 1e3:,.1f}"


def print_stream(rows, seconds, load_before):
    print(f"\nStream for {seconds} s (load average before {load_before}, after {loadavg()})\n")
    print("| subject | producers | submitted | ended jobs/s | enqueue→start p50 ms | p99 ms |"
          " PG CPU µs/job | checked | |")
    print("|---|--:|--:|--:|--:|--:|--:|---|---|")
    for r in rows:
        print(f"| {r['name']} | {r['producers']} | {r['submitted']:,} | {r['rate']:,.0f} | {ms(r['p50'])} | "
              f"{ms(r['p99'])} | {r['cpu_us']:,.0f} | {r['check']} | {r['note']} |")


def version(pkg):
    from importlib.metadata import version as v
    return v(pkg)


def print_drain(rows, jobs, load_before):
    base = rows[0] if rows and rows[0]["name"].startswith("loopd, 1 ") else None
    print(f"\nDrain of {jobs:,} empty jobs (load average before {load_before}, after {loadavg()})\n")
    print("| subject | enqueue jobs/s | drain jobs/s | PG CPU µs/job | drain ÷ loopd 1 | CPU ÷ loopd 1 | checked | |")
    print("|---|--:|--:|--:|--:|--:|---|---|")
    for r in rows:
        rate, cpu = r["jobs"] / r["drain_s"], r["cpu_s"] / r["jobs"] * 1e6
        ratios = ("", "")
        if base:
            ratios = (f"{rate / (base['jobs'] / base['drain_s']):.2f}×",
                      f"{cpu / (base['cpu_s'] / base['jobs'] * 1e6):.2f}×")
        print(f"| {r['name']} | {r['jobs'] / r['enqueue_s']:,.0f} | {rate:,.0f} | {cpu:,.0f} | {ratios[0]} | "
              f"{ratios[1]} | {r['check']} | {r['note']} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scenario", choices=["drain", "stream", "all"], default="all")
    p.add_argument("--bin", help="the directory of loopd")
    p.add_argument("--jobs", type=int)
    p.add_argument("--seconds", type=float)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", choices=["loopd", "pgqueuer", "procrastinate"], action="append")
    p.add_argument("--pgq-batch", type=int, default=10)
    p.add_argument("--proc-concurrency", type=int, default=10)
    args = p.parse_args()
    jobs = args.jobs or (2_000 if args.quick else 20_000)
    seconds = args.seconds or (3 if args.quick else 10)
    only = set(args.only or ["loopd", "pgqueuer", "procrastinate"])
    bindir = pick_bindir(args.bin)
    fleet.LOOPD = os.path.join(bindir, "loopd")
    loopd_version = subprocess.run([fleet.LOOPD, "--version"], capture_output=True, text=True).stdout.strip()
    debug = "  (a DEBUG build: its figures say little)" if "debug" in bindir.split(os.sep) else ""
    load_before = loadavg()
    workdir = tempfile.mkdtemp(prefix="loopd-fleetbench.")
    os.chmod(workdir, 0o755)
    rows, srows = [], []
    pgq = os.path.join(VENV, "bin", "pgq")
    with Cluster(workdir) as pg:
        pg_version = pg.psql("SHOW server_version;").strip()
        print(f"loopd {bindir}/loopd ({loopd_version}){debug}; PostgreSQL {pg_version}; "
              f"pgqueuer {version('pgqueuer')}, procrastinate {version('procrastinate')}; "
              f"{os.cpu_count()} CPUs; load average {load_before}", flush=True)
        if args.scenario in ("drain", "all"):
            print(f"drain: {jobs:,} jobs", flush=True)
            if "loopd" in only:
                for n in (1, 2, 3):
                    rows.append(run_loopd(pg, bindir, workdir, n, jobs))
                    print(" ", rows[-1], flush=True)
            if "pgqueuer" in only:
                rows.append(run_python_queue(
                    pg, workdir, "pgqueuer, 1 consumer", "pgq", jobs, [[pgq, "install"], [pgq, "autovac"]],
                    PGQ_ENQUEUE, PGQ_WORKER, args.pgq_batch,
                    "SELECT count(*) FROM pgqueuer", verify_pgqueuer))
                rows[-1]["note"] = f"batch_size {args.pgq_batch}"
                print(" ", rows[-1], flush=True)
            if "procrastinate" in only:
                rows.append(run_python_queue(
                    pg, workdir, "procrastinate, 1 worker", "proc", jobs, [],
                    PROC_ENQUEUE, PROC_WORKER, args.proc_concurrency,
                    "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')", verify_procrastinate))
                rows[-1]["note"] = f"concurrency {args.proc_concurrency}"
                print(" ", rows[-1], flush=True)
        stream_load = loadavg()
        if args.scenario in ("stream", "all"):
            print(f"stream: {seconds} s", flush=True)
            for producers in (1, 50):
                if "loopd" in only:
                    for n in (1, 2, 3):
                        srows.append(stream_loopd(pg, workdir, n, seconds, producers))
                        srows[-1]["producers"] = producers
                        print(" ", srows[-1], flush=True)
                if "pgqueuer" in only:
                    srows.append(stream_python(
                        pg, workdir, "pgqueuer, 1 consumer", f"spgq{producers}", seconds, producers,
                        [[pgq, "install"], [pgq, "autovac"]], PGQ_PRODUCER, PGQ_WORKER, args.pgq_batch,
                        "SELECT count(*) FROM pgqueuer", PGQ_MEASURE, verify_pgqueuer,
                        f"batch_size {args.pgq_batch}"))
                    srows[-1]["producers"] = producers
                    print(" ", srows[-1], flush=True)
                if "procrastinate" in only:
                    db = f"sproc{producers}"
                    srows.append(stream_python(
                        pg, workdir, "procrastinate, 1 worker", db, seconds, producers,
                        [[VENV_PY, "-c", PROC_ENQUEUE, pg.url(db), "0"]],  # its schema, no job
                        PROC_PRODUCER, PROC_WORKER, args.proc_concurrency,
                        "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')",
                        PROC_MEASURE, verify_procrastinate, f"concurrency {args.proc_concurrency}"))
                    srows[-1]["producers"] = producers
                    print(" ", srows[-1], flush=True)
    if rows:
        print_drain(rows, jobs, load_before)
    if srows:
        print_stream(srows, seconds, stream_load)
    subprocess.run(["rm", "-rf", workdir])
    sys.exit(0 if all(r["ok"] for r in rows + srows) else 1)


if __name__ == "__main__":
    main()
