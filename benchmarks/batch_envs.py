"""Batch envs in the managers: env steps per second, and each row's ratio to its baseline, in one run.

CartPole-v1 x64, against one Python loop over 64 Gymnasium envs (``gymnasium.make``, reset when done):

- ``base, 64 BaseEnvs``: ``BaseEnvManager`` over 64 ``DingEnvWrapper``s;
- ``base, 1 batch env of 64``: ``BaseEnvManager`` over one ``CartPoleBatchEnv(num_envs=64)``;
- ``subprocess, 2 batch envs of 32``: ``SyncSubprocessEnvManager`` (2 workers), one batch env each;
- ``CartPoleBatchEnv of 64 / of 32, stepped directly``: the batch env alone (its step, then a reset of the
  sub-envs that ended), no manager: the most the base row, and half the most the two-worker row (two
  workers stepping 32 each in parallel), could reach.

The managers are driven with the batched API (``ready_obs_batch`` / ``step_batch``, auto-reset on).

EnvPool x4 (Pong-v5 with DI-engine's Atari keys, HalfCheetah-v4), through the ``env_pool`` manager type
(DI-engine's dict interface, ``batch_size = env_num``), against raw EnvPool with the same settings
stepped in a loop (EnvPool resets finished envs itself); once with EnvPool's default threads, once
with its threads pinned to cores (``thread_affinity_offset=0``, through ``make_kwargs``). Two floor
rows step raw EnvPool with 20 us of busy caller work after each step (what a policy, or a manager
of any kind, adds): EnvPool's own step then slows too, which bounds what any layer above it reaches.

Pong x8 with ``batch_size`` 4, EnvPool's asynchronous mode: raw EnvPool (``recv`` four results, ``send``
their actions) against the ``env_pool`` type with the same settings (``step`` with an action for every
ready env returns the first four results to arrive, the other envs running meanwhile).

Every executor is built once; the rounds interleave them (each round times each executor for
``--seconds``), so a loaded machine slows them alike; the medians over the rounds are reported with
the load average::

    PYTHONPATH=$PWD python benchmarks/batch_envs.py --rounds 5 --seconds 2
    PYTHONPATH=$PWD python benchmarks/batch_envs.py --only Pong   # the Pong rows and their baselines
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from functools import partial

import gymnasium as gym
import numpy as np
from timing import round_spread, timed

from ding_env import BaseEnvManager, DingEnvWrapper, SyncSubprocessEnvManager
from ding_env.env_manager import create_env_manager
from dizoo.classic_control.cartpole.envs.cartpole_batch_env import CartPoleBatchEnv

CARTPOLE_ENVS = 64
POOL_ENVS = 4
ASYNC_POOL = (8, 4)  # env_num, batch_size of the asynchronous rows
PINNED = dict(thread_affinity_offset=0)  # EnvPool's threads pinned to cores 0, 1, ...
CALLER_WORK_US = 20  # the busy caller of the floor rows
# DI-engine's settings for Pong in its env_pool pipeline.
PONG = dict(episodic_life=True, reward_clip=True, gray_scale=True, stack_num=4, frame_skip=4)
ACTION_ROWS = 256  # precomputed action batches, cycled: every executor gets the same actions
# An executor: how to build its step function, and the name of its baseline (None: it is one).
Row = tuple[Callable[[], Callable[[int], int]], str | None]
OPENED: list = []  # managers and pools, closed at the end


def single_loop(count: int) -> Callable[[int], int]:
    """``count`` Gymnasium CartPole-v1 envs stepped one after another in a Python loop."""
    envs = [gym.make("CartPole-v1") for _ in range(count)]
    for env_id, env in enumerate(envs):
        env.reset(seed=env_id)
    actions = np.random.default_rng(0).integers(0, 2, (ACTION_ROWS, count))

    def step(i: int) -> int:
        row = actions[i % ACTION_ROWS]
        for env, action in zip(envs, row.tolist(), strict=True):
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        return count

    return step


def direct_batch_loop(count: int) -> Callable[[int], int]:
    """One ``CartPoleBatchEnv`` of ``count`` sub-envs stepped directly, the ended ones reset after each step."""
    env = CartPoleBatchEnv(dict(num_envs=count))
    OPENED.append(env)
    env.seed(list(range(count)), dynamic_seed=True)
    env.reset()
    actions = np.random.default_rng(0).integers(0, 2, (ACTION_ROWS, count))

    def step(i: int) -> int:
        record = env.step(actions[i % ACTION_ROWS])
        ended = np.flatnonzero(record.done)
        if len(ended):
            env.reset(ended)
        return count

    return step


def manager_loop(manager: BaseEnvManager) -> Callable[[int], int]:
    """A launched manager driven with the batched API, every env stepped each call."""
    OPENED.append(manager)
    manager.seed(0)
    manager.launch()
    actions = np.random.default_rng(0).integers(0, 2, (ACTION_ROWS, manager.env_num))

    def step(i: int) -> int:
        ready = manager.ready_obs_batch
        manager.step_batch(ready.env_id, actions[i % ACTION_ROWS][: len(ready.env_id)])
        return len(ready.env_id)

    return step


def pool_manager_loop(env_id: str, make_kwargs: dict | None = None, **keys) -> Callable[[int], int]:
    """The ``env_pool`` manager type, driven with DI-engine's dict interface."""
    cfg = dict(type="env_pool", env_id=env_id, env_num=POOL_ENVS, batch_size=POOL_ENVS, make_kwargs=make_kwargs or {})
    manager = create_env_manager(dict(cfg, **keys))
    OPENED.append(manager)
    manager.launch()
    actions = _pool_actions(manager.action_space)

    def step(i: int) -> int:
        row = actions[i % ACTION_ROWS]
        timesteps = manager.step({env_id: row[env_id] for env_id in manager.ready_obs})
        return len(timesteps)

    return step


