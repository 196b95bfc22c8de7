"""The bound for any multi-process executor: the envs split over processes that never communicate.

Each process steps its share of the envs in a plain loop, exactly as the single-process loop
does, with no commands, no shared memory and no waiting on the others. The sum of their rates
is what the machine gives when the envs run side by side: no executor that steps the envs in
worker processes can beat it, so an executor's rate over this one is its efficiency.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

import numpy as np
from timing import timed
from workloads import Workload

from ding_env.env_manager.backends.base import consecutive_shares

# The benchmark row of this executor.
BOUND = "bound: independent processes, no executor"
# A process that does not report within this many seconds past its timed window has hung.
REPORT_GRACE_SECONDS = 120.0


def step_share(
    workload: Workload, env_ids: list[int], actions: np.ndarray, seconds: float, min_steps: int, start: Any, out: Any
) -> None:
    """Step ``env_ids`` of ``workload`` in this process once every process is ready; send the rate to ``out``."""
    try:
        fns = workload.gym_fns()
        envs = [fns[env_id]() for env_id in env_ids]
        for env_id, env in zip(env_ids, envs, strict=True):
            env.reset(seed=env_id)  # the single-process loop's seeds
        share = actions[:, env_ids]

        def step(i: int) -> int:
            for env, action in zip(envs, share[i % len(share)], strict=True):
                _, _, terminated, truncated, _ = env.step(action)
                if terminated or truncated:
                    env.reset()
            return len(envs)

        start.wait(REPORT_GRACE_SECONDS)
        rate = timed(step, seconds, min_steps)
        for env in envs:
            env.close()
        out.send(("ok", rate))
    except Exception as error:  # noqa: BLE001 - sent to the parent, which raises it
        start.abort()  # the other processes stop waiting for this one
        out.send(("error", f"{type(error).__name__}: {error}"))
    finally:
        out.close()


def bench_independent_processes(workload: Workload, actions: np.ndarray, seconds: float, min_steps: int) -> float:
    """Summed steps per second of ``min(env_num, cpu_count)`` processes stepping their shares at once.

    Raises:
        RuntimeError: A process failed or did not report; it is named with its envs.
    """
    context = multiprocessing.get_context("spawn")  # a clean process, as a fresh worker would be
    groups = consecutive_shares(
        list(range(workload.env_num)), min(workload.env_num, os.cpu_count() or 1)
    )  # as the managers split
    start = context.Barrier(len(groups))
    pipes, processes = [], []
    for env_ids in groups:
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(
            target=step_share, args=(workload, env_ids, actions, seconds, min_steps, start, sender), daemon=True
        )
        process.start()
        sender.close()
        pipes.append(receiver)
        processes.append(process)
    try:
        total = 0.0
        for env_ids, receiver in zip(groups, pipes, strict=True):
            if not receiver.poll(seconds * 1.25 + REPORT_GRACE_SECONDS):
                raise RuntimeError(f"the process stepping envs {env_ids} of {workload.label} did not report")
            try:
                status, value = receiver.recv()
            except EOFError:
                status, value = "error", "it exited without a result"
            if status != "ok":
                raise RuntimeError(f"the process stepping envs {env_ids} of {workload.label} failed: {value}")
            total += value
        return total
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()
        for receiver in pipes:
            receiver.close()
