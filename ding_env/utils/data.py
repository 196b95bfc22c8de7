"""DI-engine's ``to_ndarray``, ``to_list`` and ``to_tensor``: containers converted leaf by leaf.

torch is imported only by ``to_tensor`` and only when it is called; the other two recognise a
tensor by its class without importing torch.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def _is_tensor(item: Any) -> bool:
    return type(item).__module__.startswith("torch") and hasattr(item, "numpy")


def to_ndarray(item: Any, dtype: Any = None) -> Any:
    """Arrays from tensors, numbers and number sequences; dicts, lists and namedtuples converted per element.

    Args:
        item: A tensor, array, number, ``None``, or a (nested) dict, list, tuple or namedtuple of them.
        dtype: Cast every array to this dtype (None keeps it).

    Raises:
        TypeError: For a leaf of any other type, naming it.
    """
    if isinstance(item, dict):
        return {key: to_ndarray(value, dtype) for key, value in item.items()}
    if isinstance(item, (list, tuple)):
        if len(item) == 0:
            return None  # DI-engine's value for an empty sequence
        if isinstance(item[0], numbers.Real):
            return np.asarray(item, dtype=dtype) if dtype is not None else np.array(item)
        if hasattr(item, "_fields"):
            return type(item)(*[to_ndarray(value, dtype) for value in item])
        return [to_ndarray(value, dtype) for value in item]
    if _is_tensor(item):
        array = item.detach().cpu().numpy()
        return array if dtype is None else array.astype(dtype)
    if isinstance(item, np.ndarray):
        return item if dtype is None else item.astype(dtype)
    if isinstance(item, (bool, str)) or item is None:
        return item
    if np.isscalar(item):
        return np.array(item) if dtype is None else np.array(item, dtype=dtype)
    raise TypeError(f"to_ndarray cannot convert {type(item).__name__}: give arrays, tensors, numbers or containers")


def to_list(item: Any) -> Any:
    """Python lists and numbers from arrays and tensors; dicts, lists and tuples converted per element.

    Raises:
        TypeError: For a leaf of any other type, naming it.
    """
    if item is None or isinstance(item, (str, bool)):
        return item
    if isinstance(item, np.ndarray) or _is_tensor(item):
        return item.tolist()
    if isinstance(item, (list, tuple)):
        return [to_list(value) for value in item]
    if isinstance(item, dict):
        return {key: to_list(value) for key, value in item.items()}
    if np.isscalar(item):
        return item
    raise TypeError(f"to_list cannot convert {type(item).__name__}: give arrays, tensors, numbers or containers")


def to_tensor(item: Any, dtype: Any = None) -> Any:
    """Torch tensors from arrays and numbers; dicts, lists and tuples converted per element (imports torch).

    Args:
        item: An array, number, tensor, ``None``, or a (nested) dict, list or tuple of them.
        dtype: A ``torch.dtype`` for every tensor (None keeps the array's).
    """
    import torch

    if isinstance(item, dict):
        return {key: to_tensor(value, dtype) for key, value in item.items()}
    if isinstance(item, (list, tuple)):
        if len(item) > 0 and isinstance(item[0], numbers.Real):
            return torch.as_tensor(np.asarray(item), dtype=dtype)
        converted = [to_tensor(value, dtype) for value in item]
        return type(item)(*converted) if hasattr(item, "_fields") else type(item)(converted)
    if item is None or isinstance(item, str):
        return item
    return torch.as_tensor(np.asarray(item) if not isinstance(item, torch.Tensor) else item, dtype=dtype)
