"""A small PettingZoo parallel env whose agents finish at different steps (top-level, so spawn workers import it)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv


class RelayEnv(ParallelEnv):
    """Two agents: ``runner`` terminates after 2 steps, ``walker`` is cut after 4; actions are masked.

    Each agent observes ``{"observation": [step, last action], "action_mask": ...}``: action 2 is
    forbidden at even steps. The reward of an agent is its action + 1; ``state()`` is the step count.
    """

    metadata = {"name": "relay_v0"}

    def __init__(self, walker_limit: int = 4) -> None:
        self.possible_agents = ["runner", "walker"]
        self.walker_limit = walker_limit
        self.state_space = gym.spaces.Box(0, np.inf, (1,), np.float32)

    def observation_space(self, agent: str) -> gym.spaces.Space:
        return gym.spaces.Dict(
            {
                "observation": gym.spaces.Box(-np.inf, np.inf, (2,), np.float32),
                "action_mask": gym.spaces.MultiBinary(3),
            }
        )

    def action_space(self, agent: str) -> gym.spaces.Space:
        return gym.spaces.Discrete(3)

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.t = 0
        self.offset = float(np.random.default_rng(seed).integers(100))
        return {agent: self._obs(0) for agent in self.agents}, {agent: {} for agent in self.agents}

    def state(self) -> np.ndarray:
        return np.array([self.t], np.float32)

    def _obs(self, action: int) -> dict:
        mask = np.array([1, 1, self.t % 2], np.int8)
        return {"observation": np.array([self.t + self.offset, action], np.float32), "action_mask": mask}

    def step(self, actions):
        self.t += 1
        obs = {agent: self._obs(int(actions[agent])) for agent in self.agents}
        rewards = {agent: float(actions[agent]) + 1.0 for agent in self.agents}
        terminations = {agent: agent == "runner" and self.t >= 2 for agent in self.agents}
        truncations = {agent: agent == "walker" and self.t >= self.walker_limit for agent in self.agents}
        infos = {agent: {} for agent in self.agents}
        self.agents = [agent for agent in self.agents if not (terminations[agent] or truncations[agent])]
        return obs, rewards, terminations, truncations, infos


class MixedSpacesEnv(RelayEnv):
    """RelayEnv whose walker has a different action space: agents that cannot be stacked."""

    def action_space(self, agent: str) -> gym.spaces.Space:
        return gym.spaces.Discrete(3 if agent == "runner" else 4)
