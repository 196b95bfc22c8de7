"""The env implementation checker: ``check_env`` runs every check and returns a report.

``check_env(MyEnv)`` accepts a ``BaseEnv`` class, a zero-argument env factory,
or a class with a ``cfg``. DI-engine's raising entry points live in
``ding_env.checker.compat`` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ding_env.checker.checks import CHECKS
from ding_env.checker.compat import (
    EnvCheckError,
    check_all,
    check_array_space,
    check_different_memory,
    check_obs_deepcopy,
    check_reset,
    check_space_dtype,
    check_step,
    demonstrate_correct_procedure,
)
from ding_env.checker.report import CheckReport, Finding
from ding_env.checker.rollout import CheckContext

__all__ = [
    "CHECKS",
    "CheckReport",
    "EnvCheckError",
    "Finding",
    "check_all",
    "check_array_space",
    "check_different_memory",
    "check_env",
    "check_obs_deepcopy",
    "check_reset",
    "check_space_dtype",
    "check_step",
    "demonstrate_correct_procedure",
]


def check_env(
    env_fn_or_class: Callable[..., Any],
    cfg: dict | None = None,
    *,
    episodes: int = 3,
    max_steps: int = 1000,
    seed: int = 0,
    subprocess: bool = True,
    progress: Callable[[str], None] | None = None,
) -> CheckReport:
    """Run every check on the env and return the findings.

    Args:
        env_fn_or_class: A ``BaseEnv`` subclass (built with ``cfg``) or a zero-argument factory.
        cfg: Config for the class (ignored for a factory).
        episodes: Episodes per rollout.
        max_steps: Step cap per episode; an episode that does not end is a warning.
        seed: Base seed.
        subprocess: Also compare the trajectory inside ``SyncSubprocessEnvManager``.
        progress: Called with each check's name before it runs.
    """
    if isinstance(env_fn_or_class, type):
        make_env = partial(env_fn_or_class, cfg) if cfg is not None else env_fn_or_class
        target = f"{env_fn_or_class.__module__}:{env_fn_or_class.__qualname__}"
    else:
        make_env = env_fn_or_class
        target = getattr(env_fn_or_class, "__qualname__", repr(env_fn_or_class))
    ctx = CheckContext(make_env, episodes, max_steps, seed)
    report = CheckReport(target)
    for check in CHECKS:
        if check.__name__ == "check_subprocess" and not subprocess:
            continue
        if progress is not None:
            progress(check.__name__)
        report.checks.append(check.__name__)
        report.findings += check(ctx)
    return report
