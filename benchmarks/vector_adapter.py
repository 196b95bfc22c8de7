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
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import gymnasium as gym, numpy as np
from ding_env.vector import ManagerVectorEnv
executor, seconds = sys.argv[2], float(sys.argv[3])
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
def run(count):
    global steps
    for _ in range(count):
        envs.step(actions[steps % len(actions)])
        steps += 1
run(300)
best, end = 1e9, time.perf_counter() + seconds
while time.perf_counter() < end:
    start = time.perf_counter()
    run(50)
    best = min(best, (time.perf_counter() - start) / 50 * 1e6)
envs.close()
print(json.dumps(best))
"""

PEERS = ("SyncVectorEnv", "AsyncVectorEnv")
ADAPTED = ("ManagerVectorEnv over base", "ManagerVectorEnv over subprocess")


def child(tree: str, executor: str, seconds: float) -> float:
    """Microseconds per vector step of ``executor`` with the ding_env of ``tree`` (its fastest chunk)."""
    command = [sys.executable, "-c", CHILD, str(Path(tree).resolve()), executor, str(seconds)]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def interleaved(runs: list[tuple[str, str, str]], rounds: int, seconds: float) -> dict[str, list[float]]:
    """``{name: [us per step of each round]}`` for ``runs`` of ``(name, tree, executor)``, interleaved."""
    times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    for index in range(rounds):
        for name, tree, executor in runs if index % 2 == 0 else runs[::-1]:
            times[name].append(child(tree, executor, seconds))
    return times


def main(argv: list[str] | None = None) -> int:
    """Time the executors (or old against new with ``--old``) and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", help="source tree of older code: time its ManagerVectorEnv against --new's")
    parser.add_argument("--new", default=str(HERE.parent), help="source tree of the code timed")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per child")
    options = parser.parse_args(argv)
    if options.old:
        runs = [
            (f"{executor} ({side})", tree, executor)
            for executor in ADAPTED
            for side, tree in (("old", options.old), ("new", options.new))
        ]
    else:
        runs = [(executor, options.new, executor) for executor in (*PEERS, *ADAPTED)]
    times = interleaved(runs, options.rounds, options.seconds)
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians.get("SyncVectorEnv")
    for name, median in medians.items():
        ratio = f"  {base / median:.2f}x SyncVectorEnv" if base else ""
        spread = f"{min(times[name]):.1f}-{max(times[name]):.1f}"
        print(f"{name:40s} {median:8.1f} us per step of 8 envs (rounds {spread}){ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
