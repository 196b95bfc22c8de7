"""Values and Gymnasium spaces on the wire, without pickle.

A message is a list of frames: frame 0 is a small JSON header, every other frame is the raw
buffer of one numpy array (sent zero-copy by the socket layer). The header's values use JSON's
own types where they are exact (None, bools, ints, floats, strings, lists) and a tagged object
``{"$": tag, ...}`` for everything else:

================  ==========================================================================
tag               meaning
================  ==========================================================================
``array``         numpy array: ``frame`` (index into the buffers; or ``data``, base64 bytes of a small
                  array), ``dtype`` (``dtype.str``), ``shape``
``scalar``        numpy scalar: ``dtype`` and ``value`` (its Python value, exact for bool/int/float)
``tuple``         ``items``: the encoded elements
``dict``          ``items``: ``[key, value]`` pairs in order (keys need not be strings)
``bytes``         ``frame``: a bytes value
``marker``        ``name``: an env attribute broadcast's ``MISSING`` / ``CALLABLE``
``error``         an env's or server's error by its fields (``remote.errors.ERROR_FIELDS``)
``space``         a Gymnasium space by its defining fields (see :meth:`Encoder.space`)
================  ==========================================================================

A value of any other type is refused with a :class:`WireError` naming its key path and type;
decoding checks every field (tags, dtypes, shapes against buffer sizes) and refuses what does not
fit with a :class:`WireError` too, so bytes from the network only ever become these values.

Key paths in errors are assembled while the error travels out of the nested values, so encoding
and decoding build no path text for values that are fine.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env_manager.status import CALLABLE, MISSING
from ding_env.errors import DingEnvError
from ding_env.remote.errors import WireError, error_fields, error_from

ENCODABLE = "numbers, strings, bools, None, lists, tuples, dicts, bytes, numpy arrays and numpy scalars"
SPACES = "Box, Discrete, MultiDiscrete, MultiBinary, Dict and Tuple"
SPACE_CLASSES = (
    gym.spaces.Box,
    gym.spaces.Discrete,
    gym.spaces.MultiDiscrete,
    gym.spaces.MultiBinary,
    gym.spaces.Dict,
    gym.spaces.Tuple,
)
MARKERS = {"MISSING": MISSING, "CALLABLE": CALLABLE}
# Arrays up to this size travel inline in the header (base64): a frame of its own costs more than the copy.
INLINE_BYTES = 512
# Numeric dtype kinds a scalar carries exactly as a JSON number (bool, signed, unsigned, float).
EXACT_SCALAR_KINDS = "biuf"


def _cannot_send(problem: str) -> WireError:
    return WireError(problem, "cannot send")


class Encoder:
    """Encodes values into a JSON-ready header, collecting array buffers into ``frames``."""

    def __init__(self) -> None:
        self.frames: list[Any] = []  # frame k of the message is self.frames[k - 1]: frame 0 is the header

    def value(self, value: Any) -> Any:
        """``value`` as JSON-ready data.

        Raises:
            WireError: For a value without encoding; its path is filled in as the error leaves each container.
        """
        kind = type(value)
        if kind is np.ndarray:
            return self.array(value)
        if value is None or kind in (bool, str, int, float):
            return value
        if kind is list:
            return self.each(value, enumerate(value))
        if kind is dict:
            return {"$": "dict", "items": self.pairs(value)}
        if kind is tuple:
            return {"$": "tuple", "items": self.each(value, enumerate(value))}
        if isinstance(value, np.generic):
            return self.scalar(value)
        if isinstance(value, str):  # a str subclass (e.g. a StrEnum member) travels as its text
            return str(value)
        if isinstance(value, int):  # an int subclass (an IntEnum member) as its value
            return int(value)
        if isinstance(value, float):
            return float(value)
        if isinstance(value, (list, tuple, dict)):  # subclasses (e.g. EasyDict, NamedTuple) as the base type
            return self.value((list if isinstance(value, list) else tuple if isinstance(value, tuple) else dict)(value))
        if isinstance(value, (bytes, bytearray, memoryview)):
            self.frames.append(bytes(value))
            return {"$": "bytes", "frame": len(self.frames)}
        if value is MISSING or value is CALLABLE:
            return {"$": "marker", "name": value.name}
        if isinstance(value, gym.spaces.Space):
            return self.space(value)
        if isinstance(value, DingEnvError) and (fields := error_fields(value)) is not None:
            return {"$": "error", "fields": self.value(fields)}
        raise _cannot_send(f"a {kind.__qualname__} has no wire encoding (send {ENCODABLE})")

    def each(self, values: Any, labelled: Iterable[tuple[Any, Any]]) -> list:
        """The encoded items of a list or tuple."""
        encoded = []
        for index, item in labelled:
            try:
                encoded.append(self.value(item))
            except WireError as error:
                raise error.at(f"[{index}]") from None
        return encoded

    def pairs(self, mapping: dict) -> list:
        """A dict's ``[key, value]`` pairs, encoded in order."""
        encoded = []
        for key, item in mapping.items():
            try:
                encoded.append([self.value(key), self.value(item)])
            except WireError as error:
                raise error.at(f"[{key!r}]") from None
        return encoded

    def array(self, array: np.ndarray) -> dict:
        """An array as a buffer frame plus its dtype and shape."""
        if array.dtype.hasobject or array.dtype.fields is not None:
            raise _cannot_send(
                f"an array of dtype {array.dtype} has no wire encoding (object and structured dtypes would need "
                "pickle; send arrays of numbers, bools or fixed-width strings)"
            )
        if array.nbytes <= INLINE_BYTES:
            data = base64.b64encode(array.tobytes()).decode("ascii")
            return {"$": "array", "data": data, "dtype": array.dtype.str, "shape": list(array.shape)}
        self.frames.append(np.ascontiguousarray(array))
        return {"$": "array", "frame": len(self.frames), "dtype": array.dtype.str, "shape": list(array.shape)}

    def scalar(self, scalar: np.generic) -> dict:
        """A numpy scalar: inline when its Python value is exact, else as a 0-d array."""
        if scalar.dtype.kind in EXACT_SCALAR_KINDS:
            return {"$": "scalar", "dtype": scalar.dtype.str, "value": scalar.item()}
        encoded = self.array(np.asarray(scalar))
        encoded["$"] = "scalar"
        return encoded

    def space(self, space: gym.spaces.Space) -> dict:
        """A Gymnasium space by its defining fields (its random generator stays behind)."""
        if isinstance(space, gym.spaces.Box):
            fields = {"low": space.low, "high": space.high, "shape": list(space.shape), "dtype": space.dtype.str}
        elif isinstance(space, gym.spaces.Discrete):
            fields = {"n": int(space.n), "start": int(space.start)}
        elif isinstance(space, gym.spaces.MultiDiscrete):
            fields = {"nvec": space.nvec, "start": space.start, "dtype": space.dtype.str}
        elif isinstance(space, gym.spaces.MultiBinary):
            fields = {"n": space.n if isinstance(space.n, int) else list(space.n)}
        elif isinstance(space, gym.spaces.Dict):
            fields = {"spaces": list(space.spaces.items())}
        elif isinstance(space, gym.spaces.Tuple):
            fields = {"spaces": list(space.spaces)}
        else:
            raise _cannot_send(f"{type(space).__name__} spaces have no wire encoding (send {SPACES})")
        # A subclass of a Gymnasium space travels as that space.
        kind = next(cls.__name__ for cls in SPACE_CLASSES if isinstance(space, cls))
        return {"$": "space", "kind": kind, **dict(self.pairs(fields))}


