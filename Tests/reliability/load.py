#!/usr/bin/env python3
"""LOAD: many concurrent clients, mixed jobs, random disconnects.

Runs the real loopd (release build) with four workers, fsync on, a 60 s
journal retention and a few exec actions; fills its window of retained
finished jobs (the last 100,000) with warm-up jobs and takes the baseline;
then lets --clients asyncio clients, spread over --procs processes, pipeline
batches of mixed requests for --duration seconds (and on, at most
--max-extra seconds more, until --target-jobs jobs were acknowledged: a
target the run reports, reached or not, never a pass condition, since how
many jobs fit in a time is the machine's pace). Every client matches every
reply to its request by id and checks what it says; 3% of the batches end in
an abrupt close with replies still owed. Afterwards:

  replies     every reply's id belongs to a request in flight on that
              connection, none comes twice, each says what its request
              asked for (echo output, printf stdout, sleep ms, fail
              message, timeout, cancel result, status of the right job)
  run once    a `record` exec action appends its unique token to a file:
              every acknowledged record job ran exactly once, an
              unacknowledged one (its connection dropped) at most once, a
              job cancelled before it started never, one stopped while it
              ran (`started` in the cancel reply) at most once (no crash
              happens here, so no replay is allowed either)
  order       record jobs one connection sent with wait:false to one worker
              ran in the order they were sent (the file's order)
  durable     every acknowledged durable job completed with its output
  counters    stats: accepted == completed + failed + timed_out + cancelled when idle
  fd / RSS    open descriptors return exactly to the baseline; VmRSS, once
              the retained window is refilled with warm-up jobs and the
              journal's retention has passed, to within
              max(16 MiB, 10%) of the baseline, or, where glibc's arenas
              keep a higher water mark after the load, not growing again
              by more than 4 MiB over a second refill (a leak grows with
              every round of jobs; allocator retention does not) (--soak
              also checks that the last third of the run did not grow over
              the first); why, in docs/RELIABILITY.md ("Load")

Hard limits: each phase (start, warm-up, baseline, load, drain, sweep,
refill, retention, stop) has its own, which only stops a hung phase (a
failed check); --budget prints their sum for the given options, which
Tests/reliability/run.sh's last-resort timeout is derived from.

CI form:    Tests/reliability/load.py --duration 60
Soak form:  Tests/reliability/load.py --duration 600 --soak
Binary dir: --bin DIR or LOOPD_BIN_DIR (default .build/release).
"""

import argparse
import asyncio
import collections
import json
import multiprocessing
import os
import queue
import random
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loopdtest import (Checks, Client, LoopdProcess, binary_dir, children_may_write, in_child_process,  # noqa: E402
                       make_workdir, run_threads, section, seeded_random, wait_idle, wait_until)

WORKERS = ["w1", "w2", "w3", "w4"]
# What a wait:false acknowledgement may say. PROTOCOL.md promises "queued"
# (or "delayed"), but the reply is built after the job was handed to its
# worker, so a fast worker may already be running it: counted and reported.
ACK_STATES = ("queued", "running")
BATCH_TIMEOUT = 60  # seconds a batch may wait for its replies before the client gives up

class PhaseOverrun(Exception):
    """A phase passed its hard limit."""


def load_limit(args):
    """The load phase's hard limit: the clients stop at --duration +
    --max-extra, a batch may then still wait BATCH_TIMEOUT for its replies,
    and the client processes need a moment to report."""
    return args.duration + args.max_extra + BATCH_TIMEOUT + 30


def budget(args):
    """The sum of every phase's hard limit for these options, in seconds."""
    return sum(PHASE_LIMITS.values()) + load_limit(args)


def config_actions(record_file):
    return f"""
[actions.printf]
argv = ["/usr/bin/printf", "%s\\n"]
max_client_args = 1
timeout_ms = 10000

[actions.exit0]
argv = ["/bin/true"]
timeout_ms = 10000

# Appends its one argument to the record file: the run-once and order checks.
[actions.record]
argv = ["/bin/sh", "-c", 'printf "%s\\n" "$1" >> "$0"', {json.dumps(record_file)}]
max_client_args = 1
timeout_ms = 10000
"""


