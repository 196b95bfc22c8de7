"""Envs the remote tests serve (module:Class targets of `ding-env serve`)."""

from typing import Any

from ding_env import BaseEnvTimestep
from tests.envs import CountingEnv


class SetInfoEnv(CountingEnv):
    """A CountingEnv whose action 1 puts a score into its info, and action 2 a set, which has no wire encoding."""

    def step(self, action: Any) -> BaseEnvTimestep:
        timestep = super().step(action)
        if int(action) == 1:
            timestep.info["score"] = 1.5
        if int(action) == 2:
            timestep.info["visited"] = {"room", "hall"}
        return timestep


class UnluckySeedEnv(CountingEnv):
    """A CountingEnv whose ``seed`` refuses the seed 13."""

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        if seed == 13:
            raise ValueError("seed 13 is refused")
        super().seed(seed, dynamic_seed)


class SlowStepEnv(CountingEnv):
    """A CountingEnv whose every step takes ``step_sleep`` seconds (1.5 unless configured)."""

    config = dict(CountingEnv.config, step_sleep=1.5)


class FailingStepEnv(CountingEnv):
    """A CountingEnv whose second step raises."""

    config = dict(CountingEnv.config, fail_step_at=1)
