"""DI-engine's feature encoders of ``ding.envs.common.common_function``: one-hot, binary and position codes.

They take and return torch tensors, as DI-engine's do (StarCraft-style envs encode their
observations with them). torch is imported when one of them is called, never by ``import ding_env``.
Bad input (a value outside a reorder table, a non-long tensor) raises with the value named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np


def _torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise ImportError(
            f"ding_env.common's encoders work on torch tensors, and torch is not installed ({error}); "
            "pip install 'ding-env[torch]'"
        ) from error
    return torch


def one_hot(val: Any, num: int, num_first: bool = False) -> Any:
    """``val`` (a long tensor of values in [0, num), or -1 for all zeros) as float one-hot codes.

    Args:
        val: A long tensor of at least one dimension.
        num: Number of classes.
        num_first: Put the code dimension first instead of last.

    Raises:
        TypeError: When ``val`` is not a long tensor of at least one dimension.
        ValueError: When a value is outside [-1, num).
    """
    torch = _torch()
    if not isinstance(val, torch.Tensor) or val.dtype != torch.long or val.dim() < 1:
        got = f"{val.dtype} tensor of shape {tuple(val.shape)}" if isinstance(val, torch.Tensor) else type(val)
        raise TypeError(f"one_hot: expected a long tensor of at least one dimension, got {got}")
    flat = val.reshape(-1, 1)
    outside = (flat < -1) | (flat >= num)
    if outside.any():
        raise ValueError(f"one_hot: values must be in [-1, {num}), got {flat[outside].tolist()[:5]}")
    codes = torch.zeros(flat.shape[0], num, device=val.device)
    codes.scatter_(1, flat.clamp(min=0), 1)
    codes = codes * (flat != -1)  # -1 encodes as all zeros
    if num_first:
        return codes.permute(1, 0).reshape(num, *val.shape)
    return codes.reshape(*val.shape, num)


def sqrt_one_hot(v: Any, max_val: int) -> Any:
    """One-hot of ``floor(sqrt(clamp(v, 0, max_val)))``, ``int(sqrt(max_val)) + 1`` classes."""
    torch = _torch()
    num = int(math.sqrt(max_val)) + 1
    return one_hot(torch.floor(torch.sqrt(torch.clamp(v.float(), 0, max_val))).long(), num)


def div_one_hot(v: Any, max_val: int, ratio: int) -> Any:
    """One-hot of ``floor(clamp(v, 0, max_val) / ratio)``, ``int(max_val / ratio) + 1`` classes."""
    torch = _torch()
    num = int(max_val / ratio) + 1
    return one_hot(torch.floor(torch.clamp(v.float(), 0, max_val) / ratio).long(), num)


def div_func(inputs: Any, other: float, unsqueeze_dim: int | None = 1) -> Any:
    """``inputs / other`` as floats, with a dimension added at ``unsqueeze_dim`` (None: none)."""
    inputs = inputs.float()
    if unsqueeze_dim is not None:
        inputs = inputs.unsqueeze(unsqueeze_dim)
    return _torch().div(inputs, other)


def clip_one_hot(v: Any, num: int) -> Any:
    """One-hot of ``v`` clamped to [0, num - 1]."""
    return one_hot(v.clamp(0, num - 1), num)


def _reordered(value: int, table: Mapping[int, int], num: int, transform: np.ndarray | None, caller: str) -> int:
    key = value if transform is None else int(transform[value])
    try:
        return table[key]
    except KeyError:
        raise KeyError(f"{caller}: value {key} (of {num} classes) is not in the reorder table") from None


def reorder_one_hot(v: Any, dictionary: Mapping[int, int], num: int, transform: np.ndarray | None = None) -> Any:
    """One-hot of each value of the 1-d tensor ``v`` mapped through ``dictionary`` (after ``transform``).

    Raises:
        ValueError: When ``v`` is not one-dimensional.
        KeyError: For a value the table does not have.
    """
    if v.dim() != 1:
        raise ValueError(f"reorder_one_hot: expected a 1-d tensor, got shape {tuple(v.shape)}")
    reordered = [_reordered(int(item), dictionary, num, transform, "reorder_one_hot") for item in v.tolist()]
    return one_hot(_torch().tensor(reordered, dtype=_torch().long), num)


def reorder_one_hot_array(v: Any, array: np.ndarray, num: int, transform: np.ndarray | None = None) -> Any:
    """As :func:`reorder_one_hot`, with the table an array indexed by value (any shape of ``v``)."""
    values = v.numpy()
    reordered = array[values] if transform is None else array[transform[values]]
    return one_hot(_torch().as_tensor(np.asarray(reordered), dtype=_torch().long), num)


def reorder_boolean_vector(v: Any, dictionary: Mapping[int, int], num: int, transform: np.ndarray | None = None) -> Any:
    """A float vector of ``num`` zeros with a 1 at the reordered index of each value of ``v``.

    Raises:
        KeyError: For a value the table does not have.
    """
    vector = _torch().zeros(num)
    for item in v.reshape(-1).tolist():
        vector[_reordered(int(item), dictionary, num, transform, "reorder_boolean_vector")] = 1
    return vector


@lru_cache(maxsize=32)
def get_to_and(num_bits: int) -> np.ndarray:
    """``[[2**(num_bits-1), ..., 2, 1]]``: the bit masks of :func:`batch_binary_encode`."""
    return 2 ** np.arange(num_bits - 1, -1, -1).reshape([1, num_bits])


def batch_binary_encode(x: Any, bit_num: int) -> Any:
    """Each integer of ``x`` as ``bit_num`` big-endian bits (floats), in a new last dimension."""
    values = x.numpy()
    bits = (values.reshape([-1, 1]) & get_to_and(bit_num)).astype(bool).astype(np.float32)
    return _torch().from_numpy(bits.reshape([*values.shape, bit_num]))


def compute_denominator(x: Any) -> Any:
    """``1 / 10000 ** (2 * (x // 2) / 64)``: the frequencies of :func:`get_postion_vector`."""
    torch = _torch()
    x = torch.div(x, 2, rounding_mode="trunc") * 2
    return torch.div(1.0, torch.pow(10000.0, torch.div(x, 64.0)))


def get_postion_vector(x: Sequence[float]) -> Any:
    """The 64-dim sinusoidal position code of ``x`` (sines at even, cosines at odd indices), as DI-engine spells it."""
    torch = _torch()
    frequencies = compute_denominator(torch.arange(0, 64, dtype=torch.float))
    position = torch.tensor(x, dtype=torch.float)
    vector = torch.zeros(64, dtype=torch.float)
    vector[0::2] = torch.sin(position * frequencies[0::2])
    vector[1::2] = torch.cos(position * frequencies[1::2])
    return vector
