"""One client connection to an env server: a request, then its reply, within a deadline.

A server that dies or a network that drops is noticed within ``heartbeat_timeout`` seconds, even
during a long step: ZeroMQ's own heartbeats (answered by the server's I/O thread, whatever its
envs are doing) drop a silent connection, and the connection's monitor reports the drop.

An address where nothing listens is given up after ``NO_LISTENER_TIMEOUT`` seconds (a running
server accepts at once; the grace covers one started at the same moment), whatever the request's
own time limit; the error says what was waited for and what to check.
"""

from __future__ import annotations

import socket
import time
from typing import Any, NamedTuple

import zmq
from zmq.utils.monitor import recv_monitor_message

from ding_env.ops import Op
from ding_env.remote.endpoints import tcp_host
from ding_env.remote.errors import ServerLostError
from ding_env.remote.messages import read_reply, request_frames
from ding_env.remote.protocol import HELLO, new_client_id
from ding_env.remote.spin import Spinner
from ding_env.remote.step_wire import step_rows

DEFAULT_TIMEOUT = 30.0
DEFAULT: Any = object()  # a request's timeout when none is given: the connection's
DEFAULT_HEARTBEAT_TIMEOUT = 1.5
HEARTBEATS_PER_TIMEOUT = 3  # pings sent within one heartbeat timeout
# Seconds of refused connections (nothing listens at the address) after which a request is given up.
NO_LISTENER_TIMEOUT = 5.0
# What the connection's monitor reports: drops, and whether the server's port ever accepted.
MONITORED_EVENTS = zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECTED | zmq.EVENT_CONNECT_RETRIED


class Ticket(NamedTuple):
    """A request sent and not yet answered: what :meth:`ServerConnection.receive` needs to take its reply."""

    seq: int
    kind: str
    sent_at: float
    rows: tuple[Any, Any] | None = None  # a step's env ids and reset flags, which its reply may leave to it


