#!/usr/bin/env python3
"""CRASH CONSISTENCY: SIGKILL the real loopd at random moments.

The journal has fsync on. Each round:

  1. start loopd on the same state directory; it must come up (the journal
     opens, a torn tail is cut);
  2. verify: every durable job acknowledged in any earlier round is known
     (`status` never says unknown_job: nothing acknowledged is lost), and
     each one ends `completed` with its output (the replays run it); a
     barrier (one durable submit acknowledged) then makes those finishes
     durable;
  3. load: a few client threads pipeline durable submits (echo, a `record`
     exec action that appends a unique token to a file, short sleeps; with
     and without wait) while earlier jobs complete;
  4. SIGKILL at a random moment 50..600 ms into the load. A submitter
     thread ends on a connection error (closed, reset, refused) that comes
     after the kill; every other error, and any error before the kill, is
     counted and fails the run.

Some rounds also damage the tail of state/journal.log before the restart, as
a crash in the middle of a write would: garbage bytes, or the first part of a
copy of the last record. The restart must log the cut and lose nothing.

Duplicates: a job may run again only when a crash caught it between its
submit and its durable finish. For each record token the file may hold at
most 1 + (kills between its submit and the barrier after the round that saw
it completed) lines, and at least one. A final clean stop and start checks
that nothing is left pending and nothing runs again.

    Tests/reliability/crash.py [--rounds 20] [--bin DIR]
"""

import argparse
import collections
import os
import random
import struct
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loopdtest import (Checks, Client, LoopdProcess, binary_dir, children_may_write, make_workdir,  # noqa: E402
                       section, seeded_random, wait_idle)

THREADS = 6
HEADER = 16  # journal file header bytes
RECORD_HEAD = 9  # length u32, crc u32, type u8


def logged_since(log_path, offset, text):
    """Whether the daemon's log has `text` past byte `offset` (what the
    latest start wrote)."""
    with open(log_path, errors="replace") as f:
        f.seek(offset)
        return text in f.read()


def actions(record_file):
    return f"""
[actions.record]
argv = ["/bin/sh", "-c", 'printf "%s\\n" "$1" >> "$0"', "{record_file}"]
max_client_args = 1
timeout_ms = 10000
"""


class Ledger:
    def __init__(self):
        self.lock = threading.Lock()
        # job id -> dict(kind, token, expect, round): acknowledged durable jobs
        self.acked = {}
        self.unconfirmed = set()  # acked job ids not yet seen final after a restart
        self.confirmed_round = {}  # job id -> round whose verification saw it final (then made durable)
        self.record_submit_round = {}  # token -> round it was submitted in (acked or not)
        self.record_tokens_acked = {}  # token -> job id
        self.sent = 0
        self.unacked = 0
        self.problems = []
        self.kill_errors = collections.Counter()  # exception type -> count, seen after the kill
        self.unexpected_errors = 0
        self.unexpected_examples = []

    def problem(self, text):
        with self.lock:
            if len(self.problems) < 20:
                self.problems.append(text)

    def client_error(self, rnd, k, error, after_kill):
        """Files what ended a submitter thread. Only a connection error
        (closed, reset, refused, broken pipe) after the kill was sent is the
        kill; anything else, or anything before it, is counted against
        loopd: a daemon that answers garbage or drops connections under load
        must not pass for one that was killed."""
        with self.lock:
            if after_kill and isinstance(error, ConnectionError):
                self.kill_errors[type(error).__name__] += 1
                return
            self.unexpected_errors += 1
            if len(self.unexpected_examples) < 10:
                when = "after" if after_kill else "before"
                self.unexpected_examples.append(f"round {rnd} thread {k}, {when} the kill: {error!r}")


