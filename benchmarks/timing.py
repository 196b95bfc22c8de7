"""How every executor of the benchmark is timed."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
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


def fastest_chunk_us(step: Callable[[], Any], seconds: float, warmup: int = 300, chunk: int = 50) -> float:
    """Microseconds per ``step()`` in its fastest chunk of ``chunk`` calls over ``seconds``, after ``warmup`` calls.

    The fastest chunk is the one least disturbed by other processes on a shared machine: the same statistic for
    both sides of an old-against-new timing.
    """
    for _ in range(warmup):
        step()
    best, end = float("inf"), time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        for _ in range(chunk):
            step()
        best = min(best, (time.perf_counter() - start) / chunk * 1e6)
    return best


def fresh_process_figure(script: str, tree: str, *args: str) -> float:
    """The figure ``script`` prints last (as JSON), run in a fresh Python with the ding_env of ``tree``.

    The script gets ``tree`` and this folder as ``sys.argv[1:3]`` (to put first on ``sys.path``), then ``args``.
    """
    command = [sys.executable, "-c", script, str(Path(tree).resolve()), str(Path(__file__).resolve().parent), *args]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def interleaved(runs: list[tuple[str, Callable[[], float]]], rounds: int) -> dict[str, list[float]]:
    """``{name: [figure of each round]}`` for ``runs`` of ``(name, time_it)``, odd rounds in reverse order.

    Drift on a shared machine then hits every run alike rather than one run throughout.
    """
    times: dict[str, list[float]] = {name: [] for name, _ in runs}
    for index in range(rounds):
        for name, time_it in runs if index % 2 == 0 else runs[::-1]:
            times[name].append(time_it())
    return times


def old_against_new(label: str, old: Callable[[], float], new: Callable[[], float], rounds: int) -> str:
    """``label``'s line of an old-against-new timing: each side's median over ``rounds``, the ratio, every round.

    The two sides run interleaved (``interleaved``); ``old`` and ``new`` each return microseconds.
    """
    times = interleaved([("old", old), ("new", new)], rounds)
    old_us, new_us = statistics.median(times["old"]), statistics.median(times["new"])
    pairs = " ".join(f"{o:.1f}/{n:.1f}" for o, n in zip(times["old"], times["new"], strict=True))
    ratio = new_us / old_us
    return f"{label} old {old_us:8.1f} us  new {new_us:8.1f} us  new/old {ratio:.3f}  (rounds old/new {pairs})"
