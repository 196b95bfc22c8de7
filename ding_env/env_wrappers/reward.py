"""Reward wrappers under DI-engine's (and ALF's) names."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env_wrappers.legacy_gym import AcceptsLegacyGym


class ClipRewardWrapper(AcceptsLegacyGym, gym.RewardWrapper):
    """Rewards to their sign: -1, 0 or +1 (DeepMind's Atari clipping)."""

    def reward(self, reward: float) -> float:
        """The sign of ``reward``."""
        return float(np.sign(reward))


class RewardNormWrapper(AcceptsLegacyGym, gym.wrappers.NormalizeReward):
    """Scale rewards by a running estimate of the discounted return's std (Gymnasium's NormalizeReward).

    Args:
        env: The env to wrap.
        reward_discount: The discount of that return (DI-engine's name for Gymnasium's ``gamma``).
        epsilon: Keeps the divisor above 0.
    """

    def __init__(self, env: gym.Env, reward_discount: float = 0.99, epsilon: float = 1e-8) -> None:
        super().__init__(env, gamma=reward_discount, epsilon=epsilon)


class SparseRewardWrapper(AcceptsLegacyGym, gym.RewardWrapper):
    """Rewards to 1 where they exceed ``threshold`` and 0 elsewhere (ALF's SparseReward)."""

    def __init__(self, env: gym.Env, threshold: float = 0.0) -> None:
        super().__init__(env)
        self.threshold = threshold

    def reward(self, reward: float) -> float:
        """1.0 above the threshold, else 0.0."""
        return 1.0 if reward > self.threshold else 0.0


class EvalEpisodeReturnWrapper(AcceptsLegacyGym, gym.Wrapper):
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


class DelayRewardWrapper(AcceptsLegacyGym, gym.Wrapper):
    """Hold rewards back and pay their sum every ``delay_reward_step`` steps and at the episode's end (DI-engine's).

    Steps in between get reward 0, so the episode's return is unchanged. With
    ``delay_reward_step`` 0 or 1 every step pays its own reward.
    """

    def __init__(self, env: gym.Env, delay_reward_step: int = 0) -> None:
        super().__init__(env)
        if isinstance(delay_reward_step, bool) or not isinstance(delay_reward_step, int) or delay_reward_step < 0:
            raise ValueError(f"DelayRewardWrapper: delay_reward_step must be an int >= 0, got {delay_reward_step!r}")
        self.delay_reward_step = delay_reward_step
        self._held, self._steps_held = 0.0, 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        """Start with nothing held."""
        self._held, self._steps_held = 0.0, 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Hold the reward, or pay what is held when the interval is full or the episode ends."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._held += float(reward)
        self._steps_held += 1
        if terminated or truncated or self._steps_held >= self.delay_reward_step:
            reward, self._held, self._steps_held = self._held, 0.0, 0
        else:
            reward = 0.0
        return obs, reward, terminated, truncated, info
