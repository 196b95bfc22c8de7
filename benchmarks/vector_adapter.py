"""The Gymnasium vector adapter (``ManagerVectorEnv``) against Gymnasium's own vector envs, CartPole-v1 x8.

The same fixed random actions step every executor, in ``NextStep`` autoreset (Gymnasium's default, where an
env whose episode ended hands out its reset observation at the next step instead of stepping). Each
executor runs in a fresh process, the executors interleaved over the rounds (odd rounds in reverse order);
each timing is the fastest chunk of 50 steps in ``--seconds``, the median over the rounds counts::

    python benchmarks/vector_adapter.py                      # every executor, with ratios to SyncVectorEnv
    python benchmarks/vector_adapter.py --old /tmp/old       # ManagerVectorEnv of an older tree against this one
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial
from pathlib import Path

from timing import fresh_process_figure, interleaved

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys
sys.path[:0] = sys.argv[1:3]
import gymnasium as gym, numpy as np
from ding_env.vector import ManagerVectorEnv
from timing import fastest_chunk_us
executor, seconds = sys.argv[3], float(sys.argv[4])
fns = [lambda: gym.make("CartPole-v1")] * 8
if executor == "SyncVectorEnv":
    envs = gym.vector.SyncVectorEnv(fns)
elif executor == "AsyncVectorEnv":
    envs = gym.vector.AsyncVectorEnv(fns)
else:
    envs = ManagerVectorEnv(fns, manager_cfg={"type": executor.split()[-1]})
actions = np.random.default_rng(0).integers(0, 2, size=(997, 8))
envs.reset(seed=0)
steps = 0
def step():
    global steps
    envs.step(actions[steps % len(actions)])
    steps += 1
print(json.dumps(fastest_chunk_us(step, seconds)))
envs.close()
"""

PEERS = ("SyncVectorEnv", "AsyncVectorEnv")
ADAPTED = ("ManagerVectorEnv over base", "ManagerVectorEnv over subprocess")


def main(argv: list[str] | None = None) -> int:
    """Time the executors (or old against new with ``--old``) and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", help="source tree of older code: time its ManagerVectorEnv against --new's")
    parser.add_argument("--new", default=str(HERE.parent), help="source tree of the code timed")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per child")
    options = parser.parse_args(argv)
    if options.old:
        named = [
            (f"{executor} ({side})", tree, executor)
            for executor in ADAPTED
            for side, tree in (("old", options.old), ("new", options.new))
        ]
    else:
        named = [(executor, options.new, executor) for executor in (*PEERS, *ADAPTED)]
    seconds = str(options.seconds)
    runs = [(name, partial(fresh_process_figure, CHILD, tree, executor, seconds)) for name, tree, executor in named]
    times = interleaved(runs, options.rounds)
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians.get("SyncVectorEnv")
    for name, median in medians.items():
        ratio = f"  {base / median:.2f}x SyncVectorEnv" if base else ""
        spread = f"{min(times[name]):.1f}-{max(times[name]):.1f}"
        print(f"{name:40s} {median:8.1f} us per step of 8 envs (rounds {spread}){ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
