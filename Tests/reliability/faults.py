#!/usr/bin/env python3
"""RESOURCE FAULTS, against the real loopd.

  disk full   the state directory is a 1 MiB tmpfs (root only: skipped with
              a message otherwise). Filled up, durable submits are refused
              with `journal_unavailable` (wait and no-wait) and never run,
              not even after a restart; non-durable jobs (built-in and exec)
              keep working, also those pipelined behind a refused durable
              job on its worker; loopd restarts on the full disk; once space
              returns durable jobs work again and the acknowledged ones
              survive a restart.
  fd limit    loopd runs with RLIMIT_NOFILE 64. Connections are opened until
              one gets no answer (accept fails with EMFILE); loopd then backs
              off (CPU time over 2 s stays low instead of spinning on the
              listening socket), the connected clients keep being served, an
              exec job fails cleanly (no descriptors for its pipes), and the
              waiting connections are served once others close. Descriptors
              return to the baseline.
  children    an exec child that ignores SIGTERM is SIGKILLed after the
              grace period, once its output shows its handler was in place
              before the SIGTERM (a round where it was not is retried with a
              longer timeout); a child flooding 64 MiB to stdout is capped at
              output_cap_bytes while loopd's memory stays bounded. (Also
              covered in-process by Tests/LoopdTests/ExecTests.swift:
              childSurvivingSIGTERMIsKilledAfterTheGrace,
              floodingOutputIsCapped.) No zombies are left.

    Tests/reliability/faults.py [--bin DIR] [--only disk|fd|children]
"""

import argparse
import errno
import json
import os
import resource
import select
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loopdtest import (Checks, Client, LoopdProcess, binary_dir, children_may_write, is_root, make_workdir,  # noqa: E402
                       on_exit, section, wait_idle, wait_until)


def record_action(record_file):
    return f"""
[actions.record]
argv = ["/bin/sh", "-c", 'printf "%s\\n" "$1" >> "$0"', "{record_file}"]
max_client_args = 1
timeout_ms = 10000
"""


def recorded(record_file):
    try:
        with open(record_file) as f:
            return [l.rstrip("\n") for l in f]
    except FileNotFoundError:
        return []


# ------------------------------------------------------------------ disk full


def fill(directory):
    """Writes a filler file until the filesystem is full; returns its path."""
    path = os.path.join(directory, "filler")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (65536, 4096, 1):  # big writes, then the odd bytes left
            block = b"\xff" * size
            while True:
                try:
                    if os.write(fd, block) < size:
                        break
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
    finally:
        os.close(fd)
    return path


