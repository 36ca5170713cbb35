"""Every error code a client can make loopd answer, as its exception class.

Reached here: bad_request, unknown_op, unknown_action, unknown_worker,
unknown_job, queue_full, quota_exceeded and forbidden (as root: a child
process that becomes `nobody`), too_large, timeout, job_failed, cancelled, shutting_down, busy,
journal_unavailable (as root: loopd's state directory on a 1 MiB tmpfs,
filled up, as in Tests/reliability/faults.py).

Not reachable from a client: internal (a fault inside the daemon)."""

import errno
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

import loopd
from conftest import Daemon, as_nobody


@pytest.mark.parametrize("request_fields", [
    {"op": "submit", "action": "echo", "colour": "blue"},          # unknown field
    {"op": "submit", "action": "echo", "worker": "w1", "key": "k"},  # worker with key
    {"op": "submit", "action": "sleep", "args": ["soon"]},        # an argument the action does not take
    {"op": "jobs", "state": "sleeping"},                          # unknown state name
    {"op": "jobs", "since": "yesterday"},                         # not RFC 3339
    {"op": "jobs", "limit": 0},                                   # out of range
])
def test_bad_request(client, request_fields):
    with pytest.raises(loopd.BadRequestError) as e:
        client.request(**request_fields)
    assert e.value.code == "bad_request" and e.value.message
    assert client.ping()  # the connection carries on


def test_bad_request_through_the_typed_methods(client):
    with pytest.raises(loopd.BadRequestError):
        client.submit("echo", worker="w1", key="k")
    with pytest.raises(loopd.BadRequestError):
        client.jobs(limit=5000)
    with pytest.raises(loopd.BadRequestError):
        client.submit("noop", delay_ms=-1)


def test_unknown_op(client):
    with pytest.raises(loopd.UnknownOpError):
        client.request("frobnicate")


def test_unknown_action(client):
    with pytest.raises(loopd.UnknownActionError):
        client.submit("no-such-action")


@pytest.mark.parametrize("call", [
    lambda c: c.submit("echo", worker="w9"),
    lambda c: c.inspect("w9"),
    lambda c: c.mode("w9", "maintenance"),
    lambda c: c.jobs(worker="w9"),
])
def test_unknown_worker(client, call):
    with pytest.raises(loopd.UnknownWorkerError):
        call(client)


@pytest.mark.parametrize("op", ["status", "wait", "cancel"])
def test_unknown_job(client, op):
    with pytest.raises(loopd.UnknownJobError):
        getattr(client, op)("nope-1")


def test_timeout_carries_the_job(client):
    with pytest.raises(loopd.JobTimeoutError) as e:
        client.submit("sleep", ["2000"], timeout_ms=50)
    err = e.value
    assert isinstance(err, loopd.JobError) and err.state == "timed_out" and err.job and err.result == {}


def test_job_failed_builtin_and_exec(client):
    with pytest.raises(loopd.JobFailedError) as e:
        client.submit("fail", ["why"])
    assert e.value.message == "why" and e.value.state == "failed"
    with pytest.raises(loopd.JobFailedError) as e:
        client.submit("exit3")
    assert e.value.result["exit_code"] == 3


def test_cancelled_while_waiting(daemon, client):
    j = client.submit("sleep", ["5000"], worker="w3", wait=False)
    errors = []

    def waiter():
        with loopd.Client(daemon.socket_path, timeout=30) as w:
            try:
                w.wait(j.job)
            except loopd.LoopdError as e:
                errors.append(e)

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.2)
    client.cancel(j.job)
    t.join(30)
    assert len(errors) == 1 and isinstance(errors[0], loopd.JobCancelledError)
    assert errors[0].state == "cancelled" and errors[0].job == j.job


def test_too_large_closes_the_connection(client):
    with pytest.raises(loopd.TooLargeError):
        client.submit("echo", ["x" * 70_000])
    assert not client.connected
    with pytest.raises(loopd.ConnectionClosedError, match="after too_large"):
        client.ping()
    client.reconnect()
    assert client.ping()


