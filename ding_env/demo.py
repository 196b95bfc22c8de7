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

from ding_env.config import deep_merge_dicts, default_cfg
from ding_env.env.batch_env import is_batch_env_class
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
    error: Exception | None = None  # what stopped the type (its row counts nothing then)


def run_demo(
    env_types: Sequence[str],
    episodes: int,
    env_num: int,
    manager_type: str,
    seed: int,
    progress: Callable[[str], None] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    describe_error: Callable[[Exception], str] | None = None,
) -> list[DemoRow]:
    """Run at least ``episodes`` random episodes of each env type and summarise them.

    Every episode that ends counts, so envs that end theirs in the same step may take a row past ``episodes``.
    An env type whose episodes have not all ended after exactly ``max_steps`` env steps stops there: its row counts
    the episodes that ended (none, for an env that never ends one; its mean return is then NaN) and says
    ``cut`` so a type that never ends cannot hold up the others. Each env is built from the type's
    ``default_config()``, as ``ding-env run`` builds it from an env section naming only the type; a batch env
    type runs as one batch env of that config (its sub-envs, not ``env_num``, are the envs).

    An env type that fails (an env that cannot be built, or whose ``reset`` or ``step`` raises) gets a row
    holding the ``error``, reported to ``progress`` in one line (``describe_error``'s, else the exception's
    type and message), and the other types still run.
    """
    _quiet_third_party_libraries()
    rows = []
    for env_type in env_types:
        try:
            row = _run_type(env_type, episodes, env_num, manager_type, seed, progress, max_steps)
        except Exception as error:  # noqa: BLE001 - one type's failure is its row: the others still run
            row = DemoRow(env_type, 0, 0, math.nan, 0, 0.0, error=error)
            if progress is not None:
                text = describe_error(error) if describe_error else f"{type(error).__name__}: {error}"
                progress(f"{env_type}: failed: {text}")
        if row is not None:
            rows.append(row)
    return rows


def _run_type(
    env_type: str,
    episodes: int,
    env_num: int,
    manager_type: str,
    seed: int,
    progress: Callable[[str], None] | None,
    max_steps: int,
) -> DemoRow | None:
    """One env type's row (None: skipped, its extra is not installed); see :func:`run_demo`."""
    env_cls = ENV_REGISTRY.get(env_type)
    # The class's defaults, as `ding-env run` merges them under an env section: DI-engine's envs take a cfg
    # in __init__ and read their keys from it.
    default = default_cfg(env_cls)
    if is_batch_env_class(env_cls):
        env_cfgs = [default]  # one batch env of its default size: its sub-envs are the manager's envs
    else:
        env_cfgs = env_cls.create_collector_env_cfg(deep_merge_dicts(default, {"collector_env_num": env_num}))
    missing = _missing_dependency(env_type, env_cls, env_cfgs[0])
    if missing is not None:
        if progress is not None:
            progress(f"{env_type}: skipped ({missing})")
        return None
    env_fn = [partial(env_cls, cfg) for cfg in env_cfgs]
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
    return row


def _missing_dependency(env_type: str, env_cls: type, cfg: dict) -> str | None:
    """Why an env type cannot run here (an optional extra not installed), or None."""
    missing = missing_extra(f"{env_cls.__module__}:{env_cls.__qualname__}", f"env type {env_type!r}")
    if missing is not None:
        return missing
    env = env_cls(deep_merge_dicts(cfg, {}))  # a copy: the env may keep and change it
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
