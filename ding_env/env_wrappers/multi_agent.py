"""``PettingZooEnv``: a PettingZoo parallel env as a ``BaseEnv``, in DI-engine's multi-agent convention.

Example::

    env = PettingZooEnv(cfg={"env_id": "mpe2.simple_spread_v3", "env_kwargs": {"N": 3}})
    env.seed(0)
    obs = env.reset()  # {"action_mask": (3, 5), "agent_state": (3, 18), "global_state": (54,)}
    timestep = env.step(env.random_action())  # one action per agent; reward of shape (3,)

The observation is a dict: ``agent_state`` stacks each agent's own observation
(row ``i`` for ``possible_agents[i]``), ``global_state`` is the env's ``state()``
(the agents' observations concatenated when it has none), and ``action_mask`` says
which actions each agent may take (all ones unless the env gives masks, as
PettingZoo envs with ``{"observation", "action_mask"}`` observations do). The
action holds one action per agent, the reward one float per agent. An agent that
is done leaves the env: its row keeps its last observation, its reward is 0, its
action is ignored and its mask is zeros. The episode ends when every agent is done;
it is truncated when every agent's end was a truncation (MPE's ``max_cycles``).
``info['eval_episode_return']`` is the team's return: every agent's rewards summed, as
DI-engine reports it. DI-engine's ``agent_obs_only`` (the observation is ``agent_state``
alone) and ``agent_specific_global_state`` (``global_state`` per agent: its own
observation, then the global state) are config keys.

PettingZoo is needed only when the env is built (the ``pettingzoo`` extra).
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env.config import check_config_dict, check_env_keys
from ding_env.env.base_env import BaseEnv
from ding_env.env.timestep import BaseEnvTimestep, StepFields, final_info
from ding_env.env_wrappers.dtypes import convention_space
from ding_env.errors import ConfigError, EnvStateError


def is_pettingzoo_env(env: Any) -> bool:
    """Whether ``env`` is a PettingZoo env (parallel or AEC, wrapped or not), without importing PettingZoo."""
    return any(cls.__module__.split(".")[0] == "pettingzoo" for cls in type(env).__mro__)


def is_parallel_env(env: Any) -> bool:
    """Whether the PettingZoo env ``env`` has the parallel API (``step`` takes a dict of actions)."""
    return any(cls.__name__ == "ParallelEnv" for cls in type(env).__mro__)


class PettingZooEnv(BaseEnv):
    """A PettingZoo parallel env behind the ``BaseEnv`` contract, with DI-engine's multi-agent observation.

    Args:
        env: A PettingZoo parallel env instance; when None, ``cfg.env_id`` is built on first use.
        cfg: Settings; see ``PettingZooEnv.config``.

    Raises:
        ConfigError: For an unknown config key, or neither ``env`` nor ``env_id``.
        TypeError: When ``env`` is not a PettingZoo parallel env.
    """

    config: ClassVar[dict] = dict(
        # Module whose parallel_env(**env_kwargs) builds the env, e.g. 'mpe2.simple_spread_v3'.
        env_id=None,
        # Keyword arguments of parallel_env (e.g. N=3, max_cycles=25, continuous_actions=False).
        env_kwargs={},
        # DI-engine's agent_obs_only: the observation is agent_state alone, an (n_agents, ...) array.
        agent_obs_only=False,
        # DI-engine's agent_specific_global_state (MAPPO-style critics): global_state has one row per
        # agent, the agent's own observation followed by the global state.
        agent_specific_global_state=False,
    )

    def __init__(self, env: Any = None, cfg: dict | None = None) -> None:
        check_config_dict(cfg, f"{type(self).__name__} cfg")
        cfg = dict(cfg or {})
        check_env_keys(cfg, self.config, "PettingZooEnv config")
        super().__init__(cfg)
        if env is None and not self._cfg.env_id:
            raise ConfigError("PettingZooEnv needs a PettingZoo parallel env instance or cfg.env_id, got neither")
        if env is not None:
            _check_parallel(env)
        self._user_env = env
        self._env: Any = None
        self._needs_reset = True

    # ---- construction --------------------------------------------------

    @property
    def env(self) -> Any:
        """The wrapped PettingZoo parallel env (built on first use)."""
        if self._env is None:
            self._env = self._user_env if self._user_env is not None else self._build_env()
            self._read_spaces()
        return self._env

    def _build_env(self) -> Any:
        try:
            module = importlib.import_module(self._cfg.env_id)
        except ImportError as error:
            raise ConfigError(
                f"PettingZooEnv env_id {self._cfg.env_id!r} cannot be imported ({error}); "
                "for MPE install the pettingzoo extra: pip install 'ding-env[pettingzoo]'"
            ) from error
        if not hasattr(module, "parallel_env"):
            raise ConfigError(f"PettingZooEnv env_id {self._cfg.env_id!r}: the module has no parallel_env()")
        env = module.parallel_env(**dict(self._cfg.env_kwargs or {}))
        _check_parallel(env)
        return env

    def _read_spaces(self) -> None:
        env = self._env
        self._agents = list(env.possible_agents)
        raw_obs_spaces = [env.observation_space(agent) for agent in self._agents]
        # Envs with action masks observe {"observation": ..., "action_mask": ...} per agent.
        self._masked = all(_has_mask(space) for space in raw_obs_spaces)
        agent_spaces = [space["observation"] if self._masked else space for space in raw_obs_spaces]
        self._agent_obs_space = _one_space(agent_spaces, "observation", self._agents)
        action_space = _one_space([env.action_space(agent) for agent in self._agents], "action", self._agents)
        self._agent_action_space = action_space
        n = len(self._agents)
        agent_state = _stacked_box(self._agent_obs_space, n)
        global_state = self._global_state_space(agent_state)
        if self._cfg.agent_specific_global_state:
            width = int(np.prod(self._agent_obs_space.shape)) + int(np.prod(global_state.shape))
            global_state = gym.spaces.Box(-np.inf, np.inf, (n, width), np.float32)
        if isinstance(action_space, gym.spaces.Discrete):
            self._action_space = gym.spaces.MultiDiscrete(
                np.full(n, action_space.n), dtype=np.int64, start=np.full(n, action_space.start)
            )
            mask_width = int(action_space.n)
        elif isinstance(action_space, gym.spaces.Box):
            self._action_space = _stacked_box(action_space, n)
            mask_width = int(np.prod(action_space.shape))
        else:
            raise TypeError(f"{self!r}: agents' action space {action_space} is not supported; expected Discrete or Box")
        self._mask_shape = (n, mask_width)
        self._agent_state_space = agent_state
        if self._cfg.agent_obs_only:
            self._observation_space = agent_state
        else:
            self._observation_space = gym.spaces.Dict(
                {
                    "agent_state": agent_state,
                    "global_state": global_state,
                    "action_mask": gym.spaces.Box(0.0, 1.0, self._mask_shape, np.float32),
                }
            )
        self._reward_space = gym.spaces.Box(-np.inf, np.inf, (n,), np.float32)

    # ---- BaseEnv -------------------------------------------------------

    def reset(self) -> dict[str, np.ndarray]:
        """Start an episode, seeding the env only when a new seed is due."""
        env = self.env
        episode_seed = self._next_episode_seed()
        observations, _ = env.reset() if episode_seed is None else env.reset(seed=episode_seed)
        n = len(self._agents)
        self._agent_state = np.zeros(self._agent_state_space.shape, np.float32)
        self._mask = np.zeros(self._mask_shape, np.float32)
        self._active = np.ones(n, dtype=bool)
        self._ended_by_truncation = np.zeros(n, dtype=bool)
        self._episode_return = 0.0
        self._needs_reset = False
        return self._observe(observations)

    def step(self, action: Any) -> BaseEnvTimestep:
        """Apply one action per agent (row ``i`` for ``possible_agents[i]``) and return the timestep."""
        obs, reward, done, _, info = self._step_fields(action)
        return BaseEnvTimestep(obs, reward, done, info)

    def _step_fields(self, action: Any) -> StepFields:
        # The step as plain fields, the reward a (n_agents,) float32 array: the managers' fast path
        # (see hosted_env.stepper_of).
        if self._needs_reset:
            raise EnvStateError(f"{self!r}: step() called before reset() or after the episode ended")
        action = np.asarray(action)
        if len(action) != len(self._agents):
            raise ValueError(f"{self!r}: expected one action per agent ({len(self._agents)}), got shape {action.shape}")
        live = [agent for agent, active in zip(self._agents, self._active, strict=True) if active]
        index = {agent: i for i, agent in enumerate(self._agents)}
        actions = {agent: _agent_action(action[index[agent]], self._agent_action_space) for agent in live}
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        reward = self._reward(rewards, index)
        self._episode_return += float(reward.sum())
        for agent in live:
            if terminations.get(agent, False) or truncations.get(agent, False):
                self._active[index[agent]] = False
                self._ended_by_truncation[index[agent]] = not terminations.get(agent, False)
        obs = self._observe(observations)
        info = {"agent_info": infos} if any(infos.values()) else {}
        if self._active.any():
            return (obs, reward, False, False, info)
        self._needs_reset = True
        truncated = bool(self._ended_by_truncation.all())
        return (obs, reward, True, truncated, final_info(info, self._episode_return, truncated))

    def _reward(self, rewards: dict[str, float], index: dict[str, int]) -> np.ndarray:
        """The step's reward from the env's rewards by agent: one float32 per agent (0 for one that has left).

        A subclass with a reward of its own (a team reward, as DI-engine's simple_spread) overrides this and
        ``reward_space``.
        """
        reward = np.zeros(len(self._agents), np.float32)
        for agent, value in rewards.items():
            reward[index[agent]] = value
        return reward

    def close(self) -> None:
        """Close the PettingZoo env if it was built; safe to call twice."""
        if self._env is not None:
            self._env.close()
            if self._user_env is None:
                self._env = None
        self._needs_reset = True

    def render(self) -> Any:
        """The PettingZoo env's ``render()``."""
        return self.env.render()

    def __repr__(self) -> str:
        name = self._cfg.env_id or type(getattr(self._user_env, "unwrapped", self._user_env)).__name__
        return f"PettingZooEnv({name})"

    @property
    def agents(self) -> list[str]:
        """The agents' names, in the order of the observation's and action's rows."""
        self.env  # noqa: B018 - builds the env and reads its agents
        return list(self._agents)

    @property
    def observation_space(self) -> gym.spaces.Space:
        """``Dict(agent_state=(n, *obs), global_state, action_mask=(n, n_actions))``, or agent_state's alone."""
        self.env  # noqa: B018 - builds the env and its spaces
        return self._observation_space

    @property
    def action_space(self) -> gym.spaces.Space:
        """One action per agent: ``MultiDiscrete`` for Discrete agents, a stacked ``Box`` for Box agents."""
        self.env  # noqa: B018 - builds the env and its spaces
        return self._action_space

    @property
    def reward_space(self) -> gym.spaces.Box:
        """``Box(-inf, inf, (n_agents,), float32)``."""
        self.env  # noqa: B018 - builds the env and its spaces
        return self._reward_space

    # ---- observation ---------------------------------------------------

    def _observe(self, observations: dict[str, Any]) -> dict[str, np.ndarray]:
        for i, agent in enumerate(self._agents):
            if agent not in observations:  # a done agent keeps its last observation and a zero mask
                self._mask[i] = 0.0
                continue
            agent_obs = observations[agent]
            if self._masked:
                self._mask[i] = np.asarray(agent_obs["action_mask"], np.float32).reshape(-1)
                agent_obs = agent_obs["observation"]
            else:
                self._mask[i] = 1.0
            self._agent_state[i] = agent_obs
        if self._cfg.agent_obs_only:
            return self._agent_state.copy()
        global_state = np.asarray(self._global_state(self._agent_state), np.float32)
        if self._cfg.agent_specific_global_state:
            rows = self._agent_state.reshape(len(self._agents), -1)
            global_state = np.concatenate(
                [rows, np.broadcast_to(global_state.reshape(-1), (len(rows), global_state.size))], 1
            )
        # In the observation space's key order, which the managers keep.
        return {"action_mask": self._mask.copy(), "agent_state": self._agent_state.copy(), "global_state": global_state}

    def _global_state_space(self, agent_state: gym.spaces.Box) -> gym.spaces.Box:
        """The global state's space: the env's ``state_space``, or the agents' observations concatenated.

        A subclass with a global state of its own overrides this and :meth:`_global_state`.
        """
        state_space = getattr(self._env, "state_space", None)
        self._state_from_env = isinstance(state_space, gym.spaces.Box) and callable(getattr(self._env, "state", None))
        if self._state_from_env:
            return convention_space(state_space)
        return gym.spaces.Box(-np.inf, np.inf, (int(np.prod(agent_state.shape)),), np.float32)

    def _global_state(self, agent_state: np.ndarray) -> np.ndarray:
        """The global state now: the env's ``state()``, or the agents' observations concatenated."""
        return self._env.state() if self._state_from_env else agent_state.reshape(-1).copy()


def _check_parallel(env: Any) -> None:
    if is_parallel_env(env):
        return
    if is_pettingzoo_env(env):
        raise TypeError(
            f"PettingZooEnv takes a PettingZoo parallel env, got the AEC env {type(env).__name__}; "
            "build it with the game's parallel_env() or convert it with pettingzoo.utils.aec_to_parallel"
        )
    raise TypeError(f"PettingZooEnv takes a PettingZoo parallel env, got {type(env).__name__}")


def _has_mask(space: gym.spaces.Space) -> bool:
    return isinstance(space, gym.spaces.Dict) and set(space.spaces) == {"observation", "action_mask"}


def _one_space(spaces: list[gym.spaces.Space], what: str, agents: list[str]) -> gym.spaces.Space:
    """The agents' common space; agents of different spaces cannot be stacked into one array."""
    first = spaces[0]
    for agent, space in zip(agents, spaces, strict=True):
        if space != first:
            raise TypeError(
                f"PettingZooEnv stacks the agents' {what}s, so every agent needs the same {what} space: "
                f"{agents[0]} has {first}, {agent} has {space} (pad them, e.g. with SuperSuit's pad_{what}s_v0)"
            )
    return first


def _stacked_box(space: gym.spaces.Space, n: int) -> gym.spaces.Box:
    if not isinstance(space, gym.spaces.Box):
        raise TypeError(f"PettingZooEnv stacks Box spaces per agent, got {space}")
    space = convention_space(space)
    low = np.broadcast_to(space.low, (n, *space.shape))
    high = np.broadcast_to(space.high, (n, *space.shape))
    return gym.spaces.Box(low, high, (n, *space.shape), space.dtype)


def _agent_action(action: np.ndarray, space: gym.spaces.Space) -> Any:
    if isinstance(space, gym.spaces.Discrete):
        return int(action)
    return np.asarray(action, dtype=space.dtype)