def test_too_large_async(daemon):
    import asyncio

    async def main():
        async with loopd.AsyncClient(daemon.socket_path) as c:
            ok = asyncio.ensure_future(c.submit("sleep", ["200"]))
            await asyncio.sleep(0.05)
            with pytest.raises(loopd.TooLargeError):
                await c.submit("echo", ["x" * 70_000])
            assert (await ok).state == "completed"  # answered before the daemon closed
            with pytest.raises(loopd.ConnectionClosedError):
                await c.ping()
            await c.reconnect()
            assert await c.ping()

    asyncio.run(main())


def test_queue_full(make_daemon):
    d = make_daemon(limits="max_queued_jobs_per_worker = 2")
    with loopd.Client(d.socket_path, timeout=10) as c:
        for _ in range(2):
            c.submit("noop", worker="w1", wait=False, delay_ms=60_000)
        with pytest.raises(loopd.QueueFullError):
            c.submit("noop", worker="w1", wait=False, delay_ms=60_000)
        assert c.submit("noop", worker="w2").state == "completed"


def test_busy(make_daemon):
    d = make_daemon(limits="max_connections = 1")
    first = loopd.Client(d.socket_path, timeout=10)
    for _ in range(100):  # until loopd has noticed that the start-up ping's connection closed
        try:
            first.ping()
            break
        except loopd.BusyError:
            time.sleep(0.02)
            first.reconnect()
    with first:
        assert first.ping()
        second = loopd.Client(d.socket_path, timeout=10)
        with pytest.raises(loopd.BusyError):
            second.ping()
        with pytest.raises(loopd.ConnectionClosedError):
            second.ping()
        assert first.ping()

        import asyncio

        async def main():
            c = await loopd.AsyncClient(d.socket_path).connect()
            with pytest.raises(loopd.BusyError):
                await c.ping()
            await c.close()

        asyncio.run(main())


def test_shutting_down(make_daemon):
    d = make_daemon(server="shutdown_grace_ms = 10000")
    with loopd.Client(d.socket_path, timeout=10) as c:
        c.submit("sleep", ["1500"], worker="w1", wait=False)
        time.sleep(0.1)
        d.signal(signal.SIGTERM)  # loopd lets the running job finish
        time.sleep(0.3)
        with pytest.raises(loopd.ShuttingDownError):
            c.submit("echo", ["late"])
    assert d.proc.wait(30) == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another uid")
def test_another_uids_job_is_unknown_and_their_actions_forbidden(daemon, client):
    """Another user's job does not exist for nobody (unknown_job, as a
    missing one); the actions and requests nobody may not use are forbidden."""
    job = client.submit("noop", wait=False, delay_ms=60_000).job

    def requests():  # which error each request got
        got = {}
        with loopd.Client(daemon.socket_path, timeout=10) as c:
            for name, call in [("mode", lambda: c.mode("w1", "maintenance")),
                               ("status", lambda: c.status(job)),
                               ("wait", lambda: c.wait(job)),
                               ("cancel", lambda: c.cancel(job)),
                               ("exec", lambda: c.submit("rootonly")),
                               ("echo", lambda: c.submit("echo", ["ok"]))]:
                try:
                    call()
                    got[name] = "ok"
                except loopd.LoopdError as e:
                    got[name] = type(e).__name__
        return got
    got = as_nobody(requests)
    client.cancel(job)
    assert got == {"mode": "ForbiddenError", "status": "UnknownJobError", "wait": "UnknownJobError",
                   "cancel": "UnknownJobError", "exec": "ForbiddenError", "echo": "ok"}


