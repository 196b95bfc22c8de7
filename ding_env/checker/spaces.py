"""The checker's view of spaces: the dtype convention, and the arrays of an observation.

Whether a value lies in a space is ``ding_env.space_check.value_problems``, shared with the managers.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

CONVENTIONAL_DTYPES = (np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.uint8))


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
