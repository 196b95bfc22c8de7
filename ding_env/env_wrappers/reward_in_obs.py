"""``AllinObsWrapper``: a ``BaseEnv`` whose observations carry the reward, as Decision Transformer reads them."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env.base_env import BaseEnv
from ding_env.env.timestep import BaseEnvTimestep

_REWARD_SPACE = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)


class AllinObsWrapper(BaseEnv):
    """Wrap a ``BaseEnv`` so each observation is ``{'obs': obs, 'reward': reward}`` (DI-engine's).

    ``reward`` is the ``float32`` reward of shape ``(1,)`` of the step that led to the
    observation (0 after a reset). Everything else (seeding, spaces, attributes) is the
    wrapped env's. As in DI-engine, it wraps a ``BaseEnv`` (``AllinObsWrapper(MyEnv(cfg))``),
    not a Gymnasium env, so it is not in ``ENV_WRAPPER_REGISTRY``.

    Args:
        env: The env to wrap.
    """

    def __init__(self, env: BaseEnv) -> None:
        super().__init__(None)
        self.env = env

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Seed the wrapped env."""
        self.env.seed(seed, dynamic_seed)

    def reset(self, *args: Any, **kwargs: Any) -> dict:
        """Reset the wrapped env; the reward part is 0."""
        return {"obs": self.env.reset(*args, **kwargs), "reward": np.zeros(1, dtype=np.float32)}

    def step(self, action: Any) -> BaseEnvTimestep:
        """Step the wrapped env; the observation carries this step's reward."""
        timestep = self.env.step(action)
        reward = np.asarray(timestep.reward, dtype=np.float32).reshape(1)
        return timestep._replace(obs={"obs": timestep.obs, "reward": reward})

    def close(self) -> None:
        """Close the wrapped env."""
        self.env.close()

    def enable_save_replay(self, replay_path: str) -> None:
        """Record the wrapped env's episodes."""
        self.env.enable_save_replay(replay_path)

    def random_action(self) -> Any:
        """A random action of the wrapped env."""
        return self.env.random_action()

    def __repr__(self) -> str:
        return f"AllinObsWrapper({self.env!r})"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    @property
    def observation_space(self) -> gym.spaces.Space:
        """``Dict(obs=the wrapped env's space, reward=Box(-inf, inf, (1,), float32))``."""
        return gym.spaces.Dict({"obs": self.env.observation_space, "reward": _REWARD_SPACE})

    @property
    def action_space(self) -> gym.spaces.Space:
        """The wrapped env's."""
        return self.env.action_space

    @property
    def reward_space(self) -> gym.spaces.Space:
        """The wrapped env's."""
        return self.env.reward_space


class RewardInObsWrapper(gym.Wrapper):
    """A Gymnasium wrapper whose observations are ``{'obs': obs, 'reward': reward}``: the ``'reward_in_obs'`` preset.

    ``reward`` is the ``float32`` reward of shape ``(1,)`` of the step that led to the observation
    (0 after a reset), as in DI-engine's ``reward_in_obs`` wrapper; the step's reward is unchanged.

    Args:
        env: The Gymnasium env to wrap.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = gym.spaces.Dict({"obs": env.observation_space, "reward": _REWARD_SPACE})

    def reset(self, **kwargs: Any) -> tuple[dict, dict]:
        """Reset the wrapped env; the reward part is 0."""
        obs, info = self.env.reset(**kwargs)
        return {"obs": obs, "reward": np.zeros(1, dtype=np.float32)}, info

    def step(self, action: Any) -> tuple[dict, Any, bool, bool, dict]:
        """Step the wrapped env; the observation carries this step's reward."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        return {"obs": obs, "reward": np.array([reward], dtype=np.float32)}, reward, terminated, truncated, info
