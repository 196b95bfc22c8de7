"""Old-versus-new timing of the batched manager step, alternating two source trees in one sitting.

Each round times every workload once with ``--old``'s ding_env and once with ``--new``'s, each in
a fresh process, in alternating order, so drift on a shared machine hits both alike. Each timing is the
fastest chunk of 50 batches (the least disturbed by other processes); prints the median of those
over the rounds for each side and their ratio (new / old: below 1 is faster)::

    git worktree add /tmp/old main
    python benchmarks/paired.py --old /tmp/old --new . --only cartpole,zero,pong,halfcheetah

``--cfg '{"caller_share": true, "num_workers": 1}'`` times a manager config against the same one
(``--old-cfg`` for a different config on the old side).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

from timing import old_against_new

HERE = Path(__file__).resolve().parent


def time_child(tree: str, label: str, manager_type: str, cfg: dict, seconds: float) -> float:
    """Microseconds per batched step of workload ``label`` with the ding_env of ``tree`` (its fastest chunk)."""
    sys.path.insert(0, str(Path(tree).resolve()))
    sys.path.insert(1, str(HERE))
    from workloads import WORKLOADS  # noqa: PLC0415 - after the tree is on the path

    from ding_env import create_env_manager  # noqa: PLC0415

    workload = next(w for w in WORKLOADS if w.label == label)
    actions = workload.actions()
    manager = create_env_manager({"type": manager_type, **cfg}, workload.ding_fns())
    manager.launch()
    try:
        for i in range(200):  # warm up
            ready = manager.ready_obs_batch
            manager.step_batch(ready.env_id, actions[i % len(actions)][ready.env_id])
        # Chunks of 50 batches; the fastest chunk is the figure, as the one least disturbed by
        # other processes on a shared machine (the same statistic for both sides).
        batches, start, chunks = 0, time.perf_counter(), []
        while time.perf_counter() - start < seconds:
            chunk_start = time.perf_counter()
            for _ in range(50):
                ready = manager.ready_obs_batch
                manager.step_batch(ready.env_id, actions[batches % len(actions)][ready.env_id])
                batches += 1
            chunks.append((time.perf_counter() - chunk_start) / 50 * 1e6)
        return min(chunks)
    finally:
        manager.close()


def run_child(tree: str, label: str, manager_type: str, cfg: dict, seconds: float) -> float:
    """``time_child`` in a fresh process."""
    command = [sys.executable, __file__, "--child", tree, label, manager_type, json.dumps(cfg), str(seconds)]
    return float(subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and run the rounds (or one child timing with ``--child``)."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--child":
        tree, label, manager_type, cfg, seconds = args[1:6]
        print(time_child(tree, label, manager_type, json.loads(cfg), float(seconds)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="source tree of the old code (a git worktree)")
    parser.add_argument("--new", default=str(HERE.parent), help="source tree of the new code")
    parser.add_argument("--only", default="cartpole,zero,pong,halfcheetah", help="workload label substrings")
    parser.add_argument("--type", default="subprocess", help="manager type")
    parser.add_argument("--cfg", default="{}", help="manager config (JSON) for both sides")
    parser.add_argument("--old-cfg", default=None, help="manager config (JSON) for the old side (default: --cfg)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per child")
    options = parser.parse_args(args)
    sys.path.insert(0, str(HERE))
    from workloads import select  # noqa: PLC0415

    new_cfg = json.loads(options.cfg)
    old_cfg = json.loads(options.old_cfg) if options.old_cfg is not None else new_cfg
    for workload in (w for w in select(options.only) if w.installed):
        old, new = (
            partial(run_child, tree, workload.label, options.type, cfg, options.seconds)
            for tree, cfg in ((options.old, old_cfg), (options.new, new_cfg))
        )
        print(old_against_new(f"{workload.label:22s}", old, new, options.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
