"""Gym-Hybrid's ``Moving-v0``, registered as env type 'gym_hybrid' with DI-engine's hybrid action.

An agent drives on the square ``[-1, 1]^2`` to a target of radius 0.1 and must stop on it.
Each step it picks an action type and the continuous parameters of the types, Gym-Hybrid's
``Tuple(Discrete(3), Box([0, -1], [1, 1]))``:

- 0 ``accelerate``: the speed grows by ``0.5 * args[0]`` (``args[0]`` clipped to ``[0, 1]``);
- 1 ``turn``: the heading turns by ``pi / 2 * args[1]`` (clipped to ``[-1, 1]``);
- 2 ``break``: the speed drops by 0.1, to 0 below that.

Then the agent moves ``0.005 * speed`` along its heading. Standing still (speed 0) within the
target ends the episode with the distance gained plus 1; leaving the field ends it with -1; every
other step gives the distance gained minus 0.001. As in Gym-Hybrid, the step after the 200th ends
the episode with -1, here reported as a truncation (a time limit). The dynamics, rewards and the
order the start is drawn in are Gym-Hybrid's (``gym_hybrid/environments.py`` and ``agents.py``).

The env type takes actions as DI-engine's ``GymHybridEnv`` does, ``{'action_type', 'action_args'}``,
and with DI-engine's default ``act_scale=True`` both arguments are given in ``[-1, 1]`` (the
acceleration mapped to ``[0, 1]``).
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
FIELD_SIZE = 1.0
TARGET_RADIUS = 0.1


class MovingEnv(gym.Env):
    """Gym-Hybrid's ``Moving-v0`` in Gymnasium's API: hybrid ``Tuple`` actions, a 10-float observation.

    Args:
        max_turn: The largest turn of one step, in radians.
        max_acceleration: The largest speed gain of one step.
        delta_t: The time one step lasts.
        max_step: The episode ends at the step after this many.
        penalty: Taken from the reward of every step that does not end the episode at the target.
        break_value: The speed one break takes off.
    """

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(
        self,
        max_turn: float = np.pi / 2,
        max_acceleration: float = 0.5,
        delta_t: float = 0.005,
        max_step: int = 200,
        penalty: float = 0.001,
        break_value: float = 0.1,
    ) -> None:
        self.max_turn, self.max_acceleration, self.delta_t = max_turn, max_acceleration, delta_t
        self.max_step, self.penalty, self.break_value = max_step, penalty, break_value
        self.action_space = gym.spaces.Tuple(
            (gym.spaces.Discrete(3), gym.spaces.Box(np.array([0, -1], np.float32), np.array([1, 1], np.float32)))
        )
        # Gym-Hybrid declares Box(ones, -ones), whose low is above its high.
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (10,), np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Draw the target, then the agent's position and heading, as Gym-Hybrid draws them."""
        super().reset(seed=seed)
        limit = FIELD_SIZE - TARGET_RADIUS
        target = self.np_random.uniform([-limit, -limit, TARGET_RADIUS], [limit, limit, TARGET_RADIUS])
        self.target = target[:2]
        x, y, self.heading = self.np_random.uniform([-FIELD_SIZE, -FIELD_SIZE, 0], [FIELD_SIZE, FIELD_SIZE, 2 * np.pi])
        self.position = np.array([x, y])
        self.speed = 0.0
        self.steps = 0
        return self._obs(), {}

    def step(self, action: tuple[Any, np.ndarray]) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply ``(action type, parameters)`` and move one step."""
        kind, args = int(action[0]), np.asarray(action[1], dtype=np.float64)
        before = self._distance()
        self.steps += 1
        if kind == TURN:
            self.heading = (self.heading + self.max_turn * max(min(float(args[1]), 1.0), -1.0)) % (2 * np.pi)
        elif kind == ACCELERATE:
            self.speed += self.max_acceleration * max(min(float(args[0]), 1.0), 0.0)
        elif kind == BREAK:
            self.speed = 0.0 if self.speed < self.break_value else self.speed - self.break_value
        else:
            raise ValueError(f"MovingEnv: action type must be 0, 1 or 2, got {kind}")
        direction = np.array([np.cos(self.heading), np.sin(self.heading)])
        self.position = self.position + self.delta_t * self.speed * direction
        distance = self._distance()
        if distance < TARGET_RADIUS and self.speed == 0:
            return self._obs(), before - distance - self.penalty + 1, True, False, {}
        if np.abs(self.position).max() > FIELD_SIZE:
            return self._obs(), -1.0, True, False, {}
        if self.steps > self.max_step:
            return self._obs(), -1.0, False, True, {}
        return self._obs(), before - distance - self.penalty, False, False, {}

    def _distance(self) -> float:
        return float(np.sqrt(((self.position - self.target) ** 2).sum()))

    def _obs(self) -> np.ndarray:
        distance = self._distance()
        return np.array(
            [
                *self.position,
                self.speed,
                np.cos(self.heading),
                np.sin(self.heading),
                *self.target,
                distance,
                0.0 if distance > TARGET_RADIUS else 1.0,
                self.steps / self.max_step,
            ],
            dtype=np.float32,
        )


if MOVING_ID not in gym.registry:
    gym.register(MOVING_ID, entry_point=MovingEnv)


class DIEngineHybridAction(gym.ActionWrapper):
    """Gym-Hybrid's ``(type, args)`` action in DI-engine's ``GymHybridEnv`` form: ``{'action_type', 'action_args'}``."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        kinds, args = env.action_space.spaces
        self.action_space = gym.spaces.Dict({"action_type": kinds, "action_args": args})

    def action(self, action: dict) -> tuple[Any, np.ndarray]:
        """``{'action_type', 'action_args'}`` to the env's ``(type, args)``."""
        return action["action_type"], action["action_args"]