def submitter(path, rnd, k, rng, ledger, stop, killed):
    """Pipelines durable submits until the daemon dies or `stop` is set.
    `killed` is set just before the SIGKILL is sent."""
    n = 0
    batch = {}
    c = None
    try:
        c = Client(path, timeout=10)
        while not stop.is_set():
            batch = {}
            for _ in range(rng.randint(1, 4)):
                n += 1
                token = f"r{rnd}.t{k}.{n}"
                x = rng.random()
                if x < 0.4:
                    req = {"op": "submit", "action": "echo", "args": [token], "durable": True, "wait": False}
                    kind, expect = "echo", token
                elif x < 0.6:
                    req = {"op": "submit", "action": "echo", "args": [token], "durable": True}
                    kind, expect = "echo_wait", token
                elif x < 0.85:
                    req = {"op": "submit", "action": "record", "args": [token], "durable": True, "wait": False,
                           "worker": rng.choice(["w1", "w2"])}
                    kind, expect = "record", None
                    with ledger.lock:
                        ledger.record_submit_round[token] = rnd
                else:
                    ms = rng.randint(5, 30)
                    req = {"op": "submit", "action": "sleep", "args": [str(ms)], "durable": True, "wait": False}
                    kind, expect = "sleep", ms
                req["id"] = token
                batch[token] = (req, kind, expect)
            c.send_many([b[0] for b in batch.values()])
            with ledger.lock:
                ledger.sent += len(batch)
            while batch:
                r = c.read_reply()
                if r is None:
                    raise ConnectionError("closed")
                entry = batch.pop(r.get("id"), None)
                if entry is None:
                    ledger.problem(f"reply to no request in flight: {r}")
                    continue
                req, kind, expect = entry
                if r.get("ok") is not True or "job" not in r:
                    ledger.problem(f"durable submit refused: {req} -> {r}")
                    continue
                if kind == "echo_wait" and (r.get("result") or {}).get("output") != expect:
                    ledger.problem(f"wait reply {r}")
                with ledger.lock:
                    ledger.acked[r["job"]] = {"kind": kind, "token": req["id"], "expect": expect, "round": rnd}
                    ledger.unconfirmed.add(r["job"])
                    if kind == "record":
                        ledger.record_tokens_acked[req["id"]] = r["job"]
    except Exception as e:  # every one is filed: the kill, or a fault of loopd's
        ledger.client_error(rnd, k, e, killed.is_set())
    finally:
        with ledger.lock:
            ledger.unacked += len(batch)
        if c is not None:
            c.close()


def verify(path, ledger, rnd, timeout=30):
    """Status of every acknowledged, unconfirmed job: known, and completed
    with its output once the replays ran. Returns (lost, wrong, still_open)."""
    lost, wrong = [], []
    open_jobs = set(ledger.unconfirmed)
    deadline = time.monotonic() + timeout
    with Client(path, timeout=20) as c:
        while open_jobs and time.monotonic() < deadline:
            jobs = sorted(open_jobs)
            for i in range(0, len(jobs), 200):
                chunk = jobs[i:i + 200]
                c.send_many([{"id": j, "op": "status", "job": j} for j in chunk])
                for _ in chunk:
                    r = c.read_reply()
                    job = r["id"]
                    info = ledger.acked[job]
                    if r.get("ok") is not True:
                        code = (r.get("error") or {}).get("code")
                        lost.append((job, info, code))
                        open_jobs.discard(job)
                        continue
                    state = r.get("state")
                    if state in ("queued", "running", "delayed"):
                        continue
                    open_jobs.discard(job)
                    result = r.get("result") or {}
                    ok = state == "completed"
                    if info["kind"] in ("echo", "echo_wait"):
                        ok = ok and result.get("output") == info["expect"]
                    elif info["kind"] == "sleep":
                        ok = ok and result.get("slept_ms") == info["expect"]
                    elif info["kind"] == "record":
                        ok = ok and result.get("exit_code") == 0
                    if not ok:
                        wrong.append((job, info, r))
                    ledger.unconfirmed.discard(job)
                    ledger.confirmed_round[job] = rnd
            if open_jobs:
                time.sleep(0.05)
        # Barrier: this durable submit's commit also writes every finish
        # record appended before it, so the jobs just seen final stay final.
        b = c.call({"op": "submit", "action": "noop", "durable": True, "wait": False})
        if b.get("ok") is not True:
            wrong.append(("barrier", {}, b))
    for job, _, _ in lost:
        ledger.unconfirmed.discard(job)
    return lost, wrong, open_jobs


