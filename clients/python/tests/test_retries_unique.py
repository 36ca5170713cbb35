"""Retries with backoff and unique jobs (submit's retries, retry_backoff_ms, unique_key)."""

import threading

import pytest

import loopd


def test_submit_request_carries_the_new_fields():
    req = loopd.types.submit_request("fail", retries=3, retry_backoff_ms=250, unique_key="nightly")
    assert req == {"op": "submit", "action": "fail", "retries": 3, "retry_backoff_ms": 250, "unique_key": "nightly"}
    assert "retries" not in loopd.types.submit_request("noop")


def test_a_failing_job_uses_every_attempt_and_keeps_their_errors(client):
    with pytest.raises(loopd.JobFailedError) as e:
        client.submit("fail", ["boom"], retries=2, retry_backoff_ms=1)
    assert e.value.state == "failed" and e.value.attempt == 3 and not e.value.duplicate
    st = client.status(e.value.job)
    assert st.attempt == 3 and st.retries == 2
    assert st.last_error == loopd.ErrorInfo("job_failed", "boom")
    assert [a.attempt for a in st.attempts] == [1, 2, 3]
    assert all(a.code == "job_failed" and a.finished_at is not None for a in st.attempts)


def test_a_timeout_on_the_last_attempt_ends_timed_out(client):
    with pytest.raises(loopd.JobTimeoutError) as e:
        client.submit("sleep", ["5000"], timeout_ms=10, retries=1, retry_backoff_ms=1)
    assert e.value.state == "timed_out" and e.value.attempt == 2


def test_a_plain_job_has_attempt_one(client):
    r = client.submit("echo", ["x"])
    assert r.attempt is None and not r.duplicate
    st = client.status(r.job)
    assert st.attempt == 1 and st.retries == 0 and st.last_error is None and st.attempts == ()


def test_a_unique_key_returns_the_first_job(client):
    first = client.submit("echo", ["once"], wait=False, unique_key="py-key-1")
    assert not first.duplicate
    again = client.submit("echo", ["twice"], unique_key="py-key-1")
    assert again.duplicate and again.job == first.job
    assert again.state == "completed" and again.result == {"output": "once"}
    assert client.status(first.job).unique_key == "py-key-1"


def test_racing_submits_with_one_key_make_one_job(daemon):
    replies = []
    lock = threading.Lock()

    def submit():
        with loopd.Client(daemon.socket_path, timeout=60) as c:
            r = c.submit("sleep", ["50"], wait=False, unique_key="py-race")
            with lock:
                replies.append(r)

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({r.job for r in replies}) == 1
    assert sum(1 for r in replies if not r.duplicate) == 1


def test_hostile_values_are_bad_requests(client):
    with pytest.raises(loopd.BadRequestError, match="limits.max_retries"):
        client.submit("noop", retries=1000)
    with pytest.raises(loopd.BadRequestError, match="retries"):
        client.submit("noop", retries=-1)
    with pytest.raises(loopd.BadRequestError, match="limits.max_unique_key_bytes"):
        client.submit("noop", unique_key="k" * 300)


async def _async_submit(path):
    async with loopd.AsyncClient(path) as c:
        first = await c.submit("echo", ["a"], unique_key="py-async", retries=1, retry_backoff_ms=1)
        second = await c.submit("echo", ["b"], unique_key="py-async", wait=False)
        return first, second


def test_async_client_passes_the_fields(daemon):
    import asyncio
    first, second = asyncio.run(_async_submit(daemon.socket_path))
    assert first.attempt == 1 and not first.duplicate
    assert second.duplicate and second.job == first.job and second.state == "completed"
