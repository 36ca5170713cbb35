"""The synchronous loopd client: one blocking Unix-socket connection."""

from __future__ import annotations

import selectors
import socket
import threading
import time
from datetime import datetime
from typing import (Any, Callable, Dict, Generic, Iterable, Iterator, List, Optional, Sequence, TypeVar,
                    Union)

from . import _wire
from ._daemon_socket import ServerUID, check_server, default_socket_path, expected_server_uid
from .errors import ClientTimeoutError, ConnectionClosedError, LoopdConnectionError, LoopdError
from .types import (CancelResult, DiscardResult, JobReply, JobsPage, JobStatus, Metrics, ModeChange, Ping, RetryResult,
                    ScheduleChange, ScheduleInfo, Stats, WorkerInfo, ended_jobs_request, inspect_description,
                    jobs_request, parser, raw_reply, schedules_list, submit_request, workers_list)

__all__ = ["Client", "Pipeline", "Pending"]

T = TypeVar("T")
_READ = 262144


class Client:
    """A blocking connection to loopd.

    >>> with Client("./loopd.sock") as c:
    ...     c.submit("echo", ["hello"]).result
    {'output': 'hello'}

    Args:
        path: the daemon's socket; default :func:`~loopd.default_socket_path`:
            ``$LOOPD_SOCKET``, else ``/run/loopd.sock`` (never a
            ``loopd.sock`` of the working directory that is not named).
        server_uid: the uid that must have made the socket listen, checked
            on every connect before anything is written
            (:class:`~loopd.ServerUIDMismatchError` otherwise): ``None``, the
            default, requires uid 0 at ``/run/loopd.sock`` and checks nothing
            at other paths; a uid requires that uid; ``"any"`` checks nothing.
        timeout: seconds to wait for a reply (for a pipeline: for all of
            them) before :class:`~loopd.ClientTimeoutError`; ``None`` waits
            as long as the job takes. A late reply is dropped; the
            connection stays usable.
        connect_timeout: seconds for the connection itself.
        connect: connect now (else on :meth:`connect` or first use).

    A client is one connection; its methods may be called from several
    threads (one request at a time). Every method raises the
    :class:`~loopd.LoopdError` subclass of the reply's error code; a job
    that failed, timed out or was cancelled raises a
    :class:`~loopd.JobError` with the job's fields. When the daemon went
    away, :class:`~loopd.ConnectionClosedError`; :meth:`reconnect` opens a
    new connection.
    """

    def __init__(self, path: Optional[str] = None, *, server_uid: ServerUID = None, timeout: Optional[float] = None,
                 connect_timeout: Optional[float] = 5.0, connect: bool = True) -> None:
        self.path = path or default_socket_path()
        self.server_uid = server_uid
        self._expected_uid = expected_server_uid(self.path, server_uid)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._sock: Optional[socket.socket] = None
        self._buf = b""
        self._next_id = 0
        self._closed: Optional[LoopdError] = None
        self._fatal: Optional[LoopdError] = None
        self._lock = threading.RLock()
        if connect:
            self.connect()

    # ------------------------------------------------------------ connection

    def connect(self) -> None:
        """Opens the connection (a no-op when it is open)."""
        with self._lock:
            if self._sock is not None:
                return
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(self.connect_timeout)
                sock.connect(self.path)
            except OSError as e:
                sock.close()
                raise LoopdConnectionError(f"cannot connect to loopd at {self.path}: {e}") from e
            try:
                check_server(sock, self.path, self._expected_uid)
            except BaseException:
                sock.close()
                raise
            sock.settimeout(self.timeout)
            self._sock, self._buf, self._closed, self._fatal = sock, b"", None, None

    def close(self) -> None:
        """Closes the connection. Jobs already submitted keep running."""
        with self._lock:
            if self._sock is not None:
                try:
                    self._sock.close()
                finally:
                    self._sock = None
            self._closed = ConnectionClosedError(f"the connection to {self.path} was closed; call reconnect()")

    def reconnect(self) -> None:
        """Closes the connection (if open) and opens a new one, e.g. after
        :class:`~loopd.ConnectionClosedError` when the daemon restarted."""
        with self._lock:
            self.close()
            self.connect()

    @property
    def connected(self) -> bool:
        """Whether the connection is open (as far as the client knows)."""
        return self._sock is not None

    def __enter__(self) -> "Client":
        self.connect()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _broken(self, error: LoopdError) -> LoopdError:
        """Marks the connection closed and returns the error to raise now.
        After a closing refusal (too_large, busy, shutting_down) that error is
        raised for the requests in flight; later calls get
        ConnectionClosedError until reconnect()."""
        if error.code is not None:
            self._closed = ConnectionClosedError(
                f"loopd closed the connection on {self.path} after {error.code}: {error.message}; "
                "call reconnect() to connect again")
        else:
            self._closed = error
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        self._sock = None
        return error

    def _send_failed(self, sock: socket.socket, cause: OSError) -> LoopdError:
        """The daemon closed the socket before our write: read what it wrote
        first (a ``busy`` or ``shutting_down`` line) to say why."""
        try:
            sock.setblocking(False)
            while True:
                chunk = sock.recv(_READ)
                if not chunk:
                    break
                self._buf += chunk
        except OSError:
            pass
        for line in self._buf.split(b"\n"):
            reply = _wire.decode(line)
            fatal = _wire.closing_error(reply) if reply is not None else None
            if fatal is not None:
                return self._broken(fatal)
        return self._broken(_wire.closed_error(self.path, cause))

    def _socket(self) -> socket.socket:
        if self._sock is None:
            if self._closed is not None:
                raise self._closed
            self.connect()
        assert self._sock is not None
        return self._sock

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _read_replies(self, sock: socket.socket, wanted: Dict[int, Any],
                      deliver: Callable[[int, Dict[str, Any]], None]) -> None:
        """Reads one chunk and delivers the complete replies it finishes."""
        try:
            chunk = sock.recv(_READ)
        except (BlockingIOError, InterruptedError):
            return
        except socket.timeout:
            raise
        except OSError as e:
            raise self._broken(self._fatal or _wire.closed_error(self.path, e)) from e
        if not chunk:
            raise self._broken(self._fatal or _wire.closed_error(self.path))
        self._buf += chunk
        if b"\n" not in chunk:
            return
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            reply = _wire.decode(line)
            if reply is None:
                continue
            rid = reply.get("id")
            if rid in wanted:
                deliver(rid, reply)
            else:
                fatal = _wire.closing_error(reply)
                if fatal is not None:
                    self._fatal = fatal  # raised at the end of file that follows

    # ------------------------------------------------------------ requests

    def call(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """Sends one request object (without ``id``: the client numbers its
        requests) and returns the reply object, whatever its ``ok``."""
        with self._lock:
            sock = self._socket()
            rid = self._new_id()
            line = _wire.encode({"id": rid, **request})
            deadline = None if self.timeout is None else time.monotonic() + self.timeout
            try:
                if sock.gettimeout() != self.timeout:
                    sock.settimeout(self.timeout)
                sock.sendall(line)
            except socket.timeout as e:
                raise self._broken(ClientTimeoutError(
                    f"could not send the request within {self.timeout}s; the connection was closed")) from e
            except OSError as e:
                raise self._send_failed(sock, e) from e
            got: List[Dict[str, Any]] = []
            wanted = {rid: None}
            while not got:
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise ClientTimeoutError(f"no reply within {self.timeout}s (request {rid})")
                    sock.settimeout(left)
                try:
                    self._read_replies(sock, wanted, lambda _i, r: got.append(r))
                except socket.timeout as e:
                    raise ClientTimeoutError(f"no reply within {self.timeout}s (request {rid})") from e
            return got[0]

    def _exchange(self, requests: Sequence[Dict[str, Any]], deliver: Callable[[int, Dict[str, Any]], None]
                  ) -> List[int]:
        """Sends every request (numbered) while reading replies, so neither
        side's buffer can fill up; calls ``deliver(index, reply)`` for each
        reply. Returns nothing useful; raises on a broken connection or
        timeout (replies delivered so far stay delivered)."""
        with self._lock:
            sock = self._socket()
            index: Dict[int, int] = {}
            chunks = []
            for i, req in enumerate(requests):
                rid = self._new_id()
                index[rid] = i
                chunks.append(_wire.encode({"id": rid, **req}))
            out = memoryview(b"".join(chunks))
            sent = 0
            deadline = None if self.timeout is None else time.monotonic() + self.timeout

            def got(rid: int, reply: Dict[str, Any]) -> None:
                deliver(index.pop(rid), reply)

            sock.setblocking(False)
            sel = selectors.DefaultSelector()
            try:
                sel.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
                writing = True
                while index:
                    if writing and sent == len(out):
                        sel.modify(sock, selectors.EVENT_READ)
                        writing = False
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        if sent < len(out) and out[sent - 1:sent] != b"\n":
                            self._broken(ClientTimeoutError("timed out in the middle of a request line"))
                        raise ClientTimeoutError(
                            f"no reply to {len(index)} of {len(requests)} requests within {self.timeout}s")
                    for _key, events in sel.select(left):
                        if events & selectors.EVENT_READ:
                            self._read_replies(sock, index, got)
                        if events & selectors.EVENT_WRITE and sent < len(out):
                            try:
                                sent += sock.send(out[sent:sent + _READ])
                            except (BlockingIOError, InterruptedError):
                                pass
                            except OSError as e:
                                raise self._send_failed(sock, e) from e
            finally:
                sel.close()
                if self._sock is not None:
                    self._sock.settimeout(self.timeout)
            return []

    def request(self, op: str, **fields: Any) -> Dict[str, Any]:
        """Any operation by name, for fields this client has no method for:
        returns the reply object when ``ok``, else raises its error.
        ``client.request("stats")`` is ``stats()`` without the typing."""
        return raw_reply(self.call({"op": op, **fields}))

    def ping(self) -> Ping:
        """Is the daemon there? Its pid and version."""
        return Ping.parse(_check(self.call({"op": "ping"})))

    def submit(self, action: str, args: Sequence[str] = (), *, worker: Optional[str] = None,
               key: Optional[str] = None, wait: bool = True, delay_ms: Optional[int] = None,
               timeout_ms: Optional[int] = None, mode: Optional[str] = None, durable: bool = False,
               retries: Optional[int] = None, retry_backoff_ms: Optional[int] = None,
               unique_key: Optional[str] = None,
               priority: Optional[int] = None, expires_in_ms: Optional[int] = None,
               fleet: Optional[bool] = None, node: Optional[str] = None) -> JobReply:
        """Runs a job: ``action`` with ``args``.

        Args:
            worker: a worker's name, or ``"any"`` (the default): the least
                loaded ``auto`` worker.
            key: place by key instead (same key, same worker, in order); not with ``worker``.
            wait: reply when the job has finished (default), or at once
                when it is accepted (``state`` delayed, queued or held).
            delay_ms: start no earlier than this many ms from now.
            timeout_ms: stop the job once it has run this long (``JobTimeoutError``).
            mode: the worker run mode the job needs (``"common"``: any).
            durable: journal the job before it is acknowledged.
            retries: run it up to this many more times if an attempt fails
                or times out (``JobReply.attempt`` says which attempt ended it).
            retry_backoff_ms: the base of the backoff between attempts
                (attempt n+1 waits a random 0..min(cap, base * 2**(n-1)) ms).
            unique_key: an idempotency key: while a job of this uid with the
                key is known, the submit returns that job (``duplicate`` is
                true; with ``wait``, its end) instead of making another, so a
                submit may be sent again after a dropped connection.
            priority: lower starts first among the jobs waiting on its worker
                (0..4294967295; the daemon's default is 2**31).
            expires_in_ms: end the job ``expired`` (``JobExpiredError``) if it
                has not started this many ms after its submission.
            fleet: ``True`` makes a fleet job, which any node of the daemon's
                fleet may run (its id starts ``f-``); ``False`` keeps it on
                this host; ``None``: the daemon's ``fleet.jobs``.
            node: a fleet job only this node may run (with ``fleet=True``).

        Raises:
            JobFailedError, JobTimeoutError, JobCancelledError: the waited
                job ended so (with ``job``, ``state``, ``worker``, ``result``).
            UnknownActionError, UnknownWorkerError, ForbiddenError,
            QueueFullError, BadRequestError, ShuttingDownError, …: refused.
        """
        return JobReply.parse(_check(self.call(submit_request(
            action, args, worker=worker, key=key, wait=wait, delay_ms=delay_ms, timeout_ms=timeout_ms,
            mode=mode, durable=durable, retries=retries, retry_backoff_ms=retry_backoff_ms,
            unique_key=unique_key,
            priority=priority, expires_in_ms=expires_in_ms, fleet=fleet, node=node))))

    def wait(self, job: str, *, timeout_ms: Optional[int] = None) -> JobReply:
        """Waits for a job to end; the reply is what a waited ``submit``
        gets. With ``timeout_ms``, replies once that passes with the job's
        current state (``JobReply.finished`` is false): ask again to keep
        waiting. Keep the client's ``timeout`` above ``timeout_ms``."""
        req: Dict[str, Any] = {"op": "wait", "job": job}
        if timeout_ms is not None:
            req["timeout_ms"] = timeout_ms
        return JobReply.parse(_check(self.call(req)))

    def status(self, job: str) -> JobStatus:
        """A job's state, times and, once finished, its result and error
        (a failed job's status is a reply, not an exception)."""
        return JobStatus.parse(_check(self.call({"op": "status", "job": job})))

    def cancel(self, job: str) -> CancelResult:
        """Cancels a job that has not ended; a running one is stopped and
        the reply comes once it has ended."""
        return CancelResult.parse(_check(self.call({"op": "cancel", "job": job})))

    def jobs(self, state: Union[str, Iterable[str], None] = None, *, worker: Optional[str] = None,
             action: Optional[str] = None, since: Union[datetime, str, None] = None,
             limit: Optional[int] = None, cursor: Optional[str] = None, fleet: bool = False,
             with_fleet: bool = False) -> JobsPage:
        """One page of jobs, oldest submission first, matching every filter
        given: ``state`` (a name or several), ``worker``, ``action``,
        ``since`` (a datetime, naive taken as UTC, or an RFC 3339 string),
        at most ``limit`` (1…1000, default 100), from ``cursor`` (a previous
        page's ``next_cursor``). ``fleet``: the fleet's jobs instead of this
        host's; ``with_fleet``: this host's and the fleet's together."""
        return JobsPage.parse(_check(self.call(jobs_request(
            state, worker=worker, action=action, since=since, limit=limit, cursor=cursor, fleet=fleet,
            with_fleet=with_fleet))))

    def iter_jobs(self, state: Union[str, Iterable[str], None] = None, *, worker: Optional[str] = None,
                  action: Optional[str] = None, since: Union[datetime, str, None] = None,
                  limit: Optional[int] = None, fleet: bool = False, with_fleet: bool = False) -> Iterator[JobStatus]:
        """Every job matching the filters, page after page (``limit`` is
        the page size); each job that exists throughout is listed once."""
        states = None if state is None or isinstance(state, str) else list(state)
        cursor: Optional[str] = None
        while True:
            page = self.jobs(state if states is None else states, worker=worker, action=action, since=since,
                             limit=limit, cursor=cursor, fleet=fleet, with_fleet=with_fleet)
            yield from page.jobs
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def workers(self) -> List[WorkerInfo]:
        """Each worker's mode, load and loop state."""
        return workers_list(self.call({"op": "workers"}))

    def inspect(self, worker: str) -> str:
        """The worker's run loop described as a CFRunLoop-style dump (text
        for people; the layout is not a contract)."""
        return inspect_description(self.call({"op": "inspect", "worker": worker}))

    def mode(self, worker: str, mode: str) -> ModeChange:
        """Switches a worker's run mode (administrators only: ``ForbiddenError``)."""
        return ModeChange.parse(_check(self.call({"op": "mode", "worker": worker, "mode": mode})))

    def retry(self, job: Optional[str] = None, *, state: Union[str, Iterable[str], None] = None,
              worker: Optional[str] = None, action: Optional[str] = None, since: Union[datetime, str, None] = None,
              limit: Optional[int] = None) -> RetryResult:
        """Runs ended jobs again as new jobs linked to the old ones: ``job``,
        or every ended job matching the filters (``state`` defaults to the
        failures), up to ``limit``. The owner or an administrator only."""
        return RetryResult.parse(_check(self.call(ended_jobs_request("retry", job, state=state, worker=worker, action=action, since=since, limit=limit))))

    def discard(self, job: Optional[str] = None, *, state: Union[str, Iterable[str], None] = None,
              worker: Optional[str] = None, action: Optional[str] = None, since: Union[datetime, str, None] = None,
              limit: Optional[int] = None) -> DiscardResult:
        """Forgets ended jobs before their retention ends (as ``retry`` selects them)."""
        return DiscardResult.parse(_check(self.call(ended_jobs_request("discard", job, state=state, worker=worker, action=action, since=since, limit=limit))))

    def schedules(self) -> List[ScheduleInfo]:
        """The configured schedules, by name."""
        return schedules_list(self.call({"op": "schedules"}))

    def schedule(self, command: str, name: str) -> ScheduleChange:
        """``pause``, ``resume`` or ``trigger`` the schedule ``name``
        (administrators only: ``ForbiddenError``; ``UnknownScheduleError``)."""
        return ScheduleChange.parse(_check(self.call({"op": command, "schedule": name})))

    def stats(self) -> Stats:
        """The daemon's counters since it started."""
        return Stats.parse(_check(self.call({"op": "stats"})))

    def metrics(self) -> Metrics:
        """The daemon's metrics in the Prometheus text format."""
        return Metrics.parse(_check(self.call({"op": "metrics"})))

    def pipeline(self) -> "Pipeline":
        """A batch of requests sent together on this connection, replies
        matched by id (see :class:`Pipeline`)."""
        return Pipeline(self)


def _check(reply: Dict[str, Any]) -> Dict[str, Any]:
    return raw_reply(reply)


_UNSET: Any = object()


class Pending(Generic[T]):
    """The reply to one request of a :class:`Pipeline`, once it has run."""

    __slots__ = ("request", "_parse", "_reply", "_error")

    def __init__(self, request: Dict[str, Any], parse: Callable[[Dict[str, Any]], T]) -> None:
        self.request = request
        self._parse = parse
        self._reply: Any = _UNSET
        self._error: Optional[LoopdError] = None

    def done(self) -> bool:
        """Whether a reply (or a connection error) has come."""
        return self._reply is not _UNSET or self._error is not None

    @property
    def reply(self) -> Optional[Dict[str, Any]]:
        """The reply object as received, or None."""
        return None if self._reply is _UNSET else self._reply

    def result(self) -> T:
        """The typed result; raises the reply's error (or the connection's)."""
        if self._error is not None:
            raise self._error
        if self._reply is _UNSET:
            raise LoopdError("the pipeline has not been executed")
        return self._parse(self._reply)

    def exception(self) -> Optional[LoopdError]:
        """The error :meth:`result` would raise, or None."""
        try:
            self.result()
        except LoopdError as e:
            return e
        return None


class Pipeline:
    """Many requests on one connection without waiting for each reply.

    Each method queues a request and returns a :class:`Pending`; nothing is
    sent until :meth:`execute` (called on leaving a ``with`` block). Then
    all requests are written while the replies are read as they come (in
    any order: the daemon answers each one when it is done) and matched by
    id, so a batch of any size never fills a buffer on either side::

        with client.pipeline() as p:
            handles = [p.submit("echo", [str(i)]) for i in range(10_000)]
        outputs = [h.result().result["output"] for h in handles]

    A request's error stays in its :class:`Pending` (``result()`` raises
    it); if the connection breaks, every request without a reply gets that
    error and :meth:`execute` raises it too.
    """

    def __init__(self, client: Client) -> None:
        self.client = client
        self._items: List[Pending[Any]] = []

    def __len__(self) -> int:
        return len(self._items)

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is None and self._items:
            self.execute()

    def _add(self, request: Dict[str, Any], parse: Callable[[Dict[str, Any]], T]) -> "Pending[T]":
        item: Pending[T] = Pending(request, parse)
        self._items.append(item)
        return item

    def execute(self) -> List[Pending[Any]]:
        """Sends the queued requests and reads every reply; returns the
        handles in the order they were queued. The pipeline is empty afterwards."""
        items, self._items = self._items, []
        if not items:
            return items

        def deliver(i: int, reply: Dict[str, Any]) -> None:
            items[i]._reply = reply

        try:
            self.client._exchange([it.request for it in items], deliver)
        except LoopdError as e:
            for it in items:
                if not it.done():
                    it._error = e
            raise
        return items

    def request(self, op: str, **fields: Any) -> "Pending[Dict[str, Any]]":
        """Any operation by name (see :meth:`Client.request`)."""
        return self._add({"op": op, **fields}, raw_reply)

    def ping(self) -> "Pending[Ping]":
        return self._add({"op": "ping"}, parser(Ping.parse))

    def submit(self, action: str, args: Sequence[str] = (), *, worker: Optional[str] = None,
               key: Optional[str] = None, wait: bool = True, delay_ms: Optional[int] = None,
               timeout_ms: Optional[int] = None, mode: Optional[str] = None,
               durable: bool = False, retries: Optional[int] = None, retry_backoff_ms: Optional[int] = None,
               unique_key: Optional[str] = None,
               priority: Optional[int] = None, expires_in_ms: Optional[int] = None,
               fleet: Optional[bool] = None, node: Optional[str] = None) -> "Pending[JobReply]":
        """See :meth:`Client.submit`."""
        return self._add(submit_request(action, args, worker=worker, key=key, wait=wait, delay_ms=delay_ms,
                                        timeout_ms=timeout_ms, mode=mode, durable=durable, retries=retries,
                                        retry_backoff_ms=retry_backoff_ms, unique_key=unique_key,
            priority=priority, expires_in_ms=expires_in_ms, fleet=fleet, node=node),
                         parser(JobReply.parse))

    def wait(self, job: str, *, timeout_ms: Optional[int] = None) -> "Pending[JobReply]":
        """See :meth:`Client.wait`."""
        req: Dict[str, Any] = {"op": "wait", "job": job}
        if timeout_ms is not None:
            req["timeout_ms"] = timeout_ms
        return self._add(req, parser(JobReply.parse))

    def status(self, job: str) -> "Pending[JobStatus]":
        return self._add({"op": "status", "job": job}, parser(JobStatus.parse))

    def cancel(self, job: str) -> "Pending[CancelResult]":
        return self._add({"op": "cancel", "job": job}, parser(CancelResult.parse))

    def jobs(self, state: Union[str, Iterable[str], None] = None, *, worker: Optional[str] = None,
             action: Optional[str] = None, since: Union[datetime, str, None] = None,
             limit: Optional[int] = None, cursor: Optional[str] = None, fleet: bool = False,
             with_fleet: bool = False) -> "Pending[JobsPage]":
        return self._add(jobs_request(state, worker=worker, action=action, since=since, limit=limit,
                                      cursor=cursor, fleet=fleet, with_fleet=with_fleet), parser(JobsPage.parse))

    def workers(self) -> "Pending[List[WorkerInfo]]":
        return self._add({"op": "workers"}, workers_list)

    def inspect(self, worker: str) -> "Pending[str]":
        return self._add({"op": "inspect", "worker": worker}, inspect_description)

    def mode(self, worker: str, mode: str) -> "Pending[ModeChange]":
        return self._add({"op": "mode", "worker": worker, "mode": mode}, parser(ModeChange.parse))

    def retry(self, job: Optional[str] = None, *, state: Union[str, Iterable[str], None] = None,
              worker: Optional[str] = None, action: Optional[str] = None, since: Union[datetime, str, None] = None,
              limit: Optional[int] = None) -> "Pending[RetryResult]":
        return self._add(ended_jobs_request("retry", job, state=state, worker=worker, action=action, since=since, limit=limit), parser(RetryResult.parse))

    def discard(self, job: Optional[str] = None, *, state: Union[str, Iterable[str], None] = None,
              worker: Optional[str] = None, action: Optional[str] = None, since: Union[datetime, str, None] = None,
              limit: Optional[int] = None) -> "Pending[DiscardResult]":
        return self._add(ended_jobs_request("discard", job, state=state, worker=worker, action=action, since=since, limit=limit), parser(DiscardResult.parse))

    def schedules(self) -> "Pending[List[ScheduleInfo]]":
        return self._add({"op": "schedules"}, schedules_list)

    def schedule(self, command: str, name: str) -> "Pending[ScheduleChange]":
        return self._add({"op": command, "schedule": name}, parser(ScheduleChange.parse))

    def stats(self) -> "Pending[Stats]":
        return self._add({"op": "stats"}, parser(Stats.parse))

    def metrics(self) -> "Pending[Metrics]":
        return self._add({"op": "metrics"}, parser(Metrics.parse))
