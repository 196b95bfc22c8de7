"""``TimeLimitWrapper``: cut episodes at a step limit, reported as truncation (ALF's LAST with discount 1)."""

from __future__ import annotations

import gymnasium as gym

from ding_env.env_wrappers.legacy_gym import AcceptsLegacyGym


class TimeLimitWrapper(AcceptsLegacyGym, gym.wrappers.TimeLimit):
    """Truncate after ``max_limit`` steps: ``truncated=True``, ``terminated`` untouched (Gymnasium's TimeLimit)."""

    def __init__(self, env: gym.Env, max_limit: int) -> None:
        if max_limit < 1:
            raise ValueError(f"max_limit must be >= 1, got {max_limit}")
        super().__init__(env, max_episode_steps=max_limit)
