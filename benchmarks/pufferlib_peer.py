"""PufferLib 3 as a benchmark peer: its Serial and Multiprocessing vector envs over the same Gymnasium envs.

PufferLib (package ``pufferlib-core``) pins an older torch than this project's, so the Makefile's bench
target installs it with ``--no-deps`` (benchmarks/requirements-no-deps.txt); its vector module needs only
numpy, gymnasium and psutil. Each Gymnasium env goes through PufferLib's own ``GymnasiumPufferEnv``
emulation layer, as PufferLib users run Gymnasium envs. ``Multiprocessing`` hosts
``num_envs / num_workers`` envs per worker and returns every env each step (``batch_size = num_envs``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from functools import partial

import numpy as np
from timing import time_vector
from workloads import Workload

# The layouts timed: PufferLib's best one differs by workload (one worker hosting every env wins
# on cheap envs on two cores, one worker per core on costly ones), so each is a row.
LAYOUTS = {
    "PufferLib Serial": ("Serial", None),
    "PufferLib Multiprocessing (1 worker)": ("Multiprocessing", 1),
    "PufferLib Multiprocessing (2 workers)": ("Multiprocessing", 2),
}


def installed() -> bool:
    """Whether PufferLib's vector module can be imported here."""
    return importlib.util.find_spec("pufferlib") is not None and importlib.util.find_spec("psutil") is not None


def bench_pufferlib(
    backend_name: str, num_workers: int | None, workload: Workload, actions: np.ndarray, seconds: float, min_steps: int
) -> float:
    """Steps per second of PufferLib's ``backend_name`` vector env stepping the batched ``actions``."""
    import pufferlib.emulation
    import pufferlib.vector

    creators = [partial(pufferlib.emulation.GymnasiumPufferEnv, env_creator=fn) for fn in workload.gym_fns()]
    kwargs: dict = {}
    if num_workers is not None:
        # overwork: PufferLib refuses more workers than *physical* cores, which a VM may report as one.
        kwargs = {"num_workers": num_workers, "batch_size": workload.env_num, "overwork": True}
    backend = getattr(pufferlib.vector, backend_name)
    vecenv = pufferlib.vector.make(
        creators,
        env_args=[[] for _ in creators],
        env_kwargs=[{} for _ in creators],
        backend=backend,
        num_envs=workload.env_num,
        **kwargs,
    )
    return time_vector(vecenv, workload.env_num, actions, seconds, min_steps)


def executors() -> dict[str, Callable]:
    """One executor per layout, or none when PufferLib is not installed."""
    if not installed():
        return {}
    return {name: partial(bench_pufferlib, backend, workers) for name, (backend, workers) in LAYOUTS.items()}
