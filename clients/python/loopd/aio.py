"""The asyncio loopd client: many requests in flight on one connection."""

from __future__ import annotations

import asyncio
import itertools
import socket
from datetime import datetime
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Iterable, List, Optional, Sequence, TypeVar, Union

from . import _wire
from ._daemon_socket import ServerUID, check_server, default_socket_path, expected_server_uid
from .errors import ClientTimeoutError, ConnectionClosedError, LoopdConnectionError, LoopdError
from .types import (CancelResult, DiscardResult, JobReply, JobsPage, JobStatus, Metrics, ModeChange, Ping, RetryResult,
                    ScheduleChange, ScheduleInfo, Stats, WorkerInfo, ended_jobs_request, inspect_description,
                    jobs_request, parser, raw_reply, schedules_list, submit_request, workers_list)

__all__ = ["AsyncClient", "DEFAULT_MAX_IN_FLIGHT"]

T = TypeVar("T")

#: Requests one :class:`AsyncClient` has in flight at most, by default.
DEFAULT_MAX_IN_FLIGHT = 1024

#: The longest reply line the client reads (exec output, metrics), by default.
DEFAULT_MAX_REPLY_BYTES = 64 * 1024 * 1024


class AsyncClient:
    """An asyncio connection to loopd that many tasks may share.

    Requests from any number of tasks go out on the one connection as they
    are made; a reader task matches each reply to its request by id, so
    slow jobs do not hold up fast requests::

        async with AsyncClient("./loopd.sock") as c:
            replies = await asyncio.gather(*(c.submit("echo", [str(i)]) for i in range(1000)))

    Args:
        path: the daemon's socket (default as for :class:`~loopd.Client`).
        server_uid: the uid that must have made the socket listen (as for
            :class:`~loopd.Client`: by default 0 at ``/run/loopd.sock``, no
            check elsewhere; ``"any"``: no check).
        max_in_flight: back-pressure: at most this many requests await
            their replies at once (default :data:`DEFAULT_MAX_IN_FLIGHT`,
            1024); further calls wait for a free slot instead of buffering
            without bound.
        timeout: seconds a call waits for its reply before
            :class:`~loopd.ClientTimeoutError` (``None``: as long as the job
            takes). The request may still run; its late reply is dropped.
        max_reply_bytes: the longest reply line accepted.

    A task cancelled while it awaits a reply leaves the connection usable:
    its slot is freed at once and its reply, when it arrives, is dropped
    (the request itself was sent: cancelling the task does not cancel the
    job; :meth:`cancel` does). When the daemon goes away, every call in
    flight and every later one raises :class:`~loopd.ConnectionClosedError`
    until :meth:`reconnect`.
    """

    def __init__(self, path: Optional[str] = None, *, server_uid: ServerUID = None,
                 max_in_flight: int = DEFAULT_MAX_IN_FLIGHT, timeout: Optional[float] = None,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.path = path or default_socket_path()
        self.server_uid = server_uid
        self._expected_uid = expected_server_uid(self.path, server_uid)
        self.max_in_flight = max_in_flight
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self._ids = itertools.count(1)
        self._pending: Dict[int, "asyncio.Future[Dict[str, Any]]"] = {}
        self._slots: Optional[asyncio.Semaphore] = None
        self._reader: Optional[asyncio.StreamReader] = None
        self._writer: Optional[asyncio.StreamWriter] = None
        self._read_task: Optional["asyncio.Task[None]"] = None
        self._drain_lock: Optional[asyncio.Lock] = None
        self._closed: Optional[LoopdError] = None
        self._fatal: Optional[LoopdError] = None
        # A second descriptor for the socket: when a write fails because the
        # daemon refused the connection (busy, shutting_down) and closed it,
        # the transport is gone, and this still reads the line that says why.
        self._spare: Optional[socket.socket] = None

    # ------------------------------------------------------------ connection

    async def connect(self) -> "AsyncClient":
        """Opens the connection (a no-op when it is open); returns the client."""
        if self._writer is not None:
            return self
        try:
            reader, writer = await asyncio.open_unix_connection(self.path, limit=self.max_reply_bytes)
        except OSError as e:
            raise LoopdConnectionError(f"cannot connect to loopd at {self.path}: {e}") from e
        sock = writer.get_extra_info("socket")
        try:
            check_server(sock, self.path, self._expected_uid)
        except BaseException:
            writer.close()
            try:
                await writer.wait_closed()
            except Exception:
                pass
            raise
        self._reader, self._writer = reader, writer
        self._closed = self._fatal = None
        self._spare = sock.dup() if sock is not None else None
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_in_flight)
            self._drain_lock = asyncio.Lock()
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop(reader))
        return self

    async def close(self) -> None:
        """Closes the connection; calls in flight raise
        :class:`~loopd.ConnectionClosedError`. Submitted jobs keep running."""
        await self._shutdown(ConnectionClosedError(f"the connection to {self.path} was closed; call reconnect()"))

    async def reconnect(self) -> None:
        """Closes the connection (if open) and opens a new one."""
        await self.close()
        await self.connect()

    @property
    def connected(self) -> bool:
        """Whether the connection is open (as far as the client knows)."""
        return self._writer is not None and self._closed is None

    @property
    def in_flight(self) -> int:
        """Requests awaiting their replies now."""
        return len(self._pending)

    async def __aenter__(self) -> "AsyncClient":
        return await self.connect()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _shutdown(self, error: LoopdError) -> None:
        task, writer = self._read_task, self._writer
        self._read_task = self._writer = self._reader = None
        self._closed = error
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except Exception:
                pass
        self._close_spare()
        self._fail_pending(error)

    def _close_spare(self) -> None:
        if self._spare is not None:
            self._spare.close()
            self._spare = None

    def _salvage(self) -> Optional[LoopdError]:
        """The closing refusal the daemon wrote before it closed, if any."""
        spare, data = self._spare, b""
        if spare is None:
            return None
        try:
            spare.setblocking(False)
            while True:
                chunk = spare.recv(262144)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        for line in data.split(b"\n"):
            reply = _wire.decode(line)
            fatal = _wire.closing_error(reply) if reply is not None else None
            if fatal is not None:
                return fatal
        return None

    def _fail_pending(self, error: LoopdError) -> None:
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(error)

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        error: LoopdError
        try:
            while True:
                line = await reader.readline()
                if not line.endswith(b"\n"):
                    error = self._fatal or _wire.closed_error(self.path)
                    break
                reply = _wire.decode(line)
                if reply is None:
                    continue
                fut = self._pending.pop(reply.get("id"), None)  # type: ignore[arg-type]
                if fut is not None:
                    if not fut.done():
                        fut.set_result(reply)
                else:
                    self._fatal = _wire.closing_error(reply) or self._fatal
        except asyncio.CancelledError:
            raise
        except (OSError, ValueError, asyncio.LimitOverrunError) as e:
            error = self._fatal or self._salvage() or _wire.closed_error(self.path, e)
        # The daemon is gone (or broke the framing): fail everything in flight
        # with the reason; later calls say the connection is closed.
        if error.code is not None:
            self._closed = ConnectionClosedError(
                f"loopd closed the connection on {self.path} after {error.code}: {error.message}; "
                "call reconnect() to connect again")
        else:
            self._closed = error
        writer, self._writer, self._reader, self._read_task = self._writer, None, None, None
        if writer is not None:
            writer.close()
        self._close_spare()
        self._fail_pending(error)

    # ------------------------------------------------------------ requests

    async def call(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """Sends one request object (the client adds its ``id``) and returns
        the reply object, whatever its ``ok``."""
        if self._writer is None:
            if self._closed is not None:
                raise self._closed
            await self.connect()
        assert self._slots is not None and self._drain_lock is not None
        await self._slots.acquire()
        rid = next(self._ids)
        try:
            writer = self._writer
            if writer is None or self._closed is not None:
                raise self._closed or _wire.closed_error(self.path)
            fut: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
            self._pending[rid] = fut
            writer.write(_wire.encode({"id": rid, **request}))
            if writer.transport.get_write_buffer_size() > 65536:
                try:
                    async with self._drain_lock:
                        await writer.drain()
                except (OSError, RuntimeError) as e:
                    raise self._closed or _wire.closed_error(self.path, e) from e
            if self.timeout is None:
                return await fut
            try:
                return await asyncio.wait_for(fut, self.timeout)
            except asyncio.TimeoutError as e:
                raise ClientTimeoutError(f"no reply within {self.timeout}s (request {rid})") from e
        finally:
            # A cancelled or timed-out call: forget it; its reply is dropped.
            self._pending.pop(rid, None)
            self._slots.release()

    async def _op(self, request: Dict[str, Any], parse: Callable[[Dict[str, Any]], T]) -> T:
        return parse(await self.call(request))

    def request(self, op: str, **fields: Any) -> Awaitable[Dict[str, Any]]:
        """Any operation by name: the reply object when ``ok``, else its
        error raised (see :meth:`loopd.Client.request`)."""
        return self._op({"op": op, **fields}, raw_reply)

    def ping(self) -> Awaitable[Ping]:
        """Is the daemon there? Its pid and version."""
        return self._op({"op": "ping"}, parser(Ping.parse))

    def submit(self, action: str, args: Sequence[str] = (), *, worker: Optional[str] = None,
               key: Optional[str] = None, wait: bool = True, delay_ms: Optional[int] = None,
               timeout_ms: Optional[int] = None, mode: Optional[str] = None,
               durable: bool = False, retries: Optional[int] = None, retry_backoff_ms: Optional[int] = None,
               unique_key: Optional[str] = None,
               priority: Optional[int] = None, expires_in_ms: Optional[int] = None,
               fleet: Optional[bool] = None, node: Optional[str] = None) -> Awaitable[JobReply]:
        """Runs a job; the fields and errors are those of :meth:`loopd.Client.submit`."""
        return self._op(submit_request(action, args, worker=worker, key=key, wait=wait, delay_ms=delay_ms,
                                       timeout_ms=timeout_ms, mode=mode, durable=durable, retries=retries,
                                       retry_backoff_ms=retry_backoff_ms, unique_key=unique_key,
            priority=priority, expires_in_ms=expires_in_ms, fleet=fleet, node=node),
                        parser(JobReply.parse))

    def wait(self, job: str, *, timeout_ms: Optional[int] = None) -> Awaitable[JobReply]:
        """Waits for a job to end (see :meth:`loopd.Client.wait`)."""
        req: Dict[str, Any] = {"op": "wait", "job": job}
        if timeout_ms is not None:
            req["timeout_ms"] = timeout_ms
        return self._op(req, parser(JobReply.parse))

    def status(self, job: str) -> Awaitable[JobStatus]:
        """A job's state, times, result and error."""
        return self._op({"op": "status", "job": job}, parser(JobStatus.parse))

    def cancel(self, job: str) -> Awaitable[CancelResult]:
        """Cancels a job that has not ended."""
        return self._op({"op": "cancel", "job": job}, parser(CancelResult.parse))

    def jobs(self, state: Union[str, Iterable[str], None] = None, *, worker: Optional[str] = None,
             action: Optional[str] = None, since: Union[datetime, str, None] = None,
             limit: Optional[int] = None, cursor: Optional[str] = None, fleet: bool = False,
             with_fleet: bool = False) -> Awaitable[JobsPage]:
        """One page of jobs (see :meth:`loopd.Client.jobs`)."""
        return self._op(jobs_request(state, worker=worker, action=action, since=since, limit=limit,
                                     cursor=cursor, fleet=fleet, with_fleet=with_fleet), parser(JobsPage.parse))

    async def iter_jobs(self, state: Union[str, Iterable[str], None] = None, *, worker: Optional[str] = None,
                        action: Optional[str] = None, since: Union[datetime, str, None] = None,
                        limit: Optional[int] = None, fleet: bool = False,
                        with_fleet: bool = False) -> AsyncIterator[JobStatus]:
        """Every job matching the filters, page after page: ``async for job in c.iter_jobs(): …``."""
        states = None if state is None or isinstance(state, str) else list(state)
        cursor: Optional[str] = None
        while True:
            page = await self.jobs(state if states is None else states, worker=worker, action=action,
                                   since=since, limit=limit, cursor=cursor, fleet=fleet, with_fleet=with_fleet)
            for job in page.jobs:
                yield job
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def workers(self) -> Awaitable[List[WorkerInfo]]:
        """Each worker's mode, load and loop state."""
        return self._op({"op": "workers"}, workers_list)

    def inspect(self, worker: str) -> Awaitable[str]:
        """The worker's run loop described as a CFRunLoop-style dump."""
        return self._op({"op": "inspect", "worker": worker}, inspect_description)

    def mode(self, worker: str, mode: str) -> Awaitable[ModeChange]:
        """Switches a worker's run mode (administrators only)."""
        return self._op({"op": "mode", "worker": worker, "mode": mode}, parser(ModeChange.parse))

    def retry(self, job: Optional[str] = None, *, state: Union[str, Iterable[str], None] = None,
              worker: Optional[str] = None, action: Optional[str] = None, since: Union[datetime, str, None] = None,
              limit: Optional[int] = None) -> Awaitable[RetryResult]:
        """Runs ended jobs again as new jobs linked to the old ones (see ``Client.retry``)."""
        return self._op(ended_jobs_request("retry", job, state=state, worker=worker, action=action, since=since, limit=limit), parser(RetryResult.parse))

    def discard(self, job: Optional[str] = None, *, state: Union[str, Iterable[str], None] = None,
              worker: Optional[str] = None, action: Optional[str] = None, since: Union[datetime, str, None] = None,
              limit: Optional[int] = None) -> Awaitable[DiscardResult]:
        """Forgets ended jobs before their retention ends (see ``Client.discard``)."""
        return self._op(ended_jobs_request("discard", job, state=state, worker=worker, action=action, since=since, limit=limit), parser(DiscardResult.parse))

    def schedules(self) -> Awaitable[List[ScheduleInfo]]:
        """The configured schedules, by name."""
        return self._op({"op": "schedules"}, schedules_list)

    def schedule(self, command: str, name: str) -> Awaitable[ScheduleChange]:
        """``pause``, ``resume`` or ``trigger`` the schedule ``name`` (administrators only)."""
        return self._op({"op": command, "schedule": name}, parser(ScheduleChange.parse))

    def stats(self) -> Awaitable[Stats]:
        """The daemon's counters since it started."""
        return self._op({"op": "stats"}, parser(Stats.parse))

    def metrics(self) -> Awaitable[Metrics]:
        """The daemon's metrics in the Prometheus text format."""
        return self._op({"op": "metrics"}, parser(Metrics.parse))
