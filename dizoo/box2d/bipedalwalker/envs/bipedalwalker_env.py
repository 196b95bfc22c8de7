"""Gymnasium's BipedalWalker-v3, registered as env type 'bipedalwalker'.

Its default preset gives it a new Box2D world per episode (``ding_env.env_wrappers.box2d``).
"""

from __future__ import annotations

from ding_env import ENV_REGISTRY
from dizoo.classic_control.gym_env import GymIdEnv


@ENV_REGISTRY.register("bipedalwalker")
class BipedalWalkerEnv(GymIdEnv):
    """BipedalWalker-v3 (``env_id='BipedalWalkerHardcore-v3'`` for the hardcore course)."""

    gym_id = "BipedalWalker-v3"
