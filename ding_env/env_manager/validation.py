"""Checks of what callers hand a manager: env ids, seeds and reset params, each failure a short message.

Each message names the manager (``owner``), the env id or argument, what was expected and what arrived.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ding_env.env.seeding import checked_seed
from ding_env.summary import describe_value


def check_env_id(owner: str, env_num: int, env_id: Any) -> int:
    """``env_id`` as an int in ``[0, env_num)``.

    Raises:
        ValueError: For a non-int (bools and floats too) or an id out of range.
    """
    if isinstance(env_id, (bool, np.bool_)) or not isinstance(env_id, (int, np.integer)):
        raise ValueError(f"{owner}: env ids are ints in [0, {env_num}), got {env_id!r}")
    if not 0 <= env_id < env_num:
        raise ValueError(f"{owner}: env id {env_id} is out of range [0, {env_num})")
    return int(env_id)


def check_env_id_array(owner: str, env_num: int, env_id: Any) -> np.ndarray:
    """``env_id`` (a sequence or array) as distinct int64 ids in ``[0, env_num)``.

    Raises:
        ValueError: For non-integer ids, an id out of range, or duplicates.
    """
    env_ids = np.asarray(env_id)
    if env_ids.dtype.kind not in "iu" and env_ids.size:
        raise ValueError(f"{owner}: env ids are ints in [0, {env_num}), got {describe_value(env_ids)}")
    env_ids = env_ids.astype(np.int64, copy=False).reshape(-1)
    if env_ids.size and (env_ids.min() < 0 or env_ids.max() >= env_num):
        bad = env_ids[(env_ids < 0) | (env_ids >= env_num)][0]
        raise ValueError(f"{owner}: env id {bad} is out of range [0, {env_num})")
    seen = np.zeros(env_num, dtype=bool)
    seen[env_ids] = True
    if np.count_nonzero(seen) != env_ids.size:
        raise ValueError(f"{owner}: env_id holds duplicates: {describe_value(env_ids.tolist())}")
    return env_ids


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
            f"got {type(reset_param).__name__} {describe_value(reset_param)}"
        )
    params = {}
    for env_id, param in reset_param.items():
        env_id = check_env_id(owner, env_num, env_id)
        if param is not None and not isinstance(param, Mapping):
            raise TypeError(
                f"{owner}: reset_param for env {env_id} must be a dict of env.reset kwargs (or None), "
                f"got {type(param).__name__} {describe_value(param)}"
            )
        if param is not None and not all(isinstance(key, str) for key in param):
            raise TypeError(
                f"{owner}: reset_param for env {env_id} must have str keys, got {describe_value(list(param))}"
            )
        params[env_id] = dict(param or {})
    return params
