"""The env server: N envs of one machine, answering one client's requests over ZeroMQ.

A ROUTER socket receives requests (``headers.REQUESTS``) and answers each with one reply. The
server serves one client at a time: the connection whose ``hello`` it accepted owns the envs (holds
the lease) until it sends ``close`` or stays silent for ``lease_timeout`` seconds; another client's
requests meanwhile get a "busy" error. A hello on a new connection with the lease holder's client id
(a client that gave up its connection, to a frozen server say, and connects again) takes the lease
at once. A new owner gets freshly built envs.

Nothing that arrives is trusted: a message is decoded by :mod:`ding_env.remote.messages` (typed
msgpack headers and raw buffers, never pickle), and anything malformed (wrong frame count, a header
that is not msgpack, an unknown request or field, another protocol version, arrays whose buffers do
not match their shapes, a message over ``max_message_bytes``) gets an error reply or a dropped
connection while the server keeps serving.

By default the server binds to loopback only. With ``keys`` (``ding-env keygen``) connections are
encrypted and only clients holding an admitted key are answered (CurveZMQ); without them there is
no authentication or encryption, so a server reachable from other machines (``allow_remote=True``)
belongs on a private network or behind an SSH tunnel.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import stat
import time
from collections.abc import Callable
from typing import Any

import zmq

from ding_env.errors import ConfigError
from ding_env.ops import Op
from ding_env.remote.endpoints import is_endpoint, tcp_host
from ding_env.remote.errors import ServerError, WireError
from ding_env.remote.messages import peek, read_request, reply_frames
from ding_env.remote.protocol import HELLO
from ding_env.remote.served_envs import ServedEnvs
from ding_env.remote.spin import Spinner

DEFAULT_BIND = "tcp://127.0.0.1:5555"
DEFAULT_MAX_MESSAGE_BYTES = 256 * 2**20
DEFAULT_LEASE_TIMEOUT = 10.0
POLL_MS = 100  # how often the loop checks its stop condition while no request arrives

log = logging.getLogger(__name__)


def is_loopback(address: str) -> bool:
    """Whether ``address`` (a ZeroMQ endpoint) reaches this machine only: ``ipc://``, loopback tcp."""
    if address.startswith("ipc://"):
        return True
    host = tcp_host(address)
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # an interface name or a host name: may reach other machines


