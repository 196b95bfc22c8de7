"""Observation wrappers under DI-engine's (and ALF's) names."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env_wrappers.legacy_gym import AcceptsLegacyGym


class ScaledFloatFrameWrapper(AcceptsLegacyGym, gym.ObservationWrapper):
    """``uint8`` frames to ``float32`` in [0, 1]."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = gym.spaces.Box(0.0, 1.0, env.observation_space.shape, np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        """Divide by 255."""
        return np.asarray(observation, dtype=np.float32) / 255.0


class FrameStackWrapper(AcceptsLegacyGym, gym.wrappers.FrameStackObservation):
    """Stack the last ``n_frames`` observations on a new first axis (channel-first for 2-D frames)."""

    def __init__(self, env: gym.Env, n_frames: int = 4) -> None:
        super().__init__(env, stack_size=n_frames)


class ObsTransposeWrapper(AcceptsLegacyGym, gym.ObservationWrapper):
    """Height-width-channel images to channel-height-width."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.observation_space
        if len(space.shape) != 3:
            raise ValueError(f"ObsTransposeWrapper needs (H, W, C) observations, got shape {space.shape}")
        self.observation_space = gym.spaces.Box(
            space.low.transpose(2, 0, 1), space.high.transpose(2, 0, 1), dtype=space.dtype
        )

    def observation(self, observation: np.ndarray) -> np.ndarray:
        """Transpose to (C, H, W), contiguous."""
        return np.ascontiguousarray(np.transpose(observation, (2, 0, 1)))


class ObsNormWrapper(AcceptsLegacyGym, gym.wrappers.NormalizeObservation):
    """Normalise observations by a running mean and variance (Gymnasium's NormalizeObservation)."""


class ObservationClipWrapper(AcceptsLegacyGym, gym.ObservationWrapper):
    """Clip every observation to ``[min_v, max_v]`` (ALF's ObservationClipWrapper)."""

    def __init__(self, env: gym.Env, min_v: float = -200.0, max_v: float = 200.0) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, gym.spaces.Box):
            raise TypeError(f"ObservationClipWrapper needs a Box observation space, got {space!r}")
        self.min_v, self.max_v = min_v, max_v
        low = np.clip(space.low, min_v, max_v).astype(space.dtype)
        high = np.clip(space.high, min_v, max_v).astype(space.dtype)
        self.observation_space = gym.spaces.Box(low, high, space.shape, space.dtype)

    def observation(self, observation: Any) -> np.ndarray:
        """Clip."""
        return np.clip(observation, self.min_v, self.max_v).astype(self.observation_space.dtype)


class TransposeWrapper(ObsTransposeWrapper):
    """DI-engine's second name for :class:`ObsTransposeWrapper`: (H, W, C) images to (C, H, W)."""


class RunningMeanStd(gym.wrappers.utils.RunningMeanStd):
    """Gymnasium's running mean and variance, with DI-engine's ``std`` and ``reset()``.

    Args:
        epsilon: The initial count, and what ``std`` adds to keep it above 0.
        shape: The shape of one value.
    """

    def __init__(self, epsilon: float = 1e-4, shape: tuple = ()) -> None:
        super().__init__(epsilon=epsilon, shape=shape)
        self._epsilon, self._shape = epsilon, tuple(shape)

    @property
    def std(self) -> np.ndarray:
        """The running standard deviation, plus ``epsilon``."""
        return np.sqrt(self.var) + self._epsilon

    def reset(self) -> None:
        """Forget every value seen."""
        super().__init__(epsilon=self._epsilon, shape=self._shape)


class StaticObsNormWrapper(AcceptsLegacyGym, gym.ObservationWrapper):
    """Normalise observations by a fixed ``mean`` and ``std`` (from a dataset), clipped to [-3, 3] (DI-engine's).

    Observations become ``float32``, and the space ``Box(-3, 3)`` of the same shape.
    """

    CLIP_RANGE = (-3.0, 3.0)

    def __init__(self, env: gym.Env, mean: Any, std: Any) -> None:
        super().__init__(env)
        shape = env.observation_space.shape
        self.mean, self.std = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)
        for name, value in (("mean", self.mean), ("std", self.std)):
            if not _broadcasts_to(value.shape, shape):
                raise ValueError(
                    f"StaticObsNormWrapper: {name} of shape {value.shape} does not fit observations of shape {shape}"
                )
        if not np.all(self.std > 0):
            raise ValueError(f"StaticObsNormWrapper: std must be > 0 everywhere, got {self.std}")
        self.observation_space = gym.spaces.Box(*self.CLIP_RANGE, shape, np.float32)

    def observation(self, observation: Any) -> np.ndarray:
        """``(observation - mean) / std``, clipped."""
        return np.clip((observation - self.mean) / self.std, *self.CLIP_RANGE).astype(np.float32)


