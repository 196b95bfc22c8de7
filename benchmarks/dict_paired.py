"""Old-versus-new timing of the dict API step (``ready_obs`` + ``step``), alternating two source trees.

``paired.py`` times the batched step; this times the dict API, whose per-env rows a change may touch:
CartPole-v1 x8 and FrozenLake-v1 x8 (a ``Discrete`` observation) in the base manager, CartPole-v1 x8 in
the subprocess manager. Each side runs in a fresh process, in alternating order over 5 rounds; each timing
is the fastest chunk of 50 steps in 2 s, and the median over the rounds counts::

    git worktree add /tmp/old <commit>
    python benchmarks/dict_paired.py /tmp/old .
"""

import json
import statistics
import subprocess
import sys

CHILD = r"""
import sys, time, json
sys.path.insert(0, sys.argv[1])
import gymnasium as gym, numpy as np
from ding_env import DingEnvWrapper, create_env_manager
env_id, manager_type = sys.argv[2], sys.argv[3]
m = create_env_manager({"type": manager_type}, [lambda: DingEnvWrapper(cfg={"env_id": env_id})] * 8)
m.seed(0); m.launch()
def run(k):
    for _ in range(k):
        obs = m.ready_obs
        m.step({i: 0 for i in obs})
run(300)
best = 1e9
end = time.perf_counter() + 2.0
while time.perf_counter() < end:
    t = time.perf_counter(); run(50); best = min(best, (time.perf_counter() - t) / 50 * 1e6)
m.close()
print(json.dumps(best))
"""

WORKLOADS = (("CartPole-v1", "base"), ("FrozenLake-v1", "base"), ("CartPole-v1", "subprocess"))


def child(tree: str, env_id: str, manager_type: str) -> float:
    """Microseconds per dict-API step of 8 envs of ``env_id`` with the ding_env of ``tree`` (its fastest chunk)."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, tree, env_id, manager_type], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(old: str, new: str, rounds: int = 5) -> None:
    """Print each workload's median microseconds per step on both sides, and their ratio."""
    for env_id, manager_type in WORKLOADS:
        times: dict[str, list[float]] = {"old": [], "new": []}
        for index in range(rounds):
            order = [("old", old), ("new", new)] if index % 2 == 0 else [("new", new), ("old", old)]
            for side, tree in order:
                times[side].append(child(tree, env_id, manager_type))
        before, after = statistics.median(times["old"]), statistics.median(times["new"])
        print(
            f"{env_id} x8 {manager_type} dict API: old {before:.1f} us, new {after:.1f} us per step, "
            f"new/old {after / before:.2f} (old rounds {min(times['old']):.1f}-{max(times['old']):.1f}, "
            f"new {min(times['new']):.1f}-{max(times['new']):.1f})"
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
