"""The headers of the requests an env server answers and of its replies: typed msgspec structs.

A message's frame 0 is one of these structs encoded as msgpack, with the fields ``protocol``,
``version``, ``kind`` (the struct's tag) and ``seq``; its other frames are the buffers of its large
arrays (``remote.wire``). A request's ``kind`` is one of the operations of ``ding_env.ops.Op`` (the
vocabulary the worker protocol speaks too), the handshake ``"hello"`` or a read of ready
observations, ``"ready_obs"``, and names the method of the served envs that answers it; a reply's is
``"ok"`` (its body holds the result), ``"stepped"`` (a step's result, every field a stacked array
whatever the number of envs) or ``"error"``. ``seq`` numbers a client's requests; its reply carries
the same number, so a client that gave up waiting can drop a late reply.

msgspec checks each field's type as it decodes a header (unknown and missing fields are refused);
:func:`read_header` checks the protocol and its version first. ``remote.messages`` encodes and decodes
whole messages with these.

Env ids in requests and replies are the server's own, ``0 .. env_num - 1``.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec

from ding_env.ops import Op
from ding_env.remote.errors import ProtocolMismatchError, WireError
from ding_env.remote.protocol import HELLO, PROTOCOL, PROTOCOL_VERSION, READY_OBS
from ding_env.remote.wire import ArrayRef
from ding_env.version import __version__

EnvIds = list[int]
# A step's env ids travel as msgpack ints, checked to fit the int64 arrays they become.
EnvId = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class Message(msgspec.Struct, tag_field="kind", forbid_unknown_fields=True, kw_only=True):
    """Every message's header fields.

    ``encoded`` names the fields that hold an encoded value (``wire.Encoder``), ``encoded_maps`` those
    that map names to encoded values.
    """

    encoded: ClassVar[tuple[str, ...]] = ()
    encoded_maps: ClassVar[tuple[str, ...]] = ()
    protocol: str
    version: int
    seq: int


def _public_name(name: str) -> None:
    # Private and dunder names would reach an env's internals (its class, its __dict__, ...).
    if not name.isidentifier() or name.startswith("_"):
        raise ValueError(f"name must be a public attribute name, got {name[:40]!r}")


class Hello(Message, tag=HELLO):
    """Take the server's envs (one client at a time); the reply holds ``env_num``.

    ``client_id`` is a random id a client keeps for its lifetime (none: ""). A hello on a new connection
    with the id of the client holding the lease (it gave up a connection, say to a frozen server) takes
    the lease at once, where another client waits for the lease to end.
    """

    client_id: Annotated[str, msgspec.Meta(max_length=64)] = ""


class Launch(Message, tag=Op.LAUNCH.value):
    """Build the envs with the client's manager settings (``protocol.CLIENT_SETTINGS``); the reply holds the spaces."""

    settings: dict[str, int | float | str | bool | None]


class Seed(Message, tag=Op.SEED.value):
    """Seed one env; it takes effect at its next reset.

    A seed beyond msgpack's integers (2**64 and above, which the local managers take) travels as its digits.
    """

    env_id: int
    seed: int | Annotated[str, msgspec.Meta(pattern=r"^[0-9]{1,4000}$")]
    dynamic_seed: bool | None


class Reset(Message, tag=Op.RESET.value):
    """Reset envs; ``params`` (``{env id: env.reset kwargs}``) replaces those envs' kept reset kwargs."""

    encoded: ClassVar = ("params",)
    env_ids: EnvIds
    params: Any = None


class Step(Message, tag=Op.STEP.value):
    """Step envs (increasing ids) with stacked actions; restart those whose episode ends where ``reset_on_done``.

    The ids and flags, one per env, travel as msgpack lists (cheaper than arrays for a few envs); the
    actions as an encoded value, stacked.
    """

    encoded: ClassVar = ("actions",)
    env_ids: list[EnvId]
    actions: Any
    reset_on_done: list[bool]

    def __post_init__(self) -> None:
        if len(self.env_ids) != len(self.reset_on_done):
            raise ValueError(f"{len(self.env_ids)} env ids and {len(self.reset_on_done)} reset_on_done flags")


class ReadyObs(Message, tag=READY_OBS):
    """The ready observations of envs, stacked."""

    env_ids: ArrayRef

    def __post_init__(self) -> None:
        self.env_ids.check("iu", 1, "a 1-d int array of env ids")


class Call(Message, tag=Op.CALL.value):
    """Call method ``name`` of each env."""

    encoded: ClassVar = ("args", "kwargs")
    env_ids: EnvIds
    name: str
    args: list[Any]
    kwargs: Any

    def __post_init__(self) -> None:
        _public_name(self.name)


class GetAttr(Message, tag=Op.GET_ATTR.value):
    """Attribute ``name`` of each env."""

    env_ids: EnvIds
    name: str

    def __post_init__(self) -> None:
        _public_name(self.name)


