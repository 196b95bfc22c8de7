"""Making the Gymnasium env a ``DingEnvWrapper`` config's ``env_id`` names, with its family's make kwargs.

Ids that need a package imported first are registered, and the ids Gymnasium moved or whose simulator is
missing get an error saying what to set or install.
"""

from __future__ import annotations

import os

import gymnasium as gym
from easydict import EasyDict

from ding_env.env.gym_ids import latest_version, register_env_id
from ding_env.env_wrappers.family import MUJOCO, family_of_env_id
from ding_env.env_wrappers.mujoco_warnings import route_mujoco_warnings
from ding_env.env_wrappers.presets import atari_make_kwargs
from ding_env.errors import ConfigError
from ding_env.extras import FAMILY_EXTRAS, needs_extra


def make_by_env_id(cfg: EasyDict, rendered: bool, owner: str) -> tuple[gym.Env, str]:
    """The env of ``cfg.env_id`` made with ``gymnasium.make``, and its family.

    Args:
        cfg: The wrapper's config (``env_id``, ``make_kwargs`` and the Atari preset's keys).
        rendered: Make it render RGB frames (for replays).
        owner: Names the wrapper in errors.

    Raises:
        ConfigError: For an id Gymnasium registers but no longer makes (it names the current version).
        gymnasium.error.DependencyNotInstalled: Naming the extra that installs the family's simulator.
    """
    env_id = cfg.env_id
    register_env_id(env_id)
    family = family_of_env_id(env_id)
    kwargs = atari_make_kwargs(cfg, family, owner)  # the preset skips frames itself
    if rendered:
        kwargs["render_mode"] = "rgb_array"
        if family == MUJOCO:
            os.environ.setdefault("MUJOCO_GL", "egl")
    if family == MUJOCO:
        try:
            route_mujoco_warnings()  # imports mujoco: without it, the extra that installs it is named
        except ImportError as error:
            missing = error.name or "mujoco"
            raise gym.error.DependencyNotInstalled(needs_extra(repr(env_id), family, f"no module {missing}")) from error
    try:
        return gym.make(env_id, **kwargs), family
    except ImportError as error:  # Gymnasium's MuJoCo v2/v3 ids: moved to gymnasium-robotics (mujoco-py)
        latest = latest_version(env_id)
        if latest is None or "gymnasium-robotics" not in str(error):  # another module missing: its own error
            raise
        raise ConfigError(
            f"{owner}: Gymnasium registers env_id {env_id!r} but no longer makes it ({error}); "
            f"its current version is {latest!r}: set env_id to it"
        ) from error
    except gym.error.DependencyNotInstalled as error:
        if family not in FAMILY_EXTRAS:
            raise
        # Gymnasium's own advice (`pip install swig` for Box2D) is not what the extra installs.
        missing = getattr(error.__cause__, "name", None) or "its simulator"
        raise gym.error.DependencyNotInstalled(needs_extra(repr(env_id), family, f"no module {missing}")) from error
