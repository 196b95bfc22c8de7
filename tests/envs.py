"""Small envs the tests build managers from (top-level, so spawn workers can import them)."""

from __future__ import annotations

import ctypes
import math
import os
import signal
import threading
import time
from collections import namedtuple
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding_env import BaseEnv, BaseEnvTimestep, DingEnvWrapper
from ding_env.env.batch_env import BaseBatchEnv, BatchStep
from ding_env.env.timestep import termination, transition, truncation
from ding_env.env_manager.arrays import stack
from tests.trajectories import tree_copy


def cartpole_fn() -> DingEnvWrapper:
    return DingEnvWrapper(cfg={"env_id": "CartPole-v1"})


def pendulum_fn() -> DingEnvWrapper:
    return DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})


class CountingEnv(BaseEnv):
    """A deterministic-but-seeded env: obs is (step, random draw); ends after ``length`` steps.

    ``length`` is drawn per episode from ``np_random`` (3..7), so seeding is visible
    in episode lengths; ``limit`` truncates. A Dict observation is used with ``nested``.
    """

    config: ClassVar[dict] = dict(
        limit=100,
        nested=False,
        fail_reset_times=0,
        fail_reset_at=0,
        fail_step_at=-1,
        step_sleep=0.0,
        obs_dtype="float32",
    )

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        box = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
        if self._cfg.nested:
            self._obs_space = gym.spaces.Dict(
                {"vec": box, "count": gym.spaces.Discrete(1000), "pair": gym.spaces.Tuple((box, box))}
            )
        else:
            self._obs_space = box
        self._resets_failed = 0
        self._resets = 0
        self._t = 0
        self._length = 0
        self._return = 0.0

    def reset(self, offset: float = 0.0) -> Any:
        self._resets += 1
        if self._resets_failed < self._cfg.fail_reset_times:
            self._resets_failed += 1
            raise RuntimeError(f"reset failure {self._resets_failed}")
        if self._resets == self._cfg.fail_reset_at:
            raise RuntimeError(f"reset {self._resets} fails")
        self._next_episode_seed()
        self._t, self._return = 0, 0.0
        self._length = int(self.np_random.integers(3, 8))
        self._offset = offset
        return self._obs()

    def _obs(self) -> Any:
        vec = np.array([self._t + self._offset, self.np_random.random()], dtype=self._cfg.obs_dtype)
        if not self._cfg.nested:
            return vec
        return {"vec": vec, "count": np.int64(self._t), "pair": (vec.copy(), -vec)}

    def step(self, action: Any) -> BaseEnvTimestep:
        if self._cfg.step_sleep:
            time.sleep(self._cfg.step_sleep)
        if self._t == self._cfg.fail_step_at:
            raise ValueError("step failure")
        self._t += 1
        reward = float(action) + self._t
        self._return += reward
        if self._t >= self._length:
            return termination(self._obs(), reward, self._return)
        if self._t >= self._cfg.limit:
            return truncation(self._obs(), reward, self._return)
        return transition(self._obs(), reward)

    @property
    def episode_length(self) -> int:
        return self._length

    def current_step(self) -> int:
        return self._t

    def imported(self, module: str) -> bool:
        import sys

        return module in sys.modules

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return "CountingEnv()"

    @property
    def observation_space(self) -> gym.spaces.Space:
        return self._obs_space

    @property
    def action_space(self) -> gym.spaces.Space:
        return gym.spaces.Discrete(3)

    @property
    def reward_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)


class DictActionEnv(CountingEnv):
    """A CountingEnv steered by a Dict action: its reward adds ``push * scale``."""

    def step(self, action: Any) -> BaseEnvTimestep:
        self.action_types = (type(action["push"]).__name__, type(action["scale"]).__name__, action["scale"].dtype.name)
        return super().step(float(action["push"]) * float(action["scale"][0]))

    @property
    def action_space(self) -> gym.spaces.Space:
        return gym.spaces.Dict({"push": gym.spaces.Discrete(3), "scale": gym.spaces.Box(0.0, 2.0, (1,), np.float32)})


