"""Short descriptions of user values for error messages: a 200,000-element list is not its repr."""

from __future__ import annotations

import reprlib
from typing import Any

import numpy as np

# Longest description of one value in an error message (characters).
MAX_CHARS = 160

_REPR = reprlib.Repr()
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxstring = _REPR.maxother = 80
_REPR.maxlevel = 3


def describe_value(value: Any) -> str:
    """``value``'s repr, shortened to a few elements (arrays with their dtype and shape)."""
    if isinstance(value, np.ndarray):
        text = " ".join(np.array2string(value, threshold=8, edgeitems=2).split())  # on one line
        text = f"array({text}, dtype={value.dtype}, shape={value.shape})"
    else:
        text = _REPR.repr(value)
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 3] + "..."


def counted(count: int, noun: str) -> str:
    """``'1 episode'``, ``'3 episodes'``: a count with its noun in the number it takes (plural: noun + s)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def describe_typed(value: Any) -> str:
    """``value``'s type and short repr, as an error says what arrived (``str 'high'``)."""
    return f"{type(value).__name__} {describe_value(value)}"
