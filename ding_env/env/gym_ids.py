"""Gymnasium env ids: registering the ids packages add on import, and an id's current version.

``DingEnvWrapper``, the batch sources and ``ding-env check gym:ID`` look ids up the same way.
"""

from __future__ import annotations

import importlib
import importlib.util
import re

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


# The shape of a versioned env id (``CartPole-v1``, ``ALE/Pong-v5``): what a name must look like to be taken for one.
_ENV_ID = re.compile(r"^([\w.-]+/)?[\w.:-]+-v\d+$")
GYM_PREFIXES = ("gym:", "gymnasium:")


def looks_like_env_id(name: str) -> bool:
    """Whether ``name`` has the shape of a versioned env id (env type names and file names have not)."""
    return _ENV_ID.match(name) is not None


def check_env_id(env_id: str, given: str | None = None) -> None:
    """Refuse an env id that neither Gymnasium nor legacy gym has, as ``DingEnvWrapper`` would.

    Args:
        env_id: The id.
        given: The id as the user wrote it (``gym:CartPole-v1``), for the messages.

    Raises:
        ConfigError: For an empty id or one no registry holds (with Gymnasium's hint: the versions it has, the
            current one), or one a missing extra registers (naming the extra).
    """
    from ding_env.env_wrappers.legacy_gym import legacy_gym_has  # legacy gym only for an id Gymnasium lacks
    from ding_env.errors import ConfigError

    if not env_id:
        raise ConfigError("gym:ENV_ID needs an env id after the colon, such as gym:CartPole-v1")
    try:
        register_env_id(env_id)  # the ids ale-py and MiniGrid register on import
    except ImportError as error:
        raise ConfigError(str(error)) from error
    try:
        gym.spec(env_id)
    except (gym.error.UnregisteredEnv, gym.error.DeprecatedEnv) as error:  # NameNotFound, VersionNotFound
        if not legacy_gym_has(env_id):
            raise ConfigError(
                f"{given or env_id}: Gymnasium has no such env id ({error}); "
                "`python -c 'import gymnasium; gymnasium.pprint_registry()'` lists the ids it has"
            ) from error


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