class TupleActionEnv(CountingEnv):
    """A CountingEnv steered by a Tuple action ``(push, scale)``: its reward adds ``push * scale``."""

    def step(self, action: Any) -> BaseEnvTimestep:
        return super().step(float(action[0]) * float(action[1][0]))

    @property
    def action_space(self) -> gym.spaces.Space:
        return gym.spaces.Tuple((gym.spaces.Discrete(3), gym.spaces.Box(0.0, 2.0, (1,), np.float32)))


class FigureEnv(CountingEnv):
    """A CountingEnv with DI-engine's optional per-env methods: render, reward_shaping, enable_save_figure."""

    figure_path = None

    def render(self) -> np.ndarray:
        return np.full((2, 3, 3), self._t, dtype=np.uint8)

    def reward_shaping(self, transitions: list[dict]) -> list[dict]:
        return [dict(transition, reward=transition["reward"] * 2) for transition in transitions]

    def enable_save_figure(self, figure_path: str) -> None:
        self.figure_path = figure_path


class InfoEnv(CountingEnv):
    """A CountingEnv whose infos change form over time, as real envs' do.

    Most steps carry the same numeric keys (float, int, bool); some add a key,
    hold a string, an int too large for float64 or a NaN; done steps add
    ``truncated``/``eval_episode_return``.
    """

    def step(self, action: Any) -> BaseEnvTimestep:
        timestep = super().step(action)
        t = self._t
        info = dict(timestep.info, x=float(t) / 3, frame=t * 4, alive=t % 2 == 0)
        if t % 5 == 0:
            info["extra"] = -0.0
        if t % 7 == 0:
            info["frame"] = 2**60 + t
        if t % 11 == 0:
            info["note"] = "text"
        if t % 13 == 0:
            info["x"] = float("nan")
        return timestep._replace(info=info)


def scripted_info(k: int) -> dict:
    """The info of a ``ScriptedInfoEnv``'s ``k``-th step: every kind of info a manager must carry exactly."""
    x = k / 3
    forms = [
        {"x": x, "n": -(2**53) + k, "flag": k % 2 == 0},  # one numeric form over three steps
        {"x": -x, "n": k, "flag": True},
        {"x": -0.0, "n": 2**53, "flag": False},
        {},  # nothing: the values of the step before must not linger
        {"x": math.inf, "n": k},  # fewer keys
        {"n": k, "x": x},  # the same keys in another order
        {"x": x, "n": float(k), "flag": False},  # a float where an int was
        {"n": 2**53 + 1},  # an int that float64 would round
        {"x": np.float32(x)},  # a numpy scalar, whose type must survive
        {1: x},  # a key that is not a string
        {f"k{i}": x + i for i in range(40)},  # many keys
        {"name": "pong", "x": x},  # a string
        {"x": math.nan, "flag": True},
        {"a": x},  # then more new forms in a row than a manager remembers
        {"b": k},
        {"c": True},
        {"d": x, "e": k},
        {"f": -x},
        {"x": x, "n": k, "flag": False},  # the first form again
    ]
    return forms[k % len(forms)]


class LockHoldingEnv(CountingEnv):
    """A CountingEnv holding a lock (which cannot be pickled) as ``lock``; ``make_lock()`` returns a new one.

    ``lock_in_info_at``: the step of its life whose info holds a lock too.
    """

    config: ClassVar[dict] = dict(CountingEnv.config, lock_in_info_at=-1)

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        self.lock = threading.Lock()
        self._life_steps = 0

    def make_lock(self) -> Any:
        return threading.Lock()

    def make_pointer(self) -> Any:
        # A simulator's handle: pickling it raises ValueError, where a lock's raises TypeError.
        return ctypes.pointer(ctypes.c_int(1))

    def step(self, action: Any) -> BaseEnvTimestep:
        timestep = super().step(action)
        self._life_steps += 1
        if self._life_steps == self._cfg.lock_in_info_at:
            return timestep._replace(info={**timestep.info, "handle": self.lock})
        return timestep


