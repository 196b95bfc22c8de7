"""Old-versus-new timing of a remote workload, alternating two source trees in one sitting.

``remote.py`` reads the remote manager against the local one and the wire in one tree; this times the
remote manager's batched step of one workload of ``remote.py`` (default ``cartpole-1x8``) in two trees.
Each side runs in a fresh process that starts its own ``ding-env serve`` from the same tree, in
alternating order; each timing is the fastest chunk of 50 batches in ``--seconds`` (the chunk least
disturbed by other work on a shared machine; ``--mean``: the mean over all of them), and the median over the
rounds counts::

    git worktree add /tmp/old <commit>
    python benchmarks/remote_paired.py --old /tmp/old --new . --rounds 7
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from timing import fresh_process_figure, old_against_new

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, os, sys, time
sys.path[:0] = sys.argv[1:3]
os.environ["PYTHONPATH"] = sys.argv[1]  # the server runs the same tree
os.chdir(sys.argv[2])  # not the repository's root, whose ding_env `python -m` would put before PYTHONPATH
from ding_env import create_env_manager
from ding_env.checker.target import resolve_target
from ding_env.remote.served_envs import env_fns_for
from remote import WORKLOADS, action_rows, serve, stop_servers
from timing import fastest_chunk_us
target, env_num, shares, extra, manager_cfg = WORKLOADS[sys.argv[3]]
servers = []
try:
    for share in shares:
        servers.append(serve(target, share, extra))
    cfg = {**manager_cfg, "servers": [address for _, address in servers]}
    if "wait_num" in cfg:
        cfg["wait_num"] = int(env_num * cfg["wait_num"])
    with create_env_manager(cfg, env_fns_for(*resolve_target(target), env_num)) as manager:
        manager.seed(0)
        manager.launch()
        actions = action_rows(manager.action_space, 256, manager.env_num)
        steps = 0
        def step():
            global steps
            ready = manager.ready_obs_batch
            manager.step_batch(ready.env_id, actions[steps % 256][: len(ready.env_id)])
            steps += 1
        if sys.argv[5] == "mean":  # every batch counts, the disturbed ones too
            for _ in range(300):
                step()
            start, first = time.perf_counter(), steps
            while time.perf_counter() - start < float(sys.argv[4]):
                step()
            figure = (time.perf_counter() - start) / (steps - first) * 1e6
        else:
            figure = fastest_chunk_us(step, float(sys.argv[4]))
finally:
    stop_servers([server for server, _ in servers])
print(json.dumps(figure))
"""


def main(argv: list[str] | None = None) -> int:
    """Print the workload's median microseconds per batch on both sides, their ratio and every round."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="source tree of the old code")
    parser.add_argument("--new", default=str(HERE.parent), help="source tree of the new code")
    parser.add_argument("--workload", default="cartpole-1x8", help="a workload of remote.py")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=1.5, help="timed seconds per child")
    parser.add_argument("--mean", action="store_true", help="the mean over --seconds instead of the fastest chunk")
    options = parser.parse_args(argv)
    statistic = "mean" if options.mean else "fastest"
    args = (options.workload, str(options.seconds), statistic)
    old, new = (partial(fresh_process_figure, CHILD, tree, *args) for tree in (options.old, options.new))
    print(old_against_new(f"{options.workload}:", old, new, options.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
