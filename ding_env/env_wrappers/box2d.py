"""Box2D envs' own wrapper: BipedalWalker replays its episodes only in a new world per episode."""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym


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


def fresh_world_for_bipedal_walker(env: gym.Env) -> gym.Env:
    """``env`` in :class:`FreshWorldOnReset` when it is a BipedalWalker (the hardcore one too), else as it is."""
    # Not imported here: an env that is a BipedalWalker has loaded its module (which needs Box2D) already.
    walker = getattr(sys.modules.get("gymnasium.envs.box2d.bipedal_walker"), "BipedalWalker", None)
    return FreshWorldOnReset(env) if walker is not None and isinstance(env.unwrapped, walker) else env
