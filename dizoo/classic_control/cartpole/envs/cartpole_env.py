"""Gymnasium's CartPole-v1, registered as env type 'cartpole'."""

from __future__ import annotations

from ding_env import ENV_REGISTRY
from dizoo.classic_control.gym_env import GymIdEnv


@ENV_REGISTRY.register("cartpole")
class CartPoleEnv(GymIdEnv):
    """CartPole-v1 with float32 observations and the ding_env timestep contract."""

    gym_id = "CartPole-v1"
