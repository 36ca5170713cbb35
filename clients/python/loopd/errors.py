"""Exceptions raised by the loopd clients.

Every error the daemon answers with is a :class:`LoopdError` whose
subclass names the protocol's error code (docs/PROTOCOL.md, "Error codes"):
``bad_request`` is :class:`BadRequestError`, ``job_failed`` is
:class:`JobFailedError`, and so on. The classes are generated from
:data:`ERROR_TABLE`, which mirrors ``Sources/LoopdProtocol/ErrorCode.swift``
case for case (a test compares the two). A code this version does not know
(from a newer daemon) is raised as a plain :class:`LoopdError` with that
``code``.

The three codes that describe a job that ran and did not complete
(``timeout``, ``job_failed``, ``cancelled``, ``expired``) derive from :class:`JobError`
and carry the job's fields (``job``, ``state``, ``worker``, ``result``,
``usage``).

Problems with the connection itself are :class:`LoopdConnectionError`
(cannot connect, :class:`ConnectionClosedError` when the daemon went away),
:class:`ClientTimeoutError` when a reply did not come within the client's
timeout, and :class:`ServerUIDMismatchError` when the socket's listener is
not the uid the client requires; none of them has a protocol code.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple, Type

if TYPE_CHECKING:
    from .types import JobUsage

__all__ = [
    "ERROR_TABLE",
    "ERROR_CLASSES",
    "CLOSING_CODES",
    "LoopdError",
    "JobError",
    "LoopdConnectionError",
    "ConnectionClosedError",
    "ClientTimeoutError",
    "ServerUIDMismatchError",
    "BadRequestError",
    "UnknownOpError",
    "UnknownActionError",
    "UnknownWorkerError",
    "UnknownJobError",
    "UnknownScheduleError",
    "QueueFullError",
    "QuotaExceededError",
    "ForbiddenError",
    "TooLargeError",
    "JobTimeoutError",
    "JobFailedError",
    "JobCancelledError",
    "JobExpiredError",
    "JournalUnavailableError",
    "FleetUnavailableError",
    "ShuttingDownError",
    "BusyError",
    "InternalError",
    "error_from_reply",
]


class LoopdError(Exception):
    """Base class of every error this package raises.

    Attributes:
        code: the protocol error code (``"unknown_job"``, …), or ``None``
            for an error of the connection rather than of a request.
        message: the daemon's message, for people (it may change between
            releases; match on ``code`` or the class instead).
        reply: the whole reply object, when the error came in one.
    """

    code: Optional[str] = None

    def __init__(self, message: str, *, code: Optional[str] = None,
                 reply: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.reply: Dict[str, Any] = dict(reply) if reply is not None else {}

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" if self.code else self.message


class JobError(LoopdError):
    """A job ran (or was due to) and ended without completing: ``timeout``,
    ``job_failed`` or ``cancelled``. The reply's job fields are attributes."""

    @property
    def job(self) -> Optional[str]:
        """The job's id."""
        return self.reply.get("job")

    @property
    def state(self) -> Optional[str]:
        """Its final state: ``failed``, ``timed_out``, ``cancelled`` or ``expired``."""
        return self.reply.get("state")

    @property
    def worker(self) -> Optional[str]:
        """The worker it was placed on."""
        return self.reply.get("worker")

    @property
    def result(self) -> Optional[Dict[str, Any]]:
        """The action's (partial) result, e.g. an exec child's exit code and output."""
        return self.reply.get("result")

    @property
    def attempt(self) -> Optional[int]:
        """The attempt it ended on, for a job submitted with ``retries``."""
        return self.reply.get("attempt")

    @property
    def duplicate(self) -> bool:
        """Whether the submit's ``unique_key`` named a job already known (this one)."""
        return bool(self.reply.get("duplicate", False))

    @property
    def usage(self) -> Optional[JobUsage]:
        """What an exec job's processes used before it ended (see :class:`~loopd.types.JobUsage`)."""
        from .types import JobUsage  # types imports this module
        return JobUsage.parse(self.reply.get("usage"))


class LoopdConnectionError(LoopdError, builtins.ConnectionError):
    """The client cannot reach the daemon: the socket is missing, refused,
    or the connection broke. ``reconnect()`` tries again."""


class ConnectionClosedError(LoopdConnectionError):
    """The daemon closed the connection (it stopped or restarted, or closed
    it after ``too_large``). Requests in flight on it got no reply; call
    ``reconnect()`` to open a new connection."""


class ClientTimeoutError(LoopdError, builtins.TimeoutError):
    """No reply within the client's timeout. The request may still be
    carried out; its late reply is dropped and the connection stays usable."""