class CloseTracker:
    """Gymnasium envs made through ``make`` in this process, and which of them were closed."""

    def __init__(self) -> None:
        self.made: list[gym.Env] = []
        self.closed: list[gym.Env] = []

    def make(self, env_id: str = "CartPole-v1") -> gym.Env:
        return _Tracked(gym.make(env_id), self)

    def every_made_env_closed(self) -> bool:
        return bool(self.made) and sorted(map(id, self.closed)) == sorted(map(id, self.made))


class _Tracked(gym.Wrapper):
    """Records its close, and refuses to reset or step once closed (as many simulators do)."""

    def __init__(self, env: gym.Env, tracker: CloseTracker) -> None:
        super().__init__(env)
        self._tracker = tracker
        self._closed = False
        tracker.made.append(self)

    def reset(self, **kwargs: Any) -> Any:
        if self._closed:
            raise RuntimeError("reset after close")
        return super().reset(**kwargs)

    def step(self, action: Any) -> Any:
        if self._closed:
            raise RuntimeError("step after close")
        return super().step(action)

    def close(self) -> None:
        self._tracker.closed.append(self)
        self._closed = True
        super().close()


class ScriptedInfoEnv(CountingEnv):
    """A CountingEnv whose ``k``-th step of its life carries ``scripted_info(k + phase)`` (episode keys added)."""

    config: ClassVar[dict] = dict(CountingEnv.config, phase=0)

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        self._life_steps = 0

    def step(self, action: Any) -> BaseEnvTimestep:
        timestep = super().step(action)
        self._life_steps += 1
        return timestep._replace(info={**scripted_info(self._life_steps + self._cfg.phase), **timestep.info})


class DottedInfoEnv(CountingEnv):
    """A CountingEnv whose infos hold keys that are no Python identifiers, and strings, nested too."""

    def step(self, action: Any) -> BaseEnvTimestep:
        timestep = super().step(action)
        info = {"TimeLimit.truncated": True, "3d": 1.0, "error": "boom", "sub": {"a.b": 2, "why": "text"}}
        return timestep._replace(info={**info, **timestep.info})


class FaultEnv(CountingEnv):
    """CountingEnv that misbehaves at known steps of its life: raise, crash the process, or hang.

    ``crash_file``: a crash first writes this file, and resets fail while it exists (a replacement
    worker's envs cannot reset). ``hang_reset_at``: this env object's k-th reset hangs. ``reset_sleep``:
    every reset after this env object's first takes that many seconds. ``fail_seed``: ``seed`` raises.
    ``hang_holding_gil``: a hang of ``hang_every`` is a C call that keeps the GIL (no other thread of the
    process runs), as a stuck native simulator's may.
    """

    config: ClassVar[dict] = dict(
        CountingEnv.config,
        raise_every=0,
        crash_every=0,
        kill_every=0,
        hang_every=0,
        hang_holding_gil=False,
        fail_close=False,
        hang_close=False,
        crash_file="",
        hang_reset_at=0,
        reset_sleep=0.0,
        fail_seed=False,
    )

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        self._life_steps = 0
        self._life_resets = 0

    def seed(self, seed: Any, dynamic_seed: bool = True) -> None:
        if self._cfg.fail_seed:
            raise ValueError("injected seed failure")
        super().seed(seed, dynamic_seed)

    def reset(self, offset: float = 0.0) -> Any:
        self._life_resets += 1
        if self._cfg.hang_reset_at == self._life_resets:
            time.sleep(3600)
        if self._life_resets > 1:
            time.sleep(self._cfg.reset_sleep)
        if self._cfg.crash_file and os.path.exists(self._cfg.crash_file):
            raise RuntimeError("cannot reset after the crash")
        return super().reset(offset)

    def step(self, action: Any) -> BaseEnvTimestep:
        self._life_steps += 1
        cfg = self._cfg
        if cfg.raise_every and self._life_steps % cfg.raise_every == 0:
            raise RuntimeError(f"injected error at step {self._life_steps}")
        if cfg.crash_every and self._life_steps % cfg.crash_every == 0:
            if cfg.crash_file:
                with open(cfg.crash_file, "w"):
                    pass
            os._exit(3)
        if cfg.kill_every and self._life_steps % cfg.kill_every == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        if cfg.hang_every and self._life_steps % cfg.hang_every == 0:
            if cfg.hang_holding_gil:
                ctypes.PyDLL(None).sleep(3600)  # libc's sleep through PyDLL: the GIL stays held
            time.sleep(3600)
        return super().step(action)

    def close(self) -> None:
        if self._cfg.hang_close:
            time.sleep(3600)
        if self._cfg.fail_close:
            raise OSError(f"injected close failure after {self._life_steps} steps")
        super().close()


