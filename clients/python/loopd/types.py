"""Typed results of the loopd operations, and the request builders and
reply parsers both clients share.

Every result keeps the reply it came from in ``raw`` (fields a newer daemon
adds are there); the typed attributes are the fields docs/PROTOCOL.md
documents. Times are timezone-aware :class:`datetime.datetime` in UTC.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import error_from_reply

__all__ = [
    "JobState",
    "FINAL_STATES",
    "ErrorInfo",
    "Ping",
    "JobReply",
    "JobUsage",
    "JobStatus",
    "CancelResult",
    "JobsPage",
    "WorkerInfo",
    "ModeChange",
    "Stats",
    "Metrics",
]

Reply = Dict[str, Any]


class JobState(str, enum.Enum):
    """A job's state (docs/PROTOCOL.md, "States"). Members are strings:
    ``JobState.COMPLETED == "completed"``."""

    DELAYED = "delayed"
    QUEUED = "queued"
    HELD = "held"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    EXPIRED = "expired"

    def __str__(self) -> str:
        return self.value

    @property
    def is_final(self) -> bool:
        """Whether the job has ended: completed, failed, timed out, cancelled or expired."""
        return self in FINAL_STATES


FINAL_STATES = frozenset({JobState.COMPLETED, JobState.FAILED, JobState.TIMED_OUT, JobState.CANCELLED,
                          JobState.EXPIRED})


def _state(value: Any) -> str:
    """A :class:`JobState` when the name is known, else the string as sent."""
    try:
        return JobState(value)
    except ValueError:
        return str(value)


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """An RFC 3339 time from a reply (``2026-11-24T07:01:02.345Z``)."""
    if value is None:
        return None
    if value.endswith("Z") or value.endswith("z"):
        value = value[:-1] + "+00:00"
    return datetime.fromisoformat(value)


def format_time(value: Union[datetime, str]) -> str:
    """An RFC 3339 time for a request; a naive datetime is taken as UTC."""
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    value = value.astimezone(timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class ErrorInfo:
    """The ``error`` object of a reply or of a job's status."""

    code: str
    message: str

    @classmethod
    def parse(cls, value: Any) -> Optional["ErrorInfo"]:
        if not isinstance(value, dict):
            return None
        return cls(code=str(value.get("code", "")), message=str(value.get("message", "")))


@dataclass(frozen=True)
class Ping:
    """``ping``: the daemon's process id and release."""

    pid: int
    version: str
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "Ping":
        return cls(pid=r["pid"], version=r["version"], raw=r)


@dataclass(frozen=True)
class JobUsage:
    """What an exec job's processes used, as the kernel counted them: the
    ``usage`` object of ``status``, of each ``jobs`` entry and of a waited
    ``submit``'s (or ``wait``'s) reply. Only exec jobs that ran have one."""

    #: CPU time in user mode, and in the kernel on the job's behalf, in microseconds.
    cpu_user_usec: int
    cpu_system_usec: int
    #: The most memory in use at once, in bytes; ``None`` when the daemon could not tell.
    memory_peak_bytes: Optional[int]
    #: Where the figures come from: ``"cgroup"`` (the job's cgroup: every
    #: process of its tree) or ``"rusage"`` (wait4 of its main process: that
    #: process and the descendants it waited for).
    source: str

    @property
    def cpu_usec(self) -> int:
        """User plus system CPU time, in microseconds."""
        return self.cpu_user_usec + self.cpu_system_usec

    @classmethod
    def parse(cls, value: Any) -> Optional["JobUsage"]:
        """The ``usage`` member of a reply; ``None`` when there is none."""
        if not isinstance(value, dict):
            return None
        peak = value.get("memory_peak_bytes")
        return cls(cpu_user_usec=int(value.get("cpu_user_usec", 0)),
                   cpu_system_usec=int(value.get("cpu_system_usec", 0)),
                   memory_peak_bytes=None if peak is None else int(peak), source=str(value.get("source", "")))


