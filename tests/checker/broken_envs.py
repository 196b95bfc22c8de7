"""A gallery of envs, each breaking the contract in one way, and the good env they derive from."""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env import BaseEnv, BaseEnvTimestep
from ding_env.env.timestep import termination, transition, truncation


class GoodEnv(BaseEnv):
    """A random walk on [-5, 5]: terminates at the edges, truncates after ``max_episode_steps``."""

    config: ClassVar[dict] = dict(max_episode_steps=30)

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        self._pos = np.zeros(2, dtype=np.float32)
        self._t = 0
        self._return = 0.0

    def reset(self) -> np.ndarray:
        self._next_episode_seed()
        self._init_flag = True
        self._pos = self.rng().uniform(-1, 1, size=2).astype(np.float32)
        self._t, self._return = 0, 0.0
        return self.make_obs()

    def rng(self) -> np.random.Generator:
        return self.np_random

    def make_obs(self) -> np.ndarray:
        return self._pos.copy()

    def step(self, action: Any) -> BaseEnvTimestep:
        self._t += 1
        self._pos = np.clip(self._pos + (float(action) - 0.5) + self.rng().normal(0, 0.3, 2), -5, 5).astype(np.float32)
        reward = float(-np.abs(self._pos).sum())
        self._return += reward
        if np.any(np.abs(self._pos) >= 5):
            return termination(self.make_obs(), reward, self._return)
        if self._t >= self._cfg.max_episode_steps:
            return truncation(self.make_obs(), reward, self._return)
        return transition(self.make_obs(), reward)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return type(self).__name__ + "()"

    @property
    def observation_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-5.0, 5.0, (2,), np.float32)

    @property
    def action_space(self) -> gym.spaces.Space:
        return gym.spaces.Discrete(2)

    @property
    def reward_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)


class Float64ObsEnv(GoodEnv):
    def make_obs(self):
        return self._pos.astype(np.float64)


class Float64SpaceEnv(GoodEnv):
    @property
    def observation_space(self):
        return gym.spaces.Box(-5.0, 5.0, (2,), np.float64)

    def make_obs(self):
        return self._pos.astype(np.float64)


class OutOfBoundsObsEnv(GoodEnv):
    def make_obs(self):
        return (self._pos * 10).astype(np.float32)


class ZeroDimRewardEnv(GoodEnv):
    def step(self, action):
        timestep = super().step(action)
        return timestep._replace(reward=np.float32(timestep.reward[0]))


class NumpyBoolDoneEnv(GoodEnv):
    def step(self, action):
        timestep = super().step(action)
        return timestep._replace(done=np.bool_(timestep.done))


class MissingReturnEnv(GoodEnv):
    def step(self, action):
        timestep = super().step(action)
        timestep.info.pop("eval_episode_return", None)
        return timestep


class PlainTupleStepEnv(GoodEnv):
    def step(self, action):
        return tuple(super().step(action))  # (obs, reward, done, info) by position


class ListInfoEnv(GoodEnv):
    def step(self, action):
        return super().step(action)._replace(info=[("moves", 1)])


class PerPlayerInfoEnv(GoodEnv):
    """Returns one info per player, as DI-engine's two-player battle envs do."""

    def step(self, action):
        timestep = super().step(action)
        return timestep._replace(info=(timestep.info, dict(timestep.info)))


class ListObsEnv(GoodEnv):
    def make_obs(self):
        return self._pos.tolist()


class SpacelessEnv(GoodEnv):
    """Spaces that stay None, as DI-engine's league demo GameEnv has them."""

    observation_space = action_space = reward_space = None


class WritesReturnedObsEnv(GoodEnv):
    def make_obs(self):
        if hasattr(self, "_last"):
            self._last[:] = 0  # in bounds: only a comparison with what was returned tells
        self._last = self._pos.copy()
        return self._last


class GoesOnAfterACutEnv(GoodEnv):
    """A reset after an episode that did not end goes on with it, as Atari's episodic life does (a good env)."""

    def reset(self):
        if getattr(self, "_running", False):
            return self.make_obs()
        self._running = True
        return super().reset()

    def step(self, action):
        timestep = super().step(action)
        self._running = not timestep.done
        return timestep


