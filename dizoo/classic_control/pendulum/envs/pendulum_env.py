"""Gymnasium's Pendulum-v1, registered as env type 'pendulum'."""

from __future__ import annotations

from ding_env import ENV_REGISTRY
from dizoo.classic_control.gym_env import GymIdEnv


@ENV_REGISTRY.register("pendulum")
class PendulumEnv(GymIdEnv):
    """Pendulum-v1 with float32 observations and the ding_env timestep contract."""

    gym_id = "Pendulum-v1"
    # DI-engine's: continuous=False gives 11 actions spread over the torque range; norm_obs=dict(use_norm=True).
    di_engine_keys = dict(continuous=True, norm_obs=None)
