"""Framing and connection details both clients share (not public API)."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

from .errors import CLOSING_CODES, ConnectionClosedError, LoopdError, error_from_reply

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
_decode = json.JSONDecoder().decode


def encode(request: Dict[str, Any]) -> bytes:
    """One request line, compact, with its newline."""
    return _encoder.encode(request).encode("utf-8") + b"\n"


def decode(line: bytes) -> Optional[Dict[str, Any]]:
    """A reply line as a dict; None for a line that is not a JSON object."""
    try:
        obj = _decode(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def closing_error(reply: Dict[str, Any]) -> Optional[LoopdError]:
    """For a reply with ``"id":null`` whose code means the daemon closes the
    connection (too_large, busy, shutting_down, quota_exceeded for a
    connection beyond the user's quota): that error; else None."""
    if reply.get("id") is None and reply.get("ok") is False:
        err = reply.get("error")
        if isinstance(err, dict) and err.get("code") in CLOSING_CODES:
            return error_from_reply(reply)
    return None


def closed_error(path: str, cause: Optional[BaseException] = None) -> ConnectionClosedError:
    detail = f" ({cause})" if cause is not None and str(cause) else ""
    return ConnectionClosedError(
        f"loopd closed the connection on {path}{detail}: the daemon stopped or restarted; "
        "requests in flight got no reply; call reconnect() to connect again")
