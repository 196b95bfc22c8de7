"""The env implementation checker: ``check_env`` runs every check and returns a report.

``check_env(MyEnv)`` accepts a ``BaseEnv`` class, a zero-argument env factory,
or a class with a ``cfg``. The checks live in ``output_checks`` (what the env's calls return),
``time_limit_checks`` (episodes at the time limit), ``lifecycle_checks`` (construction and close)
and ``determinism_checks`` (seeds and worker processes); ``CHECKS`` orders them. Each ``check_*``
takes a ``CheckContext`` and returns a list of ``Finding``; an exception raised by the env becomes
an error finding, never a crash of the checker. ``check_batch_env`` (``batch_checks``) checks a
``BaseBatchEnv`` the same way. DI-engine's raising entry points live in ``ding_env.checker.compat``
and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ding_env.checker.batch_checks import check_batch_env
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
from ding_env.checker.determinism_checks import (
    check_dynamic_seed,
    check_global_rng,
    check_static_seed,
    check_subprocess,
)
from ding_env.checker.di_engine_mode import point_to_di_engine_mode, requires_cfg, tolerate
from ding_env.checker.lifecycle_checks import check_close_twice, check_lazy_init
from ding_env.checker.output_checks import (
    check_obs_memory,
    check_random_action,
    check_reset_obs,
    check_spaces,
    check_step_output,
)
from ding_env.checker.report import ERROR, CheckReport, Finding, exception_of
from ding_env.checker.rollout import CheckContext, raised
from ding_env.checker.time_limit_checks import check_time_limit
from ding_env.config import deep_merge_dicts, default_cfg
from ding_env.env.seeding import global_rngs_kept

__all__ = [
    "CHECKS",
    "CheckReport",
    "EnvCheckError",
    "Finding",
    "check_all",
    "check_array_space",
    "check_batch_env",
    "check_different_memory",
    "check_env",
    "check_obs_deepcopy",
    "check_reset",
    "check_space_dtype",
    "check_step",
    "demonstrate_correct_procedure",
]

# Every check, in the order check_env runs them.
CHECKS: list[Callable[[CheckContext], list[Finding]]] = [
    check_spaces,
    check_lazy_init,
    check_reset_obs,
    check_step_output,
    check_obs_memory,
    check_random_action,
    check_static_seed,
    check_dynamic_seed,
    check_global_rng,
    check_time_limit,
    check_close_twice,
    check_subprocess,
]

# Checks whose failure another check would only repeat in other words: an env that shares one obs buffer
# between steps also "changes" its seeded trajectory, since the stored observations are overwritten.
FOLLOWS_FROM = {
    "check_static_seed": ("check_obs_memory",),
    "check_dynamic_seed": ("check_obs_memory",),
    "check_subprocess": ("check_obs_memory", "check_static_seed"),
}
# Checks whose failure, after these failed, repeats them: the managers refuse the same output the checks named.
REPEATS = {"check_subprocess": ("check_reset_obs", "check_step_output")}


@global_rngs_kept()  # the env under check may seed them: the caller's states come back
def check_env(
    env_fn_or_class: Callable[..., Any],
    cfg: dict | None = None,
    *,
    episodes: int = 3,
    max_steps: int = 1000,
    seed: int = 0,
    subprocess: bool = True,
    progress: Callable[[str], None] | None = None,
    di_engine: bool = False,
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
        di_engine: DI-engine mode: a class whose ``__init__`` requires ``cfg`` gets its
            ``default_config()`` when ``cfg`` is None, and what DI-engine's envs do and every manager
            accepts (gym spaces, spaces known after reset, ``(1,)`` random actions, no
            ``info['truncated']``) is a warning, not an error.
    """
    if isinstance(env_fn_or_class, type):
        target = f"{env_fn_or_class.__module__}:{env_fn_or_class.__qualname__}"
        if di_engine and (cfg is not None or requires_cfg(env_fn_or_class)):
            cfg = deep_merge_dicts(default_cfg(env_fn_or_class), cfg)  # as DI-engine's compile_config does
        elif cfg is None and requires_cfg(env_fn_or_class):
            hint = "give its config (ding-env check --config FILE), or --di-engine to use its default_config()"
            return _construct_failed(target, f"{target}.__init__ requires a cfg and none was given", hint)
        make_env = partial(env_fn_or_class, cfg) if cfg is not None else env_fn_or_class
    else:
        make_env = env_fn_or_class
        target = getattr(env_fn_or_class, "__qualname__", repr(env_fn_or_class))
    try:
        env = make_env()
    except Exception as error:  # noqa: BLE001 - an env that cannot be built is one finding, not twelve
        return _construct_failed(target, raised("check_construct", "constructing the env", error).message, _hint(error))
    ctx = CheckContext(make_env, episodes, max_steps, seed, di_engine)
    ctx.close(env)  # a close() that raises is check_close_twice's to report
    report = CheckReport(target)
    failed: set[str] = set()
    raised_by: dict[str, str] = {}  # exception raised by the env -> the first check it failed
    for check in CHECKS:
        if check.__name__ == "check_subprocess" and not subprocess:
            continue
        if progress is not None:
            progress(check.__name__)
        report.checks.append(check.__name__)
        cause = next((name for name in FOLLOWS_FROM.get(check.__name__, ()) if name in failed), None)
        if ctx.spaceless:  # every other check reads the spaces, or steps the env in a manager that needs them
            cause = "check_spaces"
        if cause is not None:
            report.skipped[check.__name__] = cause
            continue
        findings = check(ctx)
        cause = next((raised_by[seen] for f in findings for seen in raised_by if seen in (exception_of(f) or "")), None)
        if cause is None and any(finding.severity == ERROR for finding in findings):
            cause = next((name for name in REPEATS.get(check.__name__, ()) if name in failed), None)
        if cause is not None:  # the env raised what it raised in an earlier check (maybe inside an EnvError)
            report.skipped[check.__name__] = cause
            continue
        raised_by.update({exception_of(f): check.__name__ for f in findings if exception_of(f) is not None})
        shown = [(tolerate if di_engine else point_to_di_engine_mode)(finding) for finding in findings]
        # A check failed when an error is shown: one --di-engine accepts as a warning explains no later error.
        if any(finding.severity == ERROR for finding in shown):
            failed.add(check.__name__)
        report.findings += shown
    return report


def _construct_failed(target: str, message: str, hint: str) -> CheckReport:
    report = CheckReport(target, ["check_construct"])
    report.findings.append(Finding("check_construct", ERROR, message, hint))
    return report


def _hint(error: Exception) -> str:
    if isinstance(error, (AttributeError, KeyError)):
        # EasyDict and dict name the missing key: DI-engine envs read keys their class config does not declare.
        return (
            "__init__ reads a config key that was not given: pass --config FILE whose env section sets it "
            "(DI-engine's configs do), or declare it in the class `config` dict"
        )
    return "fix the exception; every check builds the env the way the managers do"
