"""Gymnasium's BipedalWalker-v3, registered as env type 'bipedalwalker'."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ding_env import ENV_REGISTRY
from dizoo.classic_control.gym_env import GymIdEnv


class FreshWorldOnReset(gym.Wrapper):
    """A new Box2D world for every episode, so the same seed and actions give the same episode.

    BipedalWalker keeps one ``b2World`` for its lifetime and destroys and recreates its bodies in
    it on each reset; the reused world orders its contacts differently from episode to episode, so
    a replayed seed diverged after one step in one episode out of a few. LunarLander builds a new
    world per reset and needs nothing.
    """

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        """Drop the old world's bodies and the world itself, then reset into a new one."""
        import Box2D

        walker = self.env.unwrapped
        walker._destroy()
        walker.world = Box2D.b2World()
        return self.env.reset(**kwargs)


@ENV_REGISTRY.register("bipedalwalker")
class BipedalWalkerEnv(GymIdEnv):
    """BipedalWalker-v3 (``env_id='BipedalWalkerHardcore-v3'`` for the hardcore course)."""

    gym_id = "BipedalWalker-v3"

    def _make_from_id(self) -> tuple[gym.Env, str]:
        env, family = super()._make_from_id()
        return FreshWorldOnReset(env), family
