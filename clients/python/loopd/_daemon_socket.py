"""Which socket a client uses, and whose listening socket it accepts (both
clients share this; :func:`default_socket_path` is public as
``loopd.default_socket_path``)."""

from __future__ import annotations

import os
import socket
import struct
from typing import Optional, Union

from .errors import LoopdConnectionError, ServerUIDMismatchError

#: Where an installed loopd listens: made by systemd (``loopd.socket``) or by
#: loopd run as root, in a directory only root may write to.
INSTALLED_SOCKET_PATH = "/run/loopd.sock"

#: The environment variable that names the daemon's socket for every client.
SOCKET_ENVIRONMENT_VARIABLE = "LOOPD_SOCKET"

#: What a client's ``server_uid`` takes: ``None`` (the default rule), a uid,
#: or ``"any"``.
ServerUID = Union[int, str, None]

# struct ucred: pid, uid, gid.
_UCRED = struct.Struct("iII")


def default_socket_path() -> str:
    """The socket to use when none is given: ``$LOOPD_SOCKET`` when set and
    not empty, else ``/run/loopd.sock``, as loopctl and the Swift client
    choose it.

    A ``loopd.sock`` in the working directory (where ``make run`` puts the
    development daemon's) is never chosen by itself: whoever made that file
    would receive the requests. Name it to use it: ``Client("./loopd.sock")``
    or ``LOOPD_SOCKET=$PWD/loopd.sock``."""
    return os.environ.get(SOCKET_ENVIRONMENT_VARIABLE) or INSTALLED_SOCKET_PATH


def expected_server_uid(path: str, server_uid: ServerUID) -> Optional[int]:
    """The uid that must have made the listening socket at ``path``; None
    for no check. ``server_uid`` None: 0 at ``/run/loopd.sock`` (the path as
    given), no check elsewhere; ``"any"``: no check; a uid: that uid.
    Raises ValueError for anything else."""
    if server_uid is None:
        return 0 if path == INSTALLED_SOCKET_PATH else None
    if server_uid == "any":
        return None
    if isinstance(server_uid, int) and not isinstance(server_uid, bool) and 0 <= server_uid < 2 ** 32:
        return server_uid
    raise ValueError(f"server_uid must be None, a uid or 'any', not {server_uid!r}")


def check_server(sock: socket.socket, path: str, expected: Optional[int]) -> None:
    """Raises :class:`~loopd.ServerUIDMismatchError` unless the process that
    made ``sock``'s peer listen ran as ``expected`` (nothing to check when
    None). The kernel reports that uid for a connected Unix socket
    (SO_PEERCRED); call it before anything is written."""
    if expected is None:
        return
    try:
        _pid, uid, _gid = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    except OSError as e:
        # Fail closed: a listener whose owner cannot be read is not trusted.
        raise LoopdConnectionError(f"cannot read the uid behind loopd's socket at {path} (SO_PEERCRED): {e}") from e
    if uid != expected:
        raise ServerUIDMismatchError(path, expected, uid)