@lru_cache(maxsize=256)  # bounded: dtype strings come from the network
def _dtype(text: str) -> np.dtype:
    try:
        dtype = np.dtype(text)
    except TypeError as error:
        raise WireError(f"unknown dtype {text[:40]!r}") from error
    if dtype.hasobject or dtype.fields is not None:
        raise WireError(f"dtype {dtype} cannot travel without pickle")
    return dtype


class Decoder:
    """Decodes a header's values, reading arrays from ``frames``; anything malformed is a ``WireError``."""

    def __init__(self, frames: list[Any]) -> None:
        self.frames = frames
        self.used: set[int] = set()  # frames the values referred to; a message has no others

    def value(self, data: Any) -> Any:
        """The value ``data`` encodes."""
        kind = type(data)
        if data is None or kind in (bool, int, float, str):
            return data
        if kind is list:
            return self.each(data)
        if kind is not dict:
            raise WireError(f"a {kind.__name__} is not an encoded value")
        tag = data.get("$")
        if tag == "array":
            return self.array(data)
        if tag == "dict":
            return self.mapping(self.items(data))
        if tag == "tuple":
            return tuple(self.each(self.items(data)))
        if tag == "scalar":
            if "frame" in data or "data" in data:  # a 0-d array
                return self.array(data)[()]
            dtype = self.dtype(data.get("dtype"))
            value = data.get("value")
            if dtype.kind not in EXACT_SCALAR_KINDS or type(value) not in (bool, int, float):
                raise WireError(f"scalar {str(value)[:40]} of dtype {dtype}")
            return dtype.type(value)
        if tag == "bytes":
            return bytes(self.buffer(data.get("frame")))
        if tag == "marker" and data.get("name") in MARKERS:
            return MARKERS[data["name"]]
        if tag == "space":
            return self.space(data)
        if tag == "error":
            fields = self.value(data.get("fields"))
            if type(fields) is not dict:
                raise WireError("an error's fields must be a dict")
            return error_from(fields)
        raise WireError(f"unknown value tag {str(tag)[:40]!r}")

    def each(self, items: list) -> list:
        """The decoded items of a list."""
        decoded = []
        for index, item in enumerate(items):
            try:
                decoded.append(self.value(item))
            except WireError as error:
                raise error.at(f"[{index}]") from None
        return decoded

    def mapping(self, pairs: list) -> dict:
        """A dict from its ``[key, value]`` pairs."""
        result = {}
        for pair in pairs:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("dict items must be [key, value] pairs")
            key = self.value(pair[0])
            try:
                result[key] = self.value(pair[1])
            except WireError as error:
                raise error.at(f"[{key!r}]") from None
            except TypeError as error:  # an unhashable key, e.g. a list
                raise WireError(f"key {str(key)[:40]} is not hashable") from error
        return result

    @staticmethod
    def items(data: dict) -> list:
        """The ``items`` list of a tuple or dict."""
        items = data.get("items")
        if type(items) is not list:
            raise WireError(f"'items' must be a list, got {type(items).__name__}")
        return items

    @staticmethod
    def dtype(text: Any) -> np.dtype:
        """The dtype ``text`` names (never one that would need pickle)."""
        if type(text) is not str:
            raise WireError(f"dtype must be a string, got {type(text).__name__}")
        return _dtype(text)

    @staticmethod
    def inline(text: Any) -> bytes:
        """The bytes of an array sent inline (base64 text)."""
        if type(text) is not str or len(text) > 2 * INLINE_BYTES:
            raise WireError(f"inline array data must be base64 text of at most {INLINE_BYTES} bytes")
        try:
            return base64.b64decode(text, validate=True)
        except ValueError as error:  # binascii.Error is a ValueError
            raise WireError(f"inline array data is not base64: {error}") from error

    def buffer(self, index: Any) -> memoryview:
        """Frame ``index`` of the message (1 is the first after the header)."""
        if type(index) is not int or not 1 <= index <= len(self.frames):
            raise WireError(f"frame {str(index)[:20]} does not exist (the message has {len(self.frames)})")
        frame = self.frames[index - 1]
        self.used.add(index)
        return memoryview(frame.buffer if hasattr(frame, "buffer") else frame)

    def array(self, data: dict) -> np.ndarray:
        """An array, checked against its frame's size; a copy the caller owns."""
        dtype = self.dtype(data.get("dtype"))
        shape = data.get("shape")
        if type(shape) is not list or not all(type(size) is int and size >= 0 for size in shape):
            raise WireError(f"shape must be a list of sizes >= 0, got {str(shape)[:100]}")
        buffer = self.buffer(data.get("frame")) if "data" not in data else memoryview(self.inline(data["data"]))
        expected = math.prod(shape) * dtype.itemsize
        if buffer.nbytes != expected:
            raise WireError(
                f"an array of shape {tuple(shape)} and dtype {dtype} takes {expected} bytes, its frame has "
                f"{buffer.nbytes}"
            )
        # A copy: the frame's memory belongs to the message, and arrays handed to callers are theirs to change.
        return np.frombuffer(buffer, dtype=dtype).reshape(shape).copy()

    def space(self, data: dict) -> gym.spaces.Space:
        """The Gymnasium space ``data`` describes."""
        kind = data.get("kind")
        fields = self.mapping([[key, value] for key, value in data.items() if key not in ("$", "kind")])
        try:
            if kind == "Box":
                return gym.spaces.Box(fields["low"], fields["high"], tuple(fields["shape"]), np.dtype(fields["dtype"]))
            if kind == "Discrete":
                return gym.spaces.Discrete(fields["n"], start=fields["start"])
            if kind == "MultiDiscrete":
                return gym.spaces.MultiDiscrete(fields["nvec"], dtype=np.dtype(fields["dtype"]), start=fields["start"])
            if kind == "MultiBinary":
                return gym.spaces.MultiBinary(fields["n"])
            if kind == "Dict":
                return gym.spaces.Dict(dict(fields["spaces"]))
            if kind == "Tuple":
                return gym.spaces.Tuple(fields["spaces"])
        except (KeyError, TypeError, ValueError, AssertionError) as error:
            raise WireError(f"a {kind} space with fields {sorted(fields)}: {error}"[:400]) from error
        raise WireError(f"unknown space kind {str(kind)[:40]!r} (expected one of {SPACES})")


