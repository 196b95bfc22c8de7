"""Spaces the managers can hold in arrays, and the error for one they cannot."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ding_env.env.spaces import ARRAY_SPACES
from ding_env.errors import ConfigError

# Space class -> the wrapper that turns it into arrays, for the error's hint.
_FIXES = {
    "MissionSpace": (
        "env_wrapper='default' in a DingEnvWrapper config (MiniGrid's preset: FlatObsWrapper encodes the mission), "
        "or for an env you make (a factory of ManagerVectorEnv's), minigrid.wrappers.FlatObsWrapper or ImgObsWrapper "
        "around it"
    ),
    "Text": "a wrapper that encodes the text as numbers, as FlatObsWrapper does for MiniGrid's mission",
}


def non_array_subspace(space: gym.spaces.Space, path: str = "") -> tuple[str, Any] | None:
    """``(path, subspace)`` of the first part of ``space`` without a fixed array form, or None."""
    if isinstance(space, gym.spaces.Dict):
        for key, sub in space.spaces.items():
            found = non_array_subspace(sub, f"{path}[{key!r}]")
            if found is not None:
                return found
        return None
    if isinstance(space, gym.spaces.Tuple):
        for index, sub in enumerate(space.spaces):
            found = non_array_subspace(sub, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    return None if isinstance(space, ARRAY_SPACES) else (path, space)


def check_array_spaces(env_name: str, space: gym.spaces.Space, what: str = "observation_space") -> None:
    """Raise if ``space`` (or a part of it) has no fixed array form, naming the env, the space and the fix.

    Raises:
        ConfigError: Naming ``env_name``, the space's path and class, and the wrapper that fixes it.
    """
    found = non_array_subspace(space)
    if found is None:
        return
    path, sub = found
    fix = _FIXES.get(type(sub).__name__, "a wrapper that turns it into Box/Discrete arrays (see env_wrapper)")
    raise ConfigError(
        f"{env_name}: {what}{path} is {type(sub).__name__}, which has no fixed array form, so no env manager "
        f"can hold it; use {fix}"
    )