def raw_pool_loop(env_id: str, caller_work_us: float = 0.0, **keys) -> Callable[[int], int]:
    """Raw EnvPool with the same settings, stepped in a loop; the caller busy ``caller_work_us`` after each step."""
    import envpool

    pool = envpool.make_gymnasium(env_id, num_envs=POOL_ENVS, batch_size=POOL_ENVS, seed=0, **keys)
    OPENED.append(pool)
    pool.reset()
    actions = _pool_actions(pool.action_space)
    work_seconds = caller_work_us * 1e-6

    def step(i: int) -> int:
        pool.step(actions[i % ACTION_ROWS])
        if work_seconds:
            busy_until = time.perf_counter() + work_seconds
            while time.perf_counter() < busy_until:  # busy, as a caller computing in Python is
                pass
        return POOL_ENVS

    return step


def async_manager_loop(env_id: str, **keys) -> Callable[[int], int]:
    """The ``env_pool`` type in EnvPool's asynchronous mode (``batch_size < env_num``), every ready env acting."""
    env_num, batch_size = ASYNC_POOL
    manager = create_env_manager(dict(type="env_pool", env_id=env_id, env_num=env_num, batch_size=batch_size, **keys))
    OPENED.append(manager)
    manager.launch()
    actions = _pool_actions(manager.action_space, env_num)

    def step(i: int) -> int:
        row = actions[i % ACTION_ROWS]
        return len(manager.step({env_id: row[env_id] for env_id in manager.ready_obs}))

    return step


def raw_async_pool_loop(env_id: str, **keys) -> Callable[[int], int]:
    """Raw EnvPool in its asynchronous mode: ``recv`` a batch, ``send`` its actions (EnvPool resets envs itself)."""
    import envpool

    env_num, batch_size = ASYNC_POOL
    pool = envpool.make_gymnasium(env_id, num_envs=env_num, batch_size=batch_size, seed=0, **keys)
    OPENED.append(pool)
    pool.async_reset()
    actions = _pool_actions(pool.action_space, batch_size)

    def step(i: int) -> int:
        info = pool.recv()[-1]
        pool.send(actions[i % ACTION_ROWS], info["env_id"])
        return batch_size

    return step


def _pool_actions(space: gym.spaces.Space, envs: int = POOL_ENVS) -> np.ndarray:
    rng = np.random.default_rng(0)
    if isinstance(space, gym.spaces.Discrete):
        return rng.integers(0, space.n, (ACTION_ROWS, envs))
    return rng.uniform(-1, 1, (ACTION_ROWS, envs, *space.shape)).astype(np.float32)


