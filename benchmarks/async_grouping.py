"""The async manager on envs of unequal cost: env steps per second and the time from an action to its result.

A worker steps the envs it hosts one after another. Whether a fast env comes back before its slower
siblings on the same worker (per-env hand-back) or with them (per-worker) is a property of the
source tree timed; one env per worker (``num_workers=env_num``) hands back every env as soon as it
has finished either way. Envs cost 100-400 us of CPU per step (``BusyEnv``), the policy
``--policy-us`` per call, ``wait_num=1``. Like ``paired.py``, each timing runs in a fresh process
with one tree's ``ding_env`` and the trees alternate, so a loaded machine hits both alike; medians
over the rounds. Commit 34e5d1f is the per-env hand-back (measured, then reverted): time it against
the code that hands a worker's envs back together with::

    git worktree add /tmp/per-env 34e5d1f
    python benchmarks/async_grouping.py --old . --new /tmp/per-env --rounds 7 --seconds 2 --policy-us 200
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def busy_env(busy_us: float):
    """A ``BusyEnv`` of ``busy_us`` behind ``DingEnvWrapper`` (raw observations)."""
    from workloads import BusyEnv  # noqa: PLC0415 - after the tree is on the path

    from ding_env import DingEnvWrapper  # noqa: PLC0415

    return DingEnvWrapper(BusyEnv(busy_us, episode_length=10**9), cfg={"env_wrapper": []})


def burn(microseconds: float) -> None:
    """Spend ``microseconds`` of CPU, as a policy's inference would."""
    deadline = time.perf_counter() + microseconds * 1e-6
    while time.perf_counter() < deadline:
        pass


def run(num_workers: int, env_costs: list[float], policy_us: float, seconds: float) -> tuple[float, float]:
    """Env steps per second and the mean seconds from an env's action to its result, with ``wait_num=1``."""
    from ding_env import create_env_manager  # noqa: PLC0415 - after the tree is on the path

    cfg = {"type": "async_subprocess", "num_workers": num_workers, "wait_num": 1, "step_wait_timeout": None}
    manager = create_env_manager(cfg, [partial(busy_env, cost) for cost in env_costs])
    manager.seed(0)
    manager.launch()
    sent_at = np.zeros(len(env_costs))
    latencies: list[float] = []
    steps = 0
    try:
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            ready = manager.ready_obs_batch
            burn(policy_us)
            sent_at[ready.env_id] = time.perf_counter()
            batch = manager.step_batch(ready.env_id, np.zeros(len(ready.env_id), dtype=np.int64))
            now = time.perf_counter()
            latencies.extend((now - sent_at[batch.env_id]).tolist())
            steps += len(batch.env_id)
        elapsed = time.perf_counter() - start
    finally:
        manager.close()
    return steps / elapsed, statistics.mean(latencies)


def run_child(tree: str, num_workers: int, policy_us: float, seconds: float) -> tuple[float, float]:
    """``run`` with the ``ding_env`` of ``tree``, in a fresh process."""
    command = [sys.executable, __file__, "--child", tree, str(num_workers), str(policy_us), str(seconds)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return tuple(json.loads(output.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> None:
    """Alternate the trees over the rounds for each grouping; print the medians (or one child's timing)."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--child":
        sys.path[:0] = [str(Path(args[1]).resolve()), str(HERE)]
        print(json.dumps(run(int(args[2]), ENV_COSTS, float(args[3]), float(args[4]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="source tree of the old code (a git worktree)")
    parser.add_argument("--new", default=str(HERE.parent), help="source tree of the new code")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--policy-us", type=float, default=200.0, help="CPU a policy call costs")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args(args)
    for num_workers in (2, len(ENV_COSTS)):
        results: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
        for round_index in range(options.rounds):
            sides = [("old", options.old), ("new", options.new)]
            for side, tree in sides if round_index % 2 == 0 else sides[::-1]:
                results[side].append(run_child(tree, num_workers, options.policy_us, options.seconds))
        for side, runs in results.items():
            rate = statistics.median(r for r, _ in runs)
            latency = statistics.median(lat for _, lat in runs)
            print(
                f"num_workers={num_workers} {side}: {rate:7.0f} env steps/s, action -> result {latency * 1e3:6.2f} ms"
            )


# Each env's CPU per step (us): the envs of a worker differ, so a fast one would wait for a slow sibling.
ENV_COSTS = [100.0, 200.0, 300.0, 400.0] * 2


if __name__ == "__main__":
    main()
