"""Benchmark workloads: Gymnasium envs (dependency-free ones too) and how to build them."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import gymnasium as gym
import numpy as np


class ZeroCostEnv(gym.Env):
    """An env whose step costs nothing: measures pure executor overhead."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, episode_length: int = 200) -> None:
        self.episode_length = episode_length
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode."""
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(4, dtype=np.float32), {}

    def step(self, action):
        """Count the step; the episode ends after ``episode_length`` steps."""
        self.t += 1
        return np.zeros(4, dtype=np.float32), 1.0, self.t >= self.episode_length, False, {}


class BusyEnv(ZeroCostEnv):
    """An env that burns ``busy_us`` microseconds of CPU per step (no sleeping)."""

    def __init__(self, busy_us: float = 100.0, episode_length: int = 200) -> None:
        super().__init__(episode_length)
        self.busy_s = busy_us * 1e-6

    def step(self, action):
        """Burn the CPU time, then step."""
        deadline = time.perf_counter() + self.busy_s
        while time.perf_counter() < deadline:
            pass
        return super().step(action)


# The zero-cost env under a Gymnasium id, so a server process can build it (benchmarks/zero_cost_env.py).
if "DingBench/ZeroCost-v0" not in gym.registry:
    gym.register("DingBench/ZeroCost-v0", entry_point=ZeroCostEnv)


def make_gym(env_id: str) -> gym.Env:
    """A raw Gymnasium env: registered ids, or 'busy' / 'zero' for the synthetic envs."""
    if env_id == "busy":
        return BusyEnv()
    if env_id == "zero":
        return ZeroCostEnv()
    return gym.make(env_id)


def make_ding(env_id: str):
    """The same env behind ding_env's ``DingEnvWrapper`` (raw observations, no preprocessing)."""
    from ding_env import DingEnvWrapper

    return DingEnvWrapper(make_gym(env_id), cfg={"env_wrapper": []})


def actions_for(space: gym.spaces.Space, env_num: int, count: int = 1024) -> np.ndarray:
    """A fixed cycle of batched random actions, the same for every executor (long enough not to trap a game)."""
    space.seed(0)
    return np.stack([np.stack([space.sample() for _ in range(env_num)]) for _ in range(count)])


@dataclass(frozen=True)
class Workload:
    """One benchmark row group: an env, how many copies, and a label."""

    label: str
    env_id: str
    env_num: int
    needs: str | None = None  # module that must be importable

    @property
    def installed(self) -> bool:
        """Whether the module this workload needs (if any) can be imported here."""
        return self.needs is None or importlib.util.find_spec(self.needs) is not None

    def actions(self) -> np.ndarray:
        """The fixed cycle of batched actions every executor steps this workload with (see ``actions_for``)."""
        probe = self.gym_fns()[0]()
        try:
            return actions_for(probe.action_space, self.env_num)
        finally:
            probe.close()

    def gym_fns(self) -> list[Callable[[], gym.Env]]:
        """Constructors of the raw Gymnasium envs."""
        return [partial(make_gym, self.env_id)] * self.env_num

    def ding_fns(self) -> list[Callable]:
        """Constructors of the same envs behind DingEnvWrapper."""
        return [partial(make_ding, self.env_id)] * self.env_num


WORKLOADS = [
    Workload("CartPole-v1 x8", "CartPole-v1", 8),
    Workload("busy 100us x8", "busy", 8),
    Workload("zero-cost x8", "zero", 8),
    Workload("ALE/Pong-v5 x4", "ale_py:ALE/Pong-v5", 4, needs="ale_py"),
    Workload("HalfCheetah-v5 x4", "HalfCheetah-v5", 4, needs="mujoco"),
]


def selected(label: str, only: str) -> bool:
    """Whether ``label`` contains one of the comma-separated substrings of ``only`` (every label if empty)."""
    wanted = [part.strip().lower() for part in only.split(",") if part.strip()]
    return not wanted or any(part in label.lower() for part in wanted)


def select(only: str) -> list[Workload]:
    """The workloads that ``only`` selects (see ``selected``)."""
    return [workload for workload in WORKLOADS if selected(workload.label, only)]