class SharedBufferEnv(GoodEnv):
    def make_obs(self):
        buffer = self.__dict__.setdefault("_buffer", np.zeros(2, dtype=np.float32))
        buffer[:] = self._pos
        return buffer


class UnseededRngEnv(GoodEnv):
    def rng(self):
        return np.random.default_rng()


class GlobalSeedEnv(GoodEnv):
    def seed(self, seed, dynamic_seed=True):
        super().seed(seed, dynamic_seed)
        np.random.seed(seed)


class CloseRaisesEnv(GoodEnv):
    def close(self):
        raise RuntimeError("boom in close")


class CloseRaisesAfterResetEnv(GoodEnv):
    def reset(self):
        self._was_reset = True
        return super().reset()

    def close(self):
        if getattr(self, "_was_reset", False):
            raise RuntimeError("boom in close after a reset")


class GlobalDrawEnv(GoodEnv):
    """DI-engine's envs' way: numpy's global RNG seeded once in seed(), drawn at each reset."""

    def seed(self, seed, dynamic_seed=True):
        super().seed(seed, dynamic_seed)
        np.random.seed(seed)

    def rng(self):
        return np.random


class GlobalSeedInResetEnv(GoodEnv):
    def reset(self):
        np.random.seed(123)  # a constant: the state is the same after every reset
        return super().reset()


class RandomActionNEnv(GoodEnv):
    def random_action(self):
        return np.int64(self.action_space.n)


class ConstantRandomActionEnv(GoodEnv):
    """Seeds its sampler again at every call, so every 'random' action is the same one."""

    def random_action(self):
        space = self.action_space
        space.seed(0)
        return space.sample()


class NeverEndsEnv(GoodEnv):
    config: ClassVar[dict] = dict(max_episode_steps=10**9)

    def step(self, action):
        self._t += 1
        return transition(self.make_obs(), 0.0)


class UnpicklableEnv(GoodEnv):
    def __init__(self, cfg=None):
        super().__init__(cfg)
        self._lock = threading.Lock()


class EagerEnv(GoodEnv):
    def __init__(self, cfg=None):
        super().__init__(cfg)
        self._init_flag = True


class TimeLimitAsTerminationEnv(GoodEnv):
    def step(self, action):
        timestep = super().step(action)
        if timestep.done:
            timestep.info["truncated"] = False
        return timestep


class RarelyAtItsTimeLimitEnv(GoodEnv):
    """Reports its time limit as a termination, and ends most episodes earlier (none of the first three)."""

    config: ClassVar[dict] = dict(max_episode_steps=20)

    def reset(self) -> np.ndarray:
        obs = super().reset()
        self._length = int(self.np_random.choice([12, self._cfg.max_episode_steps]))
        return obs

    def step(self, action):
        self._t += 1
        if self._t >= self._length:
            return termination(self.make_obs(), 0.0, 0.0)
        return transition(self.make_obs(), 0.0)


class RaisingResetEnv(GoodEnv):
    def reset(self):
        raise RuntimeError("simulator failed to start")


class DIEngineStyleEnv(GoodEnv):
    """What DI-engine's own envs do and the managers accept: a required cfg whose key its class config
    declares, spaces known only after the first reset, (1,) random actions, no info['truncated']."""

    def __init__(self, cfg: dict) -> None:
        super().__init__(cfg)
        self._limit = cfg["max_episode_steps"]
        self._known = False

    def reset(self) -> np.ndarray:
        self._known = True
        return super().reset()

    def step(self, action):
        timestep = super().step(np.asarray(action).reshape(()))
        info = {key: value for key, value in timestep.info.items() if key != "truncated"}
        return BaseEnvTimestep(timestep.obs, timestep.reward, timestep.done, info)

    def random_action(self) -> np.ndarray:
        return np.array([self.np_random.integers(2)], dtype=np.int64)

    observation_space = property(lambda self: GoodEnv.observation_space.fget(self) if self._known else None)
    action_space = property(lambda self: GoodEnv.action_space.fget(self) if self._known else None)
    reward_space = property(lambda self: GoodEnv.reward_space.fget(self) if self._known else None)


class ProcessDependentDIEngineEnv(DIEngineStyleEnv):
    """A DI-engine-style env whose observations depend on the process it runs in (a worker's or not)."""

    def make_obs(self) -> np.ndarray:
        shift = 1e-3 if multiprocessing.parent_process() is None else 2e-3
        return np.clip(self._pos + shift, -5, 5).astype(np.float32)


