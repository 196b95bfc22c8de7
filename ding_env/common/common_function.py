"""DI-engine's ``ding.envs.common.common_function``: ``affine_transform``, ``save_frames_as_gif`` and the encoders.

The one-hot, binary and position encoders live in ``ding_env.common.encoding`` (they need torch,
imported when one is called).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ding_env.common.encoding import (
    batch_binary_encode,
    clip_one_hot,
    compute_denominator,
    div_func,
    div_one_hot,
    get_postion_vector,
    get_to_and,
    one_hot,
    reorder_boolean_vector,
    reorder_one_hot,
    reorder_one_hot_array,
    sqrt_one_hot,
)
from ding_env.extras import needs_extra

__all__ = [
    "affine_transform",
    "batch_binary_encode",
    "clip_one_hot",
    "compute_denominator",
    "div_func",
    "div_one_hot",
    "get_postion_vector",
    "get_to_and",
    "num_first_one_hot",
    "one_hot",
    "reorder_boolean_vector",
    "reorder_one_hot",
    "reorder_one_hot_array",
    "save_frames_as_gif",
    "sqrt_one_hot",
]


def num_first_one_hot(val: Any, num: int) -> Any:
    """``one_hot(val, num, num_first=True)``: the code dimension first."""
    return one_hot(val, num, num_first=True)


def affine_transform(
    data: Any,
    action_clip: bool = True,
    alpha: float | None = None,
    beta: float | None = None,
    min_val: Any = None,
    max_val: Any = None,
) -> Any:
    """``alpha * data + beta``, for data (actions, usually) in [-1, 1].

    Args:
        data: The values to map.
        action_clip: Clip ``data`` to [-1, 1] first.
        alpha: The scale (when ``min_val``/``max_val`` are not given).
        beta: The offset (default 0).
        min_val: With ``max_val``, map [-1, 1] onto [min_val, max_val] (scalars or arrays).
        max_val: See ``min_val``.

    Raises:
        ValueError: When only one of ``min_val`` and ``max_val`` is given, or neither they nor ``alpha``.
    """
    if (min_val is None) != (max_val is None):
        raise ValueError(f"affine_transform: give min_val and max_val together, got {min_val!r} and {max_val!r}")
    if min_val is not None:
        low, high = np.asarray(min_val, dtype=np.float64), np.asarray(max_val, dtype=np.float64)
        alpha, beta = (high - low) / 2, (high + low) / 2
    if alpha is None:
        raise ValueError("affine_transform: give alpha (and beta), or min_val and max_val")
    if action_clip:
        data = np.clip(data, -1, 1)
    return data * alpha + (0.0 if beta is None else beta)


def save_frames_as_gif(frames: Sequence[np.ndarray], path: str, fps: float = 20) -> None:
    """Write ``frames`` (``(H, W, 3)`` ``uint8`` images) to a looping GIF at ``path``.

    Raises:
        ImportError: Without imageio (the ``replay`` extra installs it, and so do ``atari`` and ``mujoco``).
    """
    try:
        import imageio
    except ImportError as error:
        raise ImportError(needs_extra("save_frames_as_gif", "replay", error)) from error
    imageio.mimsave(path, list(frames), duration=1000 / fps, loop=0)