class SetAttr(Message, tag=Op.SET_ATTR.value):
    """Set attribute ``name`` of each env to its value."""

    encoded: ClassVar = ("values",)
    env_ids: EnvIds
    name: str
    values: list[Any]

    def __post_init__(self) -> None:
        _public_name(self.name)


class Close(Message, tag=Op.CLOSE.value):
    """Close every env (and worker)."""


class Ok(Message, tag="ok"):
    """A reply: ``body`` maps result names to encoded values."""

    encoded_maps: ClassVar = ("body",)
    body: dict[str, Any]


class Stepped(Message, tag="stepped", kw_only=True):
    """A step's reply: row k of every field is env ``env_id[k]``; infos as the local managers' info table.

    ``env_id`` and ``reset_on_done`` are None when the rows are the request's envs in its order with its
    flags (a step's usual reply): the client has them. Otherwise (a server's worker died in the step, and
    its idle envs have rows too) both list every row. ``done`` and ``truncated`` hold a flag per row.
    ``info_numbers[k]`` is the schema number of row k's info in ``info_values`` (0: the info is in
    ``info``, by row; both are None when no row's info is in the table); ``info_schemas``
    announces new schemas as ``(env id, number, keys, type names)``.
    ``restart_obs`` holds the ready observations of the envs that ended (and restarted), ``errors``
    the rows' errors (``{row: encoded error}``), ``lost`` the envs whose worker the server replaced.
    """

    encoded: ClassVar = ("obs", "restart_obs")
    encoded_maps: ClassVar = ("errors", "info")
    env_id: list[EnvId] | None = None
    obs: Any
    reward: ArrayRef
    done: list[bool]
    truncated: list[bool]
    reset_on_done: list[bool] | None = None
    restart_obs: Any
    errors: dict[int, Any]
    info_numbers: ArrayRef | None = None
    info_values: ArrayRef | None = None
    info_schemas: list[tuple[int, int, list[str], list[Literal["float", "int", "bool"]]]]
    info: dict[int, Any]
    lost: EnvIds

    def __post_init__(self) -> None:
        rows = len(self.done)
        if len(self.truncated) != rows:
            raise ValueError(f"{rows} done flags and {len(self.truncated)} truncated flags")
        if (self.env_id is None) != (self.reset_on_done is None):
            raise ValueError("env_id and reset_on_done come together (or neither: the request's)")
        if self.env_id is not None and not len(self.env_id) == len(self.reset_on_done) == rows:
            raise ValueError(f"{len(self.env_id)} env ids, {len(self.reset_on_done)} reset_on_done flags, {rows} rows")


class Failed(Message, tag="error"):
    """An error reply: the encoded error."""

    encoded: ClassVar = ("error",)
    error: Any


REQUESTS: dict[str, type[Message]] = {
    cls.__struct_config__.tag: cls
    for cls in (Hello, Launch, Seed, Reset, Step, ReadyObs, Call, GetAttr, SetAttr, Close)
}
REPLIES = (Ok, Stepped, Failed)


class Envelope(msgspec.Struct):
    """The fields every protocol version keeps, read before the rest (other fields are skipped)."""

    protocol: Any = None
    version: Any = None
    kind: Any = None
    seq: Any = None


ENVELOPES = msgspec.msgpack.Decoder(Envelope)
REQUEST_HEADERS = msgspec.msgpack.Decoder(
    Hello | Launch | Seed | Reset | Step | ReadyObs | Call | GetAttr | SetAttr | Close
)
REPLY_HEADERS = msgspec.msgpack.Decoder(Ok | Stepped | Failed)
encode_header = msgspec.msgpack.Encoder().encode


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


def read_header(frames: list, decoder: msgspec.msgpack.Decoder, side: str, path: str) -> Message:
    """The header of a message (its frame 0), validated, from a peer of this protocol version.

    Raises:
        WireError: If frame 0 is not a well-formed header; ``ProtocolMismatchError`` for another version.
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
        check_header(read_envelope(head, path), side)
        kind = "" if isinstance(error, msgspec.ValidationError) else "its first frame is not a msgpack header: "
        raise WireError(f"{kind}{error}"[:300]).at(path) from None
    except RecursionError:
        raise WireError("values nested too deeply").at(path) from None
    check_header(message, side)
    return message


def read_envelope(head: Any, path: str) -> Envelope:
    """The fields every protocol version keeps, of a header that did not decode as a message."""
    try:
        return ENVELOPES.decode(head)
    except (msgspec.DecodeError, ValueError) as error:
        raise WireError(f"its first frame is not a msgpack header: {error}"[:300]).at(path) from None
    except RecursionError:
        raise WireError("values nested too deeply").at(path) from None
