"""One client connection to an env server: a request, then its reply, within a deadline.

A server that dies or a network that drops is noticed within ``heartbeat_timeout`` seconds, even
during a long step: ZeroMQ's own heartbeats (answered by the server's I/O thread, whatever its
envs are doing) drop a silent connection, and the connection's monitor reports the drop.
"""

from __future__ import annotations

import time
from typing import Any

import zmq
from zmq.utils.monitor import recv_monitor_message

from ding_env.remote.errors import ServerLostError
from ding_env.remote.messages import read_reply, request_frames
from ding_env.remote.protocol import HELLO

DEFAULT_TIMEOUT = 30.0
DEFAULT: Any = object()  # a request's timeout when none is given: the connection's
DEFAULT_HEARTBEAT_TIMEOUT = 1.5
HEARTBEATS_PER_TIMEOUT = 3  # pings sent within one heartbeat timeout


class ServerConnection:
    """Requests to the server at ``address``; opens with the protocol handshake.

    Args:
        address: The server's ZeroMQ endpoint, e.g. ``tcp://127.0.0.1:5555``.
        timeout: Default seconds to wait for a reply.
        heartbeat_timeout: Seconds of silence from the server's side of the connection that end it.
        context: The ZeroMQ context to use (default: the process's shared one).
        keys: A folder with ``client.key_secret`` and ``server.key`` for a server started with keys.

    Raises:
        ServerLostError: If the server does not answer the handshake within ``timeout``.
        ProtocolMismatchError: If it speaks another protocol version.
    """

    def __init__(
        self,
        address: str,
        timeout: float = DEFAULT_TIMEOUT,
        heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
        context: zmq.Context | None = None,
        keys: str | None = None,
    ) -> None:
        self.address = address
        self.timeout = timeout
        # DEALER, not REQ: after a timed-out request the next one can still be sent; late replies are
        # recognised by their sequence number and dropped.
        self._socket = (context or zmq.Context.instance()).socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        if keys is not None:
            from ding_env.remote.keys import secure_client

            try:
                secure_client(self._socket, keys)
            except BaseException:
                self._socket.close(linger=0)
                raise
        self._socket.setsockopt(zmq.HEARTBEAT_IVL, max(1, int(heartbeat_timeout * 1000 / HEARTBEATS_PER_TIMEOUT)))
        self._socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, max(1, int(heartbeat_timeout * 1000)))
        self._monitor = self._socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._poller = zmq.Poller()
        self._poller.register(self._socket, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)
        self._socket.connect(address)
        self._seq = 0
        try:
            self.env_num: int = self.request(HELLO)["env_num"]
        except BaseException:
            self.close()
            raise

    def request(self, kind: str, timeout: float | None = DEFAULT, **body: Any) -> dict:
        """Send request ``kind`` with ``body`` and return its reply's body.

        Raises:
            ServerLostError: If no reply arrives within ``timeout`` (default: the connection's; None: no limit)
                or the connection drops.
            DingEnvError: The error the server replied with (``EnvError``, ``ServerError``, ...).
            WireError: If a value in ``body`` has no wire encoding, or the reply is malformed.
        """
        return self.receive(self.send(kind, **body), timeout)

    def send(self, kind: str, **body: Any) -> tuple[int, str]:
        """Send request ``kind`` without waiting: its ticket for :meth:`receive`.

        Servers on several machines work in parallel when each gets its request before any reply is awaited.
        """
        self._seq += 1
        self._socket.send_multipart(request_frames(kind, self._seq, body), copy=False)
        return self._seq, kind

    def has_reply(self, timeout: float = 0.0) -> bool:
        """Whether a reply (or news of a dropped connection) arrived, waiting at most ``timeout`` seconds."""
        return bool(self._poller.poll(int(timeout * 1000)))

    def receive(self, ticket: tuple[int, str], timeout: float | None = DEFAULT) -> dict:
        """The reply to the request of ``ticket``; raises as :meth:`request` does (``timeout=None``: no limit)."""
        seq, kind = ticket
        timeout = self.timeout if timeout is DEFAULT else timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left_ms = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
            ready = dict(self._poller.poll(left_ms))
            if self._monitor in ready and recv_monitor_message(self._monitor)["event"] == zmq.EVENT_DISCONNECTED:
                raise ServerLostError(self.address, kind, timeout, "the connection dropped")
            if self._socket not in ready:
                if deadline is None or time.monotonic() < deadline:
                    continue
                raise ServerLostError(self.address, kind, timeout)
            reply_seq, reply, error = read_reply(self._socket.recv_multipart(copy=False))
            if reply_seq != seq:
                continue  # the late reply of a request that timed out
            if error is not None:
                raise error
            return reply

    def close(self) -> None:
        """Close the socket (the server's envs stay until a ``close`` request or the lease ends); idempotent."""
        if self._socket.closed:
            return
        self._socket.disable_monitor()
        self._monitor.close(linger=0)
        self._socket.close(linger=0)

    def __enter__(self) -> ServerConnection:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
