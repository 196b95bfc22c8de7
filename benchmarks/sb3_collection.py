"""SB3's PPO collecting CartPole x8 through our SB3 adapter, SB3's SubprocVecEnv and its DummyVecEnv.

Collection is what ``PPO.learn`` does between updates: the policy's forward pass and a step of
every env, for ``n_steps`` steps. A callback times each rollout (SB3's ``on_rollout_start`` to
``on_rollout_end``), so the updates in between are not counted. Each executor is one VecEnv
kept for the whole run; the rounds interleave them (odd rounds in reverse order) and each
executor's median round counts. torch runs on one thread, leaving the other core to env workers.
Imported by bench_env_manager.py only when this row is selected (it needs SB3 and torch).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial

import gymnasium as gym
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
from timing import round_spread

from ding_env import DingEnvWrapper, create_env_manager
from ding_env.sb3 import ManagerVecEnv

ENV_NUM = 8
N_STEPS = 256  # per env and rollout: 2,048 transitions


class RolloutTimer(BaseCallback):
    """An SB3 callback summing the seconds and env steps of the rollouts it sees."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds, self.steps, self._start = 0.0, 0, 0.0

    def _on_rollout_start(self) -> None:
        self._start = time.perf_counter()

    def _on_rollout_end(self) -> None:
        self.seconds += time.perf_counter() - self._start
        self.steps += N_STEPS * ENV_NUM

    def _on_step(self) -> bool:
        return True


def vec_envs() -> dict[str, Callable]:
    """The executors: name -> a function building the VecEnv."""
    gym_fns = [partial(gym.make, "CartPole-v1")] * ENV_NUM
    ding_fns = [partial(DingEnvWrapper, cfg={"env_id": "CartPole-v1"})] * ENV_NUM
    return {
        "ding_env.sb3 over subprocess (batched)": lambda: ManagerVecEnv(
            create_env_manager({"type": "subprocess"}, ding_fns)
        ),
        "ding_env.sb3 over base": lambda: ManagerVecEnv(create_env_manager({"type": "base"}, ding_fns)),
        "SB3 SubprocVecEnv": lambda: SubprocVecEnv(gym_fns),
        "SB3 DummyVecEnv": lambda: DummyVecEnv(gym_fns),
    }


def run(seconds: float, rounds: int) -> dict[str, list[float]]:
    """Collected env steps per second of every executor, one rate per round."""
    torch.set_num_threads(1)
    builders = vec_envs()
    models = {}
    for name, build in builders.items():
        # One update per rollout (a single full-batch epoch): the run is mostly collection.
        models[name] = PPO(
            "MlpPolicy", build(), n_steps=N_STEPS, batch_size=N_STEPS * ENV_NUM, n_epochs=1, seed=0, device="cpu"
        )
        # A logger of no outputs: learn() would otherwise make one that leaves an empty /tmp/SB3-<time> folder per call.
        models[name].set_logger(Logger(None, []))
    rates: dict[str, list[float]] = {name: [] for name in models}
    names = list(models)
    rollouts = max(1, round(seconds * 10))  # about 0.1 s per rollout of 2,048 steps on the slowest executor
    try:
        for index in range(rounds):
            for name in names if index % 2 == 0 else reversed(names):
                timer = RolloutTimer()
                models[name].learn(rollouts * N_STEPS * ENV_NUM, callback=timer, reset_num_timesteps=False)
                rates[name].append(timer.steps / timer.seconds)
                print(f"  round {index + 1}/{rounds}  {name:<48} {rates[name][-1]:>10.0f} steps/s", flush=True)
    finally:
        for model in models.values():
            model.get_env().close()
    return rates


def print_table(rounds_of: dict[str, list[float]]) -> dict[str, float]:
    """The median rates, with ratios to SB3's two VecEnvs; returns the medians."""
    rates = {name: statistics.median(values) for name, values in rounds_of.items()}
    subproc, dummy = rates["SB3 SubprocVecEnv"], rates["SB3 DummyVecEnv"]
    print(f"\n  {'executor':<48} {'steps/s':>10} {'x Subproc':>10} {'x Dummy':>8} {'rounds':>13}")
    for name, rate in rates.items():
        spread = round_spread(rounds_of[name], rate)
        print(f"  {name:<48} {rate:>10.0f} {rate / subproc:>10.2f} {rate / dummy:>8.2f} {spread:>13}")
    return rates