class KeyOrderEnv(CountingEnv):
    """A CountingEnv whose Dict observation comes in the order pos, goal, grid (the space sorts its keys)."""

    def _obs(self) -> Any:
        vec = super()._obs()
        return {"pos": vec, "goal": vec * 2, "grid": np.full((2, 2), self._t, np.int64)}

    @property
    def observation_space(self) -> gym.spaces.Space:
        box = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
        grid = gym.spaces.Box(0, 1000, (2, 2), np.int64)
        return gym.spaces.Dict({"pos": box, "goal": box, "grid": grid})


class ActionKindEnv(CountingEnv):
    """A CountingEnv that, as DI-engine's dizoo envs do, asserts its action is an ``np.ndarray``.

    ``space``: 'discrete', 'discrete_from_1' (``Discrete(3, start=1)``), 'box' (-1 to 1), 'box_per_dim'
    (-1 to 1, then 0 to 2), 'box_matrix' (-1 to 1, shape (2, 3)) or 'multi_discrete'. ``last_action`` is
    ``(type, dtype, shape)`` of the action it got last.
    """

    config: ClassVar[dict] = dict(CountingEnv.config, space="discrete")
    last_action = None

    def step(self, action: Any) -> BaseEnvTimestep:
        assert isinstance(action, np.ndarray), type(action)
        self.last_action = (type(action).__name__, action.dtype.name, action.shape)
        return super().step(float(np.sum(action)) % 3)

    @property
    def action_space(self) -> gym.spaces.Space:
        if self._cfg.space == "box":
            return gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        if self._cfg.space == "box_matrix":
            return gym.spaces.Box(-1.0, 1.0, (2, 3), np.float32)
        if self._cfg.space == "box_per_dim":
            return gym.spaces.Box(np.array([-1.0, 0.0], np.float32), np.array([1.0, 2.0], np.float32))
        if self._cfg.space == "multi_discrete":
            return gym.spaces.MultiDiscrete([3, 2])
        if self._cfg.space == "discrete_from_1":
            return gym.spaces.Discrete(3, start=1)
        return gym.spaces.Discrete(3)


class ShapedCartPole(DingEnvWrapper):
    """A DingEnvWrapper subclass with its own step(): managers must step through it."""

    def __init__(self) -> None:
        super().__init__(cfg={"env_id": "CartPole-v1"})

    def step(self, action: Any) -> BaseEnvTimestep:
        timestep = super().step(action)
        return timestep._replace(reward=timestep.reward * 10, info=dict(timestep.info, shaped=True))


class TenthsEnv(CountingEnv):
    """A CountingEnv whose rewards are tenths (not exact in float32), as a float or a float64 array."""

    config: ClassVar[dict] = dict(CountingEnv.config, reward_as_array=False)

    def step(self, action: Any) -> BaseEnvTimestep:
        timestep = super().step(action)
        reward = float(timestep.reward[0]) / 10 + 0.01  # action + step, exact in float32 before this
        return timestep._replace(reward=np.array([reward], np.float64) if self._cfg.reward_as_array else reward)


class Box:
    """Mimics gym<0.26's Box (spaces are recognised by class name) without importing gym."""

    def __init__(self, low, high, shape, dtype):
        self.low = np.full(shape, low, dtype=dtype)
        self.high = np.full(shape, high, dtype=dtype)
        self.shape, self.dtype = shape, np.dtype(dtype)