def executors() -> dict[str, Row]:
    """``{name: (build, baseline name)}``; a baseline has no baseline."""
    cartpole = partial(DingEnvWrapper, cfg=dict(env_id="CartPole-v1"))
    base_cfg = BaseEnvManager.default_config()
    sub_cfg = dict(SyncSubprocessEnvManager.default_config(), num_workers=2)
    loop = "CartPole x64: single loop"
    return {
        loop: (partial(single_loop, CARTPOLE_ENVS), None),
        "CartPole x64: base, 64 BaseEnvs": (
            lambda: manager_loop(BaseEnvManager([cartpole] * CARTPOLE_ENVS, base_cfg)),
            loop,
        ),
        "CartPole x64: base, 1 batch env of 64": (
            lambda: manager_loop(BaseEnvManager([partial(CartPoleBatchEnv, dict(num_envs=64))], base_cfg)),
            loop,
        ),
        "CartPole x64: subprocess (2 workers), 2 batch envs of 32": (
            lambda: manager_loop(SyncSubprocessEnvManager([partial(CartPoleBatchEnv, dict(num_envs=32))] * 2, sub_cfg)),
            loop,
        ),
        "CartPole x64: CartPoleBatchEnv of 64, stepped directly": (partial(direct_batch_loop, CARTPOLE_ENVS), loop),
        "CartPole x64: CartPoleBatchEnv of 32, stepped directly": (
            partial(direct_batch_loop, CARTPOLE_ENVS // 2),
            loop,
        ),
        **pool_rows("Pong x4", "Pong-v5", PONG),
        **pool_rows("HalfCheetah x4", "HalfCheetah-v4", {}),
        "Pong x8, batch_size 4: raw EnvPool (async)": (partial(raw_async_pool_loop, "Pong-v5", **PONG), None),
        "Pong x8, batch_size 4: env_pool manager (async)": (
            partial(async_manager_loop, "Pong-v5", **PONG),
            "Pong x8, batch_size 4: raw EnvPool (async)",
        ),
    }


def pool_rows(workload: str, env_id: str, keys: dict) -> dict[str, Row]:
    """Raw EnvPool and the ``env_pool`` type with EnvPool's default threads and pinned ones, and the floor row."""
    raw, pinned = f"{workload}: raw EnvPool", f"{workload}: raw EnvPool, threads pinned"
    return {
        raw: (partial(raw_pool_loop, env_id, **keys), None),
        f"{workload}: env_pool manager": (partial(pool_manager_loop, env_id, **keys), raw),
        f"{workload}: raw EnvPool, caller busy {CALLER_WORK_US} us per step": (
            partial(raw_pool_loop, env_id, CALLER_WORK_US, **keys),
            raw,
        ),
        pinned: (partial(raw_pool_loop, env_id, **keys, **PINNED), None),
        f"{workload}: env_pool manager, threads pinned": (
            partial(pool_manager_loop, env_id, make_kwargs=PINNED, **keys),
            pinned,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--only", default="", help="rows whose name contains this, with their baselines")
    args = parser.parse_args()
    table = executors()
    asked = {name for name in table if args.only in name}
    wanted = asked | {table[name][1] for name in asked}  # the rows asked for and their baselines
    table = {name: row for name, row in table.items() if name in wanted}
    rounds: dict[str, list[float]] = {name: [] for name in table}
    try:
        steps = {name: build() for name, (build, _) in table.items()}
        load_before = os.getloadavg()
        for _ in range(args.rounds):
            for name, step in steps.items():
                rounds[name].append(timed(step, args.seconds, min_steps=20))
        load_after = os.getloadavg()
    finally:
        for opened in OPENED:
            opened.close()
    print(f"load average (1, 5, 15 min): before {load_before}, after {load_after}; {os.cpu_count()} cores")
    print(f"{'executor':60s} {'env steps/s':>12s} {'rounds/median':>14s} {'ratio to baseline':>18s}")
    medians = {name: statistics.median(values) for name, values in rounds.items()}
    for name, (_, baseline) in table.items():
        ratio = f"{medians[name] / medians[baseline]:.2f}x" if baseline else "baseline"
        print(f"{name:60s} {medians[name]:12.0f} {round_spread(rounds[name], medians[name]):>14s} {ratio:>18s}")


if __name__ == "__main__":
    main()
