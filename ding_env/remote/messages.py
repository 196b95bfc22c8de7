"""Whole messages of the env server protocol: their frames encoded, and decoded with every check.

A message is a header (a struct of ``remote.headers``, msgpack by msgspec) and the buffers of its
large arrays (``remote.wire``). Decoding refuses, with a :class:`WireError`, a header that is not
msgpack, another protocol or version (:class:`ProtocolMismatchError`, checked before any field is
read), an unknown kind, a missing, unknown or mistyped field, a dtype that would need pickle, an
array whose bytes do not match its shape, values nested too deeply, frames the header does not
refer to and a step whose actions are not one per env id (before any env is stepped).

Most messages are encoded and decoded by a loop over their fields; the two of every step, a step
request and its reply, by name (``remote.step_wire``), with the same checks.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
import numpy as np

from ding_env.errors import DingEnvError
from ding_env.ops import Op
from ding_env.remote.errors import ServerError, WireError, error_fields
from ding_env.remote.headers import (
    ENVELOPES,
    REPLY_HEADERS,
    REQUEST_HEADERS,
    REQUESTS,
    Failed,
    Message,
    Ok,
    Step,
    Stepped,
    encode_header,
    read_header,
)
from ding_env.remote.protocol import PROTOCOL, PROTOCOL_VERSION
from ding_env.remote.request_checks import check_request_fields
from ding_env.remote.step_wire import (
    STEP_FIELDS,
    is_step_reply,
    read_step_request,
    read_stepped,
    step_request_frames,
    stepped_frames,
)
from ding_env.remote.wire import ArrayRef, Decoder, Encoder

HEADER_FIELDS = ("protocol", "version", "seq")
INT64 = (-(2**63), 2**63 - 1)


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
        return [encode_header(cls(protocol=PROTOCOL, version=PROTOCOL_VERSION, seq=seq, **encoded)), *encoder.frames]
    except (TypeError, ValueError) as error:  # a missing field, a field msgpack cannot hold, a refused array
        raise WireError(f"{error}"[:300], "cannot send").at(path) from None


def decode_fields(message: Message, frames: list, path: str) -> dict:
    """The fields of a message whose header decoded (arrays and encoded values as Python values).

    Raises:
        WireError: If a field is malformed or the message has frames its header does not refer to.
    """
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
    return fields


_PLAIN, _VALUE, _MAP = "plain", "value", "map"  # how a field is decoded: as is (or an array), a value, a map of them


@cache  # one entry per message class
def _field_plan(cls: type[Message]) -> tuple[tuple[str, str], ...]:
    """``(name, how)`` for each field of ``cls`` beyond the header's: worked out once, not at every message."""
    return tuple(
        (name, _VALUE if name in cls.encoded else _MAP if name in cls.encoded_maps else _PLAIN)
        for name in cls.__struct_fields__
        if name not in HEADER_FIELDS
    )


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
    if kind == Op.STEP and body.keys() == STEP_FIELDS:  # the hot request: its fields by name
        return step_request_frames(seq, body)
    if kind not in REQUESTS:
        raise WireError(f"unknown request {str(kind)[:40]!r}; a server answers {', '.join(REQUESTS)}", "cannot send")
    return encode(REQUESTS[kind], seq, body, kind)


def peek(frames: list) -> tuple[int, str]:
    """A message's sequence number and kind as far as they can be read (-1 and "message" where not), never raising.

    A malformed request's error reply carries its number, so the client that sent it is answered.
    """
    try:
        head = frames[0]
        envelope = ENVELOPES.decode(head.buffer if hasattr(head, "buffer") else head)
    except (IndexError, ValueError, msgspec.DecodeError, RecursionError):  # invalid UTF-8 is a ValueError
        return -1, "message"
    seq = envelope.seq if type(envelope.seq) is int and INT64[0] <= envelope.seq <= INT64[1] else -1
    return seq, str(envelope.kind)[:40] if envelope.kind is not None else "message"


def read_request(frames: list) -> tuple[int, str, dict]:
    """The sequence number, kind and fields of a request.

    Raises:
        WireError: If the request is malformed (see the module's docstring).
    """
    message = read_header(frames, REQUEST_HEADERS, "client", "request")
    kind = message.__struct_config__.tag
    if type(message) is Step:
        fields = read_step_request(message, frames, "request step")
    else:
        fields = decode_fields(message, frames, "request")
    check_request_fields(kind, fields)
    return message.seq, kind, fields


def reply_frames(seq: int, result: dict | None = None, error: BaseException | None = None, request: str = "") -> list:
    """The frames of a reply: ``result`` (a step's as :class:`Stepped`, others as :class:`Ok`) or ``error``."""
    if error is not None:
        if not (isinstance(error, DingEnvError) and error_fields(error) is not None):
            error = ServerError.of(error, request)
        return encode(Failed, seq, {"error": error}, f"{request} error")
    if is_step_reply(request, result):
        return stepped_frames(seq, result, f"{request} reply")
    return encode(Ok, seq, {"body": result or {}}, f"{request} reply")


def read_reply(frames: list) -> tuple[int, dict, DingEnvError | None]:
    """The sequence number and body of a reply, and the error it carries (an error reply) or None.

    A step reply's ``env_id`` and ``reset_on_done`` are None where they are its request's
    (``step_wire.step_rows`` fills them in).

    Raises:
        WireError: If the reply is malformed; ``ProtocolMismatchError`` if the server speaks another version.
    """
    message = read_header(frames, REPLY_HEADERS, "server", "reply")
    if type(message) is Stepped:
        return message.seq, read_stepped(message, frames, "reply stepped"), None
    fields = decode_fields(message, frames, "reply")
    if type(message) is Failed:
        if not isinstance(fields["error"], DingEnvError):
            raise WireError(f"an error reply without an error: {str(fields['error'])[:200]}")
        return message.seq, {}, fields["error"]
    return message.seq, fields["body"], None
