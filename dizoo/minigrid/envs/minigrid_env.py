"""MiniGrid envs (any ``MiniGrid-*`` / ``BabyAI-*`` id), registered as env type 'minigrid'.

Observations are MiniGrid's image and the one-hot encoded mission as one float32 vector (the
``'default'`` preset, ``FlatObsWrapper``), as DI-engine's ``flat_obs=True`` gave them: the key is
taken, and ``flat_obs=False`` (a mission string, which has no array form) is refused. DI-engine's
``max_step`` key is the episode's step limit, counted outside MiniGrid as DI-engine counts it: MiniGrid's
own ``max_steps`` stays the env's, since its success reward reads it (``1 - 0.9 * steps / max_steps``).
"""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym

from ding_env import ENV_REGISTRY
from ding_env.errors import ConfigError
from ding_env.summary import describe_value
from dizoo.classic_control.gym_env import GymIdEnv


@ENV_REGISTRY.register("minigrid")
class MiniGridEnv(GymIdEnv):
    """A MiniGrid env with flat float32 observations; ``max_step`` (None: the env's own) limits an episode."""

    gym_id = "MiniGrid-DoorKey-5x5-v0"
    di_engine_keys: ClassVar[dict] = dict(max_step=None, flat_obs=True)

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        if self._cfg.flat_obs is not True:
            raise ConfigError(
                f"{self!r} flat_obs: expected True (MiniGrid's image and mission as one float32 vector), got "
                f"{describe_value(self._cfg.flat_obs)}; the mission string of unflattened observations has no array "
                "form the managers can hold"
            )

    def _make_from_id(self) -> tuple[gym.Env, str]:
        if self._cfg.max_step is not None:
            # gym.make's TimeLimit, not MiniGrid's max_steps: that one changed every success reward too.
            self._cfg.make_kwargs = dict(self._cfg.make_kwargs or {}, max_episode_steps=int(self._cfg.max_step))
        return super()._make_from_id()

    def __repr__(self) -> str:
        return f"MiniGridEnv({self._cfg.env_id})"
