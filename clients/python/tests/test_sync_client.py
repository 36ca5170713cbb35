"""Every operation through the blocking Client against a real loopd."""

import os
import time
from datetime import datetime, timedelta, timezone

import pytest

import loopd
from loopd import JobState


def test_ping(client):
    p = client.ping()
    assert p.pid > 0 and p.version.count(".") == 2


def test_submit_waits_and_returns_the_result(client):
    r = client.submit("echo", ["hello", "world"])
    assert r.state == JobState.COMPLETED == "completed" and r.finished
    assert r.result == {"output": "hello world"} and r.worker and r.job


def test_submit_every_field(client):
    r = client.submit("echo", ["x"], worker="w2", wait=False, delay_ms=50, timeout_ms=5000, mode="common",
                      durable=True)
    assert r.state == "delayed" and r.worker == "w2" and r.result is None and not r.finished
    done = client.wait(r.job)
    assert done.state == "completed" and done.result == {"output": "x"}
    st = client.status(r.job)
    assert st.durable and st.action == "echo" and st.worker == "w2"
    assert st.queue_ms is not None and st.queue_ms >= 40


def test_submit_by_key_lands_on_one_worker(client):
    workers = {client.submit("noop", key="user-7").worker for _ in range(5)}
    assert len(workers) == 1


def test_exec_action_result(client):
    r = client.submit("printf", ["a b"])
    assert r.result["exit_code"] == 0 and r.result["stdout"] == "a b\n"


def test_wait_with_timeout_returns_the_current_state(client):
    j = client.submit("sleep", ["400"], worker="w3", wait=False)
    r = client.wait(j.job, timeout_ms=50)
    assert r.state in ("queued", "running") and not r.finished and r.result is None
    assert client.wait(j.job).result == {"slept_ms": 400}


def test_status_times_and_result(client):
    j = client.submit("sleep", ["20"])
    st = client.status(j.job)
    assert st.state == "completed" and st.finished and st.result == {"slept_ms": 20}
    assert st.submitted_at <= st.started_at <= st.finished_at
    assert st.submitted_at.tzinfo is not None and st.run_ms >= 20 and st.error is None
    # status (not jobs) names the arguments and who submitted the job.
    assert st.args == ("20",) and st.submitted_by == os.geteuid()
    listed = [x for x in client.jobs(since=st.submitted_at, limit=1000).jobs if x.job == j.job]
    assert listed and listed[0].args is None and listed[0].submitted_by is None


def test_status_of_a_failed_job_carries_its_error(client):
    with pytest.raises(loopd.JobFailedError) as e:
        client.submit("fail", ["boom"])
    st = client.status(e.value.job)
    assert st.state == "failed" and st.error == loopd.ErrorInfo("job_failed", "boom")


def test_cancel_before_it_starts_and_after_it_ended(client):
    j = client.submit("noop", wait=False, delay_ms=60_000)
    c = client.cancel(j.job)
    assert c.cancelled and c.state == "cancelled" and not c.started
    done = client.submit("noop")
    c = client.cancel(done.job)
    assert not c.cancelled and c.state == "completed" and c.started


def test_cancel_a_running_job(client):
    j = client.submit("sleep", ["5000"], worker="w3", wait=False)
    time.sleep(0.1)
    c = client.cancel(j.job)
    assert c.cancelled and c.started and c.state == "cancelled"
    assert client.status(j.job).cancelled_by is not None


def test_jobs_filters_pages_and_iterator(client):
    since = datetime.now(timezone.utc) - timedelta(seconds=1)
    ids = [client.submit("echo", [str(i)], worker="w1").job for i in range(7)]
    page = client.jobs(state="completed", worker="w1", action="echo", since=since, limit=3)
    assert len(page.jobs) == 3 and page.next_cursor
    assert all(j.state == "completed" and j.worker == "w1" and j.action == "echo" for j in page.jobs)
    assert all(j.result is None for j in page.jobs)
    nxt = client.jobs(state=["completed"], worker="w1", action="echo", since=since, limit=3,
                      cursor=page.next_cursor)
    assert not {j.job for j in nxt.jobs} & {j.job for j in page.jobs}
    listed = [j.job for j in client.iter_jobs(["completed", "failed"], worker="w1", action="echo", since=since,
                                              limit=2)]
    assert listed[-7:] == ids and len(listed) == len(set(listed))
    assert [j.job for j in client.iter_jobs(since=since.isoformat())][-7:] == ids


def test_workers(client):
    ws = {w.name: w for w in client.workers()}
    assert set(ws) == {"w1", "w2", "w3", "ops"}
    assert ws["ops"].placement == "explicit" and ws["w1"].placement == "auto"
    assert ws["w1"].mode == "default" and ws["w1"].loop in ("waiting", "busy")


def test_inspect(client):
    assert "current mode" in client.inspect("w1")


def test_mode_switch_holds_and_releases_jobs(client):
    m = client.mode("ops", "maintenance")
    assert (m.worker, m.mode, m.previous) == ("ops", "maintenance", "default")
    try:
        j = client.submit("echo", ["held"], worker="ops", wait=False)
        assert j.state == "held"
    finally:
        assert client.mode("ops", "default").previous == "maintenance"
    assert client.wait(j.job).result == {"output": "held"}


def test_priority_orders_waiting_jobs(client):
    # Held jobs start by priority once their mode comes, not in the order
    # they were submitted: the better one has ended before the other starts.
    client.mode("ops", "maintenance")
    try:
        low = client.submit("noop", worker="ops", wait=False, priority=10)
        high = client.submit("sleep", ["20"], worker="ops", wait=False, priority=1)
        assert client.status(low.job).raw["priority"] == 10
    finally:
        client.mode("ops", "default")
    assert client.wait(high.job).state == "completed" and client.wait(low.job).state == "completed"
    assert client.status(high.job).finished_at <= client.status(low.job).started_at


def test_a_held_job_expires_with_its_own_error(client):
    client.mode("ops", "maintenance")
    try:
        j = client.submit("noop", worker="ops", wait=False, expires_in_ms=50)
        with pytest.raises(loopd.JobExpiredError) as e:
            client.wait(j.job, timeout_ms=10_000)
        assert e.value.state == JobState.EXPIRED and JobState.EXPIRED.is_final
    finally:
        client.mode("ops", "default")


def test_stats(client):
    before = client.stats().accepted
    client.submit("noop")
    s = client.stats()
    assert s.accepted == before + 1 and s.connections >= 1 and "p50" in s.latency_us
    assert "bytes" in s.journal and "jobs" in s.retained and s.raw["ok"] is True


def test_metrics(client):
    m = client.metrics()
    assert m.content_type.startswith("text/plain") and "loopd_connections_open" in m.text


def test_raw_request(client):
    assert client.request("ping")["pid"] == client.ping().pid


def test_client_timeout_leaves_the_connection_usable(daemon):
    with loopd.Client(daemon.socket_path, timeout=0.2) as c:
        with pytest.raises(loopd.ClientTimeoutError):
            c.submit("sleep", ["600"], worker="w3")
        assert c.connected
        c.timeout = 5
        time.sleep(0.6)  # the late reply arrives and is dropped
        assert c.submit("echo", ["after"]).result == {"output": "after"}


def test_connect_error_is_clear(tmp_path):
    with pytest.raises(loopd.LoopdConnectionError, match="cannot connect to loopd at"):
        loopd.Client(str(tmp_path / "nothing.sock"))