@dataclass(frozen=True)
class JobReply:
    """The reply to ``submit`` or ``wait``.

    ``state`` is final (``completed``) when the job was waited for, or
    ``delayed``/``queued``/``held`` for ``wait=False`` (and ``running`` too
    for a ``wait`` whose ``timeout_ms`` passed). ``result`` is the action's
    result once the job has finished, else ``None``. A job that failed,
    timed out or was cancelled is raised as a :class:`~loopd.errors.JobError`
    instead.
    """

    job: str
    state: str
    worker: Optional[str]
    result: Optional[Dict[str, Any]] = None
    #: The attempt the job is on or ended on (jobs submitted with ``retries``); else ``None``.
    attempt: Optional[int] = None
    #: True when a ``submit``'s ``unique_key`` named a job already known: this is that job.
    duplicate: bool = False
    #: What an exec job's processes used, once it has ended (see :class:`JobUsage`).
    usage: Optional[JobUsage] = None
    #: ``status`` only: the arguments it was submitted with, and the uid that submitted it.
    args: Optional[Tuple[str, ...]] = None
    submitted_by: Optional[int] = None
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @property
    def finished(self) -> bool:
        """Whether the job had ended when the reply was written."""
        return self.state in FINAL_STATES

    @classmethod
    def parse(cls, r: Reply) -> "JobReply":
        return cls(job=r["job"], state=_state(r["state"]), worker=r.get("worker"), result=r.get("result"),
                   attempt=r.get("attempt"), duplicate=bool(r.get("duplicate", False)),
                   usage=JobUsage.parse(r.get("usage")), raw=r)


@dataclass(frozen=True)
class AttemptInfo:
    """One failed attempt of a job with ``retries``: which, why, and when it ended."""

    attempt: int
    code: str
    message: str
    finished_at: Optional[datetime] = None

    @classmethod
    def parse(cls, value: Any) -> "AttemptInfo":
        return cls(attempt=int(value.get("attempt", 0)), code=str(value.get("code", "")),
                   message=str(value.get("message", "")), finished_at=parse_time(value.get("finished_at")))


@dataclass(frozen=True)
class JobStatus:
    """A job as ``status`` describes it (and as ``jobs`` lists it, without ``result``)."""

    job: str
    state: str
    worker: Optional[str] = None
    action: Optional[str] = None
    durable: bool = False
    submitted_at: Optional[datetime] = None
    started_at: Optional[datetime] = None
    finished_at: Optional[datetime] = None
    queue_ms: Optional[int] = None
    run_ms: Optional[int] = None
    result: Optional[Dict[str, Any]] = None
    error: Optional[ErrorInfo] = None
    cancelled_by: Optional[int] = None
    #: Which attempt runs (or ran last), from 1; ``retries``: how many extra attempts it may have.
    attempt: int = 1
    retries: int = 0
    unique_key: Optional[str] = None
    #: The most recent failed attempt's error, and (``status`` only) every failed attempt, the last 8.
    last_error: Optional[ErrorInfo] = None
    attempts: Tuple["AttemptInfo", ...] = ()
    #: What an exec job's processes used, once it has ended (see :class:`JobUsage`).
    usage: Optional[JobUsage] = None
    #: ``status`` only: the arguments it was submitted with, and the uid that submitted it.
    args: Optional[Tuple[str, ...]] = None
    submitted_by: Optional[int] = None
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @property
    def finished(self) -> bool:
        """Whether the job has ended."""
        return self.state in FINAL_STATES

    @classmethod
    def parse(cls, r: Reply) -> "JobStatus":
        return cls(job=r["job"], state=_state(r["state"]), worker=r.get("worker"), action=r.get("action"),
                   durable=bool(r.get("durable", False)), submitted_at=parse_time(r.get("submitted_at")),
                   started_at=parse_time(r.get("started_at")), finished_at=parse_time(r.get("finished_at")),
                   queue_ms=r.get("queue_ms"), run_ms=r.get("run_ms"), result=r.get("result"),
                   error=ErrorInfo.parse(r.get("error")), cancelled_by=r.get("cancelled_by"),
                   attempt=int(r.get("attempt", 1)), retries=int(r.get("retries", 0)), unique_key=r.get("unique_key"),
                   last_error=ErrorInfo.parse(r.get("last_error")),
                   attempts=tuple(AttemptInfo.parse(a) for a in r.get("attempts", ()) if isinstance(a, dict)),
                   usage=JobUsage.parse(r.get("usage")),
                   args=tuple(str(a) for a in r["args"]) if isinstance(r.get("args"), list) else None,
                   submitted_by=r.get("submitted_by"), raw=r)


@dataclass(frozen=True)
class CancelResult:
    """``cancel``: whether this request cancelled the job, its state, and
    whether it had started (a started job may have done some of its work)."""

    job: str
    cancelled: bool
    state: str
    started: bool
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "CancelResult":
        return cls(job=r["job"], cancelled=bool(r["cancelled"]), state=_state(r["state"]),
                   started=bool(r.get("started", False)), raw=r)


@dataclass(frozen=True)
class JobsPage:
    """One page of ``jobs``; ``next_cursor`` is ``None`` on the last page."""

    jobs: List[JobStatus]
    next_cursor: Optional[str]
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "JobsPage":
        return cls(jobs=[JobStatus.parse(j) for j in r.get("jobs", [])], next_cursor=r.get("next_cursor"), raw=r)


