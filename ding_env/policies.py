"""Policies for running envs without a learner: a callable from a batch of observations to a batch of actions.

A policy whose ``takes_env_ids`` attribute is True is called by ``collect`` and ``evaluate`` as
``policy(obs, env_ids)``, with the env id of each observation row (DI-engine's policies get them as the
keys of their ``{env_id: obs}`` input): it can keep state per env, and ``RandomPolicy`` draws each env's
actions from a stream of the env's own.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space

from ding_env.env.spaces import ARRAY_SPACES


class RandomPolicy:
    """Uniformly random actions from ``action_space``, reproducible from ``seed``.

    Given the env ids of the rows (``collect`` and ``evaluate`` give them), each env's actions come
    from a copy of the space of its own, seeded from ``seed`` and the env id: an env gets the same
    actions whichever other envs are ready with it, so an async manager, whose batches hold the envs
    in the order they finish, gives the same trajectories as a sync one. Without ids, a batch of ``n``
    actions is one sample of ``batch_space(action_space, n)``, made on first use of each batch size and
    seeded from the policy's own generator. ``action_space`` itself is neither seeded nor sampled, and
    global RNG state is not touched.

    Args:
        action_space: The envs' action space.
        seed: Seed of the policy's own generator (None: fresh entropy).
    """

    takes_env_ids = True  # collect() and evaluate() pass the rows' env ids

    def __init__(self, action_space: gym.spaces.Space, seed: int | None = 0) -> None:
        self.action_space = action_space
        self._root = np.random.SeedSequence(seed)
        self._seeds = np.random.default_rng(self._root)
        self._batched: dict[int, gym.spaces.Space] = {}
        self._single: gym.spaces.Space | None = None
        self._per_env: dict[int, gym.spaces.Space] = {}

    def __call__(self, obs: Any, env_ids: Sequence[int] | np.ndarray | None = None) -> np.ndarray | list:
        """One random action per row of ``obs``.

        Args:
            obs: A batch of observations (only its row count is read).
            env_ids: The env id of each row: each env's action is drawn from its own stream. None: one
                draw for the whole batch, from the policy's stream.

        Returns:
            An array, or for a space of no one-array batch (``Dict``, ``Tuple``) a list with one action
            per env, the form the managers take for those.
        """
        count = _batch_size(obs)
        if env_ids is not None:
            if len(env_ids) != count:
                raise ValueError(f"RandomPolicy: {len(env_ids)} env ids for {count} observation rows")
            actions = [self._env_space(int(env_id)).sample() for env_id in env_ids]
            if not isinstance(self.action_space, ARRAY_SPACES):
                return actions
            return np.array(actions, dtype=self.action_space.dtype).reshape(count, *self.action_space.shape)
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

    def _env_space(self, env_id: int) -> gym.spaces.Space:
        """Env ``env_id``'s copy of the action space, seeded from the policy's seed and the id."""
        space = self._per_env.get(env_id)
        if space is None:
            space = self._per_env[env_id] = copy.deepcopy(self.action_space)
            stream = np.random.SeedSequence(self._root.entropy, spawn_key=(env_id,))
            space.seed(int(stream.generate_state(1, np.uint32)[0]))
        return space

    def _next_seed(self) -> int:
        return int(self._seeds.integers(2**32))


def _batch_size(obs: Any) -> int:
    while isinstance(obs, (dict, tuple)):
        obs = next(iter(obs.values())) if isinstance(obs, dict) else obs[0]
    return len(obs)
