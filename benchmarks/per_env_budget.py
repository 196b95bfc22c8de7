"""The per-env budget: what each stage of ding_env's step path adds per env step, beside its peers, in one run.

Each stage adds one layer on top of the one before it, over the same envs and the same actions:

1. a plain Python loop over raw Gymnasium envs (``env.step``, ``env.reset`` when an episode ends);
2. the same envs behind ``DingEnvWrapper`` (no env wrappers), their public ``step`` called in a loop:
   the timestep, the ``(1,)`` reward, the dtype conversions, the info scalars;
   2b. the wrapper stepped the way an env host steps it (``hosted_env.stepper_of``: plain fields, no timestep);
3. ``BaseEnvManager``'s batched step (every env in this process: the env host writing its step rows,
   the observation check, the auto-reset, the ledger), with views of its arrays and with copies;
4. ``SyncSubprocessEnvManager``'s batched step over 1 and 2 workers, and over 1 worker with the caller
   hosting a share (``caller_share``) (the worker's write into shared
   memory, the parent's read), with views and with copies;
5. the peers: Gymnasium's ``SyncVectorEnv`` and PufferLib 3's Serial and Multiprocessing vector envs.

Every executor runs once per round, the rounds interleaved (odd rounds in reverse order); each
executor's median round counts. ``--profile`` adds one pass of cProfile over stages 3 and 4 and names
the Python functions with the most time of their own per env step (the parent process only: a
worker's own time is not in it).

Usage::

    PYTHONPATH=$PWD python benchmarks/per_env_budget.py [--seconds 1] [--rounds 3] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pufferlib_peer  # noqa: E402
from bench_env_manager import bench_ding, bench_single_loop, bench_vector  # noqa: E402
from timing import round_spread, timed  # noqa: E402
from workloads import Workload, select  # noqa: E402

from ding_env import create_env_manager  # noqa: E402
from ding_env.env_manager.backends.hosted_env import stepper_of  # noqa: E402

LABELS = "CartPole-v1 x8,zero-cost x8"
PROFILE_TOP = 12
# The calls in which the parent only waits for its workers: their time is the workers', not the parent's.
WAITS = ("<built-in method posix.sched_yield>", "<method 'acquire' of '_multiprocessing.SemLock' objects>")


def bench_wrapper(fast_path: bool, workload: Workload, actions: np.ndarray, seconds: float, min_steps: int) -> float:
    """Steps per second of a loop over ``DingEnvWrapper``s: their ``step``, or the env host's stepper."""
    envs = [fn() for fn in workload.ding_fns()]
    for env in envs:
        env.reset()
    steppers = [stepper_of(env) if fast_path else env.step for env in envs]

    def step(i: int) -> int:
        batch = actions[i % len(actions)]
        for env, stepper, action in zip(envs, steppers, batch, strict=True):
            if stepper(action)[2]:  # done, in a timestep and in the host's plain fields alike
                env.reset()
        return len(envs)

    try:
        return timed(step, seconds, min_steps)
    finally:
        for env in envs:
            env.close()


@dataclass(frozen=True)
class Stage:
    """One row of the budget: how to time it, and the row whose time it adds to (None: a baseline)."""

    run: Callable[[Workload, np.ndarray, float, int], float]
    previous: str | None = None


LOOP = "1 raw Gymnasium loop"
WRAPPER = "2 DingEnvWrapper.step loop"
FAST_PATH = "2b DingEnvWrapper via env host stepper"
BASE_VIEWS = "3 base batched, views (copy_on_get=False)"
BASE_COPIES = "3c base batched, copies (copy_on_get=True)"
SYNC_VECTOR = "5a gymnasium SyncVectorEnv"


# The subprocess layouts: (workers, whether the caller hosts a share beside them).
LAYOUTS = ((1, False), (2, False), (1, True))


def subprocess_name(workers: int, copies: bool, caller_share: bool = False) -> str:
    """The row of the subprocess manager over ``workers`` workers (and the caller's share), with copies or views."""
    stage = "4" + "abd"[LAYOUTS.index((workers, caller_share))] + ("c" if copies else "")
    kind = "copies (copy_on_get=True)" if copies else "views (copy_on_get=False)"
    hosts = f"{workers} worker{'s' if workers > 1 else ''}"
    return f"{stage} subprocess batched, {'caller + ' if caller_share else ''}{hosts}, {kind}"


