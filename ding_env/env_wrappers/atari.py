"""Atari wrappers under DI-engine's names (DeepMind preprocessing pieces Gymnasium lacks or names differently).

Each wrapper updates its spaces and emits data inside them. Where Gymnasium
maintains the same operation (max-and-skip), the wrapper builds on it.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.env_wrappers.legacy_gym import AcceptsLegacyGym


def _ale(env: gym.Env) -> Any:
    return env.unwrapped.ale


class NoopResetWrapper(AcceptsLegacyGym, gym.Wrapper):
    """On reset, take a random number (1..``noop_max``) of no-op actions, drawn from the env's own RNG."""

    def __init__(self, env: gym.Env, noop_max: int = 30) -> None:
        super().__init__(env)
        if noop_max < 1:
            raise ValueError(f"noop_max must be >= 1, got {noop_max}")
        self.noop_max = noop_max
        meanings = env.unwrapped.get_action_meanings()
        if meanings[0] != "NOOP":
            raise ValueError(f"action 0 of {env.spec.id if env.spec else env} is {meanings[0]!r}, not NOOP")

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        """Reset, then step no-ops (resetting again should the game end)."""
        obs, info = self.env.reset(**kwargs)
        for _ in range(int(self.unwrapped.np_random.integers(1, self.noop_max + 1))):
            obs, _, terminated, truncated, info = self.env.step(0)
            if terminated or truncated:
                obs, info = self.env.reset()
        return obs, info


class MaxAndSkipWrapper(AcceptsLegacyGym, gym.wrappers.MaxAndSkipObservation):
    """Repeat each action ``skip`` times and max-pool the last two frames (Gymnasium's MaxAndSkipObservation)."""

    def __init__(self, env: gym.Env, skip: int = 4) -> None:
        super().__init__(env, skip=skip)


class WarpFrameWrapper(AcceptsLegacyGym, gym.ObservationWrapper):
    """RGB frames to ``size`` x ``size`` grayscale ``uint8`` (area interpolation)."""

    def __init__(self, env: gym.Env, size: int = 84) -> None:
        super().__init__(env)
        import cv2  # the atari extra installs opencv-python-headless

        self._cv2 = cv2
        self.size = size
        self.observation_space = gym.spaces.Box(0, 255, (size, size), np.uint8)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        """Grayscale and resize one frame."""
        gray = self._cv2.cvtColor(observation, self._cv2.COLOR_RGB2GRAY)
        return self._cv2.resize(gray, (self.size, self.size), interpolation=self._cv2.INTER_AREA)


class RamWrapper(AcceptsLegacyGym, gym.ObservationWrapper):
    """Observe the console's 128 bytes of RAM (``uint8``) instead of the screen."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = gym.spaces.Box(0, 255, (128,), np.uint8)

    def observation(self, observation: Any) -> np.ndarray:
        """The RAM, copied."""
        return np.array(_ale(self.env).getRAM(), dtype=np.uint8)


class EpisodicLifeWrapper(AcceptsLegacyGym, gym.Wrapper):
    """End the learner's episode on every life lost, and go on with the game at the reset that follows.

    A life loss is reported as ``terminated`` (no bootstrap, as in DeepMind's DQN), and its
    ``info['eval_episode_return']`` is the raw game score so far when an ``EvalEpisodeReturnWrapper``
    sums it below (as at the game's end). The reset right after it continues the game with a no-op
    step; any other reset (after the game ended, mid-episode, a second reset in a row) starts a new game,
    so a seed given before it takes effect. DeepMind's wrapper (and DI-engine's) also went on with the
    game at a reset mid-episode or a second reset in a row.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.lives = 0
        self.life_lost = False  # the last step ended the learner's episode with a life lost, the game going on

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Step; a drop in lives terminates the learner's episode."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        lives = _ale(self.env).lives()
        lost = 0 < lives < self.lives
        self.life_lost = lost and not (terminated or truncated)
        terminated = terminated or lost
        if self.life_lost:
            try:
                info = dict(info, eval_episode_return=self.env.get_wrapper_attr("episode_return"))
            except AttributeError:  # no EvalEpisodeReturnWrapper below: the caller sums the episode
                pass
        self.lives = lives
        return obs, reward, terminated, truncated, info

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        """Go on with the game after a life lost in the last step; else start a new game."""
        obs = None
        if self.life_lost:
            obs, _, terminated, truncated, info = self.env.step(0)
            if terminated or truncated:
                obs = None
        if obs is None:
            obs, info = self.env.reset(**kwargs)
        self.life_lost = False
        self.lives = _ale(self.env).lives()
        return obs, info


class FireResetWrapper(AcceptsLegacyGym, gym.Wrapper):
    """Press FIRE after reset, for games that wait for it (chosen when the action meanings include FIRE)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        meanings = env.unwrapped.get_action_meanings()
        if "FIRE" not in meanings:
            raise ValueError(f"FireResetWrapper needs a FIRE action; this game has {meanings}")
        self.fire_action = meanings.index("FIRE")

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        """Reset, then press FIRE (resetting again should that end the game)."""
        self.env.reset(**kwargs)
        obs, _, terminated, truncated, info = self.env.step(self.fire_action)
        if terminated or truncated:
            obs, info = self.env.reset(**kwargs)
        return obs, info


def has_fire_action(env: gym.Env) -> bool:
    """True when the game's action meanings include FIRE."""
    return "FIRE" in env.unwrapped.get_action_meanings()