class Discrete:
    """Mimics gym<0.26's Discrete."""

    def __init__(self, n):
        self.n = n


DIEngineTimestep = namedtuple("DIEngineTimestep", ["obs", "reward", "done", "info"])


class DIEngineStyleEnv:
    """An env written for DI-engine itself: not our BaseEnv, gym's spaces, known only after
    the first reset, 4-field timesteps, and a time limit reported as gym's ``TimeLimit.truncated``."""

    def __init__(self, cfg: dict | None = None) -> None:
        self._rng = np.random.default_rng()
        self._seed, self._dynamic_seed = None, True

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        self._seed, self._dynamic_seed = seed, dynamic_seed
        self._rng = np.random.default_rng(seed)

    def reset(self) -> np.ndarray:
        if not hasattr(self, "_observation_space"):
            self._observation_space = Box(-10.0, 10.0, (2,), np.float32)
            self._action_space = Discrete(3)
            self._reward_space = Box(-np.inf, np.inf, (1,), np.float32)
        if self._seed is not None and not self._dynamic_seed:
            self._rng = np.random.default_rng(self._seed)
        self._t, self._limit = 0, int(self._rng.integers(3, 6))
        return self._rng.random(2).astype(np.float32)

    def step(self, action: Any) -> DIEngineTimestep:
        self._t += 1
        obs = (self._rng.random(2) + self._t).astype(np.float32)
        done = self._t >= self._limit
        info = {"TimeLimit.truncated": True, "eval_episode_return": float(self._t)} if done else {}
        return DIEngineTimestep(obs, np.array([float(action)], dtype=np.float32), done, info)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return "DIEngineStyleEnv()"

    @property
    def observation_space(self):
        return self._observation_space

    @property
    def action_space(self):
        return self._action_space

    @property
    def reward_space(self):
        return self._reward_space


class DIEngineGymSubclassEnv(gym.Env):
    """DI-engine's envs that subclass gym.Env (dizoo's Maze): DI-engine's seed(seed, dynamic_seed), and spaces that
    are instance attributes set by reset() (no reward_space on the class)."""

    def __init__(self, cfg: dict | None = None) -> None:
        self._env = DIEngineStyleEnv(cfg)

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        self._env.seed(seed, dynamic_seed)

    def reset(self) -> np.ndarray:
        obs = self._env.reset()
        self.observation_space, self.action_space = self._env.observation_space, self._env.action_space
        self.reward_space = self._env.reward_space
        return obs

    def step(self, action: Any) -> DIEngineTimestep:
        return self._env.step(action)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return "DIEngineGymSubclassEnv()"


def episode_observations(env: Any, actions: Any) -> list:
    """The reset observation and the observation of each step with ``actions``, until the episode ends."""
    observations = [env.reset()]
    for action in actions:
        timestep = env.step(action)
        observations.append(timestep.obs)
        if timestep.done:
            break
    return observations


class BaseEnvAsGymnasiumEnv(gym.Env):
    """One ding_env env behind gym.Env, seeded as the vectorised adapters seed it: their references' sub-env."""

    def __init__(self, env_fn):
        self.env = env_fn()
        self.observation_space = self.env.observation_space
        self.action_space = self.env.action_space

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.env.seed(seed, dynamic_seed=True)
        return self.env.reset(), {}

    def step(self, action):
        timestep = self.env.step(action)
        return timestep.obs, float(timestep.reward[0]), timestep.terminated, timestep.truncated, timestep.info


class ImageEnv(gym.Env):
    """A Gymnasium env of random uint8 images whose episodes last 5 steps."""

    observation_space = gym.spaces.Box(0, 255, (6, 5, 3), np.uint8)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        self.t += 1
        return self.observation_space.sample(), float(self.t) - 2.0, self.t >= 5, False, {}


