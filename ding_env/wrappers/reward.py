"""Reward wrappers under DI-engine's (and ALF's) names."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class ClipRewardWrapper(gym.RewardWrapper):
    """Rewards to their sign: -1, 0 or +1 (DeepMind's Atari clipping)."""

    def reward(self, reward: float) -> float:
        """The sign of ``reward``."""
        return float(np.sign(reward))


class RewardNormWrapper(gym.wrappers.NormalizeReward):
    """Scale rewards by a running estimate of the discounted return's std (Gymnasium's NormalizeReward)."""


class SparseRewardWrapper(gym.RewardWrapper):
    """Rewards to 1 where they exceed ``threshold`` and 0 elsewhere (ALF's SparseReward)."""

    def __init__(self, env: gym.Env, threshold: float = 0.0) -> None:
        super().__init__(env)
        self.threshold = threshold

    def reward(self, reward: float) -> float:
        """1.0 above the threshold, else 0.0."""
        return 1.0 if reward > self.threshold else 0.0


class EvalEpisodeReturnWrapper(gym.Wrapper):
    """Sum the rewards this wrapper sees and put the sum in ``info['eval_episode_return']`` when the episode ends.

    Placed innermost, it reports the raw game return even when outer wrappers
    clip rewards or cut episodes at life losses.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.episode_return = 0.0

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        """Start a new sum."""
        self.episode_return = 0.0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Add the reward; report the sum on the last step."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.episode_return += float(reward)
        if terminated or truncated:
            info = dict(info, eval_episode_return=self.episode_return)
        return obs, reward, terminated, truncated, info
