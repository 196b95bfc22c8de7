"""Policies for running envs without a learner: a callable from a batch of observations to a batch of actions."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space

from ding_env.env.spaces import ARRAY_SPACES


class RandomPolicy:
    """Uniformly random actions from ``action_space``, reproducible from ``seed``.

    A batch of ``n`` actions is one sample of ``batch_space(action_space, n)``
    (about as fast as one env's sample), made on first use of each batch size
    and seeded from the policy's own generator. ``action_space`` itself is
    neither seeded nor sampled, and global RNG state is not touched.

    Args:
        action_space: The envs' action space.
        seed: Seed of the policy's own generator (None: fresh entropy).
    """

    def __init__(self, action_space: gym.spaces.Space, seed: int | None = 0) -> None:
        self.action_space = action_space
        self._seeds = np.random.default_rng(seed)
        self._batched: dict[int, gym.spaces.Space] = {}
        self._single: gym.spaces.Space | None = None

    def __call__(self, obs: Any) -> np.ndarray | list:
        """One random action per row of ``obs``.

        An array, or for a space of no one-array batch (``Dict``, ``Tuple``) a list with one action per
        env, the form the managers take for those.
        """
        count = _batch_size(obs)
        if not isinstance(self.action_space, ARRAY_SPACES):
            return [self._single_space().sample() for _ in range(count)]
        space = self._batched.get(count)
        if space is None:
            space = self._batched[count] = batch_space(self.action_space, count)
            space.seed(self._next_seed())
        return space.sample()

    def _single_space(self) -> gym.spaces.Space:
        """A seeded copy of the action space, for spaces without a one-array batch."""
        if self._single is None:
            self._single = copy.deepcopy(self.action_space)
            self._single.seed(self._next_seed())
        return self._single

    def _next_seed(self) -> int:
        return int(self._seeds.integers(2**32))


def _batch_size(obs: Any) -> int:
    while isinstance(obs, (dict, tuple)):
        obs = next(iter(obs.values())) if isinstance(obs, dict) else obs[0]
    return len(obs)