def disk_full(bindir, checks):
    section("disk full: the state directory on a 1 MiB tmpfs")
    if not is_root():
        checks.skip("disk full", "needs root to mount a tmpfs (run as root, e.g. sudo)")
        return
    work = make_workdir("loopd-disk-")
    state = os.path.join(work, "state")
    os.mkdir(state, 0o700)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", state],
                       capture_output=True, text=True)
    if r.returncode != 0:
        checks.skip("disk full", f"mount -t tmpfs failed: {r.stderr.strip()}")
        return
    on_exit(lambda: subprocess.run(["umount", "-l", state], check=False))
    record_file = children_may_write(os.path.join(work, "record.log"))
    d = LoopdProcess(bindir, work, state_dir=state, fsync=True, extra_toml=record_action(record_file))
    checks.check(d.start(), "loopd starts with its state on the tmpfs")
    with Client(d.socket_path) as c:
        before = c.call({"op": "submit", "action": "echo", "args": ["before"], "durable": True, "wait": False})
        checks.check(before.get("ok") is True, "a durable submit works while there is space", str(before))
        before_id = before.get("job")

        filler = fill(state)
        # A commit may still fit in the last page of journal.log: keep
        # submitting until the first refusal (bounded).
        first = None
        for i in range(200):
            r = c.call({"op": "submit", "action": "echo", "args": [f"probe{i}"], "durable": True, "wait": False})
            if r.get("ok") is False:
                first = r
                break
        code = (first or {}).get("error", {}).get("code")
        checks.check(code == "journal_unavailable", "on a full disk a durable submit is refused: journal_unavailable",
                     str(first))
        checks.check(first is not None and "job" not in first, "the refusal carries no job id", str(first))

        refused = []
        for i in range(5):
            t = f"refused-nowait-{i}"
            r = c.call({"op": "submit", "action": "record", "args": [t], "durable": True, "wait": False})
            refused.append(t)
            checks.check((r.get("error") or {}).get("code") == "journal_unavailable",
                         f"durable wait:false submit {i} refused", str(r))
        t = "refused-wait"
        r = c.call({"op": "submit", "action": "record", "args": [t], "durable": True})
        refused.append(t)
        checks.check((r.get("error") or {}).get("code") == "journal_unavailable", "durable wait:true submit refused",
                     str(r))
        print(f"  info  the wait:true refusal: {json.dumps(r)}", flush=True)

        # Pipelined on one worker: durable (refused), plain, durable (refused), plain.
        reqs = [
            {"id": "d1", "op": "submit", "action": "record", "args": ["refused-pipe-1"], "durable": True,
             "wait": False, "worker": "w1"},
            {"id": "p1", "op": "submit", "action": "record", "args": ["plain-pipe-1"], "wait": False, "worker": "w1"},
            {"id": "d2", "op": "submit", "action": "record", "args": ["refused-pipe-2"], "durable": True,
             "wait": False, "worker": "w1"},
            {"id": "p2", "op": "submit", "action": "record", "args": ["plain-pipe-2"], "worker": "w1"},
        ]
        refused += ["refused-pipe-1", "refused-pipe-2"]
        c.send_many(reqs)
        replies = {}
        for _ in reqs:
            rep = c.read_reply()
            replies[rep["id"]] = rep
        checks.check(all((replies[k].get("error") or {}).get("code") == "journal_unavailable" for k in ("d1", "d2"))
                     and replies["p1"].get("ok") is True and replies["p2"].get("ok") is True,
                     "pipelined on one worker: durable jobs refused, the plain jobs behind them accepted and run",
                     str(replies))

        ok_echo = c.call({"op": "submit", "action": "echo", "args": ["still", "here"]})
        ok_sleep = c.call({"op": "submit", "action": "sleep", "args": ["10"]})
        ok_exec = c.call({"op": "submit", "action": "record", "args": ["plain-exec"]})
        checks.check(ok_echo.get("result", {}).get("output") == "still here" and ok_sleep.get("ok") is True
                     and ok_exec.get("ok") is True, "non-durable jobs keep working on the full disk",
                     f"{ok_echo} {ok_sleep} {ok_exec}")
        st = c.call({"op": "status", "job": before_id})
        checks.check(st.get("state") == "completed", "the durable job acknowledged before the disk filled completed",
                     str(st))

    # Restart on the full disk: the journal only has to be read.
    d.kill()
    try:
        up = d.start()
    except RuntimeError as e:
        up = False
        print(f"  info  {e}")
    checks.check(up, "loopd restarts while the state disk is full")
    if up:
        with Client(d.socket_path) as c:
            r = c.call({"op": "submit", "action": "echo", "args": ["x"], "durable": True})
            checks.check((r.get("error") or {}).get("code") == "journal_unavailable",
                         "still full after the restart: durable refused", str(r))
            r = c.call({"op": "submit", "action": "echo", "args": ["x"]})
            checks.check(r.get("ok") is True, "still full after the restart: plain jobs work", str(r))
            st = c.call({"op": "status", "job": before_id})
            checks.check(st.get("state") == "completed", "the earlier durable job is still known", str(st))

        os.unlink(filler)
        with Client(d.socket_path) as c:
            r = c.call({"op": "submit", "action": "echo", "args": ["after"], "durable": True})
            checks.check(r.get("ok") is True and r.get("result", {}).get("output") == "after",
                         "space is back: a durable submit works again", str(r))
            r2 = c.call({"op": "submit", "action": "record", "args": ["after-nowait"], "durable": True,
                         "wait": False, "delay_ms": 60000})
            checks.check(r2.get("ok") is True, "space is back: a durable wait:false submit is acknowledged", str(r2))
        # That one is delayed a minute: a restart must bring it back.
        d.kill()
        checks.check(d.start(), "loopd restarts after the disk recovered")
        with Client(d.socket_path) as c:
            st = c.call({"op": "status", "job": r2.get("job")})
            checks.check(st.get("ok") is True and st.get("state") in ("queued", "delayed"),
                         "the durable job acknowledged after recovery survived the restart", str(st))
            st = c.call({"op": "status", "job": r.get("job")})
            checks.check(st.get("state") == "completed", "and the completed one is still queryable", str(st))
            c.call({"op": "cancel", "job": r2.get("job")})
        wait_idle(d.socket_path, 10)
    lines = recorded(record_file)
    ran = [t for t in refused if t in lines]
    checks.check(not ran, f"none of the {len(refused)} refused durable jobs ever ran (also not after restarts)",
                 str(ran))
    checks.check("plain-pipe-1" in lines and "plain-pipe-2" in lines and "plain-exec" in lines,
                 "the plain exec jobs ran", str(lines))
    d.terminate()


# ------------------------------------------------------------------ fd limit


def set_nofile(n):
    def pre():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return pre


