"""The requests an env server answers, their replies and errors, and the protocol version.

Every message is :func:`ding_env.remote.wire.pack`'s frames with the header fields
``{"protocol": "ding-env", "version": PROTOCOL_VERSION, "kind": ..., "seq": ...}``: a request's
``kind`` is one of the operations of ``ding_env.ops.Op`` (the vocabulary the worker protocol speaks
too), the handshake ``"hello"`` or a read of ready observations, ``"ready_obs"``, and names the
method of the served envs that answers it (:data:`REQUESTS`); a reply's is ``"ok"`` (the body holds
the result) or ``"error"`` (the body holds one encoded error). ``seq`` numbers a client's requests;
its reply carries the same number, so a client that gave up waiting can drop a late reply.

Env ids in requests and replies are the server's own, ``0 .. env_num - 1``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from ding_env.env_manager.backends.settings import HostSettings
from ding_env.errors import DingEnvError
from ding_env.ops import Op
from ding_env.remote.errors import ProtocolMismatchError, ServerError, WireError, error_fields
from ding_env.remote.wire import pack, unpack
from ding_env.version import __version__

PROTOCOL = "ding-env"
# Raised whenever a message's meaning changes; client and server must speak the same one.
PROTOCOL_VERSION = 2

# Manager settings a client sends at launch: how its envs behave, which the server's workers enforce.
CLIENT_SETTINGS = tuple(item.name for item in fields(HostSettings))

# The two requests that are not operations on envs: the handshake, and a read of the ready observations
# the server holds (after env calls, which may change them).
HELLO = "hello"
READY_OBS = "ready_obs"

_ids = (list, "a list of env ids")
_id_array = (np.ndarray, "an int64 array of env ids")
_name = (str, "an attribute name")
# kind -> {field: (types, what is expected)}: the requests a server answers, mirroring the env backends' methods.
REQUESTS: dict[str, dict[str, tuple[type | tuple[type, ...], str]]] = {
    HELLO: {},
    Op.LAUNCH: {"settings": (dict, "a dict of manager settings")},
    Op.SEED: {"env_id": (int, "an env id"), "seed": (int, "an int seed"), "dynamic_seed": ((bool, type(None)), "")},
    Op.RESET: {"env_ids": _ids, "params": (dict, "{env id: dict of env.reset kwargs}")},
    Op.STEP: {"env_ids": _id_array, "actions": (object, ""), "reset_on_done": (np.ndarray, "a bool array")},
    READY_OBS: {"env_ids": _id_array},
    Op.CALL: {"env_ids": _ids, "name": _name, "args": ((list, tuple), "a list of arguments"), "kwargs": (dict, "")},
    Op.GET_ATTR: {"env_ids": _ids, "name": _name},
    Op.SET_ATTR: {"env_ids": _ids, "name": _name, "values": (list, "one value per env")},
    Op.CLOSE: {},
}
# Fields a request may leave out: a reset without params keeps each env's reset kwargs.
OPTIONAL: dict[str, set[str]] = {Op.RESET: {"params"}}


def header(kind: str, seq: int) -> dict:
    """The header fields of a message of ``kind``."""
    return {"protocol": PROTOCOL, "version": PROTOCOL_VERSION, "kind": kind, "seq": seq}


def check_header(header_fields: dict, side: str) -> None:
    """Refuse a message from another protocol or version; ``side`` names the sender ('client', 'server').

    Raises:
        ProtocolMismatchError: Naming both versions.
    """
    protocol, version = header_fields.get("protocol"), header_fields.get("version")
    if protocol != PROTOCOL:
        raise ProtocolMismatchError(
            f"the {side} does not speak the ding-env protocol (its header: protocol={protocol!r})"
        )
    if version != PROTOCOL_VERSION:
        raise ProtocolMismatchError(
            f"the {side} speaks ding-env protocol version {version!r}, this side version {PROTOCOL_VERSION} "
            f"(ding-env {__version__}): install the same ding-env version on both machines"
        )


def check_request(kind: Any, body: dict) -> None:
    """Refuse an unknown request or one whose fields are missing, extra or of the wrong type.

    Raises:
        WireError: Naming the request, the field, what was expected and what arrived.
    """
    if kind not in REQUESTS:
        raise WireError(f"unknown request {str(kind)[:40]!r}; a server answers {', '.join(REQUESTS)}")
    fields, optional = REQUESTS[kind], OPTIONAL.get(kind, set())
    if not set(fields) - optional <= set(body) <= set(fields):
        raise WireError(f"request {kind!r} takes fields {sorted(fields)}, got {sorted(map(str, body))[:20]}")
    for name, (types, expected) in fields.items():
        if name not in body:
            continue
        value = body[name]
        if not isinstance(value, types) or (types is int and isinstance(value, bool)):
            raise WireError(f"request {kind!r}: {name} must be {expected or types}, got {type(value).__name__}")
    for name, kinds, what in (("env_ids", "iu", "int"), ("reset_on_done", "b", "bool")):
        value = body.get(name)
        if isinstance(value, list) and not all(type(env_id) is int for env_id in value):
            raise WireError(f"request {kind!r}: {name} must hold ints, got {value!r}"[:300])
        if isinstance(value, np.ndarray) and (value.ndim != 1 or value.dtype.kind not in kinds):
            raise WireError(f"request {kind!r}: {name} must be a 1-d {what} array, got {value.dtype} {value.shape}")
    name = body.get("name")
    if name is not None and (not name.isidentifier() or name.startswith("_")):
        # Private and dunder names would reach an env's internals (its class, its __dict__, ...).
        raise WireError(f"request {kind!r}: name must be a public attribute name, got {name[:40]!r}")
    if kind == Op.STEP and len(body["env_ids"]) != len(body["reset_on_done"]):
        raise WireError(
            f"request 'step': {len(body['env_ids'])} env ids and {len(body['reset_on_done'])} reset_on_done flags"
        )
    params = body.get("params") if kind == Op.RESET else None
    if params is not None and (
        not set(params) <= set(body["env_ids"]) or not all(type(param) is dict for param in params.values())
    ):
        raise WireError("request 'reset': params must map env ids of the reset to dicts of env.reset kwargs")


def request_frames(kind: str, seq: int, body: dict) -> list:
    """The frames of request ``kind``."""
    return pack(header(kind, seq), body, kind)


def reply_frames(seq: int, result: dict | None = None, error: BaseException | None = None, request: str = "") -> list:
    """The frames of a reply: ``result`` (the body) or ``error``."""
    if error is not None:
        if not (isinstance(error, DingEnvError) and error_fields(error) is not None):
            error = ServerError.of(error, request)
        return pack(header("error", seq), {"error": error}, f"{request} error")
    return pack(header("ok", seq), result or {}, f"{request} reply")


def read_reply(frames: list) -> tuple[int, dict, DingEnvError | None]:
    """The sequence number and body of a reply, and the error it carries (an error reply) or None.

    Raises:
        WireError: If the reply is malformed; ``ProtocolMismatchError`` if the server speaks another version.
    """
    fields, body = unpack(frames, "reply")
    check_header(fields, "server")
    kind, seq = fields.get("kind"), fields.get("seq")
    if kind not in ("ok", "error") or type(seq) is not int:
        raise WireError(f"malformed reply header {str(fields)[:200]}")
    if kind == "ok":
        return seq, body, None
    if not isinstance(body.get("error"), DingEnvError):
        raise WireError(f"an error reply without an error: {str(body)[:200]}")
    return seq, body, body["error"]