class FlatObsWrapper(AcceptsLegacyGym, gym.ObservationWrapper):
    """MiniGrid's ``{'image', 'mission'}`` observations as one ``float32`` vector (DI-engine's).

    The image, flattened, then the mission text one-hot encoded: ``maxStrLen`` rows of 28
    codes (``a``-``z``, space, comma), so the vector has ``image.size + 28 * maxStrLen`` values.
    """

    CODES = 28

    def __init__(self, env: gym.Env, maxStrLen: int = 96) -> None:  # DI-engine's argument name
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, gym.spaces.Dict) or not {"image", "mission"} <= set(space.spaces):
            raise TypeError(f"FlatObsWrapper needs a Dict observation space with 'image' and 'mission', got {space!r}")
        self.max_str_len = maxStrLen
        size = int(np.prod(space["image"].shape)) + self.CODES * maxStrLen
        self.observation_space = gym.spaces.Box(0.0, 255.0, (size,), np.float32)
        self._mission: str | None = None
        self._encoded = np.zeros(self.CODES * maxStrLen, dtype=np.float32)

    def observation(self, observation: dict) -> np.ndarray:
        """The flat image and the encoded mission, concatenated."""
        mission = observation["mission"]
        if mission != self._mission:
            self._encoded = self._encode(mission)
            self._mission = mission
        return np.concatenate([np.asarray(observation["image"], dtype=np.float32).ravel(), self._encoded])

    def _encode(self, mission: str) -> np.ndarray:
        if len(mission) > self.max_str_len:
            raise ValueError(f"FlatObsWrapper: mission {mission!r} is longer than maxStrLen={self.max_str_len}")
        codes = np.zeros((self.max_str_len, self.CODES), dtype=np.float32)
        for index, char in enumerate(mission.lower()):
            if "a" <= char <= "z":
                code = ord(char) - ord("a")
            elif char in " ,":
                code = 26 + " ,".index(char)
            else:
                raise ValueError(f"FlatObsWrapper: mission {mission!r} holds {char!r}; only letters, ' ' and ','")
            codes[index, code] = 1.0
        return codes.ravel()


class ObsPlusPrevActRewWrapper(AcceptsLegacyGym, gym.Wrapper):
    """Observations ``{'obs', 'prev_action', 'prev_reward_extrinsic'}``, as NGU takes them (DI-engine's).

    After a reset the previous action is the null action (``start - 1`` for a
    ``Discrete`` space, whose ``prev_action`` space gains that value; zeros otherwise)
    and the previous reward 0. Unlike DI-engine's, both restart at every reset.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        actions = env.action_space
        if isinstance(actions, gym.spaces.Discrete):
            prev_actions = gym.spaces.Discrete(int(actions.n) + 1, start=int(actions.start) - 1)
            self.null_action: Any = np.int64(actions.start - 1)
        else:
            prev_actions = actions
            self.null_action = np.zeros(actions.shape, actions.dtype)
        self.observation_space = gym.spaces.Dict(
            {
                "obs": env.observation_space,
                "prev_action": prev_actions,
                "prev_reward_extrinsic": gym.spaces.Box(-np.inf, np.inf, (1,), np.float32),
            }
        )
        self._prev_action, self._prev_reward = self.null_action, 0.0

    def _observe(self, obs: Any) -> dict:
        reward = np.array([self._prev_reward], dtype=np.float32)
        return {"obs": obs, "prev_action": self._prev_action, "prev_reward_extrinsic": reward}

    def reset(self, **kwargs: Any) -> tuple[dict, dict]:
        """Reset with the null action and reward 0 as the previous ones."""
        self._prev_action, self._prev_reward = self.null_action, 0.0
        obs, info = self.env.reset(**kwargs)
        return self._observe(obs), info

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        """Step; the observation carries the action and reward before this one."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        observed = self._observe(obs)
        self._prev_action, self._prev_reward = action, float(reward)
        return observed, reward, terminated, truncated, info


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target`` without changing it."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False
