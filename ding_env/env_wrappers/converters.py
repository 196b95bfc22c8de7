"""Converters built once per env: actions into the Gymnasium env's form, observations into ours.

Building a closure per space keeps the per-step path to one or two numpy calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.errors import EnvDataError
from ding_env.trees import map_tree


def action_converter(
    space: gym.spaces.Space, act_scale: bool, owner: str, action_clip: bool = False
) -> Callable[[Any], Any]:
    """A function turning a user action into what the Gymnasium env expects.

    ``Discrete``: Python ints, numpy integer scalars, 0-d and 1-element integer arrays (the
    managers pass 0-d ones) become a numpy scalar of the space's dtype. ``Box``: any array of the
    right size becomes an array of the space's shape and dtype; with ``act_scale`` the action is
    given in ``[-1, 1]`` and mapped linearly to the bounds.

    Args:
        space: The Gymnasium env's action space.
        act_scale: Map ``[-1, 1]`` to the Box bounds.
        owner: Names the env in error messages.
        action_clip: Clip Box actions to ``[-1, 1]`` (with ``act_scale``) or to the bounds first.
    """
    if isinstance(space, gym.spaces.Discrete):
        return _discrete_converter(space, owner)
    if isinstance(space, gym.spaces.Box):
        return _box_converter(space, act_scale, owner, action_clip)
    return _part_converter(space, owner, act_scale, action_clip) or _unchanged


def _unchanged(action: Any) -> Any:
    return action


def _part_converter(
    space: gym.spaces.Space, owner: str, act_scale: bool = False, action_clip: bool = False
) -> Callable[[Any], Any] | None:
    """For a ``Dict`` or ``Tuple`` space, a function converting its parts; None where nothing changes.

    ``Discrete`` parts become numpy scalars (Gymnasium's vector envs hand them so; the managers pass 0-d
    arrays); ``Box`` parts are scaled or clipped as a ``Box`` action is, when ``act_scale`` or ``action_clip``
    says so (a hybrid action's continuous arguments).
    """
    if isinstance(space, gym.spaces.Discrete):
        return _discrete_converter(space, owner)
    if isinstance(space, gym.spaces.Box):
        return _box_converter(space, act_scale, owner, action_clip) if act_scale or action_clip else None
    if isinstance(space, gym.spaces.Dict):
        parts = {key: _part_converter(sub, owner, act_scale, action_clip) for key, sub in space.spaces.items()}
        parts = {key: convert for key, convert in parts.items() if convert is not None}
        if not parts:
            return None
        return lambda action: (
            {key: parts[key](value) if key in parts else value for key, value in action.items()}
            if isinstance(action, Mapping)
            else action
        )
    if isinstance(space, gym.spaces.Tuple):
        items = [_part_converter(sub, owner, act_scale, action_clip) for sub in space.spaces]
        if all(convert is None for convert in items):
            return None
        return lambda action: (
            tuple(value if convert is None else convert(value) for convert, value in zip(items, action, strict=False))
            if isinstance(action, (tuple, list)) and len(action) == len(items)
            else action
        )
    return None


def has_box(space: gym.spaces.Space) -> bool:
    """Whether ``space`` is a ``Box`` or holds one (in a ``Dict`` or ``Tuple``): what ``act_scale`` applies to."""
    if isinstance(space, gym.spaces.Box):
        return True
    if isinstance(space, (gym.spaces.Dict, gym.spaces.Tuple)):
        return any(map(has_box, space.spaces.values() if isinstance(space, gym.spaces.Dict) else space.spaces))
    return False


# Discrete spaces up to this size keep one prebuilt scalar per action.
_CACHED_DISCRETE_ACTIONS = 1024


def _discrete_converter(space: gym.spaces.Discrete, owner: str) -> Callable[[Any], np.integer]:
    # The scalar type Discrete.sample() returns. Gymnasium's Discrete.contains, which classic-control
    # envs assert on every step, checks it ~1 us faster than a Python int; a list lookup of a
    # prebuilt scalar costs less than building one per step.
    scalar, start, n = space.dtype.type, int(space.start), int(space.n)
    cached = [scalar(start + index) for index in range(n)] if n <= _CACHED_DISCRETE_ACTIONS else []

    def to_scalar(value: int) -> np.integer:
        if not start <= value < start + n:  # Gymnasium's envs assert it, naming neither the env nor the range
            raise ValueError(f"{owner}: a Discrete({n}) action must be in [{start}, {start + n}), got {value!r}")
        return scalar(value)

    def convert(action: Any) -> np.integer:
        if type(action) is int:
            index = action - start
            return cached[index] if 0 <= index < len(cached) else to_scalar(action)
        if type(action) is scalar:
            index = int(action) - start
            return action if 0 <= index < len(cached) else to_scalar(int(action))
        if type(action) is np.ndarray and action.ndim == 0:  # what the managers pass: a 0-d integer array
            value = action.item()
            if type(value) is int:
                index = value - start
                return cached[index] if 0 <= index < len(cached) else to_scalar(value)
        if isinstance(action, np.integer):
            return to_scalar(int(action))
        array = np.asarray(action)
        if array.size != 1 or array.dtype.kind not in "iu":
            raise ValueError(
                f"{owner}: a Discrete({n}) action must be one integer, got {action!r} "
                f"(dtype {array.dtype}, shape {array.shape})"
            )
        return to_scalar(int(array.reshape(())))

    return convert


def _box_converter(
    space: gym.spaces.Box, act_scale: bool, owner: str, action_clip: bool
) -> Callable[[Any], np.ndarray]:
    shape, dtype, size = space.shape, space.dtype, int(np.prod(space.shape))
    # Only act_scale uses them: an unbounded Box (ClipAction's) has no center, and numpy warns computing it.
    center, half_range = box_scale(space) if act_scale else (None, None)
    low, high = (-1.0, 1.0) if act_scale else (space.low, space.high)

    def convert(action: Any) -> np.ndarray:
        array = np.asarray(action, dtype=dtype)
        if array.shape != shape:
            if array.size != size:
                raise ValueError(f"{owner}: a Box action must have shape {shape}, got shape {array.shape}")
            array = array.reshape(shape)
        if action_clip:
            array = np.clip(array, low, high).astype(dtype, copy=False)
        if act_scale:
            array = center + array * half_range
        return array

    return convert


def box_scale(space: gym.spaces.Box) -> tuple[np.ndarray, np.ndarray]:
    """The center and half range of a Box's bounds, in its dtype: ``act_scale`` maps ``a`` to ``center + a * half``."""
    center = ((space.high.astype(np.float64) + space.low) / 2).astype(space.dtype)
    half_range = ((space.high.astype(np.float64) - space.low) / 2).astype(space.dtype)
    return center, half_range


def scaled_action_space(space: gym.spaces.Space) -> gym.spaces.Space:
    """The space users act in with ``act_scale``: each ``Box`` (also in a ``Dict`` or ``Tuple``) in ``[-1, 1]``."""
    if isinstance(space, gym.spaces.Box):
        return gym.spaces.Box(low=-1.0, high=1.0, shape=space.shape, dtype=space.dtype)
    if isinstance(space, gym.spaces.Dict):
        return gym.spaces.Dict({key: scaled_action_space(sub) for key, sub in space.spaces.items()})
    if isinstance(space, gym.spaces.Tuple):
        return gym.spaces.Tuple([scaled_action_space(sub) for sub in space.spaces])
    return space


def obs_converter(space: gym.spaces.Space, copy: bool = True, owner: str = "the env") -> Callable[[Any], Any]:
    """A function converting an observation into ``space``'s dtypes.

    ``space`` is the converted (convention) space: see ``dtypes.convention_space``. Into a float
    leaf any number converts (the convention's float32); into an integer or bool leaf only values
    it holds exactly: a float64 frame of 300.9 for a uint8 space is an ``EnvDataError``, never 44.

    Args:
        space: The observation space.
        copy: Return a fresh array every call. Without, an array already of the right dtype is
            returned as it is (the env's own, which it may change at its next step): for a caller
            that copies it at once, such as an env host writing its rows.
        owner: Names the env in error messages.
    """
    if isinstance(space, gym.spaces.Dict):
        parts = {key: obs_converter(sub, copy, owner) for key, sub in space.spaces.items()}
        return lambda obs: {key: convert(obs[key]) for key, convert in parts.items()}
    if isinstance(space, gym.spaces.Tuple):
        items = [obs_converter(sub, copy, owner) for sub in space.spaces]
        return lambda obs: tuple(convert(item) for convert, item in zip(items, obs, strict=True))
    dtype = space.dtype
    cast = partial(_float_cast if dtype.kind == "f" else _exact_cast, dtype, owner)

    def convert(obs: Any) -> np.ndarray:
        if type(obs) is np.ndarray and obs.dtype == dtype:  # the common case: no conversion
            return obs.copy() if copy else obs
        return cast(obs)

    return convert


def _float_cast(dtype: np.dtype, owner: str, obs: Any) -> np.ndarray:
    return np.array(obs, dtype=dtype)


def _exact_cast(dtype: np.dtype, owner: str, obs: Any) -> np.ndarray:
    """``obs`` in the integer or bool ``dtype``, refusing a value that dtype cannot hold."""
    array = np.asarray(obs)
    converted = None
    if array.dtype.kind in "biufO":  # an object array of Python ints converts too, when exactly
        try:
            with np.errstate(invalid="ignore", over="ignore"):
                converted = array.astype(dtype)
        except (TypeError, ValueError, OverflowError):
            converted = None
    if converted is None or not np.array_equal(converted, array):
        values = array if converted is None else array[converted != array]
        raise EnvDataError(
            f"{owner}: an observation of dtype {array.dtype} does not fit the space's {dtype} "
            f"(values such as {values.ravel()[:3].tolist()} would change): return it in the space's dtype, "
            "or declare the dtype it has"
        )
    return converted


def di_engine_action(action: Any) -> Any:
    """An action in the forms DI-engine's ``random_action`` gives.

    A ``Discrete`` sample becomes a ``(1,)`` int64 array, other samples arrays; the parts of ``Dict`` and
    ``Tuple`` samples become arrays of their own shapes (0-d for a ``Discrete`` part), as the managers take them.
    """
    if isinstance(action, (int, np.integer)):
        return np.array([action], dtype=np.int64)
    return map_tree(np.asarray, action)
