"""Values and Gymnasium spaces on the wire, without pickle.

A message is a list of frames: frame 0 is a small JSON header, every other frame is the raw
buffer of one numpy array (sent zero-copy by the socket layer). The header's values use JSON's
own types where they are exact (None, bools, ints, floats, strings, lists) and a tagged object
``{"$": tag, ...}`` for everything else:

================  ==========================================================================
tag               meaning
================  ==========================================================================
``array``         numpy array: ``frame`` (index into the buffers), ``dtype`` (``dtype.str``), ``shape``
``scalar``        numpy scalar: ``dtype`` and ``value`` (its Python value, exact for bool/int/float)
``tuple``         ``items``: the encoded elements
``dict``          ``items``: ``[key, value]`` pairs in order (keys need not be strings)
``bytes``         ``frame``: a bytes value
``marker``        ``name``: an env attribute broadcast's ``MISSING`` / ``CALLABLE``
``space``         a Gymnasium space (see :func:`encode_space`)
================  ==========================================================================

A value of any other type is refused with a :class:`WireError` naming its key path and type;
decoding checks every field (tags, dtypes, shapes against buffer sizes) and refuses what does not
fit with a :class:`WireError` too, so bytes from the network only ever become these values.
"""

from __future__ import annotations

import json
import math
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env_manager.status import CALLABLE, MISSING
from ding_env.errors import DingEnvError

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
# Numeric dtype kinds a scalar carries exactly as a JSON number (bool, signed, unsigned, float).
EXACT_SCALAR_KINDS = "biuf"


class WireError(DingEnvError, ValueError):
    """A value that has no wire encoding, or bytes that are not a well-formed message."""


class Encoder:
    """Encodes values into a JSON-ready header, collecting array buffers into ``frames``."""

    def __init__(self) -> None:
        self.frames: list[Any] = []  # frame k of the message is self.frames[k - 1]: frame 0 is the header

    def value(self, value: Any, path: str) -> Any:
        """``value`` as JSON-ready data; ``path`` names it in errors (e.g. ``"info['score']"``)."""
        if value is None or type(value) in (bool, str):
            return value
        if isinstance(value, str):  # a str subclass (e.g. a StrEnum member) travels as its text
            return str(value)
        if isinstance(value, int):  # ints of any size, and int subclasses (IntEnum members) as their value
            return int(value)
        if isinstance(value, float):
            return float(value)
        if isinstance(value, np.ndarray):
            return self.array(value, path)
        if isinstance(value, np.generic):
            return self.scalar(value, path)
        if isinstance(value, list):
            return [self.value(item, f"{path}[{index}]") for index, item in enumerate(value)]
        if isinstance(value, tuple):
            return {"$": "tuple", "items": [self.value(item, f"{path}[{index}]") for index, item in enumerate(value)]}
        if isinstance(value, dict):
            items = [
                [self.value(key, f"{path} key {key!r}"), self.value(item, f"{path}[{key!r}]")]
                for key, item in value.items()
            ]
            return {"$": "dict", "items": items}
        if isinstance(value, (bytes, bytearray, memoryview)):
            self.frames.append(bytes(value))
            return {"$": "bytes", "frame": len(self.frames)}
        if value is MISSING or value is CALLABLE:
            return {"$": "marker", "name": value.name}
        if isinstance(value, gym.spaces.Space):
            return self.space(value, path)
        raise WireError(f"cannot send {path}: a {type(value).__qualname__} has no wire encoding (send {ENCODABLE})")

    def array(self, array: np.ndarray, path: str) -> dict:
        """An array as a buffer frame plus its dtype and shape."""
        if array.dtype.hasobject or array.dtype.fields is not None:
            raise WireError(
                f"cannot send {path}: an array of dtype {array.dtype} has no wire encoding (object and structured "
                "dtypes would need pickle; send arrays of numbers, bools or fixed-width strings)"
            )
        self.frames.append(np.ascontiguousarray(array))
        return {"$": "array", "frame": len(self.frames), "dtype": array.dtype.str, "shape": list(array.shape)}

    def scalar(self, scalar: np.generic, path: str) -> dict:
        """A numpy scalar: inline when its Python value is exact, else as a 0-d array."""
        if scalar.dtype.kind in EXACT_SCALAR_KINDS:
            return {"$": "scalar", "dtype": scalar.dtype.str, "value": scalar.item()}
        encoded = self.array(np.asarray(scalar), path)
        encoded["$"] = "scalar"
        return encoded

    def space(self, space: gym.spaces.Space, path: str) -> dict:
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
            fields = {"spaces": [[key, sub] for key, sub in space.spaces.items()]}
        elif isinstance(space, gym.spaces.Tuple):
            fields = {"spaces": list(space.spaces)}
        else:
            raise WireError(f"cannot send {path}: {type(space).__name__} spaces have no wire encoding (send {SPACES})")
        # A subclass of a Gymnasium space travels as that space.
        kind = next(cls.__name__ for cls in SPACE_CLASSES if isinstance(space, cls))
        return {
            "$": "space",
            "kind": kind,
            **{key: self.value(value, f"{path}.{key}") for key, value in fields.items()},
        }


