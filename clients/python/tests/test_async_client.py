"""The asyncio client: every operation, many tasks on one connection,
back-pressure, cancellation mid-request."""

import asyncio
import time

import pytest

import loopd


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_every_operation(daemon):
    async def main():
        async with loopd.AsyncClient(daemon.socket_path) as c:
            assert (await c.ping()).pid > 0
            r = await c.submit("echo", ["a", "b"], worker="w1", timeout_ms=5000, mode="common", durable=True)
            assert r.result == {"output": "a b"} and r.worker == "w1"
            j = await c.submit("sleep", ["50"], key="k", wait=False, delay_ms=10)
            assert j.state == "delayed"
            assert (await c.wait(j.job, timeout_ms=5000)).state == "completed"
            assert (await c.status(j.job)).result == {"slept_ms": 50}
            d = await c.submit("noop", wait=False, delay_ms=60_000)
            assert (await c.cancel(d.job)).cancelled
            page = await c.jobs(state=["completed", "cancelled"], limit=1)
            assert len(page.jobs) == 1 and page.next_cursor
            listed = [x.job async for x in c.iter_jobs(limit=2)]
            assert {r.job, j.job, d.job} <= set(listed) and len(listed) == len(set(listed))
            assert {w.name for w in await c.workers()} >= {"w1", "w2", "w3", "ops"}
            assert "current mode" in await c.inspect("w2")
            assert (await c.mode("ops", "night")).previous == "default"
            assert (await c.mode("ops", "default")).previous == "night"
            assert (await c.stats()).accepted >= 3
            assert "loopd_" in (await c.metrics()).text
            assert (await c.request("ping"))["ok"] is True
            with pytest.raises(loopd.JobFailedError) as e:
                await c.submit("fail", ["no"])
            assert e.value.state == "failed"
            with pytest.raises(loopd.UnknownJobError):
                await c.status("nope-1")
            assert c.in_flight == 0

    run(main())


def test_concurrent_tasks_share_one_connection(daemon):
    async def main():
        async with loopd.AsyncClient(daemon.socket_path) as c:
            async def worker(n):
                out = []
                for i in range(50):
                    r = await c.submit("echo", [f"{n}-{i}"])
                    out.append(r.result["output"])
                    if i % 10 == 0:
                        await c.ping()
                return out

            slow = asyncio.ensure_future(c.submit("sleep", ["300"], worker="w3"))
            results = await asyncio.gather(*(worker(n) for n in range(20)))
            assert not slow.done() or (await slow).state == "completed"  # fast replies were not held up
            for n, out in enumerate(results):
                assert out == [f"{n}-{i}" for i in range(50)]
            assert (await slow).result == {"slept_ms": 300}

    run(main())


def test_backpressure_bounds_requests_in_flight(daemon):
    async def main():
        async with loopd.AsyncClient(daemon.socket_path, max_in_flight=8) as c:
            peak = 0

            async def one(i):
                nonlocal peak
                peak = max(peak, c.in_flight)
                r = await c.submit("sleep", ["5"], worker=f"w{i % 3 + 1}")
                peak = max(peak, c.in_flight)
                return r

            rs = await asyncio.gather(*(one(i) for i in range(60)))
            assert all(r.state == "completed" for r in rs)
            assert 1 <= peak <= 8

    assert loopd.DEFAULT_MAX_IN_FLIGHT == 1024
    run(main())


def test_a_cancelled_task_leaves_the_connection_usable(daemon):
    async def main():
        async with loopd.AsyncClient(daemon.socket_path, max_in_flight=2) as c:
            slow = asyncio.ensure_future(c.submit("sleep", ["300"], worker="w3"))
            await asyncio.sleep(0.05)
            assert c.in_flight == 1
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
            assert c.in_flight == 0 and c.connected
            # Its slot is free: two more fit although the sleep still runs.
            a, b = await asyncio.gather(c.submit("echo", ["a"]), c.ping())
            assert a.result == {"output": "a"}
            await asyncio.sleep(0.4)  # the cancelled request's reply arrives now and is dropped
            assert (await c.submit("echo", ["after"])).result == {"output": "after"}
            # asyncio.wait_for is cancellation too.
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(c.submit("sleep", ["300"], worker="w3"), 0.05)
            assert (await c.ping()).pid > 0

    run(main())


def test_client_timeout(daemon):
    async def main():
        async with loopd.AsyncClient(daemon.socket_path, timeout=0.05) as c:
            with pytest.raises(loopd.ClientTimeoutError):
                await c.submit("sleep", ["300"], worker="w3")
            assert (await c.ping()).pid > 0

    run(main())


def test_connect_error_is_clear(tmp_path):
    async def main():
        with pytest.raises(loopd.LoopdConnectionError, match="cannot connect"):
            await loopd.AsyncClient(str(tmp_path / "none.sock")).connect()

    run(main())