class EnvServer:
    """Serves the envs ``make_envs`` builds at ``bind``.

    Args:
        make_envs: Builds the served envs, once per client that takes them.
        bind: ZeroMQ endpoint to listen on; ``tcp://127.0.0.1:*`` picks a free port.
        allow_remote: Allow an endpoint other machines can reach without ``keys`` (no authentication).
        keys: A folder with ``server.key_secret`` and the admitted clients' public keys (``ding-env keygen``):
            connections are then encrypted and only those clients are answered (see ``remote.keys``).
        max_message_bytes: Larger incoming messages drop their sender's connection.
        lease_timeout: Seconds of silence after which the owning client loses its envs to a new client.

    Raises:
        ConfigError: For a ``bind`` that is not an endpoint, a non-loopback one without ``keys`` or
            ``allow_remote``, or a missing key file.
    """

    def __init__(
        self,
        make_envs: Callable[[], ServedEnvs],
        bind: str = DEFAULT_BIND,
        *,
        allow_remote: bool = False,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        lease_timeout: float = DEFAULT_LEASE_TIMEOUT,
        keys: str | None = None,
    ) -> None:
        if not is_endpoint(bind, bind=True):  # first: refusing it as reachable from other machines would mislead
            raise ConfigError(
                f"cannot bind {bind!r}: not a ZeroMQ endpoint; expected tcp://HOST:PORT with a port from 1 to 65535 "
                "(tcp://127.0.0.1:* for a free port) or ipc://PATH"
            )
        if not allow_remote and keys is None and not is_loopback(bind):
            raise ConfigError(
                f"refusing to bind {bind!r}: other machines could reach it and the server has no keys; give it keys "
                "(`ding-env keygen DIR`, then --keys DIR), or bind tcp://127.0.0.1:PORT and use an SSH tunnel"
            )
        self._make_envs = make_envs
        self._lease_timeout = lease_timeout
        self._envs: ServedEnvs | None = None
        self._owner: bytes | None = None  # the connection holding the lease
        self._owner_id = ""  # the client id its hello presented
        self._last_seen = 0.0
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.ROUTER)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
        self._authenticator = None
        self.address = ""  # the endpoint bound, once bound
        try:
            if keys is not None:
                from ding_env.remote.keys import secure_server

                self._authenticator = secure_server(self._socket, self._context, keys)
            self._socket.bind(bind)
        except zmq.ZMQError as error:
            self.close()
            raise ConfigError(f"cannot bind {bind!r}: {error}") from error
        except BaseException:
            self.close()
            raise
        self.address = self._socket.getsockopt_string(zmq.LAST_ENDPOINT)

    def serve(self, should_stop: Callable[[], bool] = lambda: False) -> None:
        """Answer requests until ``should_stop()`` or an exception (Ctrl-C); then close every env and worker."""
        spinner = Spinner()
        try:
            answered = False
            while not should_stop():
                # Right after a reply, the client's next request is likely close: poll for it before blocking.
                if (answered and spinner.arrived(self._socket)) or self._socket.poll(POLL_MS, zmq.POLLIN):
                    self.handle_one()
                    answered = True
                else:
                    answered = False
        finally:
            self.close()

    def handle_one(self) -> None:
        """Receive one message and send its reply."""
        frames = self._socket.recv_multipart(copy=False)
        envelope, frames = [frames[0]], frames[1:]
        if frames and len(frames[0]) == 0:  # a REQ client's empty delimiter frame
            envelope, frames = [*envelope, frames[0]], frames[1:]
        seq, kind, reply = self._answer(envelope[0].bytes, frames)
        try:
            self._socket.send_multipart(envelope + reply, copy=False)
        except zmq.ZMQError as error:  # the client is gone (ROUTER drops replies to unknown peers silently)
            log.warning("cannot reply to %s request %d: %s", kind, seq, error)

    def _answer(self, client: bytes, frames: list) -> tuple[int, str, list]:
        seq, kind = None, "message"
        try:
            seq, kind, body = read_request(frames)
            result = self._dispatch(client, kind, body)
            try:
                return seq, kind, reply_frames(seq, result, request=kind)
            except WireError:
                if kind == Op.STEP:
                    self._envs.step_reply_unsent()  # its infos' schemas are to be announced again
                raise
        except Exception as error:  # noqa: BLE001 - the client gets the error; the server keeps serving
            if seq is None:  # a malformed request: its number and kind as far as they can be read
                seq, kind = peek(frames)
            if not isinstance(error, (WireError, ServerError)):
                log.warning("%s request %d failed: %s: %s", kind, seq, type(error).__name__, error)
            try:
                return seq, kind, reply_frames(seq, error=error, request=kind)
            except WireError as encode_error:  # the error's own fields could not be encoded
                return seq, kind, reply_frames(seq, error=ServerError.of(encode_error, kind))

    def _dispatch(self, client: bytes, kind: str, body: dict) -> dict:
        now = time.monotonic()
        if client != self._owner:
            lease_over = now - self._last_seen > self._lease_timeout
            # The lease holder's client on a new connection (it gave up the old one) takes the lease back at once.
            rejoins = kind == HELLO and body["client_id"] != "" and body["client_id"] == self._owner_id
            if self._owner is not None and not lease_over and not rejoins:
                raise ServerError(
                    kind,
                    "Busy",
                    f"the server at {self.address} is serving another client (one client at a time; it frees the "
                    f"envs after {self._lease_timeout:g} s of silence from that client): give each manager servers "
                    "of its own (in a run config, env.evaluator_manager.servers for the evaluator)",
                )
            if kind != HELLO:
                raise ServerError(kind, "NoSession", "send hello first")
            self._release()
            self._owner, self._owner_id = client, body["client_id"]
        self._last_seen = now
        if kind == HELLO:
            if self._envs is None:
                self._envs = self._make_envs()
            return self._envs.hello()
        if self._envs is None:
            raise ServerError(kind, "NoSession", "the envs are closed; send hello to start again")
        result = getattr(self._envs, kind)(**body)
        if kind == Op.CLOSE:
            self._envs, self._owner, self._owner_id = None, None, ""
            return result
        return {**result, "lost": self._envs.take_lost()}

    def _release(self) -> None:
        """Close the envs of the previous owner, whose lease ran out (or whose client connected again)."""
        if self._envs is not None:
            envs, self._envs = self._envs, None
            failures = envs.close()["failures"]
            if failures:
                log.warning("closing the previous client's envs: %s", "; ".join(map(str, failures)))

    def close(self) -> None:
        """Close the envs and workers, then the socket. Safe to call more than once."""
        try:
            self._release()
        finally:
            self._owner, self._owner_id = None, ""
            if self._authenticator is not None:
                self._authenticator.stop()
                self._authenticator = None
            self._socket.close(linger=0)
            self._context.term()
            _remove_ipc_file(self.address)

    def __enter__(self) -> EnvServer:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


def _remove_ipc_file(address: str) -> None:
    """Remove the socket file of an ``ipc://`` endpoint the server bound (ZeroMQ leaves it behind)."""
    if not address.startswith("ipc://"):
        return
    path = address.removeprefix("ipc://")
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISSOCK(os.lstat(path).st_mode):  # a file another program put there since is not ours
            os.unlink(path)
