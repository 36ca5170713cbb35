#!/usr/bin/env python3
"""PRIVILEGE, against the real loopd (root needed: the
clients run as `nobody` through runuser/setpriv; skipped with a message
otherwise).

  socket gate   socket_mode "0660", socket_group "daemon": the node has that
                mode and group; `nobody` (not in the group) cannot connect
                (EACCES); `nobody` with the group as primary or supplementary
                group can; root can.
  actions       socket mode 0666, so `nobody` can connect: it may run echo,
                sleep, noop and an exec action with allow_users = ["nobody"]
                or allow_groups = ["daemon"] when it has that group (primary
                or supplementary); it is refused (`forbidden`, no job id) an
                exec action with no allow list (root and loopd's uid only),
                an allow_groups action without the group, and a built-in
                closed with allow_users = []. Root may run everything.
  admin         socket mode 0666: `mode` (a request that changes the daemon
                for everyone) is refused to `nobody` (`forbidden`, the worker
                keeps its mode; loopctl exits 7) while root switches it; with
                server.admin_users = ["nobody"], or admin_groups = ["daemon"]
                and `nobody` holding that group (supplementary), `nobody` may.
  exec children loopd started with a secret in its environment and an
                inherited descriptor without CLOEXEC: an exec child sees
                exactly the action's env, descriptors 0-2 only (stdin
                /dev/null), no blocked or ignored signals, cwd "/". The same
                is checked in-process by Tests/LoopdTests/ExecTests.swift
                (childGetsACleanEnvironmentAndNoInheritedDescriptors).

    Tests/reliability/privilege.py [--bin DIR]
"""

import argparse
import grp
import json
import os
import pwd
import stat
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loopdtest import Checks, Client, LoopdProcess, binary_dir, child_user, is_root, make_workdir, section  # noqa: E402

GROUP = "daemon"  # a group `nobody` is not in, on every Debian system

# Runs as the other user: connects, sends each request, prints the replies
# (or the connect errno) as one JSON line. Passed with -c, so the other user
# needs no access to this checkout.
CLIENT = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(json.dumps({"connect_errno": e.errno}))
    sys.exit(0)
out = []
buf = b""
for req in sys.argv[2:]:
    s.sendall(req.encode() + b"\n")
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    line, _, buf = buf.partition(b"\n")
    out.append(json.loads(line) if line else None)
print(json.dumps({"replies": out}))
"""

NOBODY = ["runuser", "-u", "nobody", "--"]
NOBODY_CLEAN = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
NOBODY_SUPPLEMENTARY = ["setpriv", "--reuid=nobody", "--regid=nogroup", f"--groups={GROUP}", "--"]
NOBODY_PRIMARY = ["setpriv", "--reuid=nobody", f"--regid={GROUP}", "--clear-groups", "--"]


# The system's python3: a private one (pyenv under /root, say) may not be
# readable by the other user.
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"


def as_user(prefix, path, *requests):
    r = subprocess.run(prefix + [PYTHON, "-c", CLIENT, path] + [json.dumps(q) for q in requests],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0 or not r.stdout.strip():
        return {"run_error": (r.stderr or r.stdout).strip()}
    return json.loads(r.stdout)


def submit(action, *args):
    return {"id": action, "op": "submit", "action": action, "args": list(args)}


def socket_gate(bindir, checks):
    section(f'socket gate: socket_mode "0660", socket_group "{GROUP}"')
    work = make_workdir("loopd-priv-gate-", mode=0o755)  # others may reach the node; its mode decides
    d = LoopdProcess(bindir, work, fsync=False, server_extra=f'socket_mode = "0660"\nsocket_group = "{GROUP}"')
    checks.check(d.start(), "loopd starts")
    st = os.stat(d.socket_path)
    gid = grp.getgrnam(GROUP).gr_gid
    checks.check(stat.S_IMODE(st.st_mode) == 0o660 and st.st_gid == gid,
                 f"the socket node is mode 0660, group {GROUP}",
                 f"mode {oct(stat.S_IMODE(st.st_mode))}, gid {st.st_gid}")
    r = as_user(NOBODY, d.socket_path, {"id": 1, "op": "ping"})
    checks.check(r.get("connect_errno") == 13, "nobody (runuser, not in the group) cannot connect: EACCES", str(r))
    r = as_user(NOBODY_CLEAN, d.socket_path, {"id": 1, "op": "ping"})
    checks.check(r.get("connect_errno") == 13, "nobody with no groups (setpriv) cannot connect: EACCES", str(r))
    loopctl = os.path.join(bindir, "loopctl")
    if os.access(loopctl, os.X_OK):
        r = subprocess.run(NOBODY + [loopctl, "ping", "--socket", d.socket_path], capture_output=True, text=True,
                           timeout=30)
        checks.check(r.returncode == 3, "loopctl as nobody: cannot connect (exit 3)",
                     f"exit {r.returncode}: {r.stderr.strip()}")
        r = subprocess.run(NOBODY_SUPPLEMENTARY + [loopctl, "ping", "--socket", d.socket_path], capture_output=True,
                           text=True, timeout=30)
        checks.check(r.returncode == 0, f"loopctl as nobody with group {GROUP}: ping answered",
                     f"exit {r.returncode}: {r.stderr.strip()}")
    else:
        checks.skip("loopctl as nobody", f"no loopctl in {bindir}")
    r = as_user(NOBODY_SUPPLEMENTARY, d.socket_path, {"id": 1, "op": "ping"}, submit("echo", "hi"))
    rep = r.get("replies") or [{}, {}]
    checks.check(rep[0].get("ok") is True and (rep[1].get("result") or {}).get("output") == "hi",
                 f"nobody with {GROUP} as a supplementary group connects and runs echo", str(r))
    r = as_user(NOBODY_PRIMARY, d.socket_path, {"id": 1, "op": "ping"})
    checks.check((r.get("replies") or [{}])[0].get("ok") is True,
                 f"nobody with {GROUP} as its primary group connects", str(r))
    with Client(d.socket_path) as c:
        checks.check(c.call({"op": "ping"}).get("ok") is True, "root connects")
    checks.check(d.terminate() == 0, "loopd stops cleanly")


ACTIONS = f"""
# No allow keys: root and loopd's own uid only.
[actions.rootonly]
argv = ["/usr/bin/id", "-u"]