class OwnGymMakeEnv(BaseEnv):
    """A DI-engine-style env that makes its own legacy gym 0.26 CartPole (passive env checker included)."""

    def __init__(self, cfg: dict | None = None) -> None:
        super().__init__(cfg)
        self._env = None

    def reset(self) -> np.ndarray:
        import warnings

        with warnings.catch_warnings():  # gym 0.26 warns about itself on import
            warnings.simplefilter("ignore")
            import gym

        if self._env is None:
            self._env = gym.make("CartPole-v1")  # the checker stays: disable_env_checker is not given
        obs, _ = self._env.reset(seed=self._next_episode_seed())
        return obs.astype(np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        obs, reward, terminated, truncated, _ = self._env.step(int(action))
        obs = obs.astype(np.float32)
        if terminated:
            return termination(obs, reward, 0.0)
        return truncation(obs, reward, 0.0) if truncated else transition(obs, reward)

    def close(self) -> None:
        if self._env is not None:
            self._env.close()

    def __repr__(self) -> str:
        return "OwnGymMakeEnv()"

    @property
    def observation_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)

    @property
    def action_space(self) -> gym.spaces.Space:
        return gym.spaces.Discrete(2)

    @property
    def reward_space(self) -> gym.spaces.Space:
        return gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)


class BatchOfEnvs(BaseBatchEnv):
    """The envs of ``env_fns`` (config) as one batch env: sub-env ``i`` is exactly ``env_fns[i]()``.

    Seeded as a manager seeds its envs (sub-env ``i`` gets its seed, with the same ``dynamic_seed``),
    handed its action row as its own numpy array, and reporting its infos and episode return, so a
    manager hosting it must give the trajectories of a manager hosting the envs themselves.
    ``last_action`` is ``(type, dtype, shape)`` of one row of the stacked actions it got last.
    """

    config: ClassVar[dict] = dict(num_envs=1, env_fns=[])
    last_action = None

    def __init__(self, cfg: dict | None = None) -> None:
        cfg = dict(cfg or {})
        if "env_fns" in cfg:
            cfg["num_envs"] = len(cfg["env_fns"])
        super().__init__(cfg)
        self._envs = self._build_envs()

    def _build_envs(self) -> list[BaseEnv]:
        return [env_fn() for env_fn in self._cfg.env_fns]

    def sub_env_steps(self) -> list[int]:
        """Each sub-env's step in its episode (its ``current_step()``)."""
        return [env.current_step() for env in self._envs]

    def seed(self, seed: Any, dynamic_seed: bool = True) -> None:
        super().seed(seed, dynamic_seed)
        for env, env_seed in zip(self._envs, self._seeds, strict=True):
            env.seed(env_seed, dynamic_seed=dynamic_seed)

    def _ids(self, env_ids: np.ndarray | None) -> list[int]:
        return list(range(self._num_envs)) if env_ids is None else env_ids.tolist()

    def _reset(self, env_ids: np.ndarray | None) -> Any:
        return stack([self._envs[index].reset() for index in self._ids(env_ids)])

    def _step(self, actions: Any, env_ids: np.ndarray | None) -> BatchStep:
        if isinstance(actions, np.ndarray):
            self.last_action = (type(actions).__name__, actions.dtype.name, actions.shape[1:])
        ids = self._ids(env_ids)
        steps = [self._envs[index].step(tree_copy(actions, row)) for row, index in enumerate(ids)]
        infos = [{key: value for key, value in step.info.items() if key not in FINAL_KEYS} for step in steps]
        if any(info.keys() != infos[0].keys() for info in infos):
            raise ValueError(f"{self!r} passes on only infos with the same keys in every row, got {infos}")
        info = {key: object_rows([row[key] for row in infos]) for key in infos[0]}
        terminated, truncated = [step.terminated for step in steps], [step.truncated for step in steps]
        record = self._transition(
            env_ids, stack([step.obs for step in steps]), [step.reward for step in steps], terminated, truncated, info
        )
        for row, step in enumerate(steps):  # the env's own return (a shaped reward may differ from what it sums)
            if step.done:
                record.episode_return[row] = step.info["eval_episode_return"]
        return record

    def _close(self) -> None:
        for env in self._envs:
            env.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_envs={self._num_envs})"

    @property
    def observation_space(self) -> gym.spaces.Space:
        return self._envs[0].observation_space

    @property
    def action_space(self) -> gym.spaces.Space:
        return self._envs[0].action_space

    @property
    def reward_space(self) -> gym.spaces.Space:
        return self._envs[0].reward_space


