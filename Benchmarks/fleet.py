#!/usr/bin/env python3
"""The fleet running empty jobs, beside PostgreSQL job queues: a backlog
drained, and a stream of submissions; and the fleet rescuing the jobs of a
killed node.

    python3 Benchmarks/fleet.py [--scenario drain|stream|rescue|all] [--bin DIR]
                                [--jobs N] [--seconds S] [--kills K]
                                [--heartbeat-ms MS] [--dead-after-ms MS] [--quick]

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

  rescue   loopd alone: how long the fleet takes to rescue the jobs of a
           node killed with SIGKILL, and to start them on another. Three
           nodes of two `default` lanes, a victim and two survivors, with the
           fleet's default heartbeat_interval_ms and dead_after_ms unless
           --heartbeat-ms or --dead-after-ms says otherwise; the survivors
           have been online for dead_after_ms (they judge no node before)
           when the first kill comes. Each of K kills: the victim (started
           again after the previous kill, after a random part of a heartbeat
           interval, so that its beats do not keep one phase against the
           survivors') switches its lanes to the kill's own mode, which no
           other node runs, and claims one fleet job per lane (`sleep`, not
           pinned, `retries` 1); once both run there the survivors switch to
           that mode too, and the victim is killed at a random point of its
           heartbeat interval (--seed fixes these draws). Then loopd.jobs is
           polled until the jobs have ended. Reported per kill and as min /
           p50 / p90 / max: kill → rescue (the time of the attempt the rescue
           appended, by the database's clock), the victim's last lease
           renewal (its last lease_until seen, less dead_after_ms) → rescue,
           and kill → started elsewhere (started_at of attempt 2); per kill,
           the later of its two jobs; and how many were over the documented
           bound, dead_after_ms + heartbeat_interval_ms (reported, not a pass
           condition). Checked: every job completed once, at attempt 2, on a
           survivor, its lost attempt naming the victim; the survivors
           counted every rescue and fenced no end.

--scenario all (the default) runs the three. Defaults: N = 20,000, S = 10,
K = 10; --quick: N = 2,000, S = 3, K = 3 with a heartbeat of 200 ms and a
dead_after of 1,500 ms (not the defaults: its output says so). The
PostgreSQL server is a private one (Tests/fleet/pgcluster.py: owned by
nobody, fsync off, the same for every subject), one database per run. pgqueuer and procrastinate (and
psycopg, which the script reads the tables with) come from a venv at
.build/fleet-bench-venv:

    python3 -m venv .build/fleet-bench-venv
    .build/fleet-bench-venv/bin/pip install pgqueuer procrastinate asyncpg 'psycopg[binary]'

The script runs itself with that venv's python. It builds nothing: loopd
comes from --bin, else .build-benchrel/release, .build/release, .build/debug
(the first that has one; a debug build's figures say little). Compare the
figures of one run, not across machines.
"""

import argparse
import os
import random
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


def node(workdir, name, conninfo, lanes, fleet_extra=""):
    """A fleet.Node whose config has the given [[workers]] (name, mode) pairs,
    and fleet_extra's lines in its [fleet] table."""
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
{fleet_extra}""")
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


# The fleet's defaults (docs/FLEET.md): the rescue scenario's nodes leave
# them out of their configuration unless --heartbeat-ms or --dead-after-ms
# (or --quick) sets them.
HEARTBEAT_MS, DEAD_AFTER_MS = 2_000, 15_000
RESCUE_LANES = [("w1", "default"), ("w2", "default")]
QUICK_KILLS, QUICK_HEARTBEAT_MS, QUICK_DEAD_AFTER_MS = 3, 200, 1_500

# A round's jobs: the rescue's own time is the attempt it appended (the
# database's now(), to the millisecond), the start elsewhere is started_at
# (the clock of the node that ran it, written with its end).
RESCUE_ROWS = """
SELECT id, state, attempt, claimed_by, extract(epoch FROM lease_until),
       extract(epoch FROM (attempts->0->>'finished_at')::timestamptz), attempts->0->>'node',
       attempts->0->>'message', jsonb_array_length(attempts), extract(epoch FROM started_at)
