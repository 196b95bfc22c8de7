"""Checks of what callers hand a manager: env ids, seeds and reset params, each failure a short message.

Each message names the manager (``owner``), the env id or argument, what was expected and what arrived.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ding_env.env.seeding import checked_seed, derive_seeds
from ding_env.summary import describe_typed, describe_value


def parse_env_ids(owner: str, env_num: int, env_ids: Any) -> np.ndarray:
    """``env_ids`` as an int64 array of distinct ids in ``[0, env_num)``, in the given order.

    Args:
        owner: Names the manager in error messages.
        env_num: How many envs the manager has.
        env_ids: One id (an int), a sequence or 1-d array of ids, or a mapping keyed by env id
            (the dict API's actions).

    Raises:
        ValueError: Naming the first bad id and what was expected: an id that is not an int
            (bools and floats neither, though they compare equal to one), is out of range, or repeats.
    """
    values = _id_list(owner, env_num, env_ids)
    if not all(type(value) is int for value in values):  # plain ints (not bools), the usual case, in one pass
        for value in values:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"{owner}: {_EXPECTED.format(env_num)}, got {describe_value(value)}")
        values = [int(value) for value in values]
    if values and (min(values) < 0 or max(values) >= env_num):
        bad = next(value for value in values if not 0 <= value < env_num)
        raise ValueError(f"{owner}: env id {bad} is out of range [0, {env_num})")
    if len(set(values)) != len(values):
        repeated = next(value for index, value in enumerate(values) if value in values[:index])
        raise ValueError(
            f"{owner}: env id {repeated} appears more than once in {describe_value(values)}; "
            "expected each env at most once (no duplicates)"
        )
    return np.array(values, dtype=np.int64)


def check_env_fns(env_fn: Any) -> list:
    """``env_fn`` as a list of env constructors.

    Raises:
        ValueError: For an empty one.
        TypeError: For one constructor instead of a list, or an entry that is not callable.
    """
    if callable(env_fn) or isinstance(env_fn, (str, bytes, Mapping)) or not isinstance(env_fn, Iterable):
        raise TypeError(
            f"env_fn must be a list with one env constructor per env (e.g. [make_env] * 4), got "
            f"{describe_typed(env_fn)}"
        )
    env_fn = list(env_fn)
    if not env_fn:
        raise ValueError("env_fn must hold at least one env constructor, got an empty list")
    for index, fn in enumerate(env_fn):
        if not callable(fn):
            raise TypeError(f"env_fn[{index}] must be callable, got {type(fn).__name__}")
    return env_fn


def seed_of_each(owner: str, env_num: int, seed: Any) -> list[tuple[int, int]]:
    """``(env_id, seed)`` pairs from a manager's ``seed()`` argument, every seed checked.

    Args:
        owner: Names the manager in error messages.
        env_num: How many envs the manager has.
        seed: An int (env ``i`` gets ``seed + i``), one seed per env, or ``{env_id: seed}``.
    """
    if isinstance(seed, Mapping):
        pairs = [(check_env_id(owner, env_num, env_id), value) for env_id, value in seed.items()]
    elif isinstance(seed, (list, tuple, np.ndarray)):
        if len(seed) != env_num:
            raise ValueError(f"{owner}: got {len(seed)} seeds for {env_num} envs")
        pairs = list(enumerate(seed))
    else:
        pairs = list(enumerate(derive_seeds(check_seed(owner, seed, "seed"), env_num)))
    return [(env_id, check_seed(owner, value, f"seed of env {env_id}")) for env_id, value in pairs]


def check_env_id(owner: str, env_num: int, env_id: Any) -> int:
    """One env id (not a sequence of them) as an int in ``[0, env_num)``; see ``parse_env_ids``."""
    return int(parse_env_ids(owner, env_num, [env_id])[0])


# What env ids must be, for error messages (formatted with the manager's env_num).
_EXPECTED = "env ids are ints in [0, {}) (one id, a sequence or 1-d array of ids, or the keys of a dict)"


def _id_list(owner: str, env_num: int, env_ids: Any) -> list:
    """The ids in ``env_ids`` as a list, whatever form it came in (numpy and torch arrays as Python numbers)."""
    if isinstance(env_ids, Mapping):
        return list(env_ids)
    if hasattr(env_ids, "__array__"):  # numpy arrays and scalars, tensors
        array = np.asarray(env_ids)
        if array.ndim > 1:
            raise ValueError(f"{owner}: {_EXPECTED.format(env_num)}, got {describe_value(array)}")
        return array.reshape(-1).tolist()
    if isinstance(env_ids, Iterable) and not isinstance(env_ids, (str, bytes)):
        return list(env_ids)
    return [env_ids]


def check_seed(owner: str, value: Any, what: str) -> int:
    """``value`` as a seed: an int >= 0 (not a bool, a float or a string).

    Raises:
        TypeError, ValueError: Naming the manager, ``what`` (``'seed'``, ``'seed of env 3'``) and the value.
    """
    try:
        return checked_seed(value, what)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{owner}: {error}") from None


def check_dynamic_seed(owner: str, dynamic_seed: Any) -> bool | None:
    """``dynamic_seed`` as True, False or None.

    Raises:
        TypeError: For anything else (the string 'no' is true in Python).
    """
    if dynamic_seed is not None and not isinstance(dynamic_seed, (bool, np.bool_)):
        raise TypeError(f"{owner}: dynamic_seed must be True, False or None, got {describe_value(dynamic_seed)}")
    return None if dynamic_seed is None else bool(dynamic_seed)


def check_reset_param(owner: str, env_num: int, reset_param: Any) -> dict[int, dict]:
    """``reset_param`` as ``{env_id: env.reset kwargs}``.

    Raises:
        TypeError: For a value that is not a mapping of env ids to kwargs dicts (or None) with str keys.
        ValueError: For an unknown env id.
    """
    if not isinstance(reset_param, Mapping):
        raise TypeError(
            f"{owner}: reset_param must be None or {{env_id: dict of env.reset kwargs}}, "
            f"got {describe_typed(reset_param)}"
        )
    params = {}
    for env_id, param in reset_param.items():
        env_id = check_env_id(owner, env_num, env_id)
        if param is not None and not isinstance(param, Mapping):
            raise TypeError(
                f"{owner}: reset_param for env {env_id} must be a dict of env.reset kwargs (or None), "
                f"got {describe_typed(param)}"
            )
        if param is not None and not all(isinstance(key, str) for key in param):
            raise TypeError(
                f"{owner}: reset_param for env {env_id} must have str keys, got {describe_value(list(param))}"
            )
        params[env_id] = dict(param or {})
    return params