class ReadsUndeclaredKeyEnv(GoodEnv):
    """DI-engine's MiniGridEnv reads ``cfg.max_step``, which its class config lacks."""

    def __init__(self, cfg: dict) -> None:
        super().__init__(cfg)
        self._max_step = self._cfg.max_step


class IntReturnEnv(GoodEnv):
    """An int episode return on done, which every manager takes (the contract asks for a float)."""

    def step(self, action):
        timestep = super().step(action)
        if timestep.done:
            timestep.info["eval_episode_return"] = int(timestep.info["eval_episode_return"])
        return timestep


class GymTimeLimitEnv(GoodEnv):
    """Reports its time limit as gym did (info['TimeLimit.truncated']), which every manager reads as truncation."""

    def step(self, action):
        timestep = super().step(action)
        if timestep.done:
            truncated = timestep.info.pop("truncated")
            timestep.info["TimeLimit.truncated"] = truncated
        return timestep


class DictActionAssertingEnv(GoodEnv):
    """A Dict action space; its step takes the action as the managers hand it: a dict of arrays of the leaf dtypes."""

    def step(self, action):
        assert isinstance(action, dict) and action["move"].shape == () and action["move"].dtype == np.int64, action
        assert action["scale"].shape == (1,) and action["scale"].dtype == np.float32, action
        return super().step(float(action["move"]) * float(action["scale"][0]))

    @property
    def action_space(self) -> gym.spaces.Space:
        return gym.spaces.Dict({"move": gym.spaces.Discrete(2), "scale": gym.spaces.Box(0.0, 1.0, (1,), np.float32)})


class DropsDynamicSeedEnv(GoodEnv):
    """Ignores ``dynamic_seed``: every episode of a collector env is the same."""

    def seed(self, seed, dynamic_seed=True):
        super().seed(seed, dynamic_seed=False)


class ForcesDynamicSeedEnv(GoodEnv):
    """Ignores ``dynamic_seed``: an evaluator env never replays its episode."""

    def seed(self, seed, dynamic_seed=True):
        super().seed(seed, dynamic_seed=True)


class DeterministicEnv(GoodEnv):
    """A correct env with no randomness, whose ``seed()`` passes a constant ``dynamic_seed``: nothing to seed."""

    def seed(self, seed, dynamic_seed=True):
        super().seed(seed, dynamic_seed=False)

    def rng(self):
        # A generator of one fixed seed, made anew at every draw: the same numbers each time, whatever the seed.
        return np.random.default_rng(0)


class ForcesDynamicSeedCloseFailsEnv(GoodEnv):
    """Ignores ``dynamic_seed`` (evaluator envs never replay), and ``close()`` fails on an evaluator env never reset.

    Seeded as an evaluator env (``dynamic_seed=False``), it records a replay that ``reset()`` starts and
    ``close()`` saves, and there is none to save before the first reset.
    """

    def seed(self, seed, dynamic_seed=True):
        super().seed(seed, dynamic_seed=True)
        self._evaluating = not dynamic_seed
        self._replay = None

    def reset(self):
        self._replay = []
        return super().reset()

    def close(self):
        if getattr(self, "_evaluating", False):
            self._replay.clear()  # stands for saving it


class SeedWithoutDynamicSeedEnv(GoodEnv):
    """A ``seed()`` that does not take the ``dynamic_seed`` the managers pass."""

    def seed(self, seed):
        super().seed(seed)


class ReplaysBaseSeedEnv(GoodEnv):
    """Keeps ``dynamic_seed`` but starts every episode from the base seed, whatever the flag."""

    def reset(self):
        self._episode_rng = np.random.default_rng(self._seed)
        return super().reset()

    def rng(self):
        return self._episode_rng


class NanRewardEnv(GoodEnv):
    """A NaN reward at the third step of each episode (its reward space is unbounded)."""

    def step(self, action):
        timestep = super().step(action)
        return timestep._replace(reward=np.array([np.nan], dtype=np.float32)) if self._t == 3 else timestep


class BoundedNanRewardEnv(NanRewardEnv):
    @property
    def reward_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-10.0, 0.0, (1,), np.float32)