def manager_cfg(manager_type: str, workers: int | None, copies: bool, caller_share: bool = False) -> dict:
    """The config of one of our managers in a stage."""
    cfg = {"type": manager_type, "copy_on_get": copies}
    if workers is not None:
        cfg["num_workers"] = workers
    if caller_share:
        cfg["caller_share"] = True
    return cfg


def stages() -> dict[str, Stage]:
    """Every row of the budget, in stage order."""
    table = {
        LOOP: Stage(bench_single_loop),
        WRAPPER: Stage(partial(bench_wrapper, False), LOOP),
        FAST_PATH: Stage(partial(bench_wrapper, True), WRAPPER),
        BASE_VIEWS: Stage(partial(run_manager, "base", None, False, False), FAST_PATH),
        BASE_COPIES: Stage(partial(run_manager, "base", None, True, False), BASE_VIEWS),
    }
    for workers, caller_share in LAYOUTS:
        views, copies = subprocess_name(workers, False, caller_share), subprocess_name(workers, True, caller_share)
        table[views] = Stage(partial(run_manager, "subprocess", workers, False, caller_share), BASE_VIEWS)
        table[copies] = Stage(partial(run_manager, "subprocess", workers, True, caller_share), views)
    table[SYNC_VECTOR] = Stage(lambda *a: bench_vector(gym.vector.SyncVectorEnv, *a), LOOP)
    for stage, (name, run) in zip("bcd", pufferlib_peer.executors().items(), strict=False):
        table[f"5{stage} {name}"] = Stage(run, LOOP)
    return table


def run_manager(
    manager_type: str,
    workers: int | None,
    copies: bool,
    caller_share: bool,
    workload: Workload,
    actions: np.ndarray,
    seconds: float,
    min_steps: int,
) -> float:
    """Steps per second of one of our managers' batched step."""
    cfg = manager_cfg(manager_type, workers, copies, caller_share)
    return bench_ding(cfg.pop("type"), True, workload, actions, seconds, min_steps, cfg=cfg)


def run_rounds(
    workload: Workload, seconds: float, min_steps: int, rounds: int, only: str = ""
) -> dict[str, list[float]]:
    """Steps/s of every stage (whose number starts with one of ``only``'s, when given) in each round.

    The rounds are interleaved (odd rounds in reverse order).
    """
    table = stages()
    actions = workload.actions()
    wanted = tuple(prefix.strip() for prefix in only.split(",") if prefix.strip())
    names = [name for name in table if not wanted or name.startswith(wanted)]
    rounds_of: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        for name in names if index % 2 == 0 else reversed(names):
            rate = table[name].run(workload, actions, seconds, min_steps)
            rounds_of[name].append(rate)
            print(f"  round {index + 1}/{rounds}  {name:<52} {1e6 / rate:>7.2f} us/env step", flush=True)
    return rounds_of