@dataclass(frozen=True)
class WorkerInfo:
    """One worker in ``workers``: its mode, load and loop state, and the job
    it runs. ``running`` is that job's id only when this client may see the
    job (its own; any job for an administrator); ``busy``,
    ``running_action`` and ``running_since`` tell of the running job
    whoever's it is."""

    name: str
    mode: str
    placement: Optional[str]
    queued: int
    held: int
    running: Optional[str]
    loop: str
    stalled_ms: int
    completed: int
    #: Whether it runs a job now, whoever's.
    busy: bool = False
    #: While ``busy``: the running job's action and when it started; else ``None``.
    running_action: Optional[str] = None
    running_since: Optional[datetime] = None
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "WorkerInfo":
        running = r.get("running")
        return cls(name=r["name"], mode=r["mode"], placement=r.get("placement"), queued=r.get("queued", 0),
                   held=r.get("held", 0), running=running, loop=r.get("loop", ""),
                   stalled_ms=r.get("stalled_ms", 0), completed=r.get("completed", 0),
                   busy=bool(r.get("busy", running is not None)), running_action=r.get("running_action"),
                   running_since=parse_time(r.get("running_since")), raw=r)


@dataclass(frozen=True)
class ModeChange:
    """``mode``: the worker, the mode it switched to and the one before."""

    worker: str
    mode: str
    previous: str
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "ModeChange":
        return cls(worker=r["worker"], mode=r["mode"], previous=r["previous"], raw=r)


@dataclass(frozen=True)
class ScheduleInfo:
    """One schedule in ``schedules`` (a ``[schedules.NAME]`` table of
    loopd.toml). ``last_job`` and ``last_state`` are sent to administrators
    only (a schedule's jobs are loopd's own)."""

    name: str
    action: str
    #: The grid, for people: ``every 5m``, ``cron 0 9 * * 1-5 (local)``.
    when: str
    catch_up: str
    overlap: str
    #: This host's fixed delay after each slot, milliseconds.
    delay_ms: int
    paused: bool
    #: The next slot plus the delay; ``None`` while paused.
    next_run: Optional[datetime]
    last_slot: Optional[datetime]
    last_job: Optional[str]
    last_state: Optional[str]
    #: Why the last submit was refused, if it was.
    last_error: Optional[str]
    #: Since loopd started: jobs submitted, slots that submitted none.
    fired: int
    skipped: int
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "ScheduleInfo":
        return cls(name=r["name"], action=r["action"], when=r["when"], catch_up=r.get("catch_up", "one"),
                   overlap=r.get("overlap", "skip"), delay_ms=r.get("delay_ms", 0), paused=bool(r.get("paused")),
                   next_run=parse_time(r.get("next_run")), last_slot=parse_time(r.get("last_slot")),
                   last_job=r.get("last_job"), last_state=r.get("last_state"), last_error=r.get("last_error"),
                   fired=r.get("fired", 0), skipped=r.get("skipped", 0), raw=r)


@dataclass(frozen=True)
class ScheduleChange:
    """``pause``, ``resume``, ``trigger``: the schedule, whether it is paused
    now, and the job a ``trigger`` submitted."""

    schedule: str
    paused: bool
    job: Optional[str] = None
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "ScheduleChange":
        return cls(schedule=r["schedule"], paused=bool(r.get("paused")), job=r.get("job"), raw=r)


@dataclass(frozen=True)
class Stats:
    """``stats``: the daemon's counters since it started. The nested groups
    (``replies``, ``retained``, ``latency_us``, ``journal``) are dicts as sent."""

    accepted: int
    completed: int
    failed: int
    timed_out: int
    cancelled: int
    queued: int
    running: int
    connections: int
    connections_paused: int
    latency_us: Dict[str, int]
    journal: Dict[str, int]
    replies: Dict[str, int]
    retained: Dict[str, int]
    idle_trims: int
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "Stats":
        return cls(accepted=r.get("accepted", 0), completed=r.get("completed", 0), failed=r.get("failed", 0),
                   timed_out=r.get("timed_out", 0), cancelled=r.get("cancelled", 0), queued=r.get("queued", 0),
                   running=r.get("running", 0), connections=r.get("connections", 0),
                   connections_paused=r.get("connections_paused", 0), latency_us=r.get("latency_us", {}),
                   journal=r.get("journal", {}), replies=r.get("replies", {}), retained=r.get("retained", {}),
                   idle_trims=r.get("idle_trims", 0), raw=r)


@dataclass(frozen=True)
class Metrics:
    """``metrics``: the Prometheus text exposition and its media type."""

    content_type: str
    text: str
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "Metrics":
        return cls(content_type=r["content_type"], text=r["text"], raw=r)


# ---------------------------------------------------------------- requests


