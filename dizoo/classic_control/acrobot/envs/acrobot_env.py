"""Gymnasium's Acrobot-v1, registered as env type 'acrobot'."""

from __future__ import annotations

from ding_env import ENV_REGISTRY
from dizoo.classic_control.gym_env import GymIdEnv


@ENV_REGISTRY.register("acrobot")
class AcrobotEnv(GymIdEnv):
    """Acrobot-v1 with float32 observations and the ding_env timestep contract."""

    gym_id = "Acrobot-v1"
