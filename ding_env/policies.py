"""Policies for running envs without a learner: a callable from a batch of observations to a batch of actions."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class RandomPolicy:
    """Uniformly random actions from ``action_space``, reproducible from ``seed``.

    Args:
        action_space: The envs' action space.
        seed: Seed of the policy's own generator (global RNG is not used).
    """

    def __init__(self, action_space: gym.spaces.Space, seed: int | None = 0) -> None:
        self.action_space = action_space
        self.action_space.seed(seed)

    def __call__(self, obs: Any) -> np.ndarray:
        """One random action per row of ``obs``."""
        return np.stack([self.action_space.sample() for _ in range(_batch_size(obs))])


def _batch_size(obs: Any) -> int:
    while isinstance(obs, (dict, tuple)):
        obs = next(iter(obs.values())) if isinstance(obs, dict) else obs[0]
    return len(obs)