def _drop_none(fields: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def submit_request(action: str, args: Sequence[str] = (), *, worker: Optional[str] = None,
                   key: Optional[str] = None, wait: bool = True, delay_ms: Optional[int] = None,
                   timeout_ms: Optional[int] = None, mode: Optional[str] = None,
                   durable: bool = False, retries: Optional[int] = None, retry_backoff_ms: Optional[int] = None,
                   unique_key: Optional[str] = None, priority: Optional[int] = None,
                   expires_in_ms: Optional[int] = None, fleet: Optional[bool] = None,
                   node: Optional[str] = None) -> Dict[str, Any]:
    """The ``submit`` request object (fields at their defaults are left out)."""
    if isinstance(args, str):
        raise TypeError("args is a sequence of strings, not one string")
    req: Dict[str, Any] = {"op": "submit", "action": action}
    if args:
        req["args"] = list(args)
    req.update(_drop_none({"worker": worker, "key": key, "delay_ms": delay_ms, "timeout_ms": timeout_ms,
                           "mode": mode, "retries": retries, "retry_backoff_ms": retry_backoff_ms,
                           "unique_key": unique_key, "priority": priority, "expires_in_ms": expires_in_ms,
                           "fleet": fleet, "node": node}))
    if not wait:
        req["wait"] = False
    if durable:
        req["durable"] = True
    return req


def jobs_request(state: Union[str, Iterable[str], None] = None, *, worker: Optional[str] = None,
                 action: Optional[str] = None, since: Union[datetime, str, None] = None,
                 limit: Optional[int] = None, cursor: Optional[str] = None, fleet: bool = False,
                 with_fleet: bool = False) -> Dict[str, Any]:
    """The ``jobs`` request object."""
    req: Dict[str, Any] = {"op": "jobs"}
    if state is not None:
        req["state"] = str(state) if isinstance(state, str) else [str(s) for s in state]
    req.update(_drop_none({"worker": worker, "action": action, "limit": limit, "cursor": cursor}))
    if since is not None:
        req["since"] = format_time(since)
    if fleet:
        req["fleet"] = True
    if with_fleet:
        req["with_fleet"] = True
    return req


def ended_jobs_request(op: str, job: Optional[str] = None, *, state: Union[str, Iterable[str], None] = None,
                       worker: Optional[str] = None, action: Optional[str] = None,
                       since: Union[datetime, str, None] = None, limit: Optional[int] = None) -> Dict[str, Any]:
    """A ``retry`` or ``discard`` request: one ``job``, or the filters of ``jobs``."""
    if job is not None:
        return {"op": op, "job": job}
    req = jobs_request(state, worker=worker, action=action, since=since, limit=limit)
    req["op"] = op
    return req


@dataclass(frozen=True)
class RetryResult:
    """``retry``: for one job, ``job`` (the new one) and ``retry_of``; in
    bulk, ``retried`` ((old, new) pairs), ``refused`` ((old, ErrorInfo)
    pairs) and ``more`` (more jobs matched than the limit)."""

    job: Optional[str] = None
    retry_of: Optional[str] = None
    retried: List[Tuple[str, str]] = field(default_factory=list)
    refused: List[Tuple[str, Optional[ErrorInfo]]] = field(default_factory=list)
    more: bool = False
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "RetryResult":
        return cls(job=r.get("job"), retry_of=r.get("retry_of"),
                   retried=[(x["job"], x["as"]) for x in r.get("retried", [])],
                   refused=[(x["job"], ErrorInfo.parse(x["error"])) for x in r.get("refused", [])],
                   more=bool(r.get("more")), raw=r)


@dataclass(frozen=True)
class DiscardResult:
    """``discard``: the ids discarded, and whether more jobs matched."""

    discarded: List[str]
    more: bool = False
    raw: Reply = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, r: Reply) -> "DiscardResult":
        jobs = [r["job"]] if "job" in r else list(r.get("discarded", []))
        return cls(discarded=jobs, more=bool(r.get("more")), raw=r)


def checked(reply: Reply) -> Reply:
    """The reply itself when ``ok`` is true; otherwise raises its typed error."""
    if reply.get("ok") is True:
        return reply
    raise error_from_reply(reply)


def parser(kind: Callable[[Reply], Any]) -> Callable[[Reply], Any]:
    """A reply parser that raises the reply's error first."""
    return lambda reply: kind(checked(reply))


def raw_reply(reply: Reply) -> Reply:
    return checked(reply)


def inspect_description(reply: Reply) -> str:
    return str(checked(reply)["description"])


def workers_list(reply: Reply) -> List[WorkerInfo]:
    return [WorkerInfo.parse(w) for w in checked(reply)["workers"]]


def schedules_list(reply: Reply) -> List[ScheduleInfo]:
    return [ScheduleInfo.parse(s) for s in checked(reply)["schedules"]]
