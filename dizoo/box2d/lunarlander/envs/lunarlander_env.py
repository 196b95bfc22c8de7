"""Gymnasium's LunarLander-v3, registered as env type 'lunarlander'."""

from __future__ import annotations

from ding_env import ENV_REGISTRY
from dizoo.classic_control.gym_env import GymIdEnv


@ENV_REGISTRY.register("lunarlander")
class LunarLanderEnv(GymIdEnv):
    """LunarLander-v3, discrete; continuous with ``env_id='LunarLanderContinuous-v3'`` (or ``continuous=True``)."""

    gym_id = "LunarLander-v3"
