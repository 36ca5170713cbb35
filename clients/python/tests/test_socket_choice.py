"""Which socket the clients use, and whose listening socket they accept: no
``loopd.sock`` of the working directory unless named (LOOPD_SOCKET, else
/run/loopd.sock), and the server-uid check (SO_PEERCRED) before anything is
written."""

import asyncio
import os
import socket
from contextlib import contextmanager

import pytest

import loopd
from loopd._daemon_socket import expected_server_uid

NOBODY = 65534


@contextmanager
def listener(path, *, owner=None):
    """A Unix socket listening at ``path`` that nobody accepts on: a client's
    connect completes (the kernel queues it) and shows in ``pending``.
    ``owner``: the uid that calls listen(2), which is what clients see
    (root only)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    if owner is None:
        s.listen(8)
    else:
        os.seteuid(owner)
        try:
            s.listen(8)
        finally:
            os.seteuid(0)
    s.setblocking(False)
    try:
        yield s
    finally:
        s.close()


def pending(s):
    """The bytes each queued connection sent before its client closed it
    (every client here has closed, so each read ends)."""
    sent = []
    while True:
        try:
            conn, _ = s.accept()
        except BlockingIOError:
            return sent
        with conn:
            conn.setblocking(True)
            data = b""
            while chunk := conn.recv(4096):
                data += chunk
            sent.append(data)


# ---------------------------------------------------------------- the socket


def test_default_socket_is_the_variable_else_the_installed_path(monkeypatch):
    monkeypatch.delenv("LOOPD_SOCKET", raising=False)
    assert loopd.default_socket_path() == loopd.INSTALLED_SOCKET_PATH == "/run/loopd.sock"
    monkeypatch.setenv("LOOPD_SOCKET", "")
    assert loopd.default_socket_path() == "/run/loopd.sock"
    monkeypatch.setenv("LOOPD_SOCKET", "/srv/loopd.sock")
    assert loopd.default_socket_path() == "/srv/loopd.sock"


def test_a_loopd_sock_in_the_working_directory_is_not_used_unless_named(tmp_path, monkeypatch):
    monkeypatch.delenv("LOOPD_SOCKET", raising=False)
    monkeypatch.chdir(tmp_path)
    with listener(str(tmp_path / "loopd.sock")) as here:
        assert loopd.Client(connect=False).path == "/run/loopd.sock"
        assert loopd.AsyncClient().path == "/run/loopd.sock"
        try:
            # Whatever answers at /run/loopd.sock on this machine, if anything.
            loopd.Client(timeout=5).close()
        except loopd.LoopdError:
            pass
        assert pending(here) == []
        # Named, it is used.
        loopd.Client("./loopd.sock").close()
        monkeypatch.setenv("LOOPD_SOCKET", "./loopd.sock")
        loopd.Client().close()
        assert pending(here) == [b"", b""]


def test_the_variable_is_used_and_an_explicit_path_beats_it(daemon, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with listener(str(tmp_path / "loopd.sock")) as here:
        monkeypatch.setenv("LOOPD_SOCKET", daemon.socket_path)
        with loopd.Client(timeout=60) as c:
            assert c.path == daemon.socket_path and c.ping().pid > 0

        async def via_async():
            async with loopd.AsyncClient(timeout=60) as c:
                return (await c.ping()).pid

        assert asyncio.run(via_async()) > 0
        monkeypatch.setenv("LOOPD_SOCKET", str(tmp_path / "loopd.sock"))
        with loopd.Client(daemon.socket_path, timeout=60) as c:
            assert c.path == daemon.socket_path and c.ping().pid > 0
        assert pending(here) == []


# ---------------------------------------------------------------- the uid


def test_which_uid_is_required_where():
    assert expected_server_uid("/run/loopd.sock", None) == 0
    assert expected_server_uid("./loopd.sock", None) is None
    assert expected_server_uid("/tmp/loopd.sock", 1000) == 1000
    assert expected_server_uid("/run/loopd.sock", "any") is None
    for bad in (-1, 2 ** 32, "0", "root", True, 1.0):
        with pytest.raises(ValueError):
            loopd.Client("/tmp/x.sock", server_uid=bad, connect=False)
        with pytest.raises(ValueError):
            loopd.AsyncClient("/tmp/x.sock", server_uid=bad)


def test_a_daemon_of_another_uid_than_expected_is_refused_with_the_uids(daemon):
    mine = os.getuid()
    other = NOBODY if mine == 0 else mine + 1
    with pytest.raises(loopd.ServerUIDMismatchError) as e:
        loopd.Client(daemon.socket_path, server_uid=other)
    err = e.value
    assert (err.path, err.expected_uid, err.actual_uid) == (daemon.socket_path, other, mine)
    assert str(err) == f"refusing the socket at {daemon.socket_path}: uid {mine} made it listen, not the expected uid {other}"
    assert isinstance(err, loopd.LoopdError) and not isinstance(err, loopd.LoopdConnectionError) and err.code is None

    async def refused():
        with pytest.raises(loopd.ServerUIDMismatchError) as e:
            await loopd.AsyncClient(daemon.socket_path, server_uid=other).connect()
        return e.value.actual_uid

    assert asyncio.run(refused()) == mine
    for accepted in (mine, "any", None):
        with loopd.Client(daemon.socket_path, server_uid=accepted, timeout=60) as c:
            assert c.ping().pid > 0


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a socket listen as another uid")
def test_a_socket_made_by_another_uid_gets_nothing_written(tmp_path):
    path = str(tmp_path / "other.sock")
    with listener(path, owner=NOBODY) as other:
        with pytest.raises(loopd.ServerUIDMismatchError) as e:
            loopd.Client(path, server_uid=0)
        assert (e.value.expected_uid, e.value.actual_uid) == (0, NOBODY)

        async def refused():
            with pytest.raises(loopd.ServerUIDMismatchError):
                await loopd.AsyncClient(path, server_uid=0).connect()

        asyncio.run(refused())
        assert pending(other) == [b"", b""]

        # The right uid, or no check, connects (away from /run/loopd.sock,
        # the default checks nothing).
        for accepted in (NOBODY, "any", None):
            loopd.Client(path, server_uid=accepted).close()

        async def connects():
            c = await loopd.AsyncClient(path, server_uid=NOBODY).connect()
            await c.close()

        asyncio.run(connects())
        assert len(pending(other)) == 4
