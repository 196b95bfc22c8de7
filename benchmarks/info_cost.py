"""What a step's info costs per env step in each manager: HalfCheetah-v5 x4 with its infos, and with them dropped.

MuJoCo envs return an info of a few floats on every step (Atari envs one of a few ints): the wrapper turns
its numpy scalars into Python ones, a worker stores it in the shared info table and the parent reads it back.
Each variant runs in a fresh process, the variants interleaved over the rounds (odd rounds in reverse order);
each timing is the fastest chunk of 50 batched steps in ``--seconds``, the median over the rounds counts::

    python benchmarks/info_cost.py                        # base and subprocess managers (the mujoco extra)
    python benchmarks/info_cost.py --types subprocess --rounds 7
    python benchmarks/info_cost.py --old /tmp/old --types subprocess   # with infos: an older tree against this one
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial
from pathlib import Path

from timing import fresh_process_figure, interleaved, old_against_new

HERE = Path(__file__).resolve().parent
ENV_NUM = 4

CHILD = r"""
import json, sys
sys.path[:0] = sys.argv[1:3]
import gymnasium as gym, numpy as np
from ding_env import DingEnvWrapper, create_env_manager
from timing import fastest_chunk_us
manager_type, with_info, seconds, env_num = sys.argv[3], sys.argv[4] == "info", float(sys.argv[5]), int(sys.argv[6])


class DropInfo(gym.Wrapper):
    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {}


def make():
    env = gym.make("HalfCheetah-v5")
    return DingEnvWrapper(env if with_info else DropInfo(env))


manager = create_env_manager({"type": manager_type, "copy_on_get": False}, [make] * env_num)
manager.seed(0)
manager.launch()
actions = np.random.default_rng(0).uniform(-1, 1, (997, env_num, 6)).astype(np.float32)
steps = 0
def step():
    global steps
    ready = manager.ready_obs_batch
    manager.step_batch(ready.env_id, actions[steps % len(actions)])
    steps += 1
print(json.dumps(fastest_chunk_us(step, seconds) / env_num))
manager.close()
"""


def main(argv: list[str] | None = None) -> int:
    """Time every manager type with and without infos, interleaved, and print the medians per env step."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--types", default="base,subprocess", help="comma-separated manager types")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per child")
    parser.add_argument("--tree", default=str(HERE.parent), help="source tree of the code timed")
    parser.add_argument("--old", help="source tree of older code: time its steps with infos against --tree's")
    options = parser.parse_args(argv)
    if options.old:
        return trees_compared(options)
    runs = [
        (
            f"{manager_type} {kind}",
            partial(fresh_process_figure, CHILD, options.tree, manager_type, kind, str(options.seconds), str(ENV_NUM)),
        )
        for manager_type in options.types.split(",")
        for kind in ("info", "no-info")
    ]
    times = interleaved(runs, options.rounds)
    print(f"\nHalfCheetah-v5 x{ENV_NUM}, us per env step (median of {options.rounds} rounds; fastest chunk each)")
    for manager_type in options.types.split(","):
        with_info, without = (statistics.median(times[f"{manager_type} {kind}"]) for kind in ("info", "no-info"))
        cost = with_info - without
        print(f"  {manager_type:<12} with infos {with_info:7.2f}   without {without:7.2f}   infos cost {cost:+6.2f}")
    return 0


def trees_compared(options: argparse.Namespace) -> int:
    """Each manager type with infos, the old tree against ``--tree``, interleaved; print the medians."""
    print(f"\nHalfCheetah-v5 x{ENV_NUM} with infos, us per env step (median of {options.rounds} rounds)")
    for manager_type in options.types.split(","):
        args = (manager_type, "info", str(options.seconds), str(ENV_NUM))
        old, new = (partial(fresh_process_figure, CHILD, tree, *args) for tree in (options.old, options.tree))
        print(old_against_new(f"  {manager_type:<12}", old, new, options.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