# Info keys a manager adds to a done step of a batch env itself.
FINAL_KEYS = ("truncated", "eval_episode_return")


def object_rows(values: list) -> np.ndarray:
    """``values`` as a 1-d object array, each value kept as it is."""
    rows = np.empty(len(values), dtype=object)
    for row, value in enumerate(values):  # one by one: numpy would unpack a list or tuple value
        rows[row] = value
    return rows


class CountingBatchEnv(BatchOfEnvs):
    """``num_envs`` CountingEnvs (config ``env_cfg``) as one batch env: sub-env ``i`` is exactly a CountingEnv."""

    config: ClassVar[dict] = dict(num_envs=2, env_cfg={})

    def _build_envs(self) -> list[BaseEnv]:
        return [CountingEnv(dict(self._cfg.env_cfg)) for _ in range(self._num_envs)]


class LockstepCountingBatchEnv(CountingBatchEnv):
    """``CountingBatchEnv`` that steps only all its sub-envs together, as a Gymnasium vector env."""

    lockstep = True


class TupleActionRecorder(gym.Env):
    """A Gymnasium env of ``Tuple(Discrete(3), Discrete(3))`` actions whose info holds the action it got;
    its episodes end after ``length`` steps."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Tuple((gym.spaces.Discrete(3), gym.spaces.Discrete(3)))

    def __init__(self, length: int) -> None:
        self.length, self.t = length, 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        got = tuple(int(part) for part in action)
        return np.zeros(1, np.float32), 0.0, self.t >= self.length, False, {"got": got}


class PricedItemsEnv(gym.Env):
    """A Gymnasium env whose reward looks its Dict action's Discrete item up in a dict (which needs a scalar)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Dict(
        {"item": gym.spaces.Discrete(2), "pair": gym.spaces.Tuple((gym.spaces.Discrete(3), gym.spaces.Discrete(3)))}
    )
    PRICES: ClassVar[dict[int, float]] = {0: 1.0, 1: 2.5}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        first, second = action["pair"]
        reward = self.PRICES[action["item"]] + {0: 0.0, 1: 0.1, 2: 0.2}[first] + {0: 0.0, 1: 0.01, 2: 0.02}[second]
        return np.zeros(1, np.float32), reward, False, False, {}


class NestedActionGymEnv(gym.Env):
    """A Gymnasium env whose action space nests a Discrete in a Tuple and a Dict: ``Tuple(Discrete(3), Dict(...))``."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Tuple(
        (gym.spaces.Discrete(3), gym.spaces.Dict({"turn": gym.spaces.Discrete(2), "push": gym.spaces.Box(-1, 1, (1,))}))
    )

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        assert self.action_space.contains(action), action
        return np.zeros(2, np.float32), float(action[0]), False, False, {}


def nested_action_env() -> DingEnvWrapper:
    """``NestedActionGymEnv`` behind ``DingEnvWrapper``."""
    return DingEnvWrapper(NestedActionGymEnv())


class SeedWithoutDynamicEnv(CountingEnv):
    """A seed() that takes no dynamic_seed, as envs written before DI-engine had it do."""

    def seed(self, seed: int) -> None:  # type: ignore[override]
        super().seed(seed)


class TextActionEnv(CountingEnv):
    """A Dict action of a Text command and a Discrete push: no array form, so the base manager's alone."""

    @property
    def action_space(self) -> gym.spaces.Space:
        return gym.spaces.Dict({"cmd": gym.spaces.Text(5), "push": gym.spaces.Discrete(3)})

    def step(self, action: Any) -> BaseEnvTimestep:
        assert isinstance(action["cmd"], str), action
        return super().step(int(action["push"]))