[actions.fornobody]
argv = ["/usr/bin/id", "-u"]
allow_users = ["nobody"]

[actions.forgroup]
argv = ["/usr/bin/id", "-u"]
allow_groups = ["{GROUP}"]

# A built-in closed explicitly.
[actions.fail]
allow_users = []
"""


def action_policy(bindir, checks):
    section("actions: who may run what (socket mode 0666)")
    work = make_workdir("loopd-priv-act-", mode=0o755)
    d = LoopdProcess(bindir, work, fsync=False, server_extra='socket_mode = "0666"', extra_toml=ACTIONS)
    checks.check(d.start(), "loopd starts")
    reqs = [submit("echo", "a", "b"), submit("sleep", "1"), submit("noop"), submit("fornobody"),
            submit("rootonly"), submit("forgroup"), submit("fail", "x")]
    r = as_user(NOBODY_CLEAN, d.socket_path, *reqs)
    rep = {x["id"]: x for x in r.get("replies") or [] if x}
    ok = lambda k: (rep.get(k) or {}).get("ok") is True  # noqa: E731
    forbidden = lambda k: ((rep.get(k) or {}).get("error") or {}).get("code") == "forbidden" \
        and "job" not in rep[k]  # noqa: E731
    checks.check(ok("echo") and rep["echo"]["result"]["output"] == "a b", "nobody may run echo", str(rep.get("echo")))
    checks.check(ok("sleep") and ok("noop"), "nobody may run sleep and noop", f"{rep.get('sleep')} {rep.get('noop')}")
    child_uid = pwd.getpwnam(child_user()).pw_uid if child_user() else os.geteuid()
    checks.check(ok("fornobody") and rep["fornobody"]["result"]["stdout"] == f"{child_uid}\n",
                 'nobody may run an exec action with allow_users = ["nobody"] (the child runs as [exec] user, not as loopd)',
                 str(rep.get("fornobody")))
    checks.check(forbidden("rootonly"), "nobody is refused an exec action without allow lists: forbidden, no job",
                 str(rep.get("rootonly")))
    checks.check(forbidden("forgroup"), f"nobody without group {GROUP} is refused an allow_groups action",
                 str(rep.get("forgroup")))
    checks.check(forbidden("fail"), "nobody is refused a built-in closed with allow_users = []", str(rep.get("fail")))

    r = as_user(NOBODY_PRIMARY, d.socket_path, submit("forgroup"), submit("rootonly"))
    rep = {x["id"]: x for x in r.get("replies") or [] if x}
    checks.check(ok("forgroup"), f"nobody with primary group {GROUP} may run the allow_groups action",
                 str(rep.get("forgroup")))
    checks.check(forbidden("rootonly"), "but still not the root-only action", str(rep.get("rootonly")))
    r = as_user(NOBODY_SUPPLEMENTARY, d.socket_path, submit("forgroup"))
    rep = {x["id"]: x for x in r.get("replies") or [] if x}
    checks.check(ok("forgroup"), f"nobody with supplementary group {GROUP} may run the allow_groups action "
                 "(allow_groups: primary or supplementary)", str(rep.get("forgroup")))

    with Client(d.socket_path) as c:
        results = {a: c.call(submit(a)) for a in ("rootonly", "fornobody", "forgroup")}
        results["fail"] = c.call(submit("fail", "x"))
    checks.check(all(results[a].get("ok") is True for a in ("rootonly", "fornobody", "forgroup"))
                 and (results["fail"].get("error") or {}).get("code") == "job_failed",
                 "root may run every action", str(results))
    # PROTOCOL.md, error codes: a job's status and cancel belong to its
    # submitter's uid (and the administrators'); to anyone else the job
    # does not exist, answered as an id never given out is.
    job = results["rootonly"].get("job")
    missing = "0000000000000"
    r = as_user(NOBODY_CLEAN, d.socket_path, {"id": "s", "op": "status", "job": job},
                {"id": "s", "op": "status", "job": missing})
    rep = r.get("replies") or [{}, {}]
    checks.check((rep[0].get("error") or {}).get("code") == "unknown_job" and "result" not in rep[0]
                 and rep[0] == rep[1], "nobody may not read the status of root's job: unknown_job, as a missing id",
                 str(rep))
    r = as_user(NOBODY_CLEAN, d.socket_path, {"id": "c", "op": "cancel", "job": job},
                {"id": "c", "op": "cancel", "job": missing})
    rep = r.get("replies") or [{}, {}]
    checks.check((rep[0].get("error") or {}).get("code") == "unknown_job" and rep[0] == rep[1],
                 "nobody may not cancel root's job: unknown_job, as a missing id", str(rep))
    checks.check(d.terminate() == 0, "loopd stops cleanly")


def mode(worker, to, rid="m"):
    return {"id": rid, "op": "mode", "worker": worker, "mode": to}


def worker_modes(path):
    with Client(path) as c:
        return {w["name"]: w["mode"] for w in c.call({"op": "workers"}).get("workers") or []}


def admin(bindir, checks):
    section("admin: who may switch a worker's mode (socket mode 0666)")
    work = make_workdir("loopd-priv-admin-", mode=0o755)
    d = LoopdProcess(bindir, work, fsync=False, server_extra='socket_mode = "0666"')
    checks.check(d.start(), "loopd starts without admin keys (root and loopd's uid administer)")
    r = as_user(NOBODY_CLEAN, d.socket_path, mode("w1", "maintenance"))
    rep = (r.get("replies") or [{}])[0] or {}
    checks.check((rep.get("error") or {}).get("code") == "forbidden" and rep.get("id") == "m",
                 "nobody's mode is refused: forbidden", str(r))
    checks.check(worker_modes(d.socket_path).get("w1") == "default", "and the worker keeps its mode")
    r = as_user(NOBODY_SUPPLEMENTARY, d.socket_path, mode("w1", "maintenance"))
    rep = (r.get("replies") or [{}])[0] or {}
    checks.check((rep.get("error") or {}).get("code") == "forbidden",
                 f"nobody with group {GROUP} is refused too (no admin_groups)", str(r))
    loopctl = os.path.join(bindir, "loopctl")
    if os.access(loopctl, os.X_OK):
        p = subprocess.run(NOBODY_CLEAN + [loopctl, "mode", "--socket", d.socket_path, "w1", "maintenance"],
                           capture_output=True, text=True, timeout=30)
        checks.check(p.returncode == 7 and "only an administrator" in p.stderr,
                     "loopctl mode as nobody: exit 7 with the reason", f"exit {p.returncode}: {p.stderr.strip()}")
    else:
        checks.skip("loopctl mode as nobody", f"no loopctl in {bindir}")
    with Client(d.socket_path) as c:
        rep = c.call(mode("w1", "maintenance"))
    checks.check(rep.get("ok") is True and rep.get("previous") == "default", "root switches the mode", str(rep))
    checks.check(d.terminate() == 0, "loopd stops cleanly")

    work = make_workdir("loopd-priv-admin2-", mode=0o755)
    d = LoopdProcess(bindir, work, fsync=False,
                     server_extra=f'socket_mode = "0666"\nadmin_users = ["nobody"]\nadmin_groups = ["{GROUP}"]')
    checks.check(d.start(), f'loopd starts with admin_users = ["nobody"], admin_groups = ["{GROUP}"]')
    r = as_user(NOBODY_CLEAN, d.socket_path, mode("w1", "maintenance"))
    rep = (r.get("replies") or [{}])[0] or {}
    checks.check(rep.get("ok") is True and rep.get("mode") == "maintenance", "nobody, in admin_users, switches the mode",
                 str(r))
    checks.check(d.terminate() == 0, "loopd stops cleanly")

    work = make_workdir("loopd-priv-admin3-", mode=0o755)
    d = LoopdProcess(bindir, work, fsync=False, server_extra=f'socket_mode = "0666"\nadmin_groups = ["{GROUP}"]')
    checks.check(d.start(), f'loopd starts with admin_groups = ["{GROUP}"]')
    r = as_user(NOBODY_CLEAN, d.socket_path, mode("w1", "maintenance"))
    rep = (r.get("replies") or [{}])[0] or {}
    checks.check((rep.get("error") or {}).get("code") == "forbidden", f"nobody without {GROUP} is still refused", str(r))
    r = as_user(NOBODY_SUPPLEMENTARY, d.socket_path, mode("w1", "maintenance"))
    rep = (r.get("replies") or [{}])[0] or {}
    checks.check(rep.get("ok") is True, f"nobody with {GROUP} as a supplementary group switches the mode", str(r))
    checks.check(d.terminate() == 0, "loopd stops cleanly")


EXEC_ACTIONS = """
[actions.env]
argv = ["/usr/bin/env"]
env = { ONLY = "this" }

