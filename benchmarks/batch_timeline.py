"""Where a synchronous batch goes: timestamps in the parent and inside the workers.

Steps ``SyncSubprocessEnvManager`` (batched API, 'fork' workers) and times each
batch's phases: the parent's work before the first dispatch, the wake-up of the
first worker, the workers' steps (from the first start to the last end, and the
longest single step), the parent noticing the last worker, and the parent's work
after. ``time.perf_counter`` is system-wide on Linux, so the parent's and the
workers' timestamps compare. Medians over the measured batches.

Usage::

    python benchmarks/bench_env_manager.py ...      # throughput, side by side with the peers
    python benchmarks/batch_timeline.py --only cartpole,zero --batches 5000
    python benchmarks/batch_timeline.py --only none --batch-envs 32   # 2 CartPoleBatchEnvs of 32, one per worker
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
from workloads import Workload, actions_for, select

from ding_env.env_manager import create_env_manager
from ding_env.env_manager.backends import worker as _worker
from ding_env.env_manager.backends.worker_pool import WorkerPool

# Phases 2-4 and 6-7 follow each other and add up to the batch; phase 5 is the longest single worker step
# inside phase 4 (the rest of phase 4 is the workers starting at different times).
PHASES = (
    "batch",
    "parent before dispatch",
    "dispatch -> first worker starts",
    "first worker starts -> last worker ends",
    "slowest worker step",
    "last worker ends -> parent notices",
    "parent after",
)


class BatchEnvWorkload:
    """Two ``CartPoleBatchEnv``s of ``size`` sub-envs (``batch_envs.py``'s subprocess row), one per worker."""

    installed = True  # the batch env is ding_env's own

    def __init__(self, size: int) -> None:
        self.label = f"CartPoleBatchEnv 2 x {size}"
        self.env_num = 2 * size
        self.size = size

    def ding_fns(self) -> list:
        """The two batch envs' constructors."""
        from dizoo.classic_control.cartpole.envs.cartpole_batch_env import CartPoleBatchEnv

        return [partial(CartPoleBatchEnv, dict(num_envs=self.size))] * 2


def record_worker_steps(folder: Path) -> None:
    """Make workers started from now on (by 'fork') keep their step times and write them to ``folder`` at exit."""
    step, shutdown = _worker._Worker.step, _worker._Worker.shutdown

    def timed_step(self: _worker._Worker) -> None:
        start = time.perf_counter()
        step(self)
        self.__dict__.setdefault("step_times", []).append((start, time.perf_counter()))

    def saving_shutdown(self: _worker._Worker) -> None:
        (folder / f"worker{self.index}.json").write_text(json.dumps(self.__dict__.get("step_times", [])))
        shutdown(self)

    _worker._Worker.step, _worker._Worker.shutdown = timed_step, saving_shutdown


def timeline(
    workload: Workload | BatchEnvWorkload, batches: int, warmup: int, folder: Path, cfg: dict
) -> dict[str, float]:
    """Median microseconds of each phase over ``batches`` synchronous batched steps of ``workload``.

    ``cfg`` updates the manager config (its context stays 'fork').
    """
    manager = create_env_manager({"type": "subprocess", **cfg, "context": "fork"}, workload.ding_fns())
    manager.launch()
    actions = actions_for(manager.action_space, workload.env_num)
    worker_count = len(manager.workers)
    dispatch, wait_done = WorkerPool.dispatch, WorkerPool.wait_done
    marks: dict[str, float] = {}

    def marked_dispatch(pool: WorkerPool, index: int) -> None:
        if index == 0:
            marks["dispatch"] = time.perf_counter()
        dispatch(pool, index)

    def marked_wait(pool: WorkerPool, index: int, deadline: float | None, timeout: float | None) -> None:
        wait_done(pool, index, deadline, timeout)
        marks["noticed"] = time.perf_counter()

    WorkerPool.dispatch, WorkerPool.wait_done = marked_dispatch, marked_wait
    parent = []
    try:
        for i in range(warmup + batches):
            start = time.perf_counter()
            ready = manager.ready_obs_batch
            manager.step_batch(ready.env_id, actions[i % len(actions)])
            parent.append((start, marks["dispatch"], marks["noticed"], time.perf_counter()))
    finally:
        WorkerPool.dispatch, WorkerPool.wait_done = dispatch, wait_done
        manager.close()
    workers = [np.array(json.loads((folder / f"worker{index}.json").read_text())) for index in range(worker_count)]
    # Every batch steps every worker once (resets travel by pipe), so the last `batches` steps line up.
    starts = np.min([steps[-batches:, 0] for steps in workers], axis=0)
    ends = np.max([steps[-batches:, 1] for steps in workers], axis=0)
    longest = np.max([steps[-batches:, 1] - steps[-batches:, 0] for steps in workers], axis=0)
    begin, dispatched, noticed, end = np.array(parent[warmup:]).T
    phases = (
        end - begin,
        dispatched - begin,
        starts - dispatched,
        ends - starts,
        longest,
        noticed - ends,
        end - noticed,
    )
    return {name: float(np.median(values) * 1e6) for name, values in zip(PHASES, phases, strict=True)}


def main() -> None:
    """Print the phases of each selected workload."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of workload labels to run")
    parser.add_argument("--batches", type=int, default=3000, help="measured batches per workload")
    parser.add_argument("--warmup", type=int, default=500, help="batches run before measuring")
    parser.add_argument("--cpu-affinity", action="store_true", help="pin worker i to the i-th CPU")
    parser.add_argument(
        "--batch-envs", type=int, default=0, help="also time 2 CartPoleBatchEnvs of this many sub-envs on 2 workers"
    )
    args = parser.parse_args()
    print("| workload | " + " | ".join(PHASES) + " |")
    print("|---|" + "---:|" * len(PHASES))
    with tempfile.TemporaryDirectory() as folder:
        record_worker_steps(Path(folder))
        workloads = list(select(args.only)) + ([BatchEnvWorkload(args.batch_envs)] if args.batch_envs else [])
        for workload in workloads:
            if not workload.installed:
                print(f"| {workload.label} | skipped: {workload.needs} is not installed |")
                continue
            cfg = {"cpu_affinity": args.cpu_affinity}
            if isinstance(workload, BatchEnvWorkload):
                cfg["num_workers"] = 2  # one batch env per worker
            phases = timeline(workload, args.batches, args.warmup, Path(folder), cfg)
            print(f"| {workload.label} | " + " | ".join(f"{phases[name]:.1f} us" for name in PHASES) + " |", flush=True)


if __name__ == "__main__":
    main()
