"""The daemon restarted under a connected client: a clear error, then
reconnect() works."""

import asyncio

import pytest

import loopd


def test_sync_client_across_a_restart(make_daemon):
    d = make_daemon()
    c = loopd.Client(d.socket_path, timeout=10)
    assert c.ping()
    d.restart()
    with pytest.raises(loopd.ConnectionClosedError, match="reconnect"):
        c.submit("echo", ["x"])
    assert not c.connected
    with pytest.raises(loopd.ConnectionClosedError):  # stays closed until asked
        c.ping()
    c.reconnect()
    assert c.submit("echo", ["back"]).result == {"output": "back"}
    d.stop()
    with pytest.raises(loopd.LoopdConnectionError, match="cannot connect"):
        c.reconnect()
    c.close()


def test_sync_client_request_in_flight_when_the_daemon_stops(make_daemon):
    d = make_daemon(server="shutdown_grace_ms = 0")
    with loopd.Client(d.socket_path, timeout=20) as c:
        import threading
        t = threading.Timer(0.2, d.stop)
        t.start()
        with pytest.raises(loopd.ConnectionClosedError):
            c.submit("sleep", ["10000"])
        t.join()


def test_async_client_across_a_restart(make_daemon):
    d = make_daemon(server="shutdown_grace_ms = 0")

    async def main():
        c = await loopd.AsyncClient(d.socket_path).connect()
        in_flight = asyncio.ensure_future(c.submit("sleep", ["10000"]))
        await asyncio.sleep(0.1)
        await asyncio.get_running_loop().run_in_executor(None, d.restart)
        with pytest.raises(loopd.ConnectionClosedError, match="reconnect"):
            await in_flight
        assert not c.connected
        with pytest.raises(loopd.ConnectionClosedError):
            await c.ping()
        await c.reconnect()
        assert (await c.submit("echo", ["back"])).result == {"output": "back"}
        await c.close()

    asyncio.run(asyncio.wait_for(main(), 60))
