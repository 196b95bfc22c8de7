"""Gymnasium's MountainCar-v0, registered as env type 'mountain_car'."""

from __future__ import annotations

from ding_env import ENV_REGISTRY
from dizoo.classic_control.gym_env import GymIdEnv


@ENV_REGISTRY.register("mountain_car")
class MountainCarEnv(GymIdEnv):
    """MountainCar-v0 with float32 observations and the ding_env timestep contract."""

    gym_id = "MountainCar-v0"