class ServerUIDMismatchError(LoopdError):
    """The daemon's listening socket was made by another uid than the client
    requires (its ``server_uid``: by default 0 at ``/run/loopd.sock``). The
    client closed the connection without writing to it. Not a
    :class:`LoopdConnectionError`: connecting again reaches the same socket.

    Attributes:
        path: the socket.
        expected_uid: the uid the client requires there.
        actual_uid: the uid of the process that made the socket listen
            (SO_PEERCRED).
    """

    def __init__(self, path: str, expected_uid: int, actual_uid: int) -> None:
        super().__init__(f"refusing the socket at {path}: uid {actual_uid} made it listen, "
                         f"not the expected uid {expected_uid}")
        self.path = path
        self.expected_uid = expected_uid
        self.actual_uid = actual_uid


# (code, class name, "job" for JobError else "request", doc), in the order of
# Sources/LoopdProtocol/ErrorCode.swift.
ERROR_TABLE: Tuple[Tuple[str, str, str, str], ...] = (
    ("bad_request", "BadRequestError", "request",
     "The request is not valid: bad JSON, a missing or mistyped field, an unknown field."),
    ("unknown_op", "UnknownOpError", "request", "The `op` is not one the daemon knows."),
    ("unknown_action", "UnknownActionError", "request", "The `action` is not configured."),
    ("unknown_worker", "UnknownWorkerError", "request", "The named worker does not exist."),
    ("unknown_job", "UnknownJobError", "request", "No job has that id (or its status is past retention)."),
    ("unknown_schedule", "UnknownScheduleError", "request", "No schedule has that name."),
    ("queue_full", "QueueFullError", "request", "The worker's queue is at its configured limit."),
    ("quota_exceeded", "QuotaExceededError", "request",
     "The client's uid is at one of its per-user quotas; the message names the quota and its value."),
    ("forbidden", "ForbiddenError", "request", "The client's uid/gid may not do that."),
    ("too_large", "TooLargeError", "request",
     "A request line is longer than the daemon's maximum; the daemon closes the connection."),
    ("timeout", "JobTimeoutError", "job", "The job ran past its timeout (state `timed_out`)."),
    ("job_failed", "JobFailedError", "job", "The job ran and failed (state `failed`)."),
    ("cancelled", "JobCancelledError", "job", "The job was cancelled before it finished (state `cancelled`)."),
    ("expired", "JobExpiredError", "job", "The job had not started when its `expires_in_ms` passed (state `expired`)."),
    ("journal_unavailable", "JournalUnavailableError", "request",
     "A durable job could not be written to the journal."),
    ("fleet_unavailable", "FleetUnavailableError", "request",
     "The fleet's database cannot be used from that daemon, or it is in no fleet; the message says which."),
    ("shutting_down", "ShuttingDownError", "request", "The daemon is stopping and accepts no new jobs."),
    ("busy", "BusyError", "request", "The daemon has too many connections; it closes this one."),
    ("internal", "InternalError", "request", "A fault inside the daemon; the message says what."),
)

#: Codes after which the daemon closes the connection (sent with ``"id":null``;
#: ``quota_exceeded`` so only for a connection beyond ``quotas.max_connections``).
CLOSING_CODES = frozenset({"too_large", "busy", "shutting_down", "quota_exceeded"})

# Declared for type checkers; bound by the loop below.
BadRequestError: Type[LoopdError]
UnknownOpError: Type[LoopdError]
UnknownActionError: Type[LoopdError]
UnknownWorkerError: Type[LoopdError]
UnknownJobError: Type[LoopdError]
UnknownScheduleError: Type[LoopdError]
QueueFullError: Type[LoopdError]
QuotaExceededError: Type[LoopdError]
ForbiddenError: Type[LoopdError]
TooLargeError: Type[LoopdError]
JobTimeoutError: Type[JobError]
JobFailedError: Type[JobError]
JobCancelledError: Type[JobError]
JobExpiredError: Type[JobError]
JournalUnavailableError: Type[LoopdError]
FleetUnavailableError: Type[LoopdError]
ShuttingDownError: Type[LoopdError]
BusyError: Type[LoopdError]
InternalError: Type[LoopdError]

#: Protocol error code -> exception class.
ERROR_CLASSES: Dict[str, Type[LoopdError]] = {}

for _code, _name, _kind, _doc in ERROR_TABLE:
    _base: Type[LoopdError] = JobError if _kind == "job" else LoopdError
    _cls = type(_name, (_base,), {"code": _code, "__doc__": f"``{_code}``: {_doc}", "__module__": __name__})
    ERROR_CLASSES[_code] = _cls
    globals()[_name] = _cls
del _code, _name, _kind, _doc, _base, _cls


def error_from_reply(reply: Mapping[str, Any]) -> LoopdError:
    """The exception for a reply with ``"ok": false``."""
    err = reply.get("error") or {}
    code = err.get("code") if isinstance(err, dict) else None
    message = err.get("message", "") if isinstance(err, dict) else str(err)
    cls = ERROR_CLASSES.get(code or "", LoopdError)
    return cls(message or (code or "error"), code=code, reply=reply)
