"""Action wrappers: repetition (DI-engine) and discretisation (TF-Agents)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env_wrappers.legacy_gym import AcceptsLegacyGym


class ActionRepeatWrapper(AcceptsLegacyGym, gym.Wrapper):
    """Apply each action ``action_repeat`` times, summing rewards, stopping early when the episode ends."""

    def __init__(self, env: gym.Env, action_repeat: int = 1) -> None:
        super().__init__(env)
        if action_repeat < 1:
            raise ValueError(f"action_repeat must be >= 1, got {action_repeat}")
        self.action_repeat = action_repeat

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Repeat the action."""
        total = 0.0
        for _ in range(self.action_repeat):
            obs, reward, terminated, truncated, info = self.env.step(action)
            total += float(reward)
            if terminated or truncated:
                break
        return obs, total, terminated, truncated, info


class ActionDiscretizeWrapper(AcceptsLegacyGym, gym.ActionWrapper):
    """A Box action space as ``num_actions`` evenly spaced values per dimension (TF-Agents' ActionDiscretizeWrapper).

    The new space is ``Discrete(num_actions)`` for a one-element Box and
    ``MultiDiscrete([num_actions] * size)`` otherwise.
    """

    def __init__(self, env: gym.Env, num_actions: int = 5) -> None:
        super().__init__(env)
        space = env.action_space
        if not isinstance(space, gym.spaces.Box) or not np.all(np.isfinite(space.low) & np.isfinite(space.high)):
            raise TypeError(f"ActionDiscretizeWrapper needs a bounded Box action space, got {space!r}")
        if num_actions < 2:
            raise ValueError(f"num_actions must be >= 2, got {num_actions}")
        self.grid = np.linspace(space.low.ravel(), space.high.ravel(), num_actions, axis=-1).astype(space.dtype)
        self._shape = space.shape
        size = int(np.prod(space.shape))
        self.action_space = (
            gym.spaces.Discrete(num_actions) if size == 1 else gym.spaces.MultiDiscrete([num_actions] * size)
        )

    def action(self, action: Any) -> np.ndarray:
        """Grid indices to continuous values."""
        index = np.asarray(action, dtype=np.int64).reshape(-1)
        return self.grid[np.arange(len(index)), index].reshape(self._shape)


class GymHybridDictActionWrapper(AcceptsLegacyGym, gym.ActionWrapper):
    """Gym-Hybrid's ``Tuple(Discrete(3), Box(2))`` action as DI-engine's hybrid ``Dict`` action.

    The new space is ``Dict(type=Discrete(3), mask=Box(0, 1, (2,), int64), args=Box(2))``
    (``args`` keeps the env's bounds); the env receives ``(type, args)``, ``mask`` being
    for the policy only.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.action_space
        if not (
            isinstance(space, gym.spaces.Tuple)
            and len(space.spaces) == 2
            and isinstance(space.spaces[0], gym.spaces.Discrete)
            and isinstance(space.spaces[1], gym.spaces.Box)
        ):
            raise TypeError(f"GymHybridDictActionWrapper needs a Tuple(Discrete, Box) action space, got {space!r}")
        kinds, args = space.spaces
        self.action_space = gym.spaces.Dict(
            {
                "type": gym.spaces.Discrete(int(kinds.n), start=int(kinds.start)),
                "mask": gym.spaces.Box(0, 1, args.shape, np.int64),
                "args": gym.spaces.Box(args.low, args.high, args.shape, args.dtype),
            }
        )

    def action(self, action: dict) -> tuple[Any, np.ndarray]:
        """``{'type', 'mask', 'args'}`` to the env's ``(type, args)``."""
        return action["type"], action["args"]
