"""What the pieces of a step cost where they run: inside the workers and the parent of a live subprocess manager.

A piece timed alone (``timeit``) costs less than in the run, where the env's step leaves the caches cold. This
wraps the pieces of the workload with ``time.perf_counter`` before the workers fork ('fork' context: they inherit
the wrapped code), steps ``SyncSubprocessEnvManager`` with the batched API and prints each piece's microseconds per
call and calls per batch, each worker's as it measured them. Each wrapper adds its own ~0.2 us per call::

    PYTHONPATH=$PWD python benchmarks/in_situ_costs.py halfcheetah   # HalfCheetah-v5 x4, 2 workers: infos
    PYTHONPATH=$PWD python benchmarks/in_situ_costs.py batch         # 2 CartPoleBatchEnvs of 32, one per worker
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from functools import partial, wraps
from pathlib import Path

import numpy as np

from ding_env import DingEnvWrapper, create_env_manager
from ding_env.env.batch_env import BaseBatchEnv
from ding_env.env_manager.backends import worker as worker_module
from ding_env.env_manager.backends.batch_host import BatchHost
from ding_env.env_manager.backends.env_host import EnvHost
from ding_env.env_manager.backends.info_table import InfoWriter
from ding_env.env_manager.backends.worker_set import WorkerSet

# Per workload: the pieces timed in the workers and in the parent, as (class, method name) pairs.
PIECES = {
    "halfcheetah": (
        [
            (worker_module._Worker, "step"),
            (EnvHost, "step"),
            (DingEnvWrapper, "_step_fields"),
            (InfoWriter, "put"),
            (worker_module._Worker, "report"),
        ],
        [(WorkerSet, "read_report")],
    ),
    "batch": (
        [
            (worker_module._Worker, "step"),
            (BatchHost, "step"),
            (BaseBatchEnv, "step"),
            (BatchHost, "reset"),
            (BaseBatchEnv, "reset"),
            (InfoWriter, "put_rows"),
            (worker_module._Worker, "report"),
        ],
        [(WorkerSet, "read_report")],
    ),
}
TOTALS: dict[str, list[float]] = {}  # piece -> [seconds, calls], in each process


def timed(cls: type, name: str) -> None:
    """Replace ``cls.name`` by a wrapper adding its time and calls to ``TOTALS``."""
    method, key = getattr(cls, name), f"{cls.__name__}.{name}"

    @wraps(method)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            total = TOTALS.setdefault(key, [0.0, 0])
            total[0] += time.perf_counter() - start
            total[1] += 1

    setattr(cls, name, wrapper)


def make_manager(workload: str):
    """The workload's manager ('fork' workers) and its action rows."""
    cfg = {"type": "subprocess", "num_workers": 2, "context": "fork"}
    if workload == "halfcheetah":
        import gymnasium as gym

        manager = create_env_manager(cfg, [lambda: DingEnvWrapper(gym.make("HalfCheetah-v5"))] * 4)
        actions = np.random.default_rng(0).uniform(-1, 1, (64, 4, 6)).astype(np.float32)
    else:
        from dizoo.classic_control.cartpole.envs.cartpole_batch_env import CartPoleBatchEnv

        manager = create_env_manager(cfg, [partial(CartPoleBatchEnv, {"num_envs": 32})] * 2)
        actions = np.random.default_rng(0).integers(0, 2, (64, 64))
    return manager, actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=sorted(PIECES))
    parser.add_argument("--batches", type=int, default=10_000, help="measured batches")
    parser.add_argument("--warmup", type=int, default=500, help="batches run first (the workers count them too)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="in_situ_") as folder:
        rows = measure(options.workload, options.batches, options.warmup, Path(folder))
    for where, totals, count in rows:
        for key, (seconds, calls) in totals.items():
            print(f"  {where:8s} {key:28s} {seconds / calls * 1e6:7.2f} us per call, {calls / count:5.2f} per batch")


def measure(workload: str, batches: int, warmup: int, folder: Path) -> list[tuple[str, dict, int]]:
    """``(where, {piece: [seconds, calls]}, batches counted)`` of the parent and each worker; prints the batch time."""
    worker_pieces, parent_pieces = PIECES[workload]
    for cls, name in worker_pieces:
        timed(cls, name)
    shutdown = worker_module._Worker.shutdown

    def saving_shutdown(self) -> None:  # each worker writes what it measured as it closes
        (folder / f"worker{self.index}.json").write_text(json.dumps(TOTALS))
        shutdown(self)

    worker_module._Worker.shutdown = saving_shutdown
    manager, actions = make_manager(workload)
    manager.seed(0)
    manager.launch()
    for cls, name in parent_pieces:  # timed from here on: the workers forked with the parent's pieces untimed
        timed(cls, name)

    def run(count: int) -> float:
        start = time.perf_counter()
        for i in range(count):
            ready = manager.ready_obs_batch
            manager.step_batch(ready.env_id, actions[i % len(actions)][: len(ready.env_id)])
        return time.perf_counter() - start

    run(warmup)  # the workers count its calls too: their figures per batch divide by every batch
    TOTALS.clear()
    elapsed = run(batches)
    parent = dict(TOTALS)
    manager.close()
    print(f"{workload}: {elapsed / batches * 1e6:.1f} us per batch (parent's wall time)")
    workers = [(path.stem, json.loads(path.read_text()), batches + warmup) for path in sorted(folder.glob("w*.json"))]
    return [("parent", parent, batches), *workers]


if __name__ == "__main__":
    main()
