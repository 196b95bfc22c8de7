"""Observation wrappers under DI-engine's (and ALF's) names."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class ScaledFloatFrameWrapper(gym.ObservationWrapper):
    """``uint8`` frames to ``float32`` in [0, 1]."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = gym.spaces.Box(0.0, 1.0, env.observation_space.shape, np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        """Divide by 255."""
        return np.asarray(observation, dtype=np.float32) / 255.0


class FrameStackWrapper(gym.wrappers.FrameStackObservation):
    """Stack the last ``n_frames`` observations on a new first axis (channel-first for 2-D frames)."""

    def __init__(self, env: gym.Env, n_frames: int = 4) -> None:
        super().__init__(env, stack_size=n_frames)


class ObsTransposeWrapper(gym.ObservationWrapper):
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


class ObsNormWrapper(gym.wrappers.NormalizeObservation):
    """Normalise observations by a running mean and variance (Gymnasium's NormalizeObservation)."""


class ObservationClipWrapper(gym.ObservationWrapper):
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