def connect_and_ping(path, timeout=None):
    """A socket connected to `path` that has sent a ping."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    s.sendall(b'{"id":1,"op":"ping"}\n')
    return s


def try_ping(path, timeout):
    """A connected socket and whether its ping was answered within `timeout`."""
    s = connect_and_ping(path, timeout)
    try:
        data = s.recv(4096)
        return s, b'"ok":true' in data
    except socket.timeout:
        return s, False


def accept_pauses(d):
    """How many times loopd has logged that it could not accept (EMFILE)."""
    with open(d.log_path, errors="replace") as f:
        return f.read().count("accept paused")


def ping_unless_refused(d, patience=30):
    """A connected socket and whether its ping was answered: yes once the
    answer comes, no once loopd logs that it could not accept a connection
    (this one: no other is waiting). Decided by those events, not by how
    fast an answer comes; `patience` seconds bound the wait for either."""
    pauses = accept_pauses(d)
    s = connect_and_ping(d.socket_path)
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        ready, _, _ = select.select([s], [], [], 0.05)
        if ready:
            return s, b'"ok":true' in s.recv(4096)
        if accept_pauses(d) > pauses:
            return s, False
    return s, False


def fd_exhaustion(bindir, checks):
    limit = 64
    section(f"fd exhaustion: loopd with RLIMIT_NOFILE {limit}")
    work = make_workdir("loopd-fd-")
    d = LoopdProcess(bindir, work, fsync=False, limits="max_connections = 1000", extra_toml="""
[actions.hello]
argv = ["/bin/echo", "hello"]
""")
    checks.check(d.start(preexec=set_nofile(limit)), "loopd starts with a low descriptor limit")
    with open(f"/proc/{d.pid}/limits") as f:
        lim = [l for l in f if l.startswith("Max open files")]
    print(f"  info  {lim[0].strip() if lim else '?'}; baseline fds {d.fd_count()}")
    time.sleep(0.2)
    base_fd = d.fd_count()

    held = []  # served connections
    stuck = []  # connected, never answered: accept fails
    for _ in range(limit + 10):
        s, answered = ping_unless_refused(d)
        if answered:
            held.append(s)
        else:
            stuck.append(s)
            break
    print(f"  info  {len(held)} connections served, then accept failed (loopd fds {d.fd_count()})")
    checks.check(bool(stuck) and len(held) >= limit - base_fd - 2,
                 "connections are served up to the descriptor limit, then no more", f"{len(held)} served")
    for _ in range(5):  # a few more waiting in the backlog
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(d.socket_path)
        s.sendall(b'{"id":1,"op":"ping"}\n')
        stuck.append(s)

    cpu0 = d.cpu_seconds()
    time.sleep(2)
    cpu = d.cpu_seconds() - cpu0
    print(f"  info  loopd CPU time over 2 s with {len(stuck)} connections it cannot accept: {cpu:.2f} s")
    checks.check(cpu < 0.3, "accept backs off instead of spinning (CPU < 0.3 s over 2 s)", f"{cpu:.2f} s")
    checks.check(accept_pauses(d) > 0, "loopd logs that accept is paused")

    # Existing clients are still served, also while it cannot accept.
    served = 0
    for i, s in enumerate(held[:10]):
        s.sendall(b'{"id":2,"op":"submit","action":"echo","args":["alive"]}\n')
        data = s.recv(4096)
        served += b'"output":"alive"' in data
    checks.check(served == min(10, len(held)), "connected clients keep being served", f"{served} of 10")
    # An exec job needs descriptors for its cgroup and pipes: it fails, cleanly, saying why.
    s = held[0]
    s.sendall(b'{"id":3,"op":"submit","action":"hello"}\n')
    data = s.recv(4096).decode()
    checks.check('"code":"job_failed"' in data and "Too many open files" in data,
                 "an exec job without descriptors for its pipes fails with job_failed", data.strip())

    # Free some: the waiting connections are accepted and answered.
    for s in held[:20]:
        s.close()
    del held[:20]
    answered = 0
    deadline = time.monotonic() + 30
    for s in stuck:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            answered += b'"ok":true' in s.recv(4096)
        except socket.timeout:
            pass
    checks.check(answered == len(stuck), "waiting clients are served once others close",
                 f"{answered} of {len(stuck)}")
    s2, ok = try_ping(d.socket_path, 30)
    s2.close()
    checks.check(ok, "a new client is served")
    if held:
        held[0].sendall(b'{"id":4,"op":"submit","action":"hello"}\n')
        data = held[0].recv(4096).decode()
        checks.check('"stdout":"hello\\n"' in data, "exec works again once descriptors are free", data.strip())
    for s in held + stuck:
        s.close()
    ok = wait_until(lambda: d.fd_count() <= base_fd, 5, 0.05)
    checks.check(ok, "descriptors return to the baseline", f"{d.fd_count()} vs {base_fd}")
    checks.check(d.terminate() == 0, "loopd stops cleanly")


# ------------------------------------------------------------------ children


def zombies_of(pid):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] == "Z":
            out.append(int(p))
    return out


STUBBORN_GRACE_MS = 300
FLOOD_BYTES = 64 << 20


def stubborn_until_reported(c, checks):
    """Submits `stubborn` until its child's report ("started", printed once
    its TERM handler is in place) came before the timeout's SIGTERM. A round
    where the SIGTERM came first proves nothing about SIGKILL: the child died
    of the SIGTERM, which is checked, and it is tried again with a longer
    timeout. Returns the reply of the round that met the premise, or None."""
    for timeout_ms in (1000, 4000, 16000):
        t0 = time.monotonic()
        r = c.call({"op": "submit", "action": "stubborn", "timeout_ms": timeout_ms})
        took = time.monotonic() - t0
        res = r.get("result") or {}
        if res.get("stdout") == "started\n":
            # Never early: SIGKILL only after the timeout and the grace.
            least = (timeout_ms + STUBBORN_GRACE_MS) / 1000
            checks.check(took >= least, f"the job ended no sooner than timeout + grace ({least:.1f} s): {took:.2f} s")
            return r
        checks.check((r.get("error") or {}).get("code") == "timeout" and res.get("signal") == 15
                     and res.get("stdout") == "",
                     f"with a {timeout_ms} ms timeout the SIGTERM came before the child's handler: it died of it",
                     str(r))
        print(f"  info  the child had not reported within {timeout_ms} ms; again with a longer timeout", flush=True)
    return None


def children(bindir, checks):
    section("children: SIGTERM ignored, output flood (see also ExecTests)")
    work = make_workdir("loopd-children-")
    # The flood ends by itself (no timeout decides how much was written):
    # 64 MiB through a 64 KiB pipe, all of it read, 1000 bytes kept.
    d = LoopdProcess(bindir, work, fsync=False, extra_toml=f"""