class ServerConnection:
    """Requests to the server at ``address``; opens with the protocol handshake.

    Args:
        address: The server's ZeroMQ endpoint, e.g. ``tcp://127.0.0.1:5555``.
        timeout: Default seconds to wait for a reply.
        heartbeat_timeout: Seconds of silence from the server's side of the connection that end it.
        context: The ZeroMQ context to use (default: the process's shared one).
        keys: A folder with ``client.key_secret`` and ``server.key`` for a server started with keys.
        client_id: The client's id, the same for every connection it opens (default: a random one): the server
            gives a new connection of the client holding its lease the lease at once (the old one is then refused
            as busy).
        workers_hint: How the server's envs get worker processes, said when a request gets no reply from a
            server that answered before (its env may be stuck in a call that only a worker's limit cuts).

    Raises:
        ServerLostError: If the server does not answer the handshake within ``timeout`` (within
            ``NO_LISTENER_TIMEOUT`` if nothing listens at ``address``), naming what to check.
        ProtocolMismatchError: If it speaks another protocol version.
    """

    def __init__(
        self,
        address: str,
        timeout: float = DEFAULT_TIMEOUT,
        heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
        context: zmq.Context | None = None,
        keys: str | None = None,
        client_id: str | None = None,
        workers_hint: str = "serve with --workers N",
    ) -> None:
        self.address = address
        self.workers_hint = workers_hint  # how the server's envs get worker processes, which cut a stuck step
        self.client_id = client_id or new_client_id()
        self.timeout = timeout
        self.heartbeat_timeout = heartbeat_timeout
        # DEALER, not REQ: after a timed-out request the next one can still be sent; late replies are
        # recognised by their sequence number and dropped.
        self._socket = (context or zmq.Context.instance()).socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._keys = keys
        if keys is not None:
            from ding_env.remote.keys import secure_client

            try:
                secure_client(self._socket, keys)
            except BaseException:
                self._socket.close(linger=0)
                raise
        self._socket.setsockopt(zmq.HEARTBEAT_IVL, max(1, int(heartbeat_timeout * 1000 / HEARTBEATS_PER_TIMEOUT)))
        self._socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, max(1, int(heartbeat_timeout * 1000)))
        self._monitor = self._socket.get_monitor_socket(MONITORED_EVENTS)
        self._connected = False  # the server's port accepted the connection once
        self._replied_at = 0.0  # when its last reply arrived (0.0: none yet)
        self._refused_since: float | None = None  # when a connection was first refused (nothing listening)
        self._dropped = False  # the monitor reported the connection dropped, and no receive has raised it yet
        self._poller = zmq.Poller()
        self._poller.register(self._socket, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)
        self._spinner = Spinner()  # polls for replies before blocking while they come quickly
        self._socket.connect(address)
        self._seq = 0
        try:
            hello = self.request(HELLO, client_id=self.client_id)
            self.env_num: int = hello["env_num"]
            self.env_description: str = hello["env"]  # the served envs' repr ('' when the server could not say)
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

    def send(self, kind: str, **body: Any) -> Ticket:
        """Send request ``kind`` without waiting: its ticket for :meth:`receive`.

        Servers on several machines work in parallel when each gets its request before any reply is awaited.
        """
        self._seq += 1
        self._socket.send_multipart(request_frames(kind, self._seq, body), copy=False)
        rows = (body.get("env_ids"), body.get("reset_on_done")) if kind == Op.STEP else None
        return Ticket(self._seq, kind, time.monotonic(), rows)

    def has_reply(self, timeout: float = 0.0) -> bool:
        """Whether a reply (or news of a dropped connection) arrived, waiting at most ``timeout`` seconds."""
        start = time.monotonic()
        if self._spinner.arrived(self._socket, timeout):
            return True
        left = max(0.0, timeout - (time.monotonic() - start))
        ready = dict(self._poller.poll(int(left * 1000)))  # the rest of the time, blocked
        if self._monitor in ready:
            self._take_events()  # other news of the connection (connected, retried) is no reply
        return self._socket in ready or self._dropped

    def receive(self, ticket: Ticket, timeout: float | None = DEFAULT) -> dict:
        """The reply to the request of ``ticket``; raises as :meth:`request` does (``timeout=None``: no limit).

        ``timeout`` counts from when the request was sent, or from the server's last reply when that came later
        (the server answers this connection's requests one after another, so a request queued behind others
        gets its own ``timeout`` once they are answered): replies awaited one after another from servers
        working at once (a step or a close sent to each) are all awaited within it.
        """
        seq, kind, sent_at, rows = ticket
        timeout = self.timeout if timeout is DEFAULT else timeout
        deadline = None if timeout is None else max(sent_at, self._replied_at) + timeout
        # The reply is likely close: poll for it before blocking (the monitor's news is read at the next wait).
        spun = self._spinner.arrived(self._socket, timeout)
        while True:
            wait_until = self._give_up_at(deadline)
            left_ms = None if wait_until is None else max(0, int((wait_until - time.monotonic()) * 1000))
            ready = {self._socket: zmq.POLLIN} if spun else dict(self._poller.poll(left_ms))
            spun = False
            if self._monitor in ready:
                self._take_events()
            if self._dropped:
                self._dropped = False  # told once, as the monitor told it
                if kind == HELLO:  # CurveZMQ drops a connection whose keys do not match (as a dead server does)
                    hint = self._keys_hint()
                    why = f"the connection dropped at the handshake: check that the server still runs; {hint}"
                else:
                    why = (
                        "the connection dropped (the server exited, stopped answering ZeroMQ's heartbeats for "
                        f"{self.heartbeat_timeout:g} s as a frozen or stopped process does, or the network failed)"
                    )
                raise ServerLostError(self.address, kind, timeout, why, dropped=True)
            if self._socket not in ready:
                if wait_until is None or time.monotonic() < wait_until:
                    continue
                raise ServerLostError(self.address, kind, timeout, self._silence(timeout))
            reply_seq, reply, error = read_reply(self._socket.recv_multipart(copy=False))
            self._replied_at = time.monotonic()
            if reply_seq != seq:
                if deadline is not None:  # an earlier request answered: this one is the server's next
                    deadline = max(deadline, self._replied_at + timeout)
                continue  # the late reply of a request that timed out
            if error is not None:
                raise error
            # A step reply's rows are the request's envs unless it lists them (it had the other rows too).
            return reply if rows is None else step_rows(reply, *rows)

    def _take_events(self) -> None:
        """Read every event the monitor holds; a dropped connection is kept for ``receive`` to raise."""
        while self._monitor.poll(0):
            if self._read_event() == zmq.EVENT_DISCONNECTED:
                self._dropped = True

    def _read_event(self) -> int:
        """The next event of the connection's monitor, noting whether the server's port accepts."""
        event = recv_monitor_message(self._monitor)["event"]
        if event == zmq.EVENT_CONNECTED:
            self._connected = True
        elif event == zmq.EVENT_CONNECT_RETRIED and not self._connected and self._refused_since is None:
            self._refused_since = time.monotonic()
        return event

    def _give_up_at(self, deadline: float | None) -> float | None:
        """When to stop waiting for a reply: ``deadline``, or sooner while nothing listens at the address."""
        if self._connected or self._refused_since is None:
            return deadline
        no_listener = self._refused_since + NO_LISTENER_TIMEOUT
        return no_listener if deadline is None else min(deadline, no_listener)

    def _silence(self, timeout: float | None) -> str:
        """Why a request got no reply, and what to check."""
        if self._replied_at:  # it answered once, so it listens and takes our keys: it stopped answering
            return (
                f"no reply within {timeout} s from a server that answered before: an env of its is stuck in a call "
                f"its process cannot cut ({self.workers_hint}: a worker's step is cut at step_timeout), or the "
                "server is frozen"
            )
        if self._connected:
            return (
                f"no reply within {timeout} s, though the connection was accepted: check that a `ding-env serve` "
                f"server listens there; {self._keys_hint()}"
            )
        unresolved = _unresolved(self.address)
        if unresolved is not None:
            return f"{unresolved}: check the host name in the manager config's `servers`"
        if self._refused_since is not None:
            return (
                f"nothing listens there (connection refused for {time.monotonic() - self._refused_since:.1f} s): "
                f"check that `ding-env serve TARGET --envs N --bind {self.address}` runs on that machine and "
                "that the manager config's `servers` names its address"
            )
        return (
            f"no connection within {timeout} s: check that the host is reachable and the port open "
            "(a firewall, or an SSH tunnel that is not up)"
        )

    def _keys_hint(self) -> str:
        """What to check about keys: a server answers only clients whose keys match its own (``--keys``)."""
        if self._keys is None:
            return (
                "a server started with --keys answers only clients holding its keys: give the manager keys_dir "
                "(the folder `ding-env keygen` wrote)"
            )
        return (
            f"with keys_dir {self._keys!r} the server must run with --keys, admitting that folder's client.key, "
            "and server.key must be the server's (a server without keys drops clients with keys)"
        )

    def give_back(self, error: BaseException, timeout: float) -> None:
        """Close after a failed launch, asking the server to give its envs back first.

        The server holds them for this client until a ``close`` request (or its lease timeout): without one, a
        manager launched again at once, its config fixed, would be refused as another client for that long.
        A failure to ask is noted on ``error``, which the caller raises.
        """
        try:
            self.request(Op.CLOSE, timeout)
        except Exception as close_error:  # noqa: BLE001 - the launch's error is raised; this one is noted on it
            error.add_note(
                f"the server at {self.address} could not be asked to give its envs back ({close_error!r}): it keeps "
                "them for its --lease-timeout"
            )
        finally:
            self.close()

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


def _unresolved(address: str) -> str | None:
    """What name resolution says of a ``tcp://`` address's host when it does not resolve, else None.

    ZeroMQ reports such an address as a connection refused.
    """
    host = tcp_host(address)
    if host is None:
        return None
    try:
        socket.getaddrinfo(host, None)
    except OSError as error:  # socket.gaierror: an unknown name, or no resolver reachable
        return f"the host {host!r} does not resolve ({error})"
    return None
