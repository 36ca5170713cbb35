"""10,000 requests pipelined on one connection, every reply matched to its
request: the sync pipeline and the asyncio client."""

import asyncio

import pytest

import loopd

N = 10_000


def test_sync_pipeline_10000_submits(client):
    with client.pipeline() as p:
        handles = [p.submit("echo", [f"job-{i}"], wait=(i % 2 == 0)) for i in range(N)]
        assert len(p) == N
    assert all(h.done() for h in handles)
    waited = [h.result() for h in handles[::2]]
    assert [r.result["output"] for r in waited] == [f"job-{i}" for i in range(0, N, 2)]
    accepted = [h.result() for h in handles[1::2]]
    assert all(r.state in ("queued", "completed") and r.job for r in accepted)
    assert len({h.result().job for h in handles}) == N


def test_sync_pipeline_mixed_operations_and_errors(client):
    p = client.pipeline()
    slow = p.submit("sleep", ["100"], worker="w3")
    ping = p.ping()
    bad = p.submit("no-such-action")
    failed = p.submit("fail", ["x"])
    missing = p.status("nope-1")
    raw = p.request("stats")
    items = p.execute()
    assert items == [slow, ping, bad, failed, missing, raw] and len(p) == 0
    assert slow.result().result == {"slept_ms": 100} and ping.result().pid > 0
    assert isinstance(bad.exception(), loopd.UnknownActionError)
    with pytest.raises(loopd.JobFailedError):
        failed.result()
    assert isinstance(missing.exception(), loopd.UnknownJobError)
    assert raw.result()["ok"] is True and raw.reply["id"]


def test_async_10000_submits(daemon):
    async def main():
        async with loopd.AsyncClient(daemon.socket_path) as c:
            replies = await asyncio.gather(*(c.submit("echo", [f"a-{i}"]) for i in range(N)))
            assert [r.result["output"] for r in replies] == [f"a-{i}" for i in range(N)]
            assert len({r.job for r in replies}) == N
            assert c.in_flight == 0

    asyncio.run(asyncio.wait_for(main(), 300))
