"""A Blackjack-inspired card game written directly against ``BaseEnv``.

Rules: an infinite deck of cards numbered 1 to 10. Each turn the player
either draws a card (action 0) or stops (action 1). The round ends when the
player stops or the sum reaches 21 or more; the reward, given at the end, is
``sum - 21`` when the sum is at most 21 and ``-21`` when it went over. The
observation is the current sum.

This file is the template for a custom env: lazy init, seeding through
``_next_episode_seed``/``np_random``, timesteps through the named
constructors, and a time limit reported as truncation.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env import ENV_REGISTRY, BaseEnv, BaseEnvTimestep
from ding_env.env.timestep import termination, transition, truncation
from ding_env.errors import EnvStateError

DRAW, STOP = 0, 1
TARGET = 21


@ENV_REGISTRY.register("card_game")
class CardGameEnv(BaseEnv):
    """The card game as a ``BaseEnv``.

    Observation: ``(1,)`` int64, the sum of the cards. Action: ``Discrete(2)``
    (0 draw, 1 stop). Reward: ``(1,)`` float32, nonzero only at the end.
    """

    config: ClassVar[dict] = dict(
        # Steps after which the round is cut (reported as truncated).
        max_episode_steps=50,
    )

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        self._observation_space = gym.spaces.Box(low=0, high=TARGET + 10, shape=(1,), dtype=np.int64)
        self._action_space = gym.spaces.Discrete(2)
        self._reward_space = gym.spaces.Box(low=-TARGET, high=0, shape=(1,), dtype=np.float32)
        self._sum = 0
        self._steps = 0
        self._episode_return = 0.0
        self._in_episode = False

    def reset(self) -> np.ndarray:
        """Start a round with an empty hand."""
        self._next_episode_seed()  # re-seeds self.np_random when a seed is due
        self._init_flag = True
        self._sum = 0
        self._steps = 0
        self._episode_return = 0.0
        self._in_episode = True
        return self._obs()

    def step(self, action: Any) -> BaseEnvTimestep:
        """Draw (0) or stop (1)."""
        if not self._in_episode:
            raise EnvStateError("card_game: step() called before reset() or after the round ended")
        action = int(np.asarray(action).reshape(()))
        if action not in (DRAW, STOP):
            raise ValueError(f"card_game: action must be 0 (draw) or 1 (stop), got {action}")
        self._steps += 1
        if action == DRAW:
            self._sum += int(self.np_random.integers(1, 11))
        if action == STOP or self._sum >= TARGET:
            reward = float(self._sum - TARGET) if self._sum <= TARGET else float(-TARGET)
            self._episode_return += reward
            self._in_episode = False
            return termination(self._obs(), reward, self._episode_return)
        if self._steps >= self._cfg.max_episode_steps:
            self._in_episode = False
            return truncation(self._obs(), 0.0, self._episode_return)
        return transition(self._obs(), 0.0)

    def _obs(self) -> np.ndarray:
        return np.array([min(self._sum, TARGET + 10)], dtype=np.int64)

    def close(self) -> None:
        """Nothing to release."""
        self._in_episode = False

    def __repr__(self) -> str:
        return "CardGameEnv()"

    @property
    def observation_space(self) -> gym.spaces.Space:
        """``Box(0, 31, (1,), int64)``: the sum of the cards (capped at 31)."""
        return self._observation_space

    @property
    def action_space(self) -> gym.spaces.Space:
        """``Discrete(2)``: 0 draw, 1 stop."""
        return self._action_space

    @property
    def reward_space(self) -> gym.spaces.Space:
        """``Box(-21, 0, (1,), float32)``."""
        return self._reward_space
