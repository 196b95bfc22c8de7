"""How every executor of the benchmark is timed."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def timed(step: Callable[[int], int], seconds: float, min_steps: int) -> float:
    """Env steps per second of ``step(i) -> envs stepped``, after a warm-up of a quarter of ``seconds``."""
    warm_until = time.perf_counter() + seconds / 4
    i = 0
    while i < min(20, min_steps) or time.perf_counter() < warm_until:
        step(i)
        i += 1
    total, i = 0, 0
    start = time.perf_counter()
    while True:
        total += step(i)
        i += 1
        elapsed = time.perf_counter() - start
        if i >= min_steps and elapsed >= seconds:
            return total / elapsed


def time_vector(envs: Any, env_num: int, actions: Any, seconds: float, min_steps: int) -> float:
    """Steps per second of a vectorised env (``reset()``, then ``step(batch)``) stepping the batched ``actions``.

    Closes ``envs`` afterwards.
    """
    envs.reset()

    def step(i: int) -> int:
        envs.step(actions[i % len(actions)])
        return env_num

    try:
        return timed(step, seconds, min_steps)
    finally:
        envs.close()


def round_spread(rounds: list[float], median: float) -> str:
    """The slowest and fastest of an executor's rounds relative to its median, e.g. ``0.93-1.05``."""
    return f"{min(rounds) / median:.2f}-{max(rounds) / median:.2f}"