def test_quota_exceeded_for_a_user_past_its_quotas(make_daemon):
    """quotas bind every uid but root and loopd's own: nobody's second job
    and second connection are refused with QuotaExceededError, naming the
    quota; its first job is kept."""
    daemon = make_daemon(server='socket_mode = "0666"', quotas="max_jobs = 1\nmax_connections = 1")

    def requests():  # what each request got
        got = {}
        with loopd.Client(daemon.socket_path, timeout=10) as c:
            kept = c.submit("noop", wait=False, delay_ms=60_000).job
            for name, call in [("second_job", lambda: c.submit("noop", wait=False)),
                               ("second_connection", lambda: loopd.Client(daemon.socket_path, timeout=10).ping())]:
                try:
                    call()
                    got[name] = "ok"
                except loopd.LoopdError as e:
                    got[name] = [type(e).__name__, e.code, "quotas.max_" in e.message]
            got["kept"] = c.status(kept).state
        return got
    got = as_nobody(requests)
    assert got == {"second_job": ["QuotaExceededError", "quota_exceeded", True],
                   "second_connection": ["QuotaExceededError", "quota_exceeded", True],
                   "kept": "delayed"}


def _fill(directory):
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


@pytest.fixture
def tmpfs_daemon():
    """A private loopd whose state directory is a 1 MiB tmpfs; stopped, the
    tmpfs unmounted and the directory removed after the test, however it ends."""
    work = tempfile.mkdtemp(prefix="loopd-py-")
    state = os.path.join(work, "state")
    os.mkdir(state, 0o700)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", state],
                       capture_output=True, text=True)
    if r.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[0]
        pytest.skip(f"mount -t tmpfs failed (no privilege to mount here?): {why}")
    d = Daemon(work)
    try:
        yield d.start()
    finally:
        d.stop()
        subprocess.run(["umount", "-l", state], check=False)
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount a tmpfs")
def test_journal_unavailable_on_a_full_state_disk(tmpfs_daemon):
    """docs/PROTOCOL.md, submit: a durable job is acknowledged only once it is
    journaled; when the journal cannot be written the submit raises
    JournalUnavailableError, with no job in the reply for wait=False and with
    the failed job, which never runs, for a waited submit, while non-durable
    jobs keep working on the same connection. docs/clients/python.md,
    Retries: a JournalUnavailableError with no job created nothing, so the
    submit can be sent again once the disk has room."""
    state = os.path.join(tmpfs_daemon.workdir, "state")
    with loopd.Client(tmpfs_daemon.socket_path, timeout=60) as c:
        assert c.submit("echo", ["room"], durable=True).result["output"] == "room"

        filler = _fill(state)
        # A commit may still fit in the last page of journal.log: submit until
        # the first refusal (bounded).
        refused = None
        for i in range(200):
            try:
                c.submit("echo", [f"probe{i}"], durable=True, wait=False)
            except loopd.JournalUnavailableError as e:
                refused = e
                break
        assert refused is not None, "no durable submit was refused on the full disk"
        assert refused.code == "journal_unavailable" and refused.message and "job" not in refused.reply

        # Waited for: the job got an id, failed without running, and says why.
        with pytest.raises(loopd.JournalUnavailableError) as e:
            c.submit("echo", ["never"], durable=True)
        assert e.value.reply.get("state") == "failed" and e.value.reply.get("result") == {}
        status = c.status(e.value.reply["job"])
        assert status.state == "failed" and status.error is not None
        assert status.error.code == "journal_unavailable" and status.started_at is None

        # Non-durable jobs on the same connection: accepted and run.
        assert c.submit("echo", ["still", "here"]).result["output"] == "still here"
        plain = c.submit("echo", ["later"], wait=False)
        assert c.wait(plain.job).result["output"] == "later"
        assert c.connected and c.ping()

        # The asyncio client raises the same class.
        import asyncio

        async def main():
            async with loopd.AsyncClient(tmpfs_daemon.socket_path) as a:
                with pytest.raises(loopd.JournalUnavailableError):
                    await a.submit("echo", ["async"], durable=True, wait=False)
                assert (await a.submit("echo", ["async"])).result["output"] == "async"

        asyncio.run(main())

        # Room again: the refused submit, sent again, is journaled and runs.
        os.unlink(filler)
        assert c.submit("echo", ["again"], durable=True).result["output"] == "again"
