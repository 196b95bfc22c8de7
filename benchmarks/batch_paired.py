"""Old-versus-new timing of the batch-env rows, alternating two source trees in one sitting.

``paired.py`` times envs stepped one by one; this times a batch env's path (``BatchHost``, a worker's
``step_stacked``, the info table): CartPole x64 as two ``CartPoleBatchEnv`` of 32 in the subprocess manager
(2 workers) and as one of 64 in the base manager, through the batched API with fixed random actions. Each
side runs in a fresh process, in alternating order; each timing is the fastest chunk of 50 batches in
``--seconds``, and the median over the rounds counts::

    git worktree add /tmp/old <commit>
    python benchmarks/batch_paired.py --old /tmp/old --new . --rounds 7
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from timing import fresh_process_figure, old_against_new

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys
from functools import partial
sys.path[:0] = sys.argv[1:3]
import numpy as np
from ding_env import create_env_manager
from dizoo.classic_control.cartpole.envs.cartpole_batch_env import CartPoleBatchEnv
from timing import fastest_chunk_us
row, seconds = sys.argv[3], float(sys.argv[4])
if row == "subprocess 2x32":
    batch_envs = [partial(CartPoleBatchEnv, {"num_envs": 32})] * 2
    manager = create_env_manager({"type": "subprocess", "num_workers": 2}, batch_envs)
else:
    manager = create_env_manager({"type": "base"}, [partial(CartPoleBatchEnv, {"num_envs": 64})])
manager.seed(0)
manager.launch()
actions = np.random.default_rng(0).integers(0, 2, (256, 64))
steps = 0
def step():
    global steps
    ready = manager.ready_obs_batch
    manager.step_batch(ready.env_id, actions[steps % 256])
    steps += 1
print(json.dumps(fastest_chunk_us(step, seconds)))
manager.close()
"""

ROWS = ("subprocess 2x32", "base 1x64")


def main(argv: list[str] | None = None) -> int:
    """Print each row's median microseconds per batch on both sides, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="source tree of the old code")
    parser.add_argument("--new", default=str(HERE.parent), help="source tree of the new code")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=1.5, help="timed seconds per child")
    options = parser.parse_args(argv)
    seconds = str(options.seconds)
    for row in ROWS:
        old, new = (partial(fresh_process_figure, CHILD, tree, row, seconds) for tree in (options.old, options.new))
        print(old_against_new(f"{row:16s}", old, new, options.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