[actions.fds]
argv = ["/bin/ls", "/proc/self/fd"]

[actions.stdin]
argv = ["/usr/bin/readlink", "/proc/self/fd/0"]

[actions.signals]
argv = ["/bin/grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"]

[actions.cwd]
argv = ["/bin/pwd"]
"""


def exec_children(bindir, checks):
    section("exec children: clean environment, no inherited descriptors (real binary)")
    work = make_workdir("loopd-priv-exec-")
    d = LoopdProcess(bindir, work, fsync=False, extra_toml=EXEC_ACTIONS)
    # A descriptor loopd inherits without CLOEXEC, and a secret in its environment.
    leak_r, leak_w = os.pipe()
    started = d.start(pass_fds=(leak_w,), env=dict(os.environ, LOOPD_TEST_SECRET="hunter2"))
    os.close(leak_r)
    checks.check(started, "loopd starts with an extra inherited descriptor and a secret in its environment")
    with open(f"/proc/{d.pid}/environ", "rb") as f:
        has_secret = b"LOOPD_TEST_SECRET=hunter2" in f.read()
    has_fd = str(leak_w) in os.listdir(f"/proc/{d.pid}/fd")
    checks.check(has_secret and has_fd, f"loopd itself holds both (fd {leak_w}), so the checks below can fail",
                 f"secret {has_secret}, fd {has_fd}")
    os.close(leak_w)
    with Client(d.socket_path) as c:
        out = {a: (c.call(submit(a)).get("result") or {}).get("stdout") for a in
               ("env", "fds", "stdin", "signals", "cwd")}
    checks.check(out["env"] == "ONLY=this\n", "the child's environment is exactly the action's env", repr(out["env"]))
    checks.check(out["fds"] == "0\n1\n2\n3\n", "the child has descriptors 0, 1, 2 only (3 is ls's own directory)",
                 repr(out["fds"]))
    checks.check(out["stdin"] == "/dev/null\n", "the child's stdin is /dev/null", repr(out["stdin"]))
    masks = dict(line.split(":\t") for line in (out["signals"] or "").splitlines() if ":\t" in line)
    # glibc's posix_spawn leaves its two internal signals (32 SIGCANCEL, 33
    # SIGSETXID: bits 31 and 32) ignored in every child it starts (Python's
    # os.posix_spawn shows the same); POSIX_SPAWN_SETSIGDEF cannot name them.
    glibc_internal = (1 << 31) | (1 << 32)
    blocked = int(masks.get("SigBlk", "ff"), 16)
    ignored = int(masks.get("SigIgn", "ff"), 16) & ~glibc_internal
    checks.check(blocked == 0 and ignored == 0,
                 "the child starts with no blocked and no ignored signals (but glibc's internal 32, 33)",
                 repr(out["signals"]))
    checks.check(out["cwd"] == "/\n", 'the child runs in cwd "/" by default', repr(out["cwd"]))
    checks.check(d.terminate() == 0, "loopd stops cleanly")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin")
    args = ap.parse_args()
    bindir = binary_dir(args.bin)
    checks = Checks("privilege")
    print(f"loopd from {bindir}")
    if not is_root():
        checks.skip("socket gate, action policy and admin", "need root to run clients as nobody (runuser/setpriv)")
    else:
        socket_gate(bindir, checks)
        action_policy(bindir, checks)
        admin(bindir, checks)
    exec_children(bindir, checks)
    checks.finish()


if __name__ == "__main__":
    main()
