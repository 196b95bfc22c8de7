"""Values against Gymnasium spaces: the one validator of the checker and the env managers, and the dtype convention.

``value_problems`` checks a value exactly: unlike ``space.contains`` nothing is cast (a float64
array is not in a float32 ``Box``, a Python int is not in a ``Discrete``). Each problem names the
value's path (``obs['pos'][1]``), what the space expects and what arrived.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.errors import EnvDataError
from ding_env.summary import describe_typed, describe_value

CONVENTIONAL_DTYPES = (np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.uint8))
# Spaces whose values are one array each, so that a batch of them is one array too.
ARRAY_SPACES = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)
# The spaces every env declares, by attribute name.
SPACE_NAMES = ("observation_space", "action_space", "reward_space")


def check_exact_reward(value: Any, written: np.ndarray) -> None:
    """Refuse a reward its reward space's dtype would change: ``written`` is ``value`` after its cast to that dtype.

    An integer dtype holds whole numbers in its range; a float dtype holds the integers its precision
    keeps exactly and the finite floats within its range (a float64 reward of 1e39 is inf in float32).
    An infinite or NaN reward the env returned stays as it is, and does not hide another one's overflow.

    Raises:
        EnvDataError: When the cast changed a value (0.7 into int64 is 0), never a silent cast.
    """
    given = value if type(value) is np.ndarray else np.asarray(value)
    if given.dtype == written.dtype:
        return
    kind = written.dtype.kind
    if kind in "biu":
        if not np.all(np.ravel(written) == np.ravel(given)):
            raise EnvDataError(
                f"reward {describe_value(value)} does not fit the reward space's dtype {written.dtype} (it would "
                f"become {describe_value(written)}): declare a float reward space, or return whole numbers"
            )
        return
    if kind != "f":
        return
    if given.dtype.kind in "iuO" and not _whole_numbers_kept(given, written):
        raise EnvDataError(
            f"reward {describe_value(value)} is not exact in the reward space's dtype {written.dtype} (it would become "
            f"{describe_value(written)}): declare a float64 reward space, or return whole numbers below "
            f"2**{np.finfo(written.dtype).nmant + 1}"
        )
    if given.dtype.kind == "f" and not np.isfinite(written).all():
        overflowed = ~np.isfinite(np.ravel(written)) & np.isfinite(np.ravel(given))
        if overflowed.any():
            raise EnvDataError(
                f"reward {describe_value(value)} is beyond the reward space's dtype {written.dtype} (it would become "
                f"{describe_value(written)}): scale the rewards down, or declare a float64 reward space"
            )


def _whole_numbers_kept(given: np.ndarray, written: np.ndarray) -> bool:
    """Whether the float array ``written`` holds exactly the integers of ``given`` (an int or object array)."""
    limit = 2 ** (np.finfo(written.dtype).nmant + 1)  # every integer up to this is exact in the float dtype
    if given.dtype.kind in "iu" and (not given.size or (given.min() >= -limit and given.max() <= limit)):
        return True
    # Python compares an int and a float exactly (where numpy would round the int to a float first).
    pairs = zip(np.ravel(written).tolist(), np.ravel(given).tolist(), strict=True)
    return all(kept == number for kept, number in pairs)


def cast_reward(value: Any, dtype: np.dtype, shown: Any = None) -> np.ndarray:
    """``value`` as an array of ``dtype`` (a view when it has that dtype), refusing a cast that changes a value.

    A float array into a wider float dtype is cast as it is; into a narrower one (the float64 rewards of most
    simulators into a float32 reward space) it is checked against the dtype's range before the cast, in one
    pass; any other cast is checked after it by ``check_exact_reward``. Numpy's own warning of an overflow
    is never printed beside the error.

    Args:
        value: The reward.
        dtype: The reward space's dtype.
        shown: The reward as the env gave it, for the error (default ``value``).

    Raises:
        EnvDataError: When the cast would change a value, or the value is not a number.
    """
    if type(value) is np.ndarray:
        if value.dtype == dtype:
            return value
        if value.dtype.kind == "f" and dtype.kind == "f":
            if value.dtype.itemsize <= dtype.itemsize:  # a wider float keeps every value
                return value.astype(dtype)
            if value.size and np.abs(value).max() <= np.finfo(dtype).max:  # false for NaN too: checked below
                return value.astype(dtype)
    given = np.asarray(value)
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # a cast that changes a value is raised below
            cast = given.astype(dtype)
    except (OverflowError, TypeError, ValueError) as error:  # a Python int beyond int64, a string
        raise EnvDataError(
            f"reward {describe_value(value if shown is None else shown)} cannot be held in the reward space's "
            f"dtype {dtype}: {error}"
        ) from error
    check_exact_reward(value if shown is None else shown, cast)
    return cast


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


def leaves(value: Any, scalars: bool = False) -> list[np.ndarray]:
    """The arrays of a (nested) observation; dicts by sorted key, so two key orders compare equal.

    With ``scalars``, numbers (a numpy scalar, as ``Discrete.sample()`` gives, or a Python one) are leaves
    too, as 0-d arrays.
    """
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in leaves(value[key], scalars)]
    if isinstance(value, (tuple, list)):
        return [leaf for sub in value for leaf in leaves(sub, scalars)]
    if isinstance(value, np.ndarray):
        return [value]
    return [np.asarray(value)] if scalars and isinstance(value, (np.generic, int, float)) else []


def space_tree(space: gym.spaces.Space) -> Any:
    """``space`` as a tree: its ``Dict`` and ``Tuple`` parts become dicts and tuples of their subspaces."""
    if isinstance(space, gym.spaces.Dict):
        return {key: space_tree(sub) for key, sub in space.spaces.items()}
    if isinstance(space, gym.spaces.Tuple):
        return tuple(space_tree(sub) for sub in space.spaces)
    return space


def value_problems(value: Any, spec: Any, path: str = "obs") -> list[str]:
    """Every way ``value`` is not in ``spec``: nesting, exact shape and dtype, and bounds.

    Args:
        value: An array, or arrays nested in dicts and tuples (lists stand for tuples).
        spec: A Gymnasium space, or a layout (``arrays.layout_of``): dicts and tuples of leaves that
            carry a ``shape`` and a ``dtype``. Bounds are checked where a leaf is a space.
        path: Names ``value`` in the messages.

    Returns:
        One message per problem (at most one per leaf); none when ``value`` is in ``spec``.
    """
    if isinstance(spec, (gym.spaces.Dict, gym.spaces.Tuple)):
        spec = space_tree(spec)
    problems: list[str] = []
    _collect(value, spec, (path,), problems)
    return problems


def _collect(value: Any, spec: Any, path: tuple, problems: list[str]) -> None:
    """Append the problems of ``value`` to ``problems``; ``path`` is the root's name and the keys down to here.

    The path is formatted only for a problem: observations are checked on every step.
    """
    if not isinstance(spec, (dict, tuple)):  # a leaf, the usual case
        problem = leaf_problem(value, spec, path)
        if problem is not None:
            problems.append(problem)
    elif isinstance(spec, dict):
        if not isinstance(value, dict) or value.keys() != spec.keys():
            got = sorted(value, key=str) if isinstance(value, dict) else type(value).__name__
            problems.append(f"{path_name(path)} must be a dict with keys {sorted(spec, key=str)}, got {got}")
            return
        for key, sub in spec.items():
            _collect(value[key], sub, (*path, key), problems)
    else:
        if not isinstance(value, (tuple, list)) or len(value) != len(spec):
            problems.append(f"{path_name(path)} must be a tuple of {len(spec)} items, got {describe_typed(value)}")
            return
        for index, (item, sub) in enumerate(zip(value, spec, strict=True)):
            _collect(item, sub, (*path, index), problems)


def path_name(path: tuple) -> str:
    """``('obs', 'pos', 1)`` as ``obs['pos'][1]``."""
    return str(path[0]) + "".join(f"[{key!r}]" for key in path[1:])


def leaf_problem(value: Any, spec: Any, path: tuple) -> str | None:
    """How ``value`` differs from one array leaf ``spec`` (a space or an ``ArraySpec``), or None if it does not."""
    shape, dtype = spec.shape, spec.dtype
    if not isinstance(value, (np.ndarray, np.generic)):
        return (
            f"{path_name(path)} must be a numpy array of shape {shape} and dtype {dtype}, got {describe_typed(value)}"
        )
    wrong_shape, wrong_dtype = value.shape != shape, dtype is not None and value.dtype != dtype
    if wrong_shape and wrong_dtype:
        return (
            f"{path_name(path)} must have shape {shape} and dtype {dtype}, "
            f"got shape {value.shape} and dtype {value.dtype}"
        )
    if wrong_shape:
        return f"{path_name(path)} must have shape {shape}, got {value.shape}"
    if wrong_dtype:
        return f"{path_name(path)} must have dtype {dtype}, got {value.dtype}"
    return bound_problem(value, spec, path) if isinstance(spec, gym.spaces.Space) else None


def bound_problem(value: np.ndarray, space: gym.spaces.Space, path: tuple) -> str | None:
    """How ``value``, of the shape and dtype of ``space``, lies outside its bounds (NaN and inf included), or None."""
    name = path_name(path)
    if isinstance(space, gym.spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n - 1)
        if not low <= int(value) <= high:
            return f"{name} = {int(value)} is outside Discrete(n={space.n}, start={space.start}): [{low}, {high}]"
    elif isinstance(space, gym.spaces.MultiDiscrete):
        if np.any(value < space.start) or np.any(value >= space.start + space.nvec):
            return f"{name} = {value.tolist()} is outside MultiDiscrete(nvec={space.nvec.tolist()})"
    elif isinstance(space, gym.spaces.MultiBinary):
        if not np.all((value == 0) | (value == 1)):
            return f"{name} holds values other than 0 and 1: {describe_value(value)}"
    elif isinstance(space, gym.spaces.Box):
        floating = np.issubdtype(value.dtype, np.floating)
        # NaN lies in no Box, an unbounded one included (as Gymnasium's Box.contains has it).
        if floating and np.isnan(value).any():
            return f"{name} holds NaN: {describe_value(value)}"
        if floating and not np.all(np.isfinite(value) | np.isinf(space.low) | np.isinf(space.high)):
            return f"{name} holds inf where its Box bounds are finite: {describe_value(value)}"
        if np.any(value < space.low) or np.any(value > space.high):
            bounds = f"[{space.low.min()}, {space.high.max()}]"
            return f"{name} is outside its Box bounds {bounds}: {describe_value(value)}"
    return None
