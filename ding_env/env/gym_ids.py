"""Gymnasium env ids: registering the ids packages add on import, and an id's current version.

``DingEnvWrapper``, the batch sources and ``ding-env check gym:ID`` look ids up the same way.
"""

from __future__ import annotations

import importlib
import importlib.util

import gymnasium as gym
from gymnasium.envs.registration import parse_env_id

from ding_env.extras import needs_extra

_MINIGRID_PREFIXES = ("MiniGrid-", "BabyAI-")


def register_env_id(env_id: str) -> None:
    """Register ``env_id`` with Gymnasium when a package registers it on import (MiniGrid, ale-py)."""
    if env_id not in gym.registry and env_id.startswith(_MINIGRID_PREFIXES):
        try:
            importlib.import_module("minigrid")  # registers its ids on import
        except ImportError as error:
            raise ImportError(needs_extra(repr(env_id), "minigrid", error)) from error
    # ALE/...-v5 ids and the legacy Atari ids DI-engine configs use (PongNoFrameskip-v4) both come from ale-py.
    if env_id.startswith("ALE/") or (env_id not in gym.registry and importlib.util.find_spec("ale_py")):
        _register_ale(env_id)


def is_env_id(name: str) -> bool:
    """Whether ``name`` is an env id Gymnasium has (with the ids MiniGrid and ale-py register on import)."""
    if "-v" not in name:  # every versioned id has it; env type names (cartpole) and file names do not
        return False
    try:
        register_env_id(name)
        gym.spec(name)
    except (ImportError, gym.error.Error):
        return False
    return True


def _register_ale(env_id: str) -> None:
    """Register the ALE envs with Gymnasium (ale-py ships its ROMs)."""
    try:
        import ale_py
    except ImportError as error:
        raise ImportError(needs_extra(repr(env_id), "atari", error)) from error
    gym.register_envs(ale_py)


def latest_version(env_id: str) -> str | None:
    """The id of the newest version Gymnasium registers of ``env_id``'s env, when newer than ``env_id``'s.

    ``'Hopper-v3'`` gives ``'Hopper-v5'``; an id without a version, or already the newest, gives None.
    """
    try:
        namespace, name, version = parse_env_id(env_id)
    except gym.error.Error:
        return None
    if version is None:
        return None
    newer = [
        spec.version
        for spec in gym.registry.values()
        if spec.namespace == namespace and spec.name == name and spec.version is not None and spec.version > version
    ]
    if not newer:
        return None
    return f"{namespace}/{name}-v{max(newer)}" if namespace else f"{name}-v{max(newer)}"
