"""A Python client for loopd, the run-loop job daemon.

Standard library only. :class:`Client` is a blocking connection (with a
:meth:`~Client.pipeline` for batches); :class:`AsyncClient` is an asyncio
connection that many tasks share, requests matched to replies by id.
Both speak the JSON Lines protocol of docs/PROTOCOL.md; every error code
of the protocol is a subclass of :class:`LoopdError`. Without a path they
use :func:`default_socket_path` (``$LOOPD_SOCKET``, else ``/run/loopd.sock``),
and before writing anything they check which uid made the socket listen
(their ``server_uid``).
"""

from ._daemon_socket import INSTALLED_SOCKET_PATH, default_socket_path
from .aio import DEFAULT_MAX_IN_FLIGHT, AsyncClient
from .client import Client, Pending, Pipeline
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _errors_all
from .types import (FINAL_STATES, AttemptInfo, CancelResult, ErrorInfo, JobReply, JobsPage, JobState, JobStatus,
                    JobUsage, Metrics, ModeChange, Ping, RetryResult, DiscardResult, ScheduleChange, ScheduleInfo,
                    Stats, WorkerInfo)

__version__ = "0.2.0"

__all__ = [
    "Client", "Pipeline", "Pending", "AsyncClient", "DEFAULT_MAX_IN_FLIGHT", "default_socket_path",
    "INSTALLED_SOCKET_PATH",
    "JobState", "FINAL_STATES", "ErrorInfo", "Ping", "JobReply", "JobStatus", "JobUsage", "AttemptInfo", "CancelResult",
    "JobsPage", "WorkerInfo", "ModeChange", "ScheduleInfo", "ScheduleChange", "RetryResult", "DiscardResult", "Stats", "Metrics",
] + list(_errors_all)
