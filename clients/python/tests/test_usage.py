"""Job usage: what an exec job's processes used (CPU time, peak memory),
read from the waited submit's reply, from status, from each jobs entry and
from the error of an exec job that failed."""

import asyncio

import pytest

import loopd


def _sane(u):
    assert isinstance(u, loopd.JobUsage), u
    assert u.source in ("cgroup", "rusage")
    assert u.cpu_user_usec >= 0 and u.cpu_system_usec >= 0 and u.cpu_usec == u.cpu_user_usec + u.cpu_system_usec
    assert u.cpu_usec > 0, "a shell counting to 100000 used no CPU time"
    assert u.memory_peak_bytes is None or u.memory_peak_bytes > 0


def test_an_exec_job_reports_what_it_used_in_every_reply_that_describes_it(client):
    done = client.submit("spin", worker="w2")
    _sane(done.usage)
    assert client.status(done.job).usage == done.usage
    assert client.wait(done.job).usage == done.usage
    listed = [j for j in client.iter_jobs(action="spin") if j.job == done.job]
    assert len(listed) == 1 and listed[0].usage == done.usage


def test_a_failed_exec_job_reports_what_it_used_on_its_error(client):
    with pytest.raises(loopd.JobFailedError) as e:
        client.submit("exit3")
    assert e.value.usage is not None and e.value.usage.source in ("cgroup", "rusage")


def test_built_in_actions_and_jobs_not_run_have_no_usage(client):
    echo = client.submit("echo", ["x"])
    assert echo.usage is None and client.status(echo.job).usage is None
    parked = client.submit("spin", wait=False, delay_ms=60_000)
    assert parked.usage is None and client.status(parked.job).usage is None
    client.cancel(parked.job)
    assert client.status(parked.job).usage is None


def test_the_async_client_reads_usage_too(daemon):
    async def main():
        async with loopd.AsyncClient(daemon.socket_path) as c:
            done = await c.submit("spin", worker="w1")
            _sane(done.usage)
            assert (await c.status(done.job)).usage == done.usage

    asyncio.run(asyncio.wait_for(main(), 120))
