"""Steps per second of env executors, side by side in one run.

Executors: a plain single-process loop over raw Gymnasium envs; Gymnasium's
SyncVectorEnv and AsyncVectorEnv; SB3's SubprocVecEnv, EnvPool, PufferLib 3's Serial and
Multiprocessing vector envs (see pufferlib_peer.py), and DI-engine's
Sync/AsyncSubprocessEnvManager (in DI-engine's own venv, see di_engine_peer.py)
when installed; ding_env's three managers through the dict API and the batched API.
Every executor steps the same envs with the same actions, and seeds them at most
once, so all do the same env work; one more row shows what per-episode seeding
(``manager.seed(0)``, as collectors use) adds. The "bound" row splits the raw envs
over one process per core that never communicate (see independent.py): no executor
with worker processes beats it on this machine. Every executor runs once per
round, the rounds interleaved; each executor's median round counts. Ratios are
to the single-process loop, to AsyncVectorEnv and to the bound of the same run.

One more row times SB3's PPO collecting CartPole x8 through ``ding_env.sb3`` against SB3's
own SubprocVecEnv and DummyVecEnv (see sb3_collection.py; ``--only sb3`` runs it alone).

Usage::

    python benchmarks/bench_env_manager.py [--seconds 1] [--rounds 3] [--quick] [--only cartpole,busy]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pufferlib_peer  # noqa: E402
from chart import plot  # noqa: E402
from independent import BOUND, bench_independent_processes  # noqa: E402
from timing import round_spread, time_vector, timed  # noqa: E402
from workloads import Workload, select, selected  # noqa: E402

from ding_env import create_env_manager  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
OUT_DIR = BENCH_DIR / "out"
# The row of SB3's PPO collection (sb3_collection.py), selected by --only like the workloads.
SB3_PPO_LABEL = "SB3 PPO collection, CartPole-v1 x8"
# DI-engine's own venv (see requirements-di-engine.txt); DI_ENGINE_PYTHON overrides it.
DI_ENGINE_PYTHON = BENCH_DIR.parent / ".venv-di-engine" / "bin" / "python"


def bench_single_loop(workload: Workload, actions: np.ndarray, seconds: float, min_steps: int) -> float:
    envs = [fn() for fn in workload.gym_fns()]
    for index, env in enumerate(envs):
        env.reset(seed=index)

    def step(i: int) -> int:
        batch = actions[i % len(actions)]
        for env, action in zip(envs, batch, strict=True):
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        return len(envs)

    try:
        return timed(step, seconds, min_steps)
    finally:
        for env in envs:
            env.close()


def bench_vector(make_envs: Callable, workload: Workload, actions: np.ndarray, seconds: float, min_steps: int):
    """A vectorised env with Gymnasium's or SB3's interface: ``reset()`` then ``step(batch)``."""
    return time_vector(make_envs(workload.gym_fns()), workload.env_num, actions, seconds, min_steps)


def sb3_subproc(env_fns: list) -> object:
    from stable_baselines3.common.vec_env import SubprocVecEnv

    return SubprocVecEnv(env_fns)


def bench_envpool(workload: Workload, actions: np.ndarray, seconds: float, min_steps: int) -> float:
    import envpool

    if workload.env_id not in ENVPOOL_TASKS:
        raise SkipExecutor("EnvPool has no equivalent of this env")
    task, kwargs = ENVPOOL_TASKS[workload.env_id]
    return time_vector(
        envpool.make_gymnasium(task, num_envs=workload.env_num, **kwargs), workload.env_num, actions, seconds, min_steps
    )


# EnvPool's closest task to each workload, with its preprocessing turned off for Pong (raw RGB frames).
ENVPOOL_TASKS = {
    "CartPole-v1": ("CartPole-v1", {}),
    "ale_py:ALE/Pong-v5": (
        "Pong-v5",
        dict(img_height=210, img_width=160, gray_scale=False, stack_num=1, episodic_life=False, reward_clip=False),
    ),
    "HalfCheetah-v5": ("HalfCheetah-v4", {}),
}


def bench_di_engine(kind: str, workload: Workload, actions: np.ndarray, seconds: float, min_steps: int) -> float:
    """DI-engine's ``kind`` ('sync' or 'async') subprocess manager, timed in its own venv.

    ``di_engine_peer.py`` rebuilds the same ``actions`` there (``Workload.actions`` is deterministic).
    """
    python = Path(os.environ.get("DI_ENGINE_PYTHON", DI_ENGINE_PYTHON))
    if not python.exists():
        raise SkipExecutor(f"no DI-engine venv at {python} (make .venv-di-engine/.installed builds it)")
    command = [str(python), str(BENCH_DIR / "di_engine_peer.py"), workload.label, kind, repr(seconds), str(min_steps)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"DI-engine's {kind} manager failed on {workload.label}:\n{result.stderr[-3000:]}")
    reply = json.loads(result.stdout.strip().splitlines()[-1])
    if "skip" in reply:
        raise SkipExecutor(reply["skip"])
    if "close_error" in reply:
        print(f"  note: DI-engine's {kind} manager raised on close: {reply['close_error']}")
    return reply["steps_per_second"]


class SkipExecutor(Exception):
    """An executor that cannot run this workload."""


def bench_ding(
    manager_type: str,
    batched: bool,
    workload: Workload,
    actions,
    seconds,
    min_steps,
    seed_episodes: bool = False,
    cfg: dict | None = None,
) -> float:
    """Steps per second of one of our managers (its default config, updated by ``cfg``).

    Like the other executors, the envs are not re-seeded when an episode ends, unless
    ``seed_episodes``: then ``seed(0)`` gives every episode its own seed, as collectors do, and
    each reset pays for it (a Gymnasium env builds a new generator, ALE reloads its ROM).
    """
    manager = create_env_manager({"type": manager_type, **(cfg or {})}, workload.ding_fns())
    if seed_episodes:
        manager.seed(0)
    manager.launch()

    def step_batched(i: int) -> int:
        ready = manager.ready_obs_batch
        manager.step_batch(ready.env_id, actions[i % len(actions)][ready.env_id])
        return len(ready.env_id)

    def step_dict(i: int) -> int:
        batch = actions[i % len(actions)]
        return len(manager.step({env_id: batch[env_id] for env_id in manager.ready_obs}))

    try:
        return timed(step_batched if batched else step_dict, seconds, min_steps)
    finally:
        manager.close()


def executors(workload: Workload) -> dict[str, Callable]:
    table: dict[str, Callable] = {
        "single-process loop": bench_single_loop,
        BOUND: bench_independent_processes,
        "gymnasium SyncVectorEnv": lambda *a: bench_vector(gym.vector.SyncVectorEnv, *a),
        "gymnasium AsyncVectorEnv": lambda *a: bench_vector(gym.vector.AsyncVectorEnv, *a),
    }
    if importlib.util.find_spec("stable_baselines3"):
        table["SB3 SubprocVecEnv"] = lambda *a: bench_vector(sb3_subproc, *a)
    if importlib.util.find_spec("envpool"):
        table["EnvPool"] = bench_envpool
    table.update(pufferlib_peer.executors())
    table["DI-engine SyncSubprocessEnvManager (dict)"] = partial(bench_di_engine, "sync")
    table["DI-engine AsyncSubprocessEnvManager (dict)"] = partial(bench_di_engine, "async")
    for manager_type in ("base", "subprocess", "async_subprocess"):
        for batched in (False, True):
            name = f"ding_env {manager_type} ({'batched' if batched else 'dict'})"
            table[name] = lambda *a, m=manager_type, b=batched: bench_ding(m, b, *a)
    # Batched results are the caller's own copies by default; views of the shared buffers cost nothing.
    for manager_type in ("subprocess", "async_subprocess"):
        table[f"ding_env {manager_type} (batched, copy_on_get=False)"] = lambda *a, m=manager_type: bench_ding(
            m, True, *a, cfg={"copy_on_get": False}
        )
    table["ding_env subprocess (batched, seed per episode)"] = lambda *a: bench_ding("subprocess", True, *a, True)
    for manager_type in ("subprocess", "async_subprocess"):
        table[f"ding_env {manager_type} (batched, cpu_affinity)"] = lambda *a, m=manager_type: bench_ding(
            m, True, *a, cfg={"cpu_affinity": True}
        )
    # Views of the shared rows, as PufferLib's executors hand back: the layout to set beside them.
    table["ding_env subprocess (batched, cpu_affinity, copy_on_get=False)"] = lambda *a: bench_ding(
        "subprocess", True, *a, cfg={"cpu_affinity": True, "copy_on_get": False}
    )
    # The calling process hosts one share of the envs and steps it while one worker steps the other:
    # two busy processes on two cores, like the bound row, instead of two workers and a waiting caller.
    table["ding_env subprocess (batched, caller_share)"] = lambda *a: bench_ding(
        "subprocess", True, *a, cfg={"caller_share": True, "num_workers": 1}
    )
    table["ding_env subprocess (batched, caller_share, copy_on_get=False)"] = lambda *a: bench_ding(
        "subprocess", True, *a, cfg={"caller_share": True, "num_workers": 1, "copy_on_get": False}
    )
    # EnvPool's async mode: each call returns one worker's envs while the other worker steps.
    table["ding_env async_subprocess (batched, wait_num=half)"] = lambda workload, *a: bench_ding(
        "async_subprocess", True, workload, *a, cfg={"wait_num": workload.env_num // 2}
    )
    return table


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=1.0, help="measured seconds per executor and round (default 1)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="rounds of every executor, interleaved; the median round counts (default 3)",
    )
    parser.add_argument("--quick", action="store_true", help="a few steps per executor: proves the script works")
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated substrings of the row labels to run (workloads, and 'SB3 PPO collection, ...')",
    )
    parser.add_argument(
        "--executors",
        default="",
        help="comma-separated substrings of executor names to run (the single loop and AsyncVectorEnv always run)",
    )
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="folder for results.json and results.png")
    args = parser.parse_args(argv)
    seconds, min_steps = (0.0, 5) if args.quick else (args.seconds, 50)
    rounds = 1 if args.quick else args.rounds
    if rounds < 1:
        parser.error(f"--rounds must be >= 1, got {rounds}")
    chosen = select(args.only)
    results = {"machine": machine(), "workloads": {}, "rounds": {}}
    for workload in chosen:
        if not workload.installed:
            print(f"\n{workload.label}: skipped ({workload.needs} is not installed)")
            continue
        actions = workload.actions()
        print(f"\n{workload.label}")
        rounds_of = run_rounds(workload, actions, seconds, min_steps, rounds, args.executors)
        rates = {name: statistics.median(rates) for name, rates in rounds_of.items()}
        results["workloads"][workload.label] = rates
        results["rounds"][workload.label] = rounds_of
        print_table(workload, rates, rounds_of)
    if selected(SB3_PPO_LABEL, args.only):
        results.update(run_sb3_collection(seconds, rounds))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    plot(results, args.out / "results.png")
    print(f"\nwrote {args.out / 'results.json'} and {args.out / 'results.png'}")
    return 0


def run_sb3_collection(seconds: float, rounds: int) -> dict:
    """SB3's PPO collecting through our SB3 adapter and SB3's own VecEnvs (see sb3_collection.py)."""
    print(f"\n{SB3_PPO_LABEL}")
    if not (importlib.util.find_spec("stable_baselines3") and importlib.util.find_spec("torch")):
        print("  skipped (stable-baselines3 or torch is not installed)")
        return {}
    import sb3_collection

    rounds_of = sb3_collection.run(seconds, rounds)
    rates = sb3_collection.print_table(rounds_of)
    return {"sb3_ppo_collection": {"label": SB3_PPO_LABEL, "rates": rates, "rounds": rounds_of}}


def run_rounds(
    workload: Workload, actions: np.ndarray, seconds: float, min_steps: int, rounds: int, only: str = ""
) -> dict[str, list[float]]:
    """Steps/s of every executor (or those whose names hold a substring of ``only``) in each round.

    Rounds interleave the executors (odd rounds in reverse order), so a slow spell of a shared
    machine hits several executors once rather than one executor throughout.
    """
    table = executors(workload)
    wanted = [part.strip() for part in only.split(",") if part.strip()]
    always = ("single-process loop", "gymnasium AsyncVectorEnv")
    names = [name for name in table if not wanted or name in always or any(part in name for part in wanted)]
    rounds_of: dict[str, list[float]] = {}
    for index in range(rounds):
        for name in names if index % 2 == 0 else reversed(names):
            if index and name not in rounds_of:
                continue  # skipped in the first round
            try:
                rate = table[name](workload, actions, seconds, min_steps)
            except SkipExecutor as reason:
                print(f"  {name:<48} skipped: {reason}")
                continue
            rounds_of.setdefault(name, []).append(rate)
            print(f"  round {index + 1}/{rounds}  {name:<48} {rate:>10.0f} steps/s", flush=True)
    return {name: rounds_of[name] for name in names if name in rounds_of}


def print_table(workload: Workload, rates: dict[str, float], rounds_of: dict[str, list[float]]) -> None:
    single = rates["single-process loop"]
    vector = rates["gymnasium AsyncVectorEnv"]
    bound = rates.get(BOUND)
    header = f"{'executor':<48} {'steps/s':>10} {'x single':>9} {'x Async':>8} {'x bound':>8}"
    header += f" {'us/batch':>9} {'rounds':>13}"
    print(f"\n  {header}")
    for name, rate in rates.items():
        per_batch_us = workload.env_num / rate * 1e6
        spread = round_spread(rounds_of[name], rate)
        of_bound = f"{rate / bound:>8.2f}" if bound else f"{'-':>8}"
        print(
            f"  {name:<48} {rate:>10.0f} {rate / single:>9.2f} {rate / vector:>8.2f} {of_bound}"
            f" {per_batch_us:>9.1f} {spread:>13}"
        )


if __name__ == "__main__":
    sys.exit(main())