FROM loopd.jobs WHERE id = ANY(%s) ORDER BY id
"""


def set_mode(n, mode):
    for w, _ in RESCUE_LANES:
        reply = n.request({"op": "mode", "worker": w, "mode": mode})
        if not reply["ok"]:
            raise SystemExit(f"node {n.name} refused mode {mode}: {reply}")


def rescue_round(conn, victim, survivors, k, heartbeat_ms, dead_after_ms, rng):
    """One kill. The victim (restarted if it was killed) switches its lanes to
    this round's mode, which no other node runs, and claims one job per lane;
    the survivors switch to it too, then the victim is killed at a random
    point of its heartbeat interval. Every job is polled until it has ended."""
    mode = f"rescue{k}"
    if victim.process.poll() is not None:
        # Its heartbeats then fall at a random point of the survivors', not
        # where the previous round's timing would put them.
        time.sleep(rng.uniform(0, heartbeat_ms / 1000))
        victim.start()
        victim.wait_joined()
    set_mode(victim, mode)
    duration = heartbeat_ms + 3_000  # still running at the kill; then run once more elsewhere
    ids = []
    for _ in RESCUE_LANES:
        reply = survivors[0].request({"op": "submit", "fleet": True, "action": "sleep", "args": [str(duration)],
                                      "mode": mode, "retries": 1, "wait": False})
        if not reply.get("ok"):
            raise SystemExit(f"submit refused: {reply}")
        ids.append(int(reply["job"][2:]))

    def running_on_victim():
        lanes = victim.request({"op": "workers"})["workers"]
        claimed = conn.execute("SELECT count(*) FROM loopd.jobs WHERE id = ANY(%s) AND state = 'running'"
                               " AND claimed_by = %s", (ids, victim.name)).fetchone()[0]
        return claimed == len(ids) and all(w.get("running_action") == "sleep" for w in lanes)
    fleet.wait_for(f"node {victim.name} to run round {k}'s jobs", running_on_victim)
    for n in survivors:
        set_mode(n, mode)
    rescued0 = {n.name: n.metric("loopd_fleet_jobs_rescued_total") for n in survivors}
    time.sleep(rng.uniform(0, heartbeat_ms / 1000))
    kill_at = time.time()
    victim.kill()
    leases = {}  # the last lease seen of each job on the victim: its last renewal + dead_after_ms
    deadline = time.monotonic() + (dead_after_ms + heartbeat_ms + duration) / 1000 + fleet.WAIT
    while True:
        rows = conn.execute(RESCUE_ROWS, (ids,)).fetchall()
        for r in rows:
            if r[1] == "running" and r[3] == victim.name and r[4] is not None:
                leases[r[0]] = float(r[4])
        if all(r[1] not in ("queued", "running") for r in rows):
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"round {k}: jobs not ended: {rows}")
        time.sleep(0.02)
    names = {n.name for n in survivors}
    good = [r for r in rows if r[1] == "completed" and r[2] == 2 and r[8] == 1 and r[6] == victim.name
            and f"node {victim.name} was lost" in (r[7] or "") and r[3] in names]
    ok = len(good) == len(ids)
    rescues = [float(r[5]) for r in rows if r[5] is not None]
    starts = [float(r[9]) for r in rows if r[9] is not None]
    renewals = [leases[r[0]] - dead_after_ms / 1000 for r in rows if r[0] in leases]
    since_renewal = [float(r[5]) - (leases[r[0]] - dead_after_ms / 1000)
                     for r in rows if r[0] in leases and r[5] is not None]
    return dict(kill=k, jobs=len(ids), ok=ok,
                check=f"{len(good)}/{len(ids)} completed at attempt 2 elsewhere" + ("" if ok else "  ** FAILED **"),
                renewal_ms=(kill_at - max(renewals)) * 1e3 if renewals else None,
                rescue_ms=(max(rescues) - kill_at) * 1e3 if rescues else None,
                since_renewal_ms=max(since_renewal) * 1e3 if len(since_renewal) == len(ids) else None,
                start_ms=(max(starts) - kill_at) * 1e3 if starts else None,
                rescued_by=" ".join(n.name for n in survivors
                                    if n.metric("loopd_fleet_jobs_rescued_total") > rescued0[n.name]),
                ran_on=" ".join(sorted({r[3] for r in rows if r[3]})))


def run_rescue(pg, workdir, kills, heartbeat_ms, dead_after_ms, fleet_extra, rng):
    """Three nodes of two lanes: a victim killed `kills` times, two survivors."""
    pg.create_database("rescue")
    conninfo = pg.conninfo("rescue")
    conn = psycopg.connect(conninfo, autocommit=True)
    survivors = [node(workdir, n, conninfo, RESCUE_LANES, fleet_extra) for n in ("a", "b")]
    victim = node(workdir, "victim", conninfo, RESCUE_LANES, fleet_extra)
    everyone = survivors + [victim]
    rows = []
    try:
        for n in everyone:
            n.start()
        for n in everyone:
            n.wait_joined()
        joined = time.monotonic()
        beats = conn.execute("SELECT array_agg(DISTINCT heartbeat_interval_ms) FROM loopd.nodes").fetchone()[0]
        if beats != [heartbeat_ms]:
            raise SystemExit(f"the nodes beat every {beats} ms, not {heartbeat_ms}")
        # A node judges others once it has been online for a whole dead_after_ms.
        time.sleep(max(0.0, joined + (dead_after_ms + heartbeat_ms) / 1000 - time.monotonic()))
        for k in range(1, kills + 1):
            rows.append(rescue_round(conn, victim, survivors, k, heartbeat_ms, dead_after_ms, rng))
            print(" ", rows[-1], flush=True)
        rescued = sum(n.metric("loopd_fleet_jobs_rescued_total") for n in survivors)
        fenced = sum(n.metric("loopd_fleet_ends_fenced_total") for n in survivors)
        states = conn.execute("SELECT state, attempt, count(*) FROM loopd.jobs GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
    finally:
        for n in everyone:
            n.kill()
        conn.close()
    jobs = sum(r["jobs"] for r in rows)
    ok = all(r["ok"] for r in rows) and rescued == jobs and fenced == 0 and states == [("completed", 2, jobs)]
    total = (f"{jobs} jobs, by state and attempt {', '.join(f'{s} {a}: {c}' for s, a, c in states)}; "
             f"{rescued:.0f} rescued, {fenced:.0f} ends fenced (loopd_fleet_* of the survivors)"
             + ("" if ok else "  ** FAILED **"))
    return rows, dict(ok=ok, check=total)


def percentile(values, q):
    """Linear between the closest ranks, as percentile_cont."""
    v = sorted(values)
    i = (len(v) - 1) * q
    lo = int(i)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)


def print_rescue(rows, total, heartbeat_ms, dead_after_ms, defaults, load_before):
    bound = dead_after_ms + heartbeat_ms
    setting = "the defaults" if defaults else "NOT the defaults"
    print(f"\nRescue of a killed node's jobs: {len(rows)} kills, heartbeat_interval_ms {heartbeat_ms:,}, "
          f"dead_after_ms {dead_after_ms:,} ({setting}): the bound is {bound:,} ms "
          f"(load average before {load_before}, after {loadavg()})\n")

    def cell(x):
        return "" if x is None else f"{x:,.0f}"
    print("| kill | last renewal before the kill ms | kill→rescue ms | renewal→rescue ms |"
          " kill→started elsewhere ms | rescued by | ran on | checked |")
    print("|--:|--:|--:|--:|--:|---|---|---|")
    for r in rows:
        print(f"| {r['kill']} | {cell(r['renewal_ms'])} | {cell(r['rescue_ms'])} | {cell(r['since_renewal_ms'])} | "
              f"{cell(r['start_ms'])} | {r['rescued_by']} | {r['ran_on']} | {r['check']} |")
    print(f"\n| {len(rows)} kills | min ms | p50 ms | p90 ms | max ms | over {bound:,} ms |")
    print("|---|--:|--:|--:|--:|--:|")
    for label, key in (("kill → rescue", "rescue_ms"), ("last renewal → rescue", "since_renewal_ms"),
                       ("kill → started elsewhere", "start_ms")):
        values = [r[key] for r in rows if r[key] is not None]
        if not values:
            continue
        over = sum(1 for x in values if x > bound)
        print(f"| {label} | {min(values):,.0f} | {percentile(values, 0.5):,.0f} | {percentile(values, 0.9):,.0f} | "
              f"{max(values):,.0f} | {over} of {len(values)} |")
    print(f"\n{total['check']}")


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
    p.add_argument("--scenario", choices=["drain", "stream", "rescue", "all"], default="all")
    p.add_argument("--bin", help="the directory of loopd")
    p.add_argument("--jobs", type=int)
    p.add_argument("--seconds", type=float)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", choices=["loopd", "pgqueuer", "procrastinate"], action="append")
    p.add_argument("--pgq-batch", type=int, default=10)
    p.add_argument("--proc-concurrency", type=int, default=10)
    p.add_argument("--kills", type=int)
    p.add_argument("--heartbeat-ms", type=int)
    p.add_argument("--dead-after-ms", type=int)
    p.add_argument("--seed", type=int)
    args = p.parse_args()
    jobs = args.jobs or (2_000 if args.quick else 20_000)
    seconds = args.seconds or (3 if args.quick else 10)
    kills = args.kills or (QUICK_KILLS if args.quick else 10)
    heartbeat_ms = args.heartbeat_ms or (QUICK_HEARTBEAT_MS if args.quick else HEARTBEAT_MS)
    dead_after_ms = args.dead_after_ms or (QUICK_DEAD_AFTER_MS if args.quick else DEAD_AFTER_MS)
    # Only what differs from the defaults goes in the nodes' [fleet] tables.
    fleet_extra = "".join(f"{key} = {value}\n" for key, value, default in (
        ("heartbeat_interval_ms", heartbeat_ms, HEARTBEAT_MS), ("dead_after_ms", dead_after_ms, DEAD_AFTER_MS))
        if value != default)
    only = set(args.only or ["loopd", "pgqueuer", "procrastinate"])
    bindir = pick_bindir(args.bin)
    fleet.LOOPD = os.path.join(bindir, "loopd")
    loopd_version = subprocess.run([fleet.LOOPD, "--version"], capture_output=True, text=True).stdout.strip()
    debug = "  (a DEBUG build: its figures say little)" if "debug" in bindir.split(os.sep) else ""
    load_before = loadavg()
    workdir = tempfile.mkdtemp(prefix="loopd-fleetbench.")
    os.chmod(workdir, 0o755)
    rows, srows, rrows, rtotal = [], [], [], None
    pgq = os.path.join(VENV, "bin", "pgq")
    with Cluster(workdir) as pg:
        pg_version = pg.psql("SHOW server_version;").strip()
        queues = ("" if args.scenario == "rescue" else
                  f"pgqueuer {version('pgqueuer')}, procrastinate {version('procrastinate')}; ")
        print(f"loopd {bindir}/loopd ({loopd_version}){debug}; PostgreSQL {pg_version}; {queues}"
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
        rescue_load = loadavg()
        if args.scenario in ("rescue", "all") and "loopd" in only:
            print(f"rescue: {kills} kills, heartbeat {heartbeat_ms} ms, dead after {dead_after_ms} ms"
                  + (" (the fleet's defaults)" if not fleet_extra else
                     " (NOT the fleet's defaults" + (": --quick" if args.quick else "") + ")"), flush=True)
            rrows, rtotal = run_rescue(pg, workdir, kills, heartbeat_ms, dead_after_ms, fleet_extra,
                                       random.Random(args.seed))
    if rows:
        print_drain(rows, jobs, load_before)
    if srows:
        print_stream(srows, seconds, stream_load)
    if rtotal:
        print_rescue(rrows, rtotal, heartbeat_ms, dead_after_ms, not fleet_extra, rescue_load)
    subprocess.run(["rm", "-rf", workdir])
    sys.exit(0 if all(r["ok"] for r in rows + srows + rrows + ([rtotal] if rtotal else [])) else 1)


if __name__ == "__main__":
    main()
