"""MPE's simple_spread (from the mpe2 package) as env type 'petting_zoo', with DI-engine's config keys.

``N`` agents learn to cover ``N`` landmarks while avoiding each other. Observations
follow DI-engine's multi-agent convention (``agent_state``, ``global_state``,
``action_mask``; see ``ding_env.env_wrappers.multi_agent``) with DI-engine's global state of
this game (30 floats for 3 agents) and its ``agent_alone_state`` / ``agent_alone_padding_state``
(each agent's observation without the other agents' positions, or with them zeroed), so the model
shapes of DI-engine's ptz_simple_spread configs fit. The reward is DI-engine's team reward, of shape
``(1,)``: the sum over agents of the shared reward (the landmarks' coverage) plus the agent's own
collision penalty (``team_reward=False``: mpe2's reward per agent, weighted by ``local_ratio``).
The episode is truncated after ``max_cycles`` steps.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env import ENV_REGISTRY, PettingZooEnv
from ding_env.errors import ConfigError

# DI-engine's configs name the game by its PettingZoo id; mpe2 ships its current version.
SIMPLE_SPREAD_IDS = ("simple_spread_v2", "simple_spread_v3")


@ENV_REGISTRY.register("petting_zoo")
class SimpleSpreadEnv(PettingZooEnv):
    """MPE simple_spread behind the ``BaseEnv`` contract, configured with DI-engine's ``petting_zoo`` keys."""

    config: ClassVar[dict] = dict(
        # DI-engine's game family and id: MPE's simple_spread.
        env_family="mpe",
        env_id="simple_spread_v2",
        # Agents (and as many landmarks: simple_spread has one per agent).
        n_agent=3,
        n_landmark=3,
        # Steps per episode; the last one is reported as truncated.
        max_cycles=25,
        # Box(0, 1, (5,)) actions per agent instead of Discrete(5).
        continuous_actions=False,
        # Continuous actions are given in [-1, 1] (and action_space says so) and mapped to [0, 1] (DI-engine's).
        act_scale=False,
        # One reward for the team, shape (1,), as DI-engine's simple_spread gives it: the sum over agents of
        # the shared reward plus the agent's own collision penalty (local_ratio unused, as in DI-engine).
        # False: mpe2's reward per agent, shape (n_agent,).
        team_reward=True,
        # With team_reward=False: weight of each agent's own collision penalty against the shared reward.
        local_ratio=0.5,
        # The observation is agent_state alone (n_agent, 18 for 3 agents).
        agent_obs_only=False,
        # global_state has one row per agent: its own observation, then the global state.
        agent_specific_global_state=False,
    )

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg=cfg)
        cfg = self._cfg
        if cfg.env_family != "mpe" or cfg.env_id not in SIMPLE_SPREAD_IDS:
            raise ConfigError(
                f"petting_zoo env: env_family/env_id expected 'mpe' and one of {SIMPLE_SPREAD_IDS}, "
                f"got {cfg.env_family!r}/{cfg.env_id!r}"
            )
        if cfg.act_scale and not cfg.continuous_actions:  # DI-engine asserts it
            raise ConfigError("petting_zoo env: act_scale=True maps continuous actions; set continuous_actions=True")
        if not (isinstance(cfg.n_agent, int) and cfg.n_agent >= 2):
            raise ConfigError(f"petting_zoo env: n_agent expected an int >= 2, got {cfg.n_agent!r}")
        if cfg.n_landmark != cfg.n_agent:
            raise ConfigError(
                f"petting_zoo env: simple_spread has one landmark per agent; n_landmark expected {cfg.n_agent}, "
                f"got {cfg.n_landmark}"
            )

    @property
    def action_space(self) -> gym.spaces.Space:
        """Each agent's action; with ``act_scale``, continuous ones in ``[-1, 1]``."""
        space = super().action_space
        if self._cfg.act_scale:
            return gym.spaces.Box(-1.0, 1.0, space.shape, space.dtype)
        return space

    def step(self, action: Any) -> Any:
        """Step every live agent; with ``act_scale``, actions in ``[-1, 1]`` are mapped linearly to the game's."""
        if self._cfg.act_scale:
            space = super().action_space
            action = (space.low + (np.asarray(action, dtype=space.dtype) + 1) / 2 * (space.high - space.low)).astype(
                space.dtype
            )
        return super().step(action)

    def _build_env(self) -> Any:
        try:
            simple_spread = importlib.import_module("mpe2.simple_spread_v3")
        except ImportError as error:
            raise ImportError(
                f"env type 'petting_zoo' needs mpe2 ({error}); install it with: pip install 'ding-env[pettingzoo]'"
            ) from error
        cfg = self._cfg
        return simple_spread.parallel_env(
            N=cfg.n_agent,
            max_cycles=cfg.max_cycles,
            continuous_actions=cfg.continuous_actions,
            local_ratio=cfg.local_ratio,
        )

    def _read_spaces(self) -> None:
        super()._read_spaces()
        if self._cfg.team_reward:
            self._reward_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
        if self._cfg.agent_obs_only:
            return
        n, width = self._agent_state_space.shape
        spaces = dict(self._observation_space.spaces)
        alone_width = width - 2 * (n - 1)  # without the other agents' relative positions
        spaces["agent_alone_state"] = gym.spaces.Box(-np.inf, np.inf, (n, alone_width), np.float32)
        spaces["agent_alone_padding_state"] = gym.spaces.Box(-np.inf, np.inf, (n, width), np.float32)
        self._observation_space = gym.spaces.Dict(spaces)

    def _reward(self, rewards: dict[str, float], index: dict[str, int]) -> np.ndarray:
        """DI-engine's team reward, read from the game's world after its step as DI-engine's raw env reads it."""
        if not self._cfg.team_reward:
            return super()._reward(rewards, index)
        game = self._env.unwrapped
        shared = float(game.scenario.global_reward(game.world))
        # Summed in float64 in the agents' order, then float32, as DI-engine does.
        team = sum(shared + float(game.scenario.reward(agent, game.world)) for agent in game.world.agents)
        return np.array([team], np.float32)

    def _observe(self, observations: dict[str, Any]) -> Any:
        obs = super()._observe(observations)
        if self._cfg.agent_obs_only:
            return obs
        agent_state = obs["agent_state"]
        n = len(agent_state)
        own = agent_state[:, : 4 + 2 * self._cfg.n_landmark]  # velocity, position, landmarks relative
        communication = agent_state[:, -2 * (n - 1) :]
        obs["agent_alone_state"] = np.concatenate([own, communication], 1)
        obs["agent_alone_padding_state"] = np.concatenate(
            [own, np.zeros((n, 2 * (n - 1)), np.float32), communication], 1
        )
        return {key: obs[key] for key in self._observation_space.spaces}  # the space's key order

    def _global_state_space(self, agent_state: gym.spaces.Box) -> gym.spaces.Box:
        """DI-engine's global state of simple_spread: ``4 * n_agent + 2 * n_landmark + 2 * n_agent * (n_agent - 1)``."""
        n = self._cfg.n_agent
        size = 4 * n + 2 * self._cfg.n_landmark + 2 * n * (n - 1)
        return gym.spaces.Box(-np.inf, np.inf, (size,), np.float32)

    def _global_state(self, agent_state: np.ndarray) -> np.ndarray:
        """Built from the agents' observations as DI-engine builds it, so its model shapes fit.

        An agent observes ``[own velocity (2), own position (2), landmarks relative (2 per landmark),
        other agents relative (2 each), other agents' communication (2 each)]``; the global state is
        agent 0's position and relative positions, then every agent's velocity, then every agent's
        communication.
        """
        communication = 2 * (self._cfg.n_agent - 1)
        return np.concatenate(
            [
                agent_state[0, 2:-communication],
                agent_state[:, 0:2].reshape(-1),
                agent_state[:, -communication:].reshape(-1),
            ]
        )
