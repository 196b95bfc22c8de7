"""Strict membership of values in Gymnasium spaces, with messages that say where and why."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

CONVENTIONAL_DTYPES = (np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.uint8))


def space_problems(value: Any, space: gym.spaces.Space, path: str = "obs") -> list[str]:
    """Every way ``value`` is not in ``space``: exact shape and dtype, bounds, nesting.

    Unlike ``space.contains`` no dtype is cast: a float64 array is not in a float32 Box.
    """
    if isinstance(space, gym.spaces.Dict):
        if not isinstance(value, dict) or set(value) != set(space.spaces):
            got = sorted(value) if isinstance(value, dict) else type(value).__name__
            return [f"{path} must be a dict with keys {sorted(space.spaces)}, got {got}"]
        return [
            problem
            for key, sub in space.spaces.items()
            for problem in space_problems(value[key], sub, f"{path}[{key!r}]")
        ]
    if isinstance(space, gym.spaces.Tuple):
        if not isinstance(value, tuple) or len(value) != len(space.spaces):
            return [f"{path} must be a tuple of {len(space.spaces)} items, got {type(value).__name__}"]
        return [
            p
            for i, (item, sub) in enumerate(zip(value, space.spaces, strict=True))
            for p in space_problems(item, sub, f"{path}[{i}]")
        ]
    if not isinstance(value, (np.ndarray, np.generic)):
        return [f"{path} must be a numpy array of dtype {space.dtype}, got {type(value).__name__} {value!r:.60}"]
    if value.shape != space.shape:
        return [f"{path} must have shape {space.shape}, got {value.shape}"]
    if space.dtype is not None and value.dtype != space.dtype:
        return [f"{path} must have dtype {space.dtype} as its space declares, got {value.dtype}"]
    if isinstance(space, gym.spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n - 1)
        if not low <= int(value) <= high:
            return [f"{path} = {int(value)} is outside Discrete(n={space.n}, start={space.start}): [{low}, {high}]"]
        return []
    if isinstance(space, gym.spaces.MultiDiscrete):
        if np.any(value < space.start) or np.any(value >= space.start + space.nvec):
            return [f"{path} = {value.tolist()} is outside MultiDiscrete(nvec={space.nvec.tolist()})"]
        return []
    if isinstance(space, gym.spaces.MultiBinary):
        if not np.all((value == 0) | (value == 1)):
            return [f"{path} holds values other than 0 and 1"]
        return []
    if isinstance(space, gym.spaces.Box):
        if np.issubdtype(value.dtype, np.floating) and not np.all(
            np.isfinite(value) | np.isinf(space.low) | np.isinf(space.high)
        ):
            return [f"{path} holds NaN or inf"]
        if np.any(value < space.low) or np.any(value > space.high):
            return [f"{path} is outside its Box bounds [{space.low.min()}, {space.high.max()}]: {value!r:.80}"]
    return []


def dtype_problems(space: gym.spaces.Space, path: str) -> list[str]:
    """Dtypes of ``space`` that break the float32 / int64 / uint8 convention."""
    if isinstance(space, gym.spaces.Dict):
        return [p for key, sub in space.spaces.items() for p in dtype_problems(sub, f"{path}[{key!r}]")]
    if isinstance(space, gym.spaces.Tuple):
        return [p for i, sub in enumerate(space.spaces) for p in dtype_problems(sub, f"{path}[{i}]")]
    if isinstance(space, gym.spaces.MultiBinary):
        return []
    if space.dtype is not None and np.dtype(space.dtype) not in CONVENTIONAL_DTYPES:
        return [f"{path} has dtype {space.dtype}; use float32, int64 or uint8 (images)"]
    return []


def leaves(value: Any) -> list[np.ndarray]:
    """The arrays of a (nested) observation; dicts by sorted key, so two key orders compare equal."""
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in leaves(value[key])]
    if isinstance(value, (tuple, list)):
        return [leaf for sub in value for leaf in leaves(sub)]
    return [value] if isinstance(value, np.ndarray) else []