class Ledger:
    """Everything the clients learned, for the checks after the run."""

    def __init__(self):
        self.failures = collections.Counter()  # kind -> count
        self.examples = {}  # kind -> first detail
        self.submits_acked = 0  # submits answered with a job (accepted)
        self.submits_sent = 0
        self.requests = 0
        self.replies = 0
        self.batches = 0
        self.disconnects = 0
        self.by_action = collections.Counter()
        self.record_acked = {}  # token -> (client, conn, worker, seq, durable)
        self.record_unacked = set()
        self.record_cancelled = set()
        self.record_not_cancelled = set()  # cancel came too late: must run once
        # job id -> expected echo output (durable or wait:false), oldest first.
        # An OrderedDict: a plain dict's next(iter()) slows down as its front is popped.
        self.status_checks = collections.OrderedDict()
        self.record_cancel_unknown = set()  # the cancel's reply was lost: may or may not have run
        self.evicted = 0  # status checks that came after the job left the retained window
        self.status_checked = 0  # wait:false jobs seen completed with their output during the run
        self.durable_acked = 0
        self.cancels_ok = 0
        self.cancels_late = 0
        self.cancels_running = 0  # cancelled while running: may have run

        self.ack_states = collections.Counter()
        self.latencies = []  # seconds from a batch's write to each reply

    def merge(self, other):
        """Adds another client process's ledger to this one."""
        for k in ("submits_acked", "submits_sent", "requests", "replies", "batches", "disconnects",
                  "durable_acked", "cancels_ok", "cancels_late", "cancels_running", "evicted", "status_checked"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.failures.update(other.failures)
        for k, v in other.examples.items():
            self.examples.setdefault(k, v)
        self.by_action.update(other.by_action)
        self.ack_states.update(other.ack_states)
        self.record_acked.update(other.record_acked)
        for k in ("record_unacked", "record_cancelled", "record_not_cancelled", "record_cancel_unknown"):
            getattr(self, k).update(getattr(other, k))
        self.status_checks.update(other.status_checks)
        self.latencies.extend(other.latencies)

    def note_ack_state(self, r):
        self.ack_states[r.get("state")] += 1

    def fail(self, kind, detail):
        self.failures[kind] += 1
        self.examples.setdefault(kind, detail)


# loopd keeps the last 100,000 finished jobs queryable (PROTOCOL.md,
# status), durable ones also for journal.retention_seconds; older ones are
# `unknown_job` by design. A status or cancel that comes that late is not an
# error: when at least this many jobs were acknowledged after the one asked
# about (some unacknowledged ones ran too, hence the margin) and, for a
# durable job, the retention has passed, the job is gone.
RETAINED_FINISHED = 100_000
EVICTION_MARGIN = 5_000
RETENTION_SECONDS = 60  # journal.retention_seconds of the load's loopd

# Each phase's hard limit, in seconds. A limit only stops a phase that hangs
# (it then fails a check and ends the run); how long a phase takes is never
# what the run checks. The load phase's own limit depends on the options
# (see `load_limit`).
PHASE_LIMITS = {
    "start": 30,        # loopd answers its first ping
    "warm-up": 300,     # --warm-up echo jobs
    "baseline": 60,     # loopd idle before the baseline is taken
    "drain": 60,        # loopd idle after the load
    "sweep": 120,       # status of every job not yet seen final
    "refill": 300 + 60,  # the warm-up again, then idle
    "retention": RETENTION_SECONDS + 30,  # the journal forgets the load's durable results
    "stop": 30,         # loopd exits on SIGTERM
}


def evicted(reply, durable, acked_at, acked_now, acked_time=None):
    if (reply.get("error") or {}).get("code") != "unknown_job":
        return False
    if acked_now - acked_at < RETAINED_FINISHED - EVICTION_MARGIN:
        return False
    return not durable or (acked_time is not None and time.monotonic() - acked_time > RETENTION_SECONDS + 5)


class Op:
    """One request and what its reply must say."""

    __slots__ = ("req", "check", "token", "kind", "lost")

    def __init__(self, req, kind, check, token=None, lost=None):
        self.req = req
        self.kind = kind
        self.check = check  # reply -> error string or None
        self.token = token
        self.lost = lost  # called when the connection drops before the reply


def expect_ok_field(path, value):
    def check(r):
        got = r
        for p in path:
            got = got.get(p) if isinstance(got, dict) else None
        if r.get("ok") is not True:
            return f"not ok: {r}"
        if got != value:
            return f"{'.'.join(path)} is {got!r}, wanted {value!r}"
        return None
    return check


class LoadClient:
    def __init__(self, cid, path, rng, ledger, deadline_fn):
        self.cid = cid
        self.path = path
        self.rng = rng
        self.ledger = ledger
        self.deadline_fn = deadline_fn
        self.conn = 0
        self.seq = 0
        self.next_id = 0
        self.to_cancel = []  # (job id, token or None)
        self.reader = None
        self.writer = None
        self.shared_count = None  # acknowledged submits of all client processes

    # ---- building requests

    def token(self, worker="x"):
        self.seq += 1
        return f"c{self.cid}.k{self.conn}.{worker}.s{self.seq}"

    def make_op(self):
        rng = self.rng
        L = self.ledger
        x = rng.random() * 100
        if self.to_cancel and (x < 4 or len(self.to_cancel) > 4):
            job, token, acked_at = self.to_cancel.pop(0)

            def check(r, job=job, token=token, acked_at=acked_at):
                if evicted(r, False, acked_at, self.acked_so_far()):
                    L.evicted += 1  # ran long ago (a late cancel) and left the window
                    if token:
                        L.record_not_cancelled.add(token)
                    return None
                if r.get("ok") is not True or r.get("job") != job:
                    return f"cancel reply {r}"
                if not isinstance(r.get("started"), bool):
                    return f"cancel reply without a boolean started: {r}"
                if r.get("cancelled") is True:
                    L.cancels_ok += 1
                    if r.get("started") is True:
                        # Stopped while it ran: it may have done its work
                        # (at most once), or been killed before it did.
                        L.cancels_running += 1
                        if token:
                            L.record_cancel_unknown.add(token)
                    elif token:
                        L.record_cancelled.add(token)
                    return None if r.get("state") == "cancelled" else f"cancelled but state {r.get('state')}"
                L.cancels_late += 1
                if token:
                    L.record_not_cancelled.add(token)
                return None
            return Op({"op": "cancel", "job": job}, "cancel", check, token=token)
        if x < 30:
            tok = self.token()
            args = [tok, "p" * rng.randint(0, 64)]
            req = {"op": "submit", "action": "echo", "args": args}
            r = rng.random()
            if r < 0.3:
                req["worker"] = rng.choice(WORKERS)
            elif r < 0.5:
                req["key"] = f"k{rng.randint(0, 50)}"
            return Op(req, "echo", expect_ok_field(["result", "output"], " ".join(args)))
        if x < 38:
            tok = self.token()
            req = {"op": "submit", "action": "echo", "args": [tok], "wait": False, "worker": rng.choice(WORKERS)}

            def check(r, tok=tok, w=req["worker"]):
                if r.get("ok") is not True or r.get("state") not in ACK_STATES or r.get("worker") != w:
                    return f"wait:false reply {r}"
                L.note_ack_state(r)
                L.status_checks[r["job"]] = (tok, False, self.acked_so_far(), time.monotonic())
                return None
            return Op(req, "echo_nowait", check)
        if x < 46:
            w = rng.choice(WORKERS)
            tok = self.token(w)
            durable = rng.random() < 0.15
            req = {"op": "submit", "action": "record", "args": [tok], "wait": False, "worker": w}
            if durable:
                req["durable"] = True

            def check(r, tok=tok, w=w, seq=self.seq, conn=self.conn, durable=durable):
                if r.get("ok") is not True or r.get("state") not in ACK_STATES or r.get("worker") != w:
                    return f"record reply {r}"
                L.note_ack_state(r)
                L.record_acked[tok] = (self.cid, conn, w, seq, durable)
                return None
            return Op(req, "record", check, token=tok)
        if x < 53:
            ms = rng.randint(1, 5)
            return Op({"op": "submit", "action": "sleep", "args": [str(ms)]}, "sleep",
                      expect_ok_field(["result", "slept_ms"], ms))
        if x < 55:
            tok = self.token()
            return Op({"op": "submit", "action": "printf", "args": [tok]}, "printf",
                      expect_ok_field(["result", "stdout"], tok + "\n"))
        if x < 56.5:
            return Op({"op": "submit", "action": "exit0"}, "exit0", expect_ok_field(["result", "exit_code"], 0))
        if x < 61.5:
            tok = self.token()

            def check(r, tok=tok):
                err = r.get("error") or {}
                if r.get("ok") is not False or err.get("code") != "job_failed" or r.get("state") != "failed":
                    return f"fail reply {r}"
                return None if err.get("message") == tok else f"fail message {err.get('message')!r}, wanted {tok!r}"
            return Op({"op": "submit", "action": "fail", "args": [tok]}, "fail", check)
        if x < 62.5:
            def check(r):
                err = r.get("error") or {}
                return None if (r.get("ok") is False and err.get("code") == "timeout") else f"timeout reply {r}"
            return Op({"op": "submit", "action": "sleep", "args": ["1000"], "timeout_ms": 3}, "timeout", check)
        if x < 68.5:
            tok = self.token()
            wait = rng.random() < 0.5
            req = {"op": "submit", "action": "echo", "args": [tok], "durable": True, "wait": wait}
            if wait:
                def check(r, tok=tok):
                    if r.get("ok") is not True or (r.get("result") or {}).get("output") != tok:
                        return f"durable reply {r}"
                    L.durable_acked += 1
                    return None
            else:
                def check(r, tok=tok):
                    if r.get("ok") is not True or r.get("state") not in ACK_STATES:
                        return f"durable wait:false reply {r}"
                    L.note_ack_state(r)
                    L.durable_acked += 1
                    L.status_checks[r["job"]] = (tok, True, self.acked_so_far(), time.monotonic())
                    return None
            return Op(req, "durable", check)
        if x < 71.5:
            # Delayed far enough that the cancel (in the next batch) normally wins.
            use_record = rng.random() < 0.5
            w = rng.choice(WORKERS)
            tok = self.token("d" + w)
            req = {"op": "submit", "action": "record" if use_record else "echo", "args": [tok], "wait": False,
                   "worker": w, "delay_ms": rng.randint(1500, 4000)}

            def check(r, tok=tok, use_record=use_record, w=w, seq=self.seq, conn=self.conn):
                if r.get("ok") is not True or r.get("state") != "delayed":
                    return f"delayed reply {r}"
                self.to_cancel.append((r["job"], tok if use_record else None, self.acked_so_far()))
                if use_record:
                    L.record_acked[tok] = (self.cid, conn, "d" + w, seq, False)
                return None
            return Op(req, "delayed", check, token=tok if use_record else None)
        if x < 72.5:
            tok = self.token()
            return Op({"op": "submit", "action": "echo", "args": [tok], "delay_ms": rng.randint(5, 50)},
                      "delayed_wait", expect_ok_field(["result", "output"], tok))
        if x < 96:
            if L.status_checks and rng.random() < (0.5 if len(L.status_checks) < 500 else 0.95):
                # Oldest first, taken out while asked about so that other
                # clients ask about other jobs; put back until it is final.
                job, entry = L.status_checks.popitem(last=False)
                tok, durable, acked_at, acked_time = entry

                def put_back(job=job, entry=entry):
                    L.status_checks[job] = entry

                def check(r, job=job, tok=tok, durable=durable, acked_at=acked_at, put_back=put_back):
                    if evicted(r, durable, acked_at, self.acked_so_far(), acked_time):
                        L.evicted += 1
                        return None
                    if r.get("ok") is not True or r.get("job") != job:
                        return f"status reply {r}"
                    if r.get("state") == "completed":
                        if (r.get("result") or {}).get("output") != tok:
                            return f"status of {job} has output {r.get('result')}, wanted {tok!r}"
                        L.status_checked += 1
                    elif r.get("state") in ("queued", "running"):
                        put_back()
                    else:
                        return f"status of {job}: {r}"
                    return None
                return Op({"op": "status", "job": job}, "status", check, lost=put_back)
            tok = self.token()
            return Op({"op": "submit", "action": "noop", "key": tok}, "noop", expect_ok_field(["state"], "completed"))
        if x < 98.5:
            return Op({"op": "ping"}, "ping", lambda r: None if r.get("ok") and r.get("pid") else f"ping {r}")
        if x < 99.3:
            return Op({"op": "stats"}, "stats", lambda r: None if r.get("ok") and "accepted" in r else f"stats {r}")
        return Op({"op": "workers"}, "workers",
                  lambda r: None if r.get("ok") and len(r.get("workers", [])) == len(WORKERS) else f"workers {r}")

    def acked_so_far(self):
        return self.shared_count.value if self.shared_count is not None else self.ledger.submits_acked

    # ---- the connection

    async def connect(self):
        self.conn += 1
        self.reader, self.writer = await asyncio.open_unix_connection(self.path, limit=1 << 20)

    def close(self):
        if self.writer:
            self.writer.transport.abort()  # abrupt: no graceful shutdown, replies still owed are dropped
        self.reader = self.writer = None

    async def run(self):
        L = self.ledger
        while not self.deadline_fn():
            try:
                await self.connect()
            except OSError as e:
                L.fail("connect", str(e))
                await asyncio.sleep(0.1)
                continue
            batches = self.rng.randint(5, 200)
            try:
                for _ in range(batches):
                    if self.deadline_fn():
                        break
                    if not await self.batch():
                        break  # disconnected on purpose
            except (OSError, asyncio.IncompleteReadError, ConnectionError) as e:
                L.fail("connection", f"client {self.cid}: {e!r}")
            self.close()

    async def batch(self):
        """Sends 1..8 requests in one write and reads their replies; with a
        small probability drops the connection after some of the replies.
        Returns False after such a drop."""
        rng = self.rng
        L = self.ledger
        ops = {}
        order = []
        for _ in range(rng.randint(1, 8)):
            op = self.make_op()
            self.next_id += 1
            rid = f"{self.cid}-{self.next_id}" if rng.random() < 0.5 else self.cid * 10_000_000 + self.next_id
            op.req["id"] = rid
            ops[rid] = op
            order.append(rid)
        data = b"".join(json.dumps(ops[r].req, separators=(",", ":")).encode() + b"\n" for r in order)
        drop_after = None
        if rng.random() < 0.03:
            drop_after = rng.randint(0, len(order) - 1)
        sent_at = time.monotonic()
        self.writer.write(data)
        await self.writer.drain()
        L.batches += 1
        L.requests += len(order)
        L.submits_sent += sum(1 for r in order if ops[r].req["op"] == "submit")
        seen = set()
        answered = 0
        while len(seen) < len(order):
            if drop_after is not None and answered >= drop_after:
                break
            line = await asyncio.wait_for(self.reader.readline(), BATCH_TIMEOUT)
            if not line:
                raise ConnectionError("loopd closed the connection")
            L.replies += 1
            answered += 1
            if len(L.latencies) < 500_000:
                L.latencies.append(time.monotonic() - sent_at)
            reply = json.loads(line)
            rid = reply.get("id")
            if rid not in ops:
                L.fail("unknown_id", f"reply {reply} matches no request in flight")
                continue
            if rid in seen:
                L.fail("duplicate_reply", f"second reply for {rid}: {reply}")
                continue
            seen.add(rid)
            op = ops[rid]
            if op.req["op"] == "submit" and "job" in reply:
                L.submits_acked += 1
                L.by_action[op.kind] += 1
            problem = op.check(reply)
            if problem:
                L.fail(op.kind, f"{op.req} -> {problem}")
        acked = sum(1 for rid in seen if ops[rid].req["op"] == "submit")
        if acked and self.shared_count is not None:
            with self.shared_count.get_lock():
                self.shared_count.value += acked
        if drop_after is None:
            return True
        L.disconnects += 1
        for rid in order:
            op = ops[rid]
            if rid not in seen and op.lost:
                op.lost()
            if rid in seen or not op.token:
                continue
            if op.kind == "cancel":
                L.record_cancel_unknown.add(op.token)
            else:
                L.record_unacked.add(op.token)
        self.close()
        return False


def client_process(path, first_cid, count, seed, shared, results, start, duration, target_jobs, hard_stop):
    """One client process: `count` asyncio clients; sends its Ledger back."""
    in_child_process()
    rng = random.Random(seed)
    ledger = Ledger()

    def done():
        now = time.monotonic()
        return now >= hard_stop or (now - start >= duration and shared.value >= target_jobs)

    async def run_all():
        clients = []
        for i in range(count):
            c = LoadClient(first_cid + i, path, random.Random(rng.random()), ledger, done)
            c.shared_count = shared
            clients.append(c)
        await asyncio.gather(*(c.run() for c in clients))

    try:
        asyncio.run(run_all())
    except Exception as e:  # reported, never silently lost
        ledger.fail("client_process", repr(e))
    results.put(ledger)


def warm_up(path, jobs, limit, connections=4):
    """Fills the daemon's retained-job window (the last 100,000 finished jobs
    stay queryable by design, PROTOCOL.md `status`) with `jobs` echo jobs of
    a fixed shape, pipelined over a few connections. Run before the RSS
    baseline and again after the load: both measurements then see a window
    of the same content, and what differs is what the load left behind.
    Raises PhaseOverrun once `limit` seconds have passed."""
    count = jobs // connections
    deadline = time.monotonic() + limit

    def one(k):
        window = 400
        sent = done = 0
        with Client(path, timeout=limit) as c:
            while done < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PhaseOverrun(f"warm-up: {done} of {count} jobs on connection {k} after {limit} s")
                c.sock.settimeout(left)  # a read blocks no later than the deadline
                batch = []
                while sent < count and sent - done < window:
                    sent += 1
                    batch.append({"id": sent, "op": "submit", "action": "echo",
                                  "args": [f"warm{k}.{sent}", "w" * 40], "worker": WORKERS[sent % len(WORKERS)]})
                if batch:
                    c.send_many(batch)
                target = 0 if sent >= count else window // 2
                while sent - done > target:
                    try:
                        r = c.read_reply()
                    except TimeoutError:
                        raise PhaseOverrun(f"warm-up: {done} of {count} jobs on connection {k} after {limit} s")
                    if r is None or not r.get("ok"):
                        raise RuntimeError(f"warm-up reply {r}")
                    done += 1

    run_threads(one, connections)
    return count * connections


def analyse_records(record_file, ledger, checks):
    with open(record_file) as f:
        lines = [l.rstrip("\n") for l in f]
    counts = collections.Counter(lines)
    acked = ledger.record_acked
    known = set(acked) | ledger.record_unacked
    unknown = [t for t in counts if t not in known]
    checks.check(not unknown, "record: every token in the file was submitted", f"{len(unknown)} unknown, e.g. {unknown[:3]}")
    twice = [t for t, n in counts.items() if n > 1]
    checks.check(not twice, "record: no job ran twice (no crash, so no replay)", f"{len(twice)} tokens, e.g. {twice[:3]}")
    must_once = [t for t in acked if t not in ledger.record_cancelled and t not in ledger.record_cancel_unknown]
    missing = [t for t in must_once if counts[t] == 0]
    checks.check(not missing, f"record: all {len(must_once)} acknowledged, uncancelled record jobs ran",
                 f"{len(missing)} never ran, e.g. {missing[:3]}")
    ran_cancelled = [t for t in ledger.record_cancelled if counts[t] > 0]
    checks.check(not ran_cancelled, f"record: none of the {len(ledger.record_cancelled)} record jobs cancelled before they started ran",
                 f"e.g. {ran_cancelled[:3]}")
    print(f"  info  {len(ledger.record_cancel_unknown)} cancels of delayed record jobs lost their reply (connection "
          "dropped) or stopped a running job: those jobs may run, at most once")
    unacked_ran = sum(1 for t in ledger.record_unacked if counts[t] > 0)
    print(f"  info  {len(ledger.record_unacked)} record jobs unacknowledged (connection dropped); "
          f"{unacked_ran} of them ran (at most once each)")

    # Order: per (client, connection, worker), the file order is the send order.
    last = {}
    inversions = collections.Counter()
    examples = {}
    for t in lines:
        info = acked.get(t)
        if not info:
            continue
        cid, conn, worker, seq, durable = info
        if worker.startswith("d"):
            continue  # delayed jobs run when their delay ends, not in arrival order
        key = (cid, conn, worker)
        prev = last.get(key)
        if prev is not None and seq < prev[0]:
            kind = "durable" if (durable or prev[1]) else "plain"
            inversions[kind] += 1
            examples.setdefault(kind, f"{t} ran after {prev[2]}")
        if prev is None or seq > prev[0]:
            last[key] = (seq, durable, t)
    checks.check(inversions["plain"] == 0, "order: non-durable record jobs of one connection ran in send order per worker",
                 f"{inversions['plain']} inversions, e.g. {examples.get('plain')}")
    checks.check(inversions["durable"] == 0,
                 "order: durable and non-durable record jobs of one connection ran in send order per worker",
                 f"{inversions['durable']} inversions, e.g. {examples.get('durable')}")
    return len(lines)


def final_status_sweep(path, ledger, checks, limit):
    """Every job whose completion the clients had not yet seen: completed,
    with its output (or, non-durable and long ago, out of the window)."""
    pending = dict(ledger.status_checks)
    bad = []
    late = 0
    deadline = time.monotonic() + limit
    with Client(path, timeout=limit) as c:
        for job, (tok, durable, acked_at, acked_time) in pending.items():
            left = deadline - time.monotonic()
            if left <= 0:
                raise PhaseOverrun(f"sweep: {len(pending)} status requests not done after {limit} s")
            c.sock.settimeout(left)
            try:
                r = c.call({"op": "status", "job": job})
            except TimeoutError:
                raise PhaseOverrun(f"sweep: {len(pending)} status requests not done after {limit} s")
            if evicted(r, durable, acked_at, ledger.submits_acked, acked_time):
                late += 1
            elif r.get("state") != "completed" or (r.get("result") or {}).get("output") != tok:
                bad.append((job, durable, r))
    print(f"  info  wait:false jobs seen completed by status during the run: {ledger.status_checked}; "
          f"status or cancel after the job had left the retained window: {ledger.evicted + late}", flush=True)
    checks.check(not bad, f"durable / wait:false echo jobs still unchecked at the end ({len(pending)}) all completed "
                 "with their output", f"{len(bad)} not, e.g. {bad[:2]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="directory holding loopd (default $LOOPD_BIN_DIR or .build/release)")
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--procs", type=int, default=2, help="client processes the clients are spread over")
    ap.add_argument("--duration", type=float, default=60, help="seconds of load")
    ap.add_argument("--target-jobs", "--min-jobs", dest="target_jobs", type=int, default=100_000,
                    help="keep going past --duration until this many jobs (reported, not a pass condition)")
    ap.add_argument("--max-extra", type=float, default=120, help="seconds past --duration allowed to reach --target-jobs")
    ap.add_argument("--warm-up", type=int, default=110_000, help="jobs run before the RSS baseline")
    ap.add_argument("--rss-slack-kb", type=int, default=16 * 1024)
    ap.add_argument("--rss-slack-pct", type=float, default=10,
                    help="VmRSS allowed above the baseline, in %% of it")
    ap.add_argument("--no-fsync", action="store_true", help="journal without fsync (faster disks matter less)")
    ap.add_argument("--soak", action="store_true", help="print an RSS/fd sample every 30 s and check for growth")
    ap.add_argument("--budget", action="store_true", help="print the sum of the phases' hard limits, in seconds, and exit")
    args = ap.parse_args()
    if args.budget:
        print(int(budget(args) + 0.999))
        return

    bindir = binary_dir(args.bin)
    rng = seeded_random()
    checks = Checks("load")
    work = make_workdir("loopd-load-")
    record_file = children_may_write(os.path.join(work, "record.log"))
    d = LoopdProcess(bindir, work, extra_toml=config_actions(record_file), fsync=not args.no_fsync,
                     workers=len(WORKERS), journal_extra=f"retention_seconds = {RETENTION_SECONDS}")
    section(f"load: {args.clients} clients, {args.duration:.0f} s (on until {args.target_jobs} jobs, at most "
            f"{args.max_extra:.0f} s more); loopd from {bindir}")
    print("  info  hard limits per phase (s): " + ", ".join(f"{k} {v}" for k, v in PHASE_LIMITS.items())
          + f", load {load_limit(args):.0f}; {budget(args):.0f} in all", flush=True)
    try:
        run(args, checks, d, rng, record_file)
    except PhaseOverrun as e:
        checks.check(False, "every phase ended within its hard limit", str(e))
    checks.finish()


def idle_within(checks, path, phase, what):
    """Waits (bounded by the phase's limit) until loopd has nothing queued or
    running; a check. Returns the last stats."""
    stats = wait_idle(path, PHASE_LIMITS[phase])
    checks.check(stats.get("queued") == 0 and stats.get("running") == 0, what, str(stats))
    return stats


def run(args, checks, d, rng, record_file):
    if not checks.check(d.start(ready_timeout=PHASE_LIMITS["start"]), "loopd starts"):
        return

    t0 = time.monotonic()
    n = warm_up(d.socket_path, args.warm_up, PHASE_LIMITS["warm-up"]) if args.warm_up else 0
    idle_within(checks, d.socket_path, "baseline", "loopd is idle after the warm-up")
    base_fd, base_rss = d.idle_fd_count(), d.rss_kb()
    print(f"  info  warm-up: {n} echo jobs in {time.monotonic() - t0:.1f} s; baseline fds {base_fd}, "
          f"VmRSS {base_rss} kB, threads {d.threads()}", flush=True)

    start = time.monotonic()
    shared = multiprocessing.Value("q", 0)
    results = multiprocessing.Queue()
    procs = []
    per = [args.clients // args.procs + (1 if i < args.clients % args.procs else 0) for i in range(args.procs)]
    first = 1
    for i, count in enumerate(per):
        p = multiprocessing.Process(target=client_process, daemon=True, args=(
            d.socket_path, first, count, rng.random(), shared, results, start, args.duration, args.target_jobs,
            start + args.duration + args.max_extra))
        first += count
        p.start()
        procs.append(p)

    samples = []
    peak = {"rss": 0, "fd": 0}
    cpu0 = d.cpu_seconds()
    ledger = Ledger()
    got = 0
    last_print = start
    hard_deadline = start + load_limit(args)
    while got < len(procs) and time.monotonic() < hard_deadline:
        try:
            ledger.merge(results.get(timeout=1))
            got += 1
            continue
        except queue.Empty:
            pass
        try:
            rss, fds = d.rss_kb(), d.fd_count()
        except OSError:
            continue
        peak["rss"] = max(peak["rss"], rss)
        peak["fd"] = max(peak["fd"], fds)
        now = time.monotonic()
        samples.append((now - start, rss, fds, shared.value))
        if args.soak and now - last_print >= 30:
            last_print = now
            print(f"  soak  t={now - start:5.0f}s jobs={shared.value} rss={rss}kB fds={fds} "
                  f"cpu={d.cpu_seconds():.0f}s", flush=True)
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
    checks.check(got == len(procs), f"all {len(procs)} client processes reported within the load's hard limit",
                 f"{got} did")
    elapsed = time.monotonic() - start
    cpu = d.cpu_seconds() - cpu0
    rate = ledger.submits_acked / elapsed
    print(f"  info  {ledger.submits_acked} jobs acknowledged ({ledger.submits_sent} submits sent, {ledger.requests} "
          f"requests, {ledger.replies} replies, {ledger.batches} batches, {ledger.disconnects} dropped connections) "
          f"in {elapsed:.1f} s = {rate:.0f} jobs/s; loopd CPU {cpu:.1f} s ({100 * cpu / elapsed:.0f}% of one core)",
          flush=True)
    print(f"  info  by kind: {dict(sorted(ledger.by_action.items()))}; cancels won {ledger.cancels_ok} "
          f"({ledger.cancels_running} of them stopped a running job), late {ledger.cancels_late}", flush=True)
    lat = sorted(ledger.latencies)
    if lat:
        pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
        print(f"  info  reply latency (batch write to reply): p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, "
              f"max {lat[-1] * 1000:.1f} ms", flush=True)
    print(f"  info  wait:false acknowledgements by state: {dict(ledger.ack_states)}", flush=True)
    print(f"  info  peak during load: VmRSS {peak['rss']} kB, fds {peak['fd']}", flush=True)

    reached = ledger.submits_acked >= args.target_jobs
    print(f"  info  target of {args.target_jobs} jobs " + ("reached" if reached else
          f"not reached within {args.duration:.0f} + {args.max_extra:.0f} s (the machine's pace; not a failure): "
          f"{ledger.submits_acked} jobs"), flush=True)
    for kind in sorted(ledger.failures):
        checks.check(False, f"replies of kind {kind} as expected",
                     f"{ledger.failures[kind]} wrong, first: {ledger.examples[kind]}")
    checks.check(not ledger.failures, f"all {ledger.replies} replies matched their requests and said the right thing")
    checks.check(d.alive(), "loopd is still running")

    stats = idle_within(checks, d.socket_path, "drain", "loopd drains to idle")
    fin = (stats.get("completed", 0) + stats.get("failed", 0) + stats.get("timed_out", 0)
           + stats.get("cancelled", 0))
    checks.check(stats.get("accepted") == fin, "stats: accepted == completed + failed + timed_out + cancelled",
                 f"accepted {stats.get('accepted')}, ended {fin}")
    checks.check(stats.get("accepted", 0) >= n + ledger.submits_acked,
                 "stats: accepted counts every acknowledged job", f"{stats.get('accepted')} < {n + ledger.submits_acked}")
    final_status_sweep(d.socket_path, ledger, checks, PHASE_LIMITS["sweep"])
    recorded = analyse_records(record_file, ledger, checks)
    print(f"  info  record file: {recorded} lines", flush=True)

    # Resources: all load clients are gone; wait for loopd to notice.
    wait_until(lambda: d.fd_count() <= base_fd, 10, 0.1)
    after_fd = d.idle_fd_count()
    after_rss = d.rss_kb()
    print(f"  info  after the load: fds {after_fd} (baseline {base_fd}), VmRSS {after_rss} kB "
          f"(baseline {base_rss} kB)", flush=True)
    checks.check(after_fd == base_fd, "open descriptors return to the baseline",
                 f"{after_fd} now, {base_fd} before: {sorted(os.listdir(f'/proc/{d.pid}/fd'), key=int)}")
    # The retained-job window now holds the load's jobs, not the warm-up's:
    # refill it with warm-up jobs so the comparison is like for like. The
    # journal also keeps the load's durable results for RETENTION_SECONDS;
    # the baseline had none, so wait until an idle loopd has forgotten them
    # (bug durable-results-held-while-idle: it never did without new work).
    t0 = time.monotonic()
    refill_deadline = t0 + PHASE_LIMITS["refill"]
    warm_up(d.socket_path, args.warm_up, PHASE_LIMITS["refill"]) if args.warm_up else 0
    stats = wait_idle(d.socket_path, max(1, refill_deadline - time.monotonic()))
    checks.check(stats.get("queued") == 0 and stats.get("running") == 0, "loopd is idle after the refill", str(stats))
    wait_until(lambda: d.fd_count() <= base_fd, 10, 0.1)
    retained = lambda: wait_idle(d.socket_path, 10).get("journal", {}).get("retained_finished")
    checks.check(wait_until(lambda: retained() == 0, PHASE_LIMITS["retention"], 1),
                 "an idle loopd forgets durable results once past retention", f"retained_finished {retained()}")
    refill_rss = d.rss_kb()
    slack = max(args.rss_slack_kb, int(base_rss * args.rss_slack_pct / 100))
    print(f"  info  after refilling the retained window and journal retention ({time.monotonic() - t0:.1f} s): VmRSS {refill_rss} kB "
          f"(baseline {base_rss} kB, allowed +{slack} kB), fds {d.fd_count()}", flush=True)
    if refill_rss <= base_rss + slack:
        checks.check(True, f"VmRSS returns to within {slack} kB of the baseline")
    else:
        # Above the bound: a leak, or glibc's arenas holding the load's high
        # water mark. A second refill tells them apart: a leak grows again.
        warm_up(d.socket_path, args.warm_up, PHASE_LIMITS["refill"])
        wait_idle(d.socket_path, PHASE_LIMITS["refill"])
        time.sleep(2)  # past loopd's idle trim
        again = d.rss_kb()
        print(f"  info  after a second refill: VmRSS {again} kB ({again - refill_rss:+d} kB)", flush=True)
        checks.check(again <= refill_rss + 4096,
                     f"VmRSS above the baseline by {refill_rss - base_rss} kB does not grow again over a second refill",
                     f"{refill_rss} -> {again} kB")
    if args.soak and len(samples) >= 6:
        third = len(samples) // 3
        first = max(s[1] for s in samples[:third])
        last = max(s[1] for s in samples[-third:])
        print(f"  info  soak RSS: max of first third {first} kB, of last third {last} kB", flush=True)
        checks.check(last <= first + slack, "soak: no RSS growth from the first third to the last",
                     f"{first} -> {last} kB")
    journal = os.path.join(d.state_dir, "journal.log")
    print(f"  info  journal.log: {os.path.getsize(journal)} bytes", flush=True)
    rc = d.terminate(timeout=PHASE_LIMITS["stop"])
    checks.check(rc == 0, "loopd stops cleanly on SIGTERM", f"exit status {rc}")


if __name__ == "__main__":
    main()
