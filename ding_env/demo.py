"""Random-policy episodes of registered env types through an env manager (``ding-env demo``)."""

from __future__ import annotations

import importlib.util
import itertools
import math
import time
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import NamedTuple

import gymnasium as gym
import numpy as np

from ding_env.env_manager import create_env_manager
from ding_env.extras import missing_extra
from ding_env.registry import ENV_REGISTRY

# Env steps per env type at most (over all its envs): enough for a few episodes of every built-in type.
DEFAULT_MAX_STEPS = 20_000


class DemoRow(NamedTuple):
    """What running one env type produced."""

    env_type: str
    episodes: int
    steps: int
    mean_return: float
    truncated: int
    steps_per_second: float
    cut: bool = False  # stopped at the step cap before its episodes ended


def run_demo(
    env_types: Sequence[str],
    episodes: int,
    env_num: int,
    manager_type: str,
    seed: int,
    progress: Callable[[str], None] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> list[DemoRow]:
    """Run at least ``episodes`` random episodes of each env type and summarise them.

    Every episode that ends counts, so envs that end theirs in the same step may take a row past ``episodes``.
    An env type whose episodes have not all ended after exactly ``max_steps`` env steps stops there: its row counts
    the episodes that ended (none, for an env that never ends one; its mean return is then NaN) and says
    ``cut`` so a type that never ends cannot hold up the others.
    """
    _quiet_third_party_libraries()
    rows = []
    for env_type in env_types:
        env_cls = ENV_REGISTRY.get(env_type)
        missing = _missing_dependency(env_type, env_cls)
        if missing is not None:
            if progress is not None:
                progress(f"{env_type}: skipped ({missing})")
            continue
        env_fn = [partial(env_cls, cfg) for cfg in env_cls.create_collector_env_cfg({"collector_env_num": env_num})]
        returns, truncated, steps = [], 0, 0
        start = time.perf_counter()
        with create_env_manager({"type": manager_type}, env_fn) as manager:
            manager.seed(seed, dynamic_seed=True)
            manager.launch()
            sent = 0  # actions sent: an async manager returns some of their steps in a later call
            while len(returns) < episodes and steps < max_steps:
                actions = manager.random_action()
                if not manager.lockstep:  # as many envs as steps remain, so the cap is exact
                    actions = dict(itertools.islice(actions.items(), max_steps - sent))
                sent += len(actions)
                for timestep in manager.step(actions).values():
                    steps += 1
                    if timestep.done:
                        returns.append(timestep.info["eval_episode_return"])
                        truncated += timestep.truncated
        elapsed = time.perf_counter() - start
        cut = len(returns) < episodes
        mean_return = float(np.mean(returns)) if returns else math.nan
        row = DemoRow(env_type, len(returns), steps, mean_return, truncated, steps / elapsed, cut)
        if progress is not None:
            ended = f"{row.episodes} episodes, mean return {row.mean_return:.2f}" if returns else "no episode ended"
            progress(f"{env_type}: {ended}" + (f" (cut at {steps} steps, --max-steps {max_steps})" if cut else ""))
        rows.append(row)
    return rows


def _missing_dependency(env_type: str, env_cls: type) -> str | None:
    """Why an env type cannot run here (an optional extra not installed), or None."""
    missing = missing_extra(f"{env_cls.__module__}:{env_cls.__qualname__}", f"env type {env_type!r}")
    if missing is not None:
        return missing
    env = env_cls()
    try:
        env.observation_space  # noqa: B018 - builds the simulator, importing what it needs
    except (ImportError, gym.error.DependencyNotInstalled) as error:
        return str(error)
    finally:
        env.close()
    return None


def _quiet_third_party_libraries() -> None:
    """No banners or warnings of the simulators in the demo's output (set before the workers are forked).

    ALE prints its banner on every ROM load; MuJoCo warns about Gymnasium's own model files
    (routed to :class:`~ding_env.env_wrappers.mujoco_warnings.MujocoWarning`, ignored here).
    """
    from ding_env.env_wrappers.mujoco_warnings import MujocoWarning

    warnings.filterwarnings("ignore", category=MujocoWarning)
    if importlib.util.find_spec("ale_py") is not None:
        import ale_py

        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