def budget_table(workload: Workload, rounds_of: dict[str, list[float]]) -> list[str]:
    """The budget as Markdown rows: us per env step, the increment over the previous stage, rounds."""
    table = stages()
    us = {name: 1e6 / statistics.median(rates) for name, rates in rounds_of.items()}
    rows = [
        f"#### {workload.label}",
        "",
        "| stage | us per env step | over | increment (us) | x raw loop speed | rounds / median |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for name, value in us.items():
        previous = table[name].previous
        over = previous.split(" ", 1)[0] if previous else ""  # the previous stage's number
        increment = f"{value - us[previous]:+.2f}" if previous in us else ""
        spread = round_spread(rounds_of[name], statistics.median(rounds_of[name]))
        speed = f"{us[LOOP] / value:.2f}" if LOOP in us else ""
        rows.append(f"| {name} | {value:.2f} | {over} | {increment} | {speed} | {spread} |")
    rows += ["", *ratio_rows(workload, us)]
    return rows


def described(name: str) -> str:
    """A row's name without its stage number."""
    return name.split(" ", 1)[1]


def ratio_rows(workload: Workload, us: dict[str, float]) -> list[str]:
    """The ratios the per-env targets name: time per env step, ours over the peer's (below 1: ours is faster)."""
    rows = []
    ours = {name: value for name, value in us.items() if name.startswith("4")}
    if not ours:
        return rows
    best_ours = min(ours, key=ours.get)
    # Against PufferLib's worker layouts (like with like: envs in worker processes) and against all of them.
    for peers in ("PufferLib Multiprocessing", "PufferLib"):
        puffer = {name: value for name, value in us.items() if peers in name}
        if not puffer:
            continue
        best_puffer = min(puffer, key=puffer.get)
        rows.append(
            f"- {workload.label}: best ding_env subprocess layout ({described(best_ours)}, {ours[best_ours]:.2f} us) /"
            f" best {peers} layout ({described(best_puffer)}, {puffer[best_puffer]:.2f} us) ="
            f" {ours[best_ours] / puffer[best_puffer]:.2f}"
        )
    for base in (BASE_VIEWS, BASE_COPIES):
        if base not in us or SYNC_VECTOR not in us:
            continue
        rows.append(
            f"- {workload.label}: {described(base)} / SyncVectorEnv = {us[base] / us[SYNC_VECTOR]:.2f}"
            f" (per batch {us[base] * workload.env_num:.1f} against {us[SYNC_VECTOR] * workload.env_num:.1f} us)"
        )
    return rows


def profile(workload: Workload, seconds: float) -> list[str]:
    """A profile of stages 3 and 4 (views): the functions with the most time of their own per env step."""
    actions = workload.actions()
    lines = []
    for name, manager_type, workers, caller_share in (
        (BASE_VIEWS, "base", None, False),
        *((subprocess_name(workers, False, share), "subprocess", workers, share) for workers, share in LAYOUTS),
    ):
        manager = create_env_manager(manager_cfg(manager_type, workers, False, caller_share), workload.ding_fns())
        manager.launch()
        profiler = cProfile.Profile()
        counted = [0]

        def step(i: int, manager=manager, counted=counted) -> int:
            ready = manager.ready_obs_batch
            manager.step_batch(ready.env_id, actions[i % len(actions)][ready.env_id])
            counted[0] += len(ready.env_id)
            return len(ready.env_id)

        try:
            timed(step, seconds / 4, 50)  # a warm-up outside the profile
            counted[0] = 0
            profiler.enable()
            rate = timed(step, seconds, 50)
            profiler.disable()
        finally:
            manager.close()
        # timed warms up within the profile too: every env step counted, over every profiled call.
        env_steps = counted[0]
        stats = pstats.Stats(profiler).stats
        top = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:PROFILE_TOP]
        lines += [f"{workload.label}, {name} (profiled: {1e6 / rate:.2f} us per env step)", ""]
        lines += ["| function | own us per env step | cumulative us per env step | calls per env step |"]
        lines += ["|---|---:|---:|---:|"]
        for (filename, line, function), (_, calls, own, cumulative, _) in top:
            where = f"{shorten(filename)}:{line} {function}"
            lines.append(
                f"| `{where}` | {own / env_steps * 1e6:.2f} | {cumulative / env_steps * 1e6:.2f} |"
                f" {calls / env_steps:.2f} |"
            )
        waiting = sum(row[2] for func, row in stats.items() if func[2] in WAITS)
        outside = (sum(row[2] for row in stats.values()) - waiting) / env_steps * 1e6
        lines += ["", f"Outside the waits for workers ({', '.join(WAITS)}): {outside:.2f} us per env step.", ""]
    return lines


def shorten(filename: str) -> str:
    """A source file's path from its package on, e.g. ``ding_env/env_manager/...``."""
    for marker in ("ding_env" + os.sep, "benchmarks" + os.sep, "site-packages" + os.sep, "python3."):
        if marker in filename:
            return filename[filename.index(marker) :].removeprefix("site-packages" + os.sep)
    return filename


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="measured seconds per stage and round (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median counts (default 3)")
    parser.add_argument("--only", default=LABELS, help=f"comma-separated workload labels (default {LABELS!r})")
    parser.add_argument("--profile", action="store_true", help="one more pass of cProfile over stages 3 and 4")
    parser.add_argument(
        "--stages", default="", help="comma-separated stage numbers to run, e.g. '1,4,5' (default: every stage)"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be >= 1, got {args.rounds}")
    if not pufferlib_peer.installed():
        print("PufferLib is not installed: its rows and ratio are left out")
    print(f"load average before: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    report = []
    for workload in select(args.only):
        print(f"\n{workload.label}")
        rounds_of = run_rounds(workload, args.seconds, 50, args.rounds, args.stages)
        report += [*budget_table(workload, rounds_of), ""]
    if args.profile:
        for workload in select(args.only):
            report += profile(workload, args.seconds)
    print(f"\nload average after: {' '.join(f'{load:.2f}' for load in os.getloadavg())}\n")
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
