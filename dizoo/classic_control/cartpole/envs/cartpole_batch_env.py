"""CartPole-v1 as a batch env: the dynamics of Gymnasium's CartPole-v1, vectorized in numpy.

An example written directly against ``BaseBatchEnv``: one numpy expression steps every sub-env.
Each sub-env follows Gymnasium's ``CartPole-v1`` step for step: the same physics (float64 state,
Euler integration, the same operations in the same order), the same episode starts for the same
seed (with static seeds, ``env.reset(seed=seed)`` at every episode; with dynamic seeds, once, then
``env.reset()``), termination when the cart leaves ``[-2.4, 2.4]`` or the pole passes 12 degrees,
truncation after ``max_episode_steps`` (500).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env.config import check_env_keys
from ding_env.env.batch_env import BaseBatchEnv, BatchStep, EnvIds, scalar_reward_space
from ding_env.summary import describe_value

# Gymnasium's CartPole-v1 constants.
GRAVITY = 9.8
MASS_CART = 1.0
MASS_POLE = 0.1
TOTAL_MASS = MASS_POLE + MASS_CART
HALF_LENGTH = 0.5
POLE_MASS_LENGTH = MASS_POLE * HALF_LENGTH
FORCE_MAG = 10.0
TAU = 0.02
THETA_THRESHOLD = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4
RESET_BOUND = 0.05
FORCES = np.array([-FORCE_MAG, FORCE_MAG])  # the force of action 0 and of action 1
BOUNDS = np.array([[X_THRESHOLD], [THETA_THRESHOLD]])  # the bounds of x and theta, as a column


class CartPoleBatchEnv(BaseBatchEnv):
    """``num_envs`` CartPole-v1 sub-envs stepped together.

    Config: ``num_envs`` and ``max_episode_steps`` (500, as CartPole-v1's time limit).
    Observations are float32 rows ``(x, x_dot, theta, theta_dot)``; actions are 0 (push left) or
    1 (push right), one per stepped sub-env (shape ``(n,)`` or ``(n, 1)``); the reward is 1 per step.
    """

    config: ClassVar[dict] = dict(num_envs=8, max_episode_steps=500)

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        check_env_keys(cfg or {}, self.config, f"{type(self).__name__} config")  # num_env=64 is a typo, not 8 envs
        self._max_episode_steps = int(self._cfg.max_episode_steps)
        self._state: np.ndarray | None = None  # (4, num_envs) float64, built on the first reset
        self._steps = np.zeros(self._num_envs, dtype=np.int64)
        high = np.array([X_THRESHOLD * 2, np.inf, THETA_THRESHOLD * 2, np.inf], dtype=np.float32)
        self._observation_space = gym.spaces.Box(-high, high, dtype=np.float32)
        self._action_space = gym.spaces.Discrete(2)
        self._reward_space = scalar_reward_space()

    def _reset(self, env_ids: EnvIds) -> np.ndarray:
        if self._state is None:
            self._state = np.zeros((4, self._num_envs), dtype=np.float64)
        # Each sub-env draws its start from its own generator, as a Gymnasium env from np_random.
        # uniform(low, high) is low + (high - low) * random(): the same draws and arithmetic, scaled
        # in one operation for every sub-env.
        draws = np.array([generator.random(4) for generator in self._episode_generators(env_ids)]).T
        draws *= 2 * RESET_BOUND
        draws += -RESET_BOUND
        index = slice(None) if env_ids is None else env_ids
        self._state[:, index] = draws
        self._steps[index] = 0
        return np.array(self._state[:, index].T, dtype=np.float32, order="C")

    def _step(self, actions: Any, env_ids: EnvIds) -> BatchStep:
        actions = np.asarray(actions).reshape(-1)
        # Integers other than 0 and 1 (negative ones included) have a bit set above the lowest.
        if actions.dtype.kind not in "iub" or (actions.dtype.kind != "b" and np.count_nonzero(actions >> 1)):
            ids = np.arange(self._num_envs) if env_ids is None else env_ids
            bad = ids[(actions < 0) | (actions > 1)] if actions.dtype.kind in "iub" else ids
            raise ValueError(
                f"{self!r}: actions must be 0 or 1, one per stepped sub-env; sub-envs {bad.tolist()} got "
                f"{describe_value(actions)}"
            )
        # Every sub-env (the usual step): the state rows are updated in place; some: on a copy of their columns.
        state = self._state if env_ids is None else self._state[:, env_ids]
        x, x_dot, theta, theta_dot = state
        # The expressions of Gymnasium's CartPoleEnv.step, in its order, so float64 results are bit-equal;
        # worked in place where an operand is a temporary (one allocation less per operation).
        force = FORCES[actions.view(np.uint8) if actions.dtype == bool else actions]
        costheta = np.cos(theta)
        sintheta = np.sin(theta)
        # temp = (force + POLE_MASS_LENGTH * theta_dot ** 2 * sintheta) / TOTAL_MASS
        temp = np.square(theta_dot)
        temp *= POLE_MASS_LENGTH
        temp *= sintheta
        temp += force
        temp /= TOTAL_MASS
        # thetaacc = (GRAVITY * sintheta - costheta * temp)
        #     / (HALF_LENGTH * (4/3 - MASS_POLE * costheta ** 2 / TOTAL_MASS))
        denominator = np.square(costheta)
        denominator *= MASS_POLE
        denominator /= TOTAL_MASS
        np.subtract(4.0 / 3.0, denominator, out=denominator)
        denominator *= HALF_LENGTH
        thetaacc = GRAVITY * sintheta
        thetaacc -= costheta * temp
        thetaacc /= denominator
        # xacc = temp - POLE_MASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        xacc = POLE_MASS_LENGTH * thetaacc
        xacc *= costheta
        xacc /= TOTAL_MASS
        np.subtract(temp, xacc, out=xacc)
        # x and theta move with the velocities from before this step, as in Gymnasium: the rates are
        # stacked (copied) before the state rows change, then all four rows move in one operation each.
        rates = np.array((x_dot, xacc, theta_dot, thetaacc))
        rates *= TAU
        state += rates
        index = slice(None) if env_ids is None else env_ids
        if env_ids is not None:
            self._state[:, index] = state
        self._steps[index] += 1
        # |x| > bound is exactly x < -bound or x > bound (Gymnasium's test), for x and theta in one go.
        beyond = np.abs(state[0::2]) > BOUNDS
        terminated = beyond[0] | beyond[1]
        truncated = self._steps[index] >= self._max_episode_steps
        reward = np.ones(len(terminated), dtype=np.float32)
        obs = np.array(state.T, dtype=np.float32, order="C")
        return self._transition(env_ids, obs, reward, terminated, truncated)

    def _close(self) -> None:
        self._state = None

    def __repr__(self) -> str:
        return f"CartPoleBatchEnv(num_envs={self._num_envs})"

    @property
    def observation_space(self) -> gym.spaces.Box:
        """``Box(4,)`` float32, Gymnasium's CartPole-v1 bounds."""
        return self._observation_space

    @property
    def action_space(self) -> gym.spaces.Discrete:
        """``Discrete(2)``: push left (0) or right (1)."""
        return self._action_space

    @property
    def reward_space(self) -> gym.spaces.Box:
        """``Box(-inf, inf, (1,), float32)``."""
        return self._reward_space
