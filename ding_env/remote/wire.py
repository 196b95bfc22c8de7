"""Values and Gymnasium spaces on the wire, without pickle.

A message is a list of frames: frame 0 is a msgpack header (a typed struct of
``remote.headers``, encoded and validated by msgspec), every other frame is the raw buffer of
one numpy array (sent zero-copy by the socket layer). Where a message field holds an arbitrary
value (an info, a call's arguments, an attribute), the value is a tree of msgpack's own types
where they are exact (None, bools, ints within 64 bits, floats, strings, bytes, lists) and a
tagged map ``{"$": tag, ...}`` for everything else:

================  ==========================================================================
tag               meaning
================  ==========================================================================
``array``         numpy array (:class:`ArrayRef`): ``dtype`` (``dtype.str``), ``shape`` and its bytes,
                  ``frame`` (index into the buffers) or ``data`` (a small array's bytes, inline)
``scalar``        numpy scalar: ``dtype`` and ``value`` (its Python value, exact for bool/int/float),
                  or ``array`` (a 0-d array) for the others
``int``           an int beyond 64 bits: ``text``, its decimal digits
``tuple``         ``items``: the encoded elements
``dict``          ``items``: ``[key, value]`` pairs in order (keys need not be strings)
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

import math
from collections.abc import Iterable
from functools import lru_cache
from typing import Annotated, Any

import gymnasium as gym
import msgspec
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
# Arrays up to this size travel inline in the header: a frame of its own costs more than the copy.
INLINE_BYTES = 512
# Numeric dtype kinds a scalar carries exactly as a msgpack number (bool, signed, unsigned, float).
EXACT_SCALAR_KINDS = "biuf"
# The ints msgpack holds (larger ones travel as text).
INT_RANGE = (-(2**63), 2**64 - 1)
MAX_INT_DIGITS = 4300  # Python's own limit on converting text to int


def _cannot_send(problem: str) -> WireError:
    return WireError(problem, "cannot send")


class ArrayRef(msgspec.Struct, tag_field="$", tag="array", forbid_unknown_fields=True, omit_defaults=True):
    """A numpy array in a header: its dtype and shape, and its bytes in frame ``frame`` or inline in ``data``.

    Its dtype, and that it has one of ``frame`` and ``data``, are checked where :meth:`Decoder.array` reads it,
    the one place a decoded ``ArrayRef`` becomes an array. Inline bytes decode as a ``bytearray``: a buffer of
    their own that the array can use as it is.
    """

    dtype: str
    shape: tuple[Annotated[int, msgspec.Meta(ge=0)], ...]
    frame: Annotated[int, msgspec.Meta(ge=1)] | None = None
    data: bytearray | None = None  # decoded as a bytearray; the encoder gives bytes (both are msgpack bin)

    def check(self, kinds: str, ndim: int, what: str) -> None:
        """Refuse an array whose dtype kind is not among ``kinds`` or that does not have ``ndim`` dimensions.

        Raises:
            ValueError: Naming ``what`` was expected (msgspec reports it as a validation error of the field).
        """
        if len(self.shape) != ndim or _dtype(self.dtype).kind not in kinds:
            raise ValueError(f"must be {what}, got {_dtype(self.dtype)} {self.shape}")


class Encoder:
    """Encodes values into msgpack-ready trees, collecting large array buffers into ``frames``."""

    def __init__(self) -> None:
        self.frames: list[Any] = []  # frame k of the message is self.frames[k - 1]: frame 0 is the header

    def value(self, value: Any) -> Any:
        """``value`` as msgpack-ready data.

        Raises:
            WireError: For a value without encoding; its path is filled in as the error leaves each container.
        """
        kind = type(value)
        if kind is np.ndarray:
            return self.array(value)
        if value is None or kind in (bool, str, float, bytes):
            return value
        if kind is int:
            return value if INT_RANGE[0] <= value <= INT_RANGE[1] else {"$": "int", "text": str(value)}
        if kind is list:
            return self.each(enumerate(value))
        if kind is dict:
            return {"$": "dict", "items": self.pairs(value)}
        if kind is tuple:
            return {"$": "tuple", "items": self.each(enumerate(value))}
        if isinstance(value, np.generic):
            return self.scalar(value)
        if isinstance(value, str):  # a str subclass (e.g. a StrEnum member) travels as its text
            return str(value)
        if isinstance(value, int):  # an int subclass (an IntEnum member) as its value
            return self.value(int(value))
        if isinstance(value, float):
            return float(value)
        if isinstance(value, (list, tuple, dict)):  # subclasses (e.g. EasyDict, NamedTuple) as the base type
            return self.value((list if isinstance(value, list) else tuple if isinstance(value, tuple) else dict)(value))
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        if value is MISSING or value is CALLABLE:
            return {"$": "marker", "name": value.name}
        if isinstance(value, gym.spaces.Space):
            return self.space(value)
        if isinstance(value, DingEnvError) and (fields := error_fields(value)) is not None:
            return {"$": "error", "fields": self.value(fields)}
        raise _cannot_send(f"a {kind.__qualname__} has no wire encoding (send {ENCODABLE})")

    def each(self, labelled: Iterable[tuple[Any, Any]]) -> list:
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

    def array(self, array: np.ndarray) -> ArrayRef:
        """An array as its dtype and shape, with its bytes inline (small) or as a frame of their own."""
        if array.dtype.hasobject or array.dtype.fields is not None:
            raise _cannot_send(
                f"an array of dtype {array.dtype} has no wire encoding (object and structured dtypes would need "
                "pickle; send arrays of numbers, bools or fixed-width strings)"
            )
        if array.nbytes <= INLINE_BYTES:
            return ArrayRef(array.dtype.str, array.shape, data=array.tobytes())
        self.frames.append(np.ascontiguousarray(array))
        return ArrayRef(array.dtype.str, array.shape, frame=len(self.frames))

    def scalar(self, scalar: np.generic) -> dict:
        """A numpy scalar: inline when its Python value is exact, else as a 0-d array."""
        if scalar.dtype.kind in EXACT_SCALAR_KINDS:
            return {"$": "scalar", "dtype": scalar.dtype.str, "value": scalar.item()}
        return {"$": "scalar", "array": self.array(np.asarray(scalar))}

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
    except (TypeError, ValueError, SyntaxError) as error:  # numpy parses some texts as Python literals
        raise WireError(f"unknown dtype {text[:40]!r}") from error
    if dtype.hasobject or dtype.fields is not None:
        raise WireError(f"dtype {dtype} cannot travel without pickle")
    return dtype


@lru_cache(maxsize=16)
def _float_max(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).max)


class Decoder:
    """Decodes a header's values, reading arrays from ``frames``; anything malformed is a ``WireError``."""

    def __init__(self, frames: list[Any]) -> None:
        self.frames = frames
        self.used: set[int] = set()  # frames the values referred to; a message has no others

    def value(self, data: Any) -> Any:
        """The value ``data`` encodes."""
        kind = type(data)
        if data is None or kind in (bool, int, float, str, bytes):
            return data
        if kind is list:
            return self.each(data)
        if kind is not dict:
            raise WireError(f"a {kind.__name__} is not an encoded value")
        tag = data.get("$")
        if tag == "array":
            return self.array(self.ref(data))
        if tag == "dict":
            return self.mapping(self.items(data))
        if tag == "tuple":
            return tuple(self.each(self.items(data)))
        if tag == "scalar":
            return self.scalar(data)
        if tag == "int" and type(data.get("text")) is str and len(data["text"]) <= MAX_INT_DIGITS:
            try:
                return int(data["text"])
            except ValueError as error:
                raise WireError(f"int text {data['text'][:40]!r}") from error
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
    def ref(data: Any) -> ArrayRef:
        """An array's fields, validated."""
        try:
            return msgspec.convert(data, ArrayRef)
        except msgspec.ValidationError as error:
            raise WireError(f"array fields: {error}"[:300]) from None

    def scalar(self, data: dict) -> np.generic:
        """A numpy scalar."""
        if "array" in data:  # a 0-d array
            return self.array(self.ref(data["array"]))[()]
        if type(data.get("dtype")) is not str:
            raise WireError("a scalar's dtype must be a string")
        dtype, value = _dtype(data["dtype"]), data.get("value")
        if dtype.kind not in EXACT_SCALAR_KINDS or type(value) not in (bool, int, float):
            raise WireError(f"scalar {str(value)[:40]} of dtype {dtype}")
        if dtype.kind == "f" and math.isfinite(value) and abs(value) > _float_max(dtype):  # numpy would warn, give inf
            raise WireError(f"scalar {str(value)[:40]} beyond the range of dtype {dtype}")
        try:
            return dtype.type(value)
        except (OverflowError, TypeError, ValueError) as error:  # an int beyond the dtype's range, say
            raise WireError(f"scalar {str(value)[:40]} of dtype {dtype}: {error}"[:300]) from None

    def buffer(self, index: int) -> memoryview:
        """Frame ``index`` of the message (1 is the first after the header)."""
        if not 1 <= index <= len(self.frames):
            raise WireError(f"frame {index} does not exist (the message has {len(self.frames)})")
        frame = self.frames[index - 1]
        self.used.add(index)
        return memoryview(frame.buffer if hasattr(frame, "buffer") else frame)

    def array(self, ref: ArrayRef) -> np.ndarray:
        """The array ``ref`` describes, checked against its buffer's size; the caller's own (no one else holds it).

        Read each ``ref`` once: its inline bytes become the array's buffer (a second array of the same ``ref``
        would share it). Such an array does not own its data in numpy's sense (its base is that buffer).
        """
        dtype = _dtype(ref.dtype)  # refuses a dtype that would need pickle
        data = ref.data
        if (ref.frame is None) == (data is None):
            raise WireError("an array has its bytes in a frame or inline, one of the two")
        buffer = self.buffer(ref.frame) if data is None else data
        size = len(data) if data is not None else buffer.nbytes
        expected = math.prod(ref.shape) * dtype.itemsize
        if size != expected:
            raise WireError(
                f"an array of shape {ref.shape} and dtype {dtype} takes {expected} bytes, its frame has {size}"
            )
        if type(buffer) is bytearray:  # decoded inline bytes: a buffer no one else holds, so no copy
            return np.ndarray(ref.shape, dtype, buffer)
        # A copy: a frame's memory belongs to the message (and inline bytes are immutable), and arrays handed to
        # callers are theirs to change.
        return np.frombuffer(buffer, dtype=dtype).reshape(ref.shape).copy()

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

    def check_all_used(self) -> None:
        """Refuse a message with frames its header does not refer to."""
        if len(self.used) != len(self.frames):
            raise WireError(f"{len(self.frames) + 1} frames, of which the header refers to {len(self.used) + 1}")
