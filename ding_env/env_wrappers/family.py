"""Which family a Gymnasium env belongs to, and that family's default wrappers.

The family comes from the registered entry point (``ale_py`` -> atari,
``gymnasium.envs.mujoco`` -> mujoco, ...), never from the env's name.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

CLASSIC_CONTROL = "classic_control"
BOX2D = "box2d"
MUJOCO = "mujoco"
ATARI = "atari"
MINIGRID = "minigrid"
TOY_TEXT = "toy_text"
OTHER = "other"

_ENTRY_POINT_PREFIXES = (
    ("gymnasium.envs.classic_control", CLASSIC_CONTROL),
    ("gymnasium.envs.box2d", BOX2D),
    ("gymnasium.envs.mujoco", MUJOCO),
    ("gymnasium.envs.toy_text", TOY_TEXT),
    ("ale_py", ATARI),
    ("minigrid.", MINIGRID),
)


def family_of_entry_point(entry_point: Any) -> str:
    """The family of a Gymnasium registration entry point (string or callable)."""
    if callable(entry_point):
        entry_point = f"{entry_point.__module__}:{getattr(entry_point, '__qualname__', '')}"
    if not isinstance(entry_point, str):
        return OTHER
    for prefix, family in _ENTRY_POINT_PREFIXES:
        if entry_point.startswith(prefix):
            return family
    return OTHER


def family_of_env(env: gym.Env) -> str:
    """The family of a (possibly wrapped) Gymnasium env instance."""
    spec = getattr(env, "spec", None)
    if spec is not None and spec.entry_point is not None:
        return family_of_entry_point(spec.entry_point)
    return family_of_entry_point(type(getattr(env, "unwrapped", env)))


def family_of_env_id(env_id: str) -> str:
    """The family of a registered Gymnasium env id, without creating the env."""
    return family_of_entry_point(gym.spec(env_id).entry_point)