[actions.stubborn]
argv = ["/bin/sh", "-c", "trap '' TERM; echo started; while :; do sleep 0.05; done"]
kill_grace_ms = {STUBBORN_GRACE_MS}

[actions.flood]
argv = ["/bin/sh", "-c", "head -c {FLOOD_BYTES} /dev/zero | tr '\\\\0' x"]
env = {{ PATH = "/usr/bin:/bin" }}
output_cap_bytes = 1000
timeout_ms = 600000
""")
    checks.check(d.start(), "loopd starts")
    with Client(d.socket_path, timeout=60) as c:  # a stubborn round takes up to 16.3 s
        r = stubborn_until_reported(c, checks)
        if checks.check(r is not None, "the child reported its TERM handler installed before a timeout fired"):
            res = r.get("result") or {}
            checks.check((r.get("error") or {}).get("code") == "timeout" and res.get("signal") == 9,
                         "a child ignoring SIGTERM is killed with SIGKILL after the grace period", str(r))
            checks.check(res.get("stdout") == "started\n", "its output up to then is kept", str(res.get("stdout")))
        r = c.call({"op": "submit", "action": "flood"})
        res = r.get("result") or {}
        checks.check(r.get("ok") is True and res.get("exit_code") == 0, "the flooding child ran to its end", str(r)[:300])
        checks.check(res.get("stdout") == "x" * 1000 and res.get("stdout_truncated") is True,
                     f"a child flooding {FLOOD_BYTES >> 20} MiB to stdout is capped at output_cap_bytes",
                     f"{len(res.get('stdout', ''))} bytes, truncated {res.get('stdout_truncated')}")
        rss = d.rss_kb()
        checks.check(rss < 200_000, f"loopd's memory stays bounded while it floods (VmRSS {rss} kB)")
        r = c.call({"op": "submit", "action": "echo", "args": ["fine"]})
        checks.check(r.get("result", {}).get("output") == "fine", "the worker goes on with the next job", str(r))
    ok = wait_until(lambda: not zombies_of(d.pid), 10, 0.05)
    checks.check(ok, "no zombie children left", str(zombies_of(d.pid)))
    checks.check(d.terminate() == 0, "loopd stops cleanly")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin")
    ap.add_argument("--only", choices=["disk", "fd", "children"])
    args = ap.parse_args()
    bindir = binary_dir(args.bin)
    checks = Checks("faults")
    print(f"loopd from {bindir}")
    if args.only in (None, "disk"):
        disk_full(bindir, checks)
    if args.only in (None, "fd"):
        fd_exhaustion(bindir, checks)
    if args.only in (None, "children"):
        children(bindir, checks)
    checks.finish()


if __name__ == "__main__":
    main()