class Decoder:
    """Decodes a header's values, reading arrays from ``frames``; anything malformed is a ``WireError``."""

    def __init__(self, frames: list[Any]) -> None:
        self.frames = frames

    def value(self, data: Any, path: str) -> Any:
        """The value ``data`` encodes."""
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        if isinstance(data, list):
            return [self.value(item, f"{path}[{index}]") for index, item in enumerate(data)]
        if not isinstance(data, dict):
            raise WireError(f"malformed {path}: a {type(data).__name__} is not an encoded value")
        tag = data.get("$")
        if tag == "array":
            return self._array(data, path)
        if tag == "scalar":
            if "frame" in data:
                return self._array(data, path)[()]
            dtype = self._dtype(data.get("dtype"), path)
            value = data.get("value")
            if dtype.kind not in EXACT_SCALAR_KINDS or isinstance(value, (str, list, dict)) or value is None:
                raise WireError(f"malformed {path}: scalar {value!r} of dtype {dtype}")
            return dtype.type(value)
        if tag == "tuple":
            return tuple(self.value(item, f"{path}[{index}]") for index, item in enumerate(self._items(data, path)))
        if tag == "dict":
            pairs = self._items(data, path)
            if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
                raise WireError(f"malformed {path}: dict items must be [key, value] pairs")
            result = {}
            for key, item in pairs:
                key = self.value(key, f"{path} key")
                try:
                    result[key] = self.value(item, f"{path}[{key!r}]")
                except TypeError as error:  # an unhashable key, e.g. a list
                    raise WireError(f"malformed {path}: key {key!r} is not hashable") from error
            return result
        if tag == "bytes":
            return bytes(self._buffer(data.get("frame"), path))
        if tag == "marker" and data.get("name") in MARKERS:
            return MARKERS[data["name"]]
        if tag == "space":
            return self._space(data, path)
        raise WireError(f"malformed {path}: unknown value tag {tag!r}")

    def _items(self, data: dict, path: str) -> list:
        items = data.get("items")
        if not isinstance(items, list):
            raise WireError(f"malformed {path}: 'items' must be a list, got {type(items).__name__}")
        return items

    def _dtype(self, text: Any, path: str) -> np.dtype:
        if not isinstance(text, str):
            raise WireError(f"malformed {path}: dtype must be a string, got {type(text).__name__}")
        try:
            dtype = np.dtype(text)
        except TypeError as error:
            raise WireError(f"malformed {path}: unknown dtype {text[:40]!r}") from error
        if dtype.hasobject or dtype.fields is not None:
            raise WireError(f"malformed {path}: dtype {dtype} cannot travel without pickle")
        return dtype

    def _buffer(self, index: Any, path: str) -> memoryview:
        if type(index) is not int or not 1 <= index < len(self.frames) + 1:
            raise WireError(f"malformed {path}: frame {index!r} does not exist (the message has {len(self.frames)})")
        frame = self.frames[index - 1]
        return memoryview(frame.buffer if hasattr(frame, "buffer") else frame)

    def _array(self, data: dict, path: str) -> np.ndarray:
        dtype = self._dtype(data.get("dtype"), path)
        shape = data.get("shape")
        if not isinstance(shape, list) or not all(type(size) is int and size >= 0 for size in shape):
            raise WireError(f"malformed {path}: shape must be a list of sizes >= 0, got {shape!r}"[:300])
        buffer = self._buffer(data.get("frame"), path)
        expected = math.prod(shape) * dtype.itemsize
        if buffer.nbytes != expected:
            raise WireError(
                f"malformed {path}: an array of shape {tuple(shape)} and dtype {dtype} takes {expected} bytes, "
                f"its frame has {buffer.nbytes}"
            )
        # A copy: the frame's memory belongs to the message, and arrays handed to callers are theirs to change.
        return np.frombuffer(buffer, dtype=dtype).reshape(shape).copy()

    def _space(self, data: dict, path: str) -> gym.spaces.Space:
        kind = data.get("kind")
        fields = {key: self.value(value, f"{path}.{key}") for key, value in data.items() if key not in ("$", "kind")}
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
                return gym.spaces.Dict({key: space for key, space in fields["spaces"]})
            if kind == "Tuple":
                return gym.spaces.Tuple(fields["spaces"])
        except (KeyError, TypeError, ValueError, AssertionError) as error:
            raise WireError(f"malformed {path}: a {kind} space with fields {sorted(fields)}: {error}"[:400]) from error
        raise WireError(f"malformed {path}: unknown space kind {kind!r} (expected one of {SPACES})")


def encode_space(space: gym.spaces.Space, path: str = "space") -> tuple[dict, list]:
    """``space`` as a header value and its buffers."""
    encoder = Encoder()
    return encoder.space(space, path), encoder.frames


def pack(header: dict, body: dict, path: str = "message") -> list:
    """The frames of a message: ``header`` (JSON-ready fields) with ``body``'s values encoded, then the buffers.

    Raises:
        WireError: Naming the key path and type of a value that has no encoding.
    """
    encoder = Encoder()
    encoded = {key: encoder.value(value, f"{path} {key}") for key, value in body.items()}
    head = json.dumps({**header, "body": encoded}, separators=(",", ":"), allow_nan=True).encode()
    return [head, *encoder.frames]


def unpack(frames: list[Any], path: str = "message") -> tuple[dict, dict]:
    """The header fields and the decoded body of a message's frames.

    Raises:
        WireError: If the frames are not a well-formed message.
    """
    if not frames:
        raise WireError(f"malformed {path}: no frames")
    head = frames[0]
    try:
        header = json.loads(bytes(head.buffer if hasattr(head, "buffer") else head))
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise WireError(f"malformed {path}: its first frame is not a JSON header ({error})"[:300]) from error
    if not isinstance(header, dict) or not isinstance(header.get("body"), dict):
        raise WireError(f"malformed {path}: the header must be a JSON object with a 'body' object")
    decoder = Decoder(frames[1:])
    try:
        body = {key: decoder.value(value, f"{path} {key}") for key, value in header.pop("body").items()}
    except RecursionError as error:
        raise WireError(f"malformed {path}: values nested too deeply") from error
    return header, body