class NanObsEnv(GoodEnv):
    """A NaN in the observation of the third step of each episode."""

    def make_obs(self):
        obs = self._pos.copy()
        if self._t == 3:
            obs[0] = np.nan
        return obs


class WorkerDependentEnv(GoodEnv):
    """Mirrors its observations when stepped in a worker process: state that differs between processes."""

    def make_obs(self):
        return -self._pos if multiprocessing.parent_process() is not None else self._pos.copy()


class IgnoresItsTimeLimitEnv(GoodEnv):
    """Declares max_episode_steps and never truncates: a walk in a box too wide to leave."""

    config: ClassVar[dict] = dict(max_episode_steps=20)

    def step(self, action):
        self._t += 1
        return transition(self.make_obs(), 0.0)


class GymResetEnv(GoodEnv):
    """Returns Gymnasium's (obs, info) from reset()."""

    def reset(self):
        return super().reset(), {}


class RaisesInALibraryEnv(GoodEnv):
    """Its reset() calls a library that raises (json), as a ported env calls gym's removed seed()."""

    def reset(self):
        import json

        json.loads("{")  # the line a finding must point at
        return super().reset()


class TerminalOnLastStepEnv(GoodEnv):
    """Right as it is: its first episode reaches a terminal state on the last step its time limit allows.

    Its later episodes run to the limit and truncate (``truncate_later``), or end early (otherwise).
    """

    config: ClassVar[dict] = dict(GoodEnv.config, max_episode_steps=5, truncate_later=True)

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        self._episodes = 0

    def reset(self) -> np.ndarray:
        self._episodes += 1
        return super().reset()

    def step(self, action: Any) -> BaseEnvTimestep:
        self._t += 1
        obs, reward = self.make_obs(), 0.0
        if self._t == self._cfg.max_episode_steps and self._episodes == 1:
            return termination(obs, reward, self._return)  # the goal, reached on the last allowed step
        if self._t == self._cfg.max_episode_steps:
            return truncation(obs, reward, self._return)
        if self._t == 2 and self._episodes > 1 and not self._cfg.truncate_later:
            return termination(obs, reward, self._return)
        return transition(obs, reward)


class UnseededScalarObsEnv(GoodEnv):
    """Draws from an unseeded generator and shows it only in its observation, a numpy scalar of Discrete(11):
    its episodes last 10 steps and its rewards are 0 whatever it draws."""

    config: ClassVar[dict] = dict(max_episode_steps=10)

    def rng(self) -> np.random.Generator:
        return np.random.default_rng()

    def make_obs(self) -> np.int64:
        return np.int64(self.rng().integers(0, 11))

    def step(self, action: Any) -> BaseEnvTimestep:
        self._t += 1
        if self._t >= self._cfg.max_episode_steps:
            return truncation(self.make_obs(), 0.0, 0.0)
        return transition(self.make_obs(), 0.0)

    @property
    def observation_space(self) -> gym.spaces.Space:
        return gym.spaces.Discrete(11)


class NumpyBoolTruncatedEnv(GoodEnv):
    """Puts a numpy bool in ``info['truncated']`` (which the managers take by its truth value)."""

    def step(self, action: Any) -> BaseEnvTimestep:
        timestep = super().step(action)
        if timestep.done:
            timestep.info["truncated"] = np.bool_(timestep.info["truncated"])
        return timestep


class Float64RewardEnv(GoodEnv):
    def step(self, action: Any) -> BaseEnvTimestep:
        timestep = super().step(action)
        return timestep._replace(reward=timestep.reward.astype(np.float64))


class TeamRewardForAgentsEnv(GoodEnv):
    """Declares one reward per agent (3) and returns one team reward."""

    @property
    def reward_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)


class IgnoresSeedEnv(GoodEnv):
    """Overrides ``seed()`` without calling ``super().seed``: the seed reaches nothing."""

    def seed(self, seed, dynamic_seed=True):
        pass


class OwnSeedGlobalDrawEnv(GlobalDrawEnv):
    """Keeps its seed under a name of its own (no super().seed) and draws from numpy's global RNG at each reset."""

    def seed(self, seed, dynamic_seed=True):
        self._env_seed = seed
        np.random.seed(seed)
