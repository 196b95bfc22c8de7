"""ZeroMQ endpoints as env servers bind them and managers connect to them: one rule for both sides.

An endpoint is ``tcp://HOST:PORT`` (an IPv6 host in brackets; a port from 1 to 65535, as a larger one
would reach another port: ZeroMQ keeps its low 16 bits) or ``ipc://PATH``. ``inproc://`` is refused: no
client in another process reaches it. A server binding may give ``*`` for the host or the port.
"""

from __future__ import annotations

import re

_TCP = re.compile(r"tcp://(\[[^\]]+\]|[^\s:/\[\]]+):(\d{1,5}|\*)")
_IPC = re.compile(r"ipc://\S+")


def is_endpoint(address: str, bind: bool = False) -> bool:
    """Whether ``address`` is an endpoint a client of another process reaches (``bind``: a port ``*`` too)."""
    match = _TCP.fullmatch(address)
    if match is None:
        return _IPC.fullmatch(address) is not None
    port = match.group(2)
    return bind if port == "*" else 1 <= int(port) <= 65535


def tcp_host(address: str) -> str | None:
    """The host of a ``tcp://`` endpoint (without an IPv6 address's brackets), else None."""
    match = _TCP.fullmatch(address)
    return None if match is None else match.group(1).strip("[]")
