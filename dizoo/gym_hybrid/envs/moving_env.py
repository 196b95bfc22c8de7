"""A small hybrid-action env in Gym-Hybrid's shape (its ``Moving-v0``), registered as env type 'gym_hybrid'.

An agent drives on the square ``[-1, 1]^2`` towards a target. Each step it picks an
action type and the continuous parameters of that type, Gym-Hybrid's
``Tuple(Discrete(3), Box([0, -1], [1, 1]))``:

- 0 ``accelerate`` by ``args[0]`` (in ``[0, 1]``),
- 1 ``turn`` by ``args[1]`` (in ``[-1, 1]``, a fraction of pi),
- 2 ``break``: stop.

The env type presents it in DI-engine's hybrid form through ``DingEnvWrapper``'s
``'gym_hybrid_default'`` preset: ``Dict(type=Discrete(3), mask=Box(0, 1, (2,), int64),
args=Box([0, -1], [1, 1]))``. Reaching the target ends the episode (reward 1); leaving the
field ends it too (reward -1); otherwise the reward is the distance gained. Episodes are cut
(truncated) after 200 steps.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env import ENV_REGISTRY
from ding_env.errors import ConfigError
from dizoo.classic_control.gym_env import GymIdEnv

MOVING_ID = "dizoo/GymHybridMoving-v0"
ACCELERATE, TURN, BREAK = 0, 1, 2
TARGET_RADIUS = 0.1
MAX_SPEED = 0.2
MAX_STEPS = 200


class MovingEnv(gym.Env):
    """The Gymnasium env: hybrid ``Tuple`` actions, a 10-float observation."""

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(self) -> None:
        self.action_space = gym.spaces.Tuple(
            (gym.spaces.Discrete(3), gym.spaces.Box(np.array([0, -1], np.float32), np.array([1, 1], np.float32)))
        )
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (10,), np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Place the agent, its heading and the target at random."""
        super().reset(seed=seed)
        self.position = self.np_random.uniform(-0.8, 0.8, 2)
        self.target = self.np_random.uniform(-0.8, 0.8, 2)
        self.heading = float(self.np_random.uniform(-np.pi, np.pi))
        self.speed = 0.0
        self.steps = 0
        return self._obs(), {}

    def step(self, action: tuple[Any, np.ndarray]) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply ``(action type, parameters)`` and move one step."""
        kind, args = int(action[0]), np.asarray(action[1], dtype=np.float64)
        if kind == ACCELERATE:
            self.speed = min(self.speed + MAX_SPEED * float(np.clip(args[0], 0.0, 1.0)), MAX_SPEED)
        elif kind == TURN:
            self.heading += np.pi * float(np.clip(args[1], -1.0, 1.0))
        elif kind == BREAK:
            self.speed = 0.0
        else:
            raise ValueError(f"MovingEnv: action type must be 0, 1 or 2, got {kind}")
        before = self._distance()
        self.position = self.position + self.speed * np.array([np.cos(self.heading), np.sin(self.heading)])
        self.steps += 1
        info = {"action_type": kind}
        if self._distance() < TARGET_RADIUS:
            return self._obs(), 1.0, True, False, info
        if np.abs(self.position).max() > 1.0:
            return self._obs(), -1.0, True, False, info
        return self._obs(), float(before - self._distance()), False, self.steps >= MAX_STEPS, info

    def _distance(self) -> float:
        return float(np.linalg.norm(self.target - self.position))

    def _obs(self) -> np.ndarray:
        return np.array(
            [
                *self.position,
                self.speed,
                np.cos(self.heading),
                np.sin(self.heading),
                *self.target,
                self._distance(),
                float(self._distance() < TARGET_RADIUS),
                self.steps / MAX_STEPS,
            ],
            dtype=np.float32,
        )


if MOVING_ID not in gym.registry:
    gym.register(MOVING_ID, entry_point=MovingEnv)


# Gym-Hybrid's ids, as DI-engine's configs give them: its Moving-v0 is the env above.
GYM_HYBRID_IDS = {"Moving-v0": MOVING_ID}
NOT_HERE = ("Sliding-v0", "HardMove-v0")


@ENV_REGISTRY.register("gym_hybrid")
class GymHybridEnv(GymIdEnv):
    """The moving env with DI-engine's hybrid ``Dict`` action (``type``, ``mask``, ``args``).

    DI-engine's ``env_id='Moving-v0'`` names it too; Gym-Hybrid's other envs are not here.
    """

    gym_id = MOVING_ID

    def __init__(self, cfg: dict | None = None) -> None:
        env_id = (cfg or {}).get("env_id")
        if env_id in NOT_HERE:
            raise ConfigError(
                f"gym_hybrid: env_id {env_id!r} is one of Gym-Hybrid's envs this type does not have; it has "
                f"{MOVING_ID!r} (Gym-Hybrid's and DI-engine's 'Moving-v0')"
            )
        if env_id in GYM_HYBRID_IDS:
            cfg = dict(cfg, env_id=GYM_HYBRID_IDS[env_id])
        super().__init__(cfg)


# GymIdEnv builds a subclass's config as the class is created; the hybrid preset is this type's default.
GymHybridEnv.config = dict(GymHybridEnv.config, env_wrapper="gym_hybrid_default")
