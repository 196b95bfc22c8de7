"""Observation dtype convention: float32 for floats, int64 for integers, uint8 kept.

:func:`convention_space` rewrites a space to the convention;
``converters.obs_converter`` copies observations into it.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np


def convention_dtype(dtype: np.dtype) -> np.dtype:
    """float* -> float32, signed/unsigned ints other than uint8 -> int64, others kept."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.dtype(np.float32)
    if dtype.kind in "iu" and dtype != np.uint8:
        return np.dtype(np.int64)
    return dtype


def convention_space(space: gym.spaces.Space) -> gym.spaces.Space:
    """``space`` with its dtypes following the convention (nested spaces too)."""
    if isinstance(space, gym.spaces.Box):
        dtype = convention_dtype(space.dtype)
        if dtype == space.dtype:
            return space
        with np.errstate(over="ignore"):
            low, high = space.low.astype(dtype), space.high.astype(dtype)
        return gym.spaces.Box(low=low, high=high, shape=space.shape, dtype=dtype)
    if isinstance(space, gym.spaces.Dict):
        return gym.spaces.Dict({key: convention_space(sub) for key, sub in space.spaces.items()})
    if isinstance(space, gym.spaces.Tuple):
        return gym.spaces.Tuple(tuple(convention_space(sub) for sub in space.spaces))
    return space
