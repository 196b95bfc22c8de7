"""Whole messages of the env server protocol: their frames encoded, and decoded with every check.

A message is a header (a struct of ``remote.headers``, msgpack by msgspec) and the buffers of its
large arrays (``remote.wire``). Decoding refuses, with a :class:`WireError`, a header that is not
msgpack, another protocol or version (:class:`ProtocolMismatchError`, checked before any field is
read), an unknown kind, a missing, unknown or mistyped field, a dtype that would need pickle, an
array whose bytes do not match its shape, values nested too deeply, frames the header does not
refer to and a step whose actions are not one per env id (before any env is stepped).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
import numpy as np

from ding_env.errors import DingEnvError
from ding_env.ops import Op
from ding_env.remote.errors import ProtocolMismatchError, ServerError, WireError, error_fields
from ding_env.remote.headers import (
    REQUESTS,
    Call,
    Close,
    Envelope,
    Failed,
    GetAttr,
    Hello,
    Launch,
    Message,
    Ok,
    ReadyObs,
    Reset,
    Seed,
    SetAttr,
    Step,
    Stepped,
)
from ding_env.remote.protocol import PROTOCOL, PROTOCOL_VERSION
from ding_env.remote.request_checks import check_request_fields
from ding_env.remote.wire import ArrayRef, Decoder, Encoder
from ding_env.version import __version__

HEADER_FIELDS = ("protocol", "version", "seq")
INT64 = (-(2**63), 2**63 - 1)

_envelope = msgspec.msgpack.Decoder(Envelope)
_request = msgspec.msgpack.Decoder(Hello | Launch | Seed | Reset | Step | ReadyObs | Call | GetAttr | SetAttr | Close)
_reply = msgspec.msgpack.Decoder(Ok | Stepped | Failed)
_encode = msgspec.msgpack.Encoder().encode


def check_header(envelope: Envelope | Message, side: str) -> None:
    """Refuse a message from another protocol or version; ``side`` names the sender ('client', 'server').

    Raises:
        ProtocolMismatchError: Naming both versions.
    """
    if envelope.protocol != PROTOCOL:
        raise ProtocolMismatchError(
            f"the {side} does not speak the ding-env protocol (its header: protocol={str(envelope.protocol)[:40]!r})"
        )
    if envelope.version != PROTOCOL_VERSION:
        raise ProtocolMismatchError(
            f"the {side} speaks ding-env protocol version {str(envelope.version)[:20]}, this side version "
            f"{PROTOCOL_VERSION} (ding-env {__version__}): install the same ding-env version on both machines"
        )


def encode(cls: type[Message], seq: int, fields: dict, path: str) -> list:
    """The frames of a message of type ``cls``: its header (arrays and ``cls.encoded`` values encoded), then buffers.

    Raises:
        WireError: Naming the key path (starting with ``path``) and type of a value that has no encoding.
    """
    encoder = Encoder()
    encoded = {}
    for name, value in fields.items():
        try:
            if name in cls.encoded:
                encoded[name] = encoder.value(value)
            elif name in cls.encoded_maps:
                encoded[name] = {key: _encoded(encoder, item, key) for key, item in value.items()}
            elif type(value) is np.ndarray:
                encoded[name] = encoder.array(value)
            else:
                encoded[name] = value
        except WireError as error:
            raise error.at(path if name in cls.encoded_maps else f"{path} {name}") from None
    try:
        return [_encode(cls(protocol=PROTOCOL, version=PROTOCOL_VERSION, seq=seq, **encoded)), *encoder.frames]
    except (TypeError, ValueError) as error:  # a missing field, a field msgpack cannot hold, a refused array
        raise WireError(f"{error}"[:300], "cannot send").at(path) from None


def decode(frames: list, decoder: msgspec.msgpack.Decoder, side: str, path: str) -> tuple[Message, dict]:
    """A message and its fields decoded (arrays and encoded values as Python values).

    Raises:
        WireError: If the frames are not a well-formed message; ``ProtocolMismatchError`` for another version.
    """
    if not frames:
        raise WireError("no frames").at(path)
    head = frames[0]
    head = head.buffer if hasattr(head, "buffer") else head
    # One decode for a well-formed message; a header that does not decode is read again as an envelope,
    # so a peer of another protocol or version is told so rather than given a validation error.
    try:
        message = decoder.decode(head)
    except (msgspec.DecodeError, ValueError) as error:  # ValidationError is a DecodeError; bad UTF-8 a ValueError
        check_header(_read_envelope(head, path), side)
        kind = "" if isinstance(error, msgspec.ValidationError) else "its first frame is not a msgpack header: "
        raise WireError(f"{kind}{error}"[:300]).at(path) from None
    except RecursionError:
        raise WireError("values nested too deeply").at(path) from None
    check_header(message, side)
    path = f"{path} {message.__struct_config__.tag}"
    values = Decoder(frames[1:])
    fields = {}
    for name, how in _field_plan(type(message)):
        value = getattr(message, name)
        try:
            if how is _PLAIN:
                fields[name] = values.array(value) if type(value) is ArrayRef else value
            elif how is _VALUE:
                fields[name] = values.value(value)
            else:
                fields[name] = {key: _decoded(values, item, key) for key, item in value.items()}
        except WireError as error:
            raise error.at(path if how is _MAP else f"{path} {name}") from None
        except RecursionError:
            raise WireError("values nested too deeply").at(f"{path} {name}") from None
    try:
        values.check_all_used()
    except WireError as error:
        raise error.at(path) from None
    return message, fields


_PLAIN, _VALUE, _MAP = "plain", "value", "map"  # how a field is decoded: as is (or an array), a value, a map of them


@cache  # one entry per message class
def _field_plan(cls: type[Message]) -> tuple[tuple[str, str], ...]:
    """``(name, how)`` for each field of ``cls`` beyond the header's: worked out once, not at every message."""
    return tuple(
        (name, _VALUE if name in cls.encoded else _MAP if name in cls.encoded_maps else _PLAIN)
        for name in cls.__struct_fields__
        if name not in HEADER_FIELDS
    )