def damage_tail(journal, rng, how):
    """Appends bytes a crash mid-write could leave: garbage, or a torn copy
    of the last record. Returns a description."""
    with open(journal, "rb") as f:
        data = f.read()
    if how == "garbage":
        junk = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300)))
        tail = junk
    else:
        off, last = HEADER, None
        while off + RECORD_HEAD <= len(data):
            (length,) = struct.unpack_from("<I", data, off)
            if off + RECORD_HEAD + length > len(data):
                break
            last = (off, off + RECORD_HEAD + length)
            off = last[1]
        if last is None:
            return damage_tail(journal, rng, "garbage")
        rec = data[last[0]:last[1]]
        tail = rec[:rng.randint(1, len(rec) - 1)]
    with open(journal, "ab") as f:
        f.write(tail)
        f.flush()
        os.fsync(f.fileno())
    return f"{how}: {len(tail)} bytes appended to a {len(data)}-byte journal"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin")
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    bindir = binary_dir(args.bin)
    rng = seeded_random()
    checks = Checks("crash")
    work = make_workdir("loopd-crash-")
    record_file = children_may_write(os.path.join(work, "record.log"))
    d = LoopdProcess(bindir, work, extra_toml=actions(record_file), fsync=True, workers=2)
    journal = os.path.join(d.state_dir, "journal.log")
    ledger = Ledger()
    kills = 0
    kill_round = []  # round of each kill, in order
    damaged = 0
    repaired = 0
    started_at = time.monotonic()
    section(f"crash: {args.rounds} rounds of SIGKILL during durable submits (fsync on); loopd from {bindir}")

    injected = None
    for rnd in range(args.rounds):
        log_before = os.path.getsize(d.log_path) if os.path.exists(d.log_path) else 0
        try:
            up = d.start(ready_timeout=30)
        except RuntimeError as e:
            up = False
            print(f"  info  {e}")
        if not checks.check(up, f"round {rnd}: loopd restarts on the journal" + (f" ({injected})" if injected else "")):
            break
        if injected:
            cut = logged_since(d.log_path, log_before, "journal: cut")
            checks.check(cut, f"round {rnd}: the damaged tail was cut and reported")
            repaired += cut
        lost, wrong, still_open = verify(d.socket_path, ledger, rnd)
        checks.check(not lost, f"round {rnd}: no acknowledged durable job lost ({len(ledger.acked)} so far)",
                     f"{len(lost)} lost, e.g. {lost[:3]}")
        checks.check(not wrong and not still_open,
                     f"round {rnd}: every acknowledged durable job completed with its output",
                     f"{len(wrong)} wrong, {len(still_open)} not finished; e.g. {wrong[:2]} {sorted(still_open)[:3]}")

        stop = threading.Event()
        killed = threading.Event()
        threads = [threading.Thread(target=submitter,
                                    args=(d.socket_path, rnd, k, random.Random(rng.random()), ledger, stop, killed))
                   for k in range(THREADS)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.05, 0.6))
        killed.set()
        d.kill()
        kills += 1
        kill_round.append(rnd)
        stop.set()
        for t in threads:
            t.join(timeout=15)
        checks.check(not any(t.is_alive() for t in threads), f"round {rnd}: clients saw the kill")

        injected = None
        if rnd % 3 == 1 and os.path.exists(journal):
            injected = damage_tail(journal, rng, "garbage" if rnd % 2 else "torn")
            damaged += 1

    # A final clean cycle: everything acknowledged finishes, then nothing more runs.
    section("final: clean stop and start")
    log_before = os.path.getsize(d.log_path)
    if d.start():
        if injected:
            cut = logged_since(d.log_path, log_before, "journal: cut")
            checks.check(cut, f"final start: the damaged tail was cut and reported ({injected})")
            repaired += cut
        lost, wrong, still_open = verify(d.socket_path, ledger, args.rounds)
        checks.check(not lost and not wrong and not still_open,
                     f"all {len(ledger.acked)} acknowledged durable jobs completed, none lost",
                     f"lost {lost[:3]}, wrong {wrong[:3]}, open {sorted(still_open)[:3]}")
        # Jobs journaled but never acknowledged (a kill cut their reply) were
        # replayed by this start too; one still queued at a clean stop would
        # rightly run again after it, so the stop waits until they are done.
        idle = wait_idle(d.socket_path, 30)
        checks.check(idle.get("queued") == 0 and idle.get("running") == 0,
                     "the replayed jobs have run before the clean stop", str(idle))
        checks.check(d.terminate() == 0, "loopd stops cleanly on SIGTERM")
        lines_before = sum(1 for _ in open(record_file))
        checks.check(d.start(), "loopd starts again after the clean stop")
        time.sleep(0.5)
        with Client(d.socket_path) as c:
            st = c.call({"op": "stats"})
        checks.check(st.get("accepted") == 0, "nothing was pending after the clean stop (no replays)", str(st))
        checks.check(sum(1 for _ in open(record_file)) == lines_before, "no record job ran after the clean restart")
        d.terminate()
    else:
        checks.check(False, "loopd starts for the final check")

    section("duplicates")
    counts = collections.Counter(l.rstrip("\n") for l in open(record_file))
    unknown = [t for t in counts if t not in ledger.record_submit_round]
    checks.check(not unknown, "every recorded token was submitted", str(unknown[:3]))
    too_many, missing, replayed = [], [], 0
    for token, job in ledger.record_tokens_acked.items():
        s = ledger.record_submit_round[token]
        v = ledger.confirmed_round.get(job, args.rounds)
        allowed = 1 + sum(1 for k in kill_round if s <= k < v)
        if counts[token] > allowed:
            too_many.append((token, counts[token], allowed))
        if counts[token] == 0:
            missing.append(token)
        if counts[token] > 1:
            replayed += 1
    for token, s in ledger.record_submit_round.items():
        if token not in ledger.record_tokens_acked:
            allowed = 1 + sum(1 for k in kill_round if s <= k)
            if counts[token] > allowed:
                too_many.append((token, counts[token], allowed))
    checks.check(not missing, f"every acknowledged record job ran ({len(ledger.record_tokens_acked)})",
                 f"{len(missing)} never ran, e.g. {missing[:3]}")
    checks.check(not too_many, "duplicates only from at-least-once replays (runs <= 1 + crashes while pending)",
                 f"{len(too_many)}, e.g. {too_many[:3]}")
    for p in ledger.problems:
        checks.check(False, "client-side reply check", p)
    kill_errors = sum(ledger.kill_errors.values())
    print(f"  info  submitter threads ended by the kill: {kill_errors} "
          f"({', '.join(f'{n} {name}' for name, n in sorted(ledger.kill_errors.items())) or 'none'})", flush=True)
    checks.check(ledger.unexpected_errors == 0, "no submitter thread ended by anything but the kill",
                 f"{ledger.unexpected_errors}, e.g. {ledger.unexpected_examples[:3]}")
    elapsed = time.monotonic() - started_at
    print(f"  info  {kills} kills, {damaged} damaged tails ({repaired} cut and reported), {ledger.sent} durable "
          f"submits sent, {len(ledger.acked)} acknowledged, {ledger.unacked} unanswered at a kill, "
          f"{replayed} record jobs ran twice or more (replays); journal {os.path.getsize(journal)} bytes; "
          f"{elapsed:.0f} s", flush=True)
    checks.finish()


if __name__ == "__main__":
    main()