# Gym-Hybrid's ids, as DI-engine's configs give them: its Moving-v0 is the env above.
GYM_HYBRID_IDS = {"Moving-v0": MOVING_ID}
NOT_HERE = ("Sliding-v0", "HardMove-v0")


@ENV_REGISTRY.register("gym_hybrid")
class GymHybridEnv(GymIdEnv):
    """Gym-Hybrid's ``Moving-v0`` with DI-engine's ``{'action_type', 'action_args'}`` action.

    DI-engine's ``env_id='Moving-v0'`` names it too; Gym-Hybrid's other envs are not here. With
    ``act_scale`` (DI-engine's default) ``action_args`` are given in ``[-1, 1]``.
    """

    gym_id = MOVING_ID

    def __init__(self, cfg: dict | None = None) -> None:
        _refuse_other_forms(cfg or {})
        env_id = (cfg or {}).get("env_id")
        if env_id in NOT_HERE:
            raise ConfigError(
                f"gym_hybrid: env_id {env_id!r} is one of Gym-Hybrid's envs this type does not have; it has "
                f"{MOVING_ID!r} (Gym-Hybrid's and DI-engine's 'Moving-v0')"
            )
        if env_id in GYM_HYBRID_IDS:
            cfg = dict(cfg, env_id=GYM_HYBRID_IDS[env_id])
        super().__init__(cfg)

    def _build_env(self) -> gym.Env:
        return DIEngineHybridAction(super()._build_env())

    # No batch envs (get_vec_env_setting refuses env.batch): a vector env of the raw env would step its Tuple
    # action, without DI-engine's {'action_type', 'action_args'} form and act_scale.
    batch_env = None


def _refuse_other_forms(cfg: dict) -> None:
    """Keys that would give the type another action or observation form than DI-engine's GymHybridEnv's."""
    if cfg.get("env_wrapper") == "gym_hybrid_default":
        raise ConfigError(
            "gym_hybrid: env_wrapper='gym_hybrid_default' is DingEnvWrapper's {'type', 'mask', 'args'} action; this "
            "type takes DI-engine's GymHybridEnv action {'action_type', 'action_args'} (leave env_wrapper out), or use "
            f"DingEnvWrapper(cfg=dict(env_id={MOVING_ID!r}, env_wrapper='gym_hybrid_default')) for that form"
        )
    if cfg.get("obs_plus_prev_action_reward"):
        raise ConfigError(
            "gym_hybrid: obs_plus_prev_action_reward=True puts the previous action into the observation, and its "
            "hybrid Dict action has no array form there; leave it False"
        )


# GymIdEnv builds a subclass's config as the class is created; DI-engine's GymHybridEnv scales by default.
GymHybridEnv.config = dict(GymHybridEnv.config, act_scale=True)