def _read_envelope(head: Any, path: str) -> Envelope:
    """The fields every protocol version keeps, of a header that did not decode as a message."""
    try:
        return _envelope.decode(head)
    except (msgspec.DecodeError, ValueError) as error:
        raise WireError(f"its first frame is not a msgpack header: {error}"[:300]).at(path) from None
    except RecursionError:
        raise WireError("values nested too deeply").at(path) from None


def _encoded(encoder: Encoder, value: Any, key: str) -> Any:
    try:
        return encoder.value(value)
    except WireError as error:
        raise error.at(f" {key}") from None


def _decoded(decoder: Decoder, value: Any, key: str) -> Any:
    try:
        return decoder.value(value)
    except WireError as error:
        raise error.at(f" {key}") from None


def request_frames(kind: str, seq: int, body: dict) -> list:
    """The frames of request ``kind`` with ``body``'s fields.

    Raises:
        WireError: For an unknown kind, or a value without encoding (naming its key path).
    """
    if kind not in REQUESTS:
        raise WireError(f"unknown request {str(kind)[:40]!r}; a server answers {', '.join(REQUESTS)}", "cannot send")
    return encode(REQUESTS[kind], seq, body, kind)


def peek(frames: list) -> tuple[int, str]:
    """A message's sequence number and kind as far as they can be read (-1 and "message" where not), never raising.

    A malformed request's error reply carries its number, so the client that sent it is answered.
    """
    try:
        head = frames[0]
        envelope = _envelope.decode(head.buffer if hasattr(head, "buffer") else head)
    except (IndexError, ValueError, msgspec.DecodeError, RecursionError):  # invalid UTF-8 is a ValueError
        return -1, "message"
    seq = envelope.seq if type(envelope.seq) is int and INT64[0] <= envelope.seq <= INT64[1] else -1
    return seq, str(envelope.kind)[:40] if envelope.kind is not None else "message"


def read_request(frames: list) -> tuple[int, str, dict]:
    """The sequence number, kind and fields of a request.

    Raises:
        WireError: If the request is malformed (see the module's docstring).
    """
    message, fields = decode(frames, _request, "client", "request")
    kind = message.__struct_config__.tag
    check_request_fields(kind, fields)
    return message.seq, kind, fields


def reply_frames(seq: int, result: dict | None = None, error: BaseException | None = None, request: str = "") -> list:
    """The frames of a reply: ``result`` (a step's as :class:`Stepped`, others as :class:`Ok`) or ``error``."""
    if error is not None:
        if not (isinstance(error, DingEnvError) and error_fields(error) is not None):
            error = ServerError.of(error, request)
        return encode(Failed, seq, {"error": error}, f"{request} error")
    if request == Op.STEP and result is not None and "env_id" in result:
        return encode(Stepped, seq, result, f"{request} reply")
    return encode(Ok, seq, {"body": result or {}}, f"{request} reply")


def read_reply(frames: list) -> tuple[int, dict, DingEnvError | None]:
    """The sequence number and body of a reply, and the error it carries (an error reply) or None.

    Raises:
        WireError: If the reply is malformed; ``ProtocolMismatchError`` if the server speaks another version.
    """
    message, fields = decode(frames, _reply, "server", "reply")
    if type(message) is Failed:
        if not isinstance(fields["error"], DingEnvError):
            raise WireError(f"an error reply without an error: {str(fields['error'])[:200]}")
        return message.seq, {}, fields["error"]
    return message.seq, fields["body"] if type(message) is Ok else fields, None