def pack(header: dict, body: dict, path: str = "message") -> list:
    """The frames of a message: ``header`` (JSON-ready fields) with ``body``'s values encoded, then the buffers.

    Raises:
        WireError: Naming the key path (starting with ``path``) and type of a value that has no encoding.
    """
    encoder = Encoder()
    encoded = {}
    for key, value in body.items():
        try:
            encoded[key] = encoder.value(value)
        except WireError as error:
            raise error.at(f"{path} {key}") from None
    head = json.dumps({**header, "body": encoded}, separators=(",", ":"), allow_nan=True).encode()
    return [head, *encoder.frames]


def unpack(frames: list[Any], path: str = "message") -> tuple[dict, dict]:
    """The header fields and the decoded body of a message's frames.

    Raises:
        WireError: If the frames are not a well-formed message.
    """
    if not frames:
        raise WireError("no frames").at(path)
    head = frames[0]
    try:
        header = json.loads(bytes(head.buffer if hasattr(head, "buffer") else head))
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise WireError(f"its first frame is not a JSON header ({error})"[:300]).at(path) from error
    if type(header) is not dict or type(header.get("body")) is not dict:
        raise WireError("the header must be a JSON object with a 'body' object").at(path)
    decoder = Decoder(frames[1:])
    body = {}
    for key, value in header.pop("body").items():
        try:
            body[key] = decoder.value(value)
        except WireError as error:
            raise error.at(f"{path} {key}") from None
        except RecursionError as error:
            raise WireError("values nested too deeply").at(f"{path} {key}") from error
    if len(decoder.used) != len(decoder.frames):
        raise WireError(f"{len(frames)} frames, of which the header refers to {len(decoder.used) + 1}").at(path)
    return header, body
