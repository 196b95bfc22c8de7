"""The checker for batch envs: ``check_batch_env`` runs every ``BaseBatchEnv`` check and returns a report.

Each check builds its own batch env, drives it as a manager would (seed, reset, step stacked
random actions, reset the sub-envs whose episode ended) and states the contract it found broken.
An exception raised by the env becomes an error finding, never a crash of the checker.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np

from ding_env.checker.determinism_checks import global_rngs_touched
from ding_env.checker.output_checks import obs_hint
from ding_env.checker.report import ERROR, CheckReport, Finding, exception_of
from ding_env.checker.rollout import OutputFault, guard, raised
from ding_env.checker.time_limit_checks import env_time_limit, time_limit_findings
from ding_env.env.batch_env import BaseBatchEnv, BatchStep
from ding_env.env.batch_sources.rows import row_of, stack_rows
from ding_env.env.batch_step import rows_of
from ding_env.env.seeding import global_rngs_kept
from ding_env.env.spaces import SPACE_NAMES, value_problems
from ding_env.errors import EnvStateError, where_defined
from ding_env.trees import leaves


@dataclass
class BatchCheckContext:
    """What every batch check needs.

    Attributes:
        make_env: Builds a fresh batch env (each check uses its own).
        steps: Steps of each rollout (every sub-env steps each time; ended ones are reset).
        seed: Base seed.
    """

    make_env: Callable[[], BaseBatchEnv]
    steps: int = 200
    seed: int = 0


def random_actions(space: gym.spaces.Space, count: int) -> Any:
    """``count`` samples of ``space`` (seeded by the caller), stacked."""
    return stack_rows([_sample(space) for _ in range(count)])


def _sample(space: gym.spaces.Space) -> Any:
    sample = space.sample()
    return sample if isinstance(sample, (dict, tuple)) else np.asarray(sample)


def batch_rollout(env: BaseBatchEnv, ctx: BatchCheckContext, dynamic: bool = True) -> list[tuple[Any, BatchStep]]:
    """Seed, reset and step every sub-env ``ctx.steps`` times with seeded random actions.

    Returns:
        ``(obs shown before the step, its BatchStep)`` per step; ended sub-envs are reset after each step.
    """
    env.seed(ctx.seed, dynamic_seed=dynamic)
    obs = env.reset()
    space = env.action_space
    space.seed(ctx.seed)
    records = []
    for _ in range(ctx.steps):
        record = env.step(random_actions(space, env.num_envs))
        rows = _obs_rows(record.obs)
        if any(count != env.num_envs for count in rows):  # the rows below would be read past their end
            raise OutputFault(
                f"its step obs has {rows} rows, expected {env.num_envs} (one per sub-env) in every array",
                where_defined(type(env)._step),
                "give every array of the observation one row per sub-env stepped",
            )
        records.append((obs, record))
        obs = record.obs
        ended = np.flatnonzero(record.done)
        if len(ended):
            first = env.reset(ended)
            obs = _replace_rows(obs, ended, first)
    return records


def _obs_rows(obs: Any) -> list[int | None]:
    """The rows of each array of stacked observations (None for a leaf that is no array of rows)."""
    return [rows_of(leaf) for leaf in leaves(obs)]


def _replace_rows(obs: Any, rows: np.ndarray, new: Any) -> Any:
    """``obs`` (not written to) with ``rows`` replaced by the stacked ``new`` rows."""
    shown = [row_of(obs, index) for index in range(len(leaves(obs)[0]))]
    for position, index in enumerate(rows.tolist()):
        shown[index] = row_of(new, position)
    return stack_rows(shown)


def check_batch_construction(ctx: BatchCheckContext) -> list[Finding]:
    """The env is a ``BaseBatchEnv`` with ``num_envs >= 1``, Gymnasium spaces, and pickles before its first reset."""
    name = "check_batch_construction"

    def body() -> list[Finding]:
        env = ctx.make_env()
        findings = []
        if not isinstance(env, BaseBatchEnv):
            return [Finding(name, ERROR, f"make_env built {type(env).__name__}, not a BaseBatchEnv", "subclass it")]
        try:
            pickle.loads(cloudpickle.dumps(env))
        except Exception as error:  # noqa: BLE001 - any pickling failure is the finding
            hint = "keep __init__ to plain config; build the simulator in the first reset()"
            findings.append(raised(name, "pickling the batch env before its first reset", error, hint))
        for what in SPACE_NAMES:
            space = getattr(env, what)
            if not isinstance(space, gym.spaces.Space):
                findings.append(Finding(name, ERROR, f"{what} is {space!r}, not a Gymnasium space", "return one"))
        if isinstance(env.reward_space, gym.spaces.Box) and env.reward_space.shape != (1,):
            message = f"reward_space has shape {env.reward_space.shape}, expected (1,) (one sub-env's reward)"
            findings.append(Finding(name, ERROR, message, "declare Box(-inf, inf, (1,), float32)"))
        try:
            env.close()
        except Exception:  # noqa: BLE001 - not construction's: check_batch_close_twice closes one never reset too
            pass
        return findings

    return guard(name, "constructing the batch env", body)


def check_batch_outputs(ctx: BatchCheckContext) -> list[Finding]:
    """Reset and step give stacked rows inside the spaces, with the record's shapes and dtypes."""
    name = "check_batch_outputs"

    def body() -> list[Finding]:
        env = ctx.make_env()
        findings: list[Finding] = []
        n = env.num_envs
        previous = None
        for obs, record in batch_rollout(env, ctx):
            if previous is None:
                findings += _rows_problems(name, "reset obs", obs, n, env.observation_space)
            findings += _rows_problems(name, "step obs", record.obs, n, env.observation_space)
            findings += _record_problems(name, record, n, env.reward_space)
            if previous is not None and any(map(np.shares_memory, leaves(previous), leaves(record.obs))):
                hint = "return new arrays each step (copy out of any reused buffer)"
                findings.append(Finding(name, ERROR, "observations of consecutive steps share memory", hint))
            previous = record.obs
            if findings:
                break
        env.close()
        return findings[:1]

    return guard(name, "stepping the batch env", body)


def _rows_problems(name: str, what: str, obs: Any, n: int, space: gym.spaces.Space) -> list[Finding]:
    rows = _obs_rows(obs)
    if any(count != n for count in rows):
        message = f"{what} has {rows} rows, expected {n} (one per sub-env) in every array"
        return [Finding(name, ERROR, message, "stack one observation per sub-env along axis 0")]
    for index in range(n):
        problems = value_problems(row_of(obs, index), space, f"{what} row {index}")  # shape, dtype, bounds: which
        if problems:
            return [Finding(name, ERROR, problems[0], obs_hint(problems[0]))]
    return []


def _record_problems(name: str, record: Any, n: int, reward_space: gym.spaces.Space) -> list[Finding]:
    if not isinstance(record, BatchStep):
        return [Finding(name, ERROR, f"step() returned {type(record).__name__}", "build it with self._transition")]
    expected = {
        "reward": ((n, *reward_space.shape), reward_space.dtype),
        "terminated": ((n,), np.dtype(bool)),
        "truncated": ((n,), np.dtype(bool)),
        "episode_return": ((n,), np.dtype(np.float64)),
    }
    for field, (shape, dtype) in expected.items():
        value = getattr(record, field)
        if not isinstance(value, np.ndarray) or value.shape != shape or value.dtype != dtype:
            got = (
                f"an array of shape {value.shape} and dtype {value.dtype}"
                if isinstance(value, np.ndarray)
                else (f"a {type(value).__name__} ({value!r:.40})")
            )
            message = f"BatchStep.{field} is {got}, expected an array of shape {shape} and dtype {dtype}"
            return [Finding(name, ERROR, message, "build the record with self._transition")]
    if (record.terminated & record.truncated).any():
        message = "a row is both terminated and truncated"
        return [Finding(name, ERROR, message, "a terminal state at the time limit is terminated only")]
    for key, value in record.info.items():
        if not isinstance(value, np.ndarray) or len(value) != n:
            message = f"info[{key!r}] is {type(value).__name__}, expected an array with one row per stepped sub-env"
            return [Finding(name, ERROR, message, "give info as {key: array of n rows}")]
    return []


def check_batch_reset_order(ctx: BatchCheckContext) -> list[Finding]:
    """A sub-env whose episode ended refuses to step until reset; partial steps and resets give their rows."""
    name = "check_batch_reset_order"

    def body() -> list[Finding]:
        env = ctx.make_env()
        env.seed(ctx.seed)
        n = env.num_envs
        env.reset()
        space = env.action_space
        space.seed(ctx.seed)
        findings = []
        if not env.lockstep and n > 1:
            record = env.step(random_actions(space, 1), env_ids=[n - 1])
            if len(leaves(record.obs)[0]) != 1 or record.terminated.shape != (1,):
                message = "step(actions, env_ids=[one id]) did not return one row"
                findings.append(Finding(name, ERROR, message, "return rows for the stepped sub-envs only"))
        for _ in range(ctx.steps):
            record = env.step(random_actions(space, n))
            ended = np.flatnonzero(record.done)
            if len(ended) == 0:
                continue
            try:
                env.step(random_actions(space, n))
            except EnvStateError:
                pass
            else:
                message = f"sub-envs {ended.tolist()} ended their episode and step() took them again without a reset"
                findings.append(Finding(name, ERROR, message, "mark them with BaseBatchEnv.step, do not override it"))
            first = env.reset(ended)
            if len(leaves(first)[0]) != len(ended):
                message = f"reset({ended.tolist()}) returned {len(leaves(first)[0])} rows"
                findings.append(Finding(name, ERROR, message, "return one first observation per reset sub-env"))
            break
        env.close()
        return findings

    return guard(name, "resetting ended sub-envs", body)


def check_batch_seeds(ctx: BatchCheckContext) -> list[Finding]:
    """The same seeds give the same trajectory; static seeds replay each sub-env's first observation."""
    name = "check_batch_seeds"

    def body() -> list[Finding]:
        runs = []
        for _ in range(2):
            env = ctx.make_env()
            runs.append(_flatten(batch_rollout(env, ctx)))
            env.close()
        if len(runs[0]) != len(runs[1]) or not all(
            np.array_equal(a, b, equal_nan=True) for a, b in zip(*runs, strict=True)
        ):
            hint = "seed every random draw from the sub-envs' seeds (BaseBatchEnv._episode_generators), never globally"
            return [Finding(name, ERROR, "two batch envs with the same seeds gave different trajectories", hint)]
        env = ctx.make_env()
        env.seed(ctx.seed, dynamic_seed=False)
        first, again = env.reset(), env.reset()
        env.close()
        if not all(np.array_equal(a, b) for a, b in zip(leaves(first), leaves(again), strict=True)):
            hint = "with dynamic_seed=False every reset starts each sub-env's episode from its own seed"
            return [Finding(name, ERROR, "static seeds: two resets gave different first observations", hint)]
        return []

    return guard(name, "seeding the batch env", body)


def _flatten(records: list[tuple[Any, BatchStep]]) -> list[np.ndarray]:
    return [
        np.concatenate([np.ravel(a).astype(np.float64) for a in [*leaves(obs), record.reward, record.done]])
        for obs, record in records
    ]


def check_batch_close_twice(ctx: BatchCheckContext) -> list[Finding]:
    """``close()`` may be called twice, before use and after."""
    name = "check_batch_close_twice"

    def body() -> list[Finding]:
        env = ctx.make_env()
        env.close()
        env = ctx.make_env()
        env.reset()
        env.close()
        env.close()
        return []

    return guard(name, "close()", body, "make close() idempotent: release resources only if they exist")


def check_batch_time_limit(ctx: BatchCheckContext) -> list[Finding]:
    """A sub-env's episode ends at the time limit the batch env declares, as a truncation (as a BaseEnv's)."""
    name = "check_batch_time_limit"

    def body() -> list[Finding]:
        env = ctx.make_env()
        try:
            return _time_limit_problems(name, env, ctx)
        finally:
            env.close()

    return guard(name, "rollouts", body)


def _time_limit_problems(name: str, env: BaseBatchEnv, ctx: BatchCheckContext) -> list[Finding]:
    """The first sub-env episode that ran past the declared time limit, or ended at it terminated."""
    limit = env_time_limit(env)
    if limit is None:
        return []
    lengths = np.zeros(env.num_envs, dtype=np.int64)
    terminated, truncated, first = 0, 0, None  # episodes ended at the limit, and the first sub-env so terminated
    for _, record in batch_rollout(env, ctx):
        lengths += 1
        if (lengths > limit).any():
            sub_env = int(np.flatnonzero(lengths > limit)[0])
            message = (
                f"sub-env {sub_env}'s episode ran past the time limit the env declares (max_episode_steps={limit})"
            )
            return [Finding(name, ERROR, message, "end each sub-env's episode at the limit as truncated")]
        at_limit = lengths == limit
        ended_terminated = np.flatnonzero(record.terminated & at_limit)
        if first is None and len(ended_terminated):
            first = int(ended_terminated[0])
        terminated += len(ended_terminated)
        truncated += int(np.count_nonzero(record.truncated & at_limit))
        lengths[record.done] = 0
    return time_limit_findings(name, limit, terminated, truncated, f"sub-env {first}'s episode")


def check_batch_global_rng(ctx: BatchCheckContext) -> list[Finding]:
    """Seeding, resetting and stepping leave numpy's and Python's global RNG state untouched (yours are put back)."""
    name = "check_batch_global_rng"

    def run() -> None:
        env = ctx.make_env()
        try:
            batch_rollout(env, ctx)
        finally:
            env.close()

    def body() -> list[Finding]:
        hint = "draw from the sub-envs' generators (BaseBatchEnv._episode_generators), never the global RNG"
        return [
            Finding(name, ERROR, f"the env changed the global {what} RNG state", hint)
            for what in global_rngs_touched(run)
        ]

    return guard(name, "seeded rollouts", body)


# Every batch check, in the order check_batch_env runs them.
BATCH_CHECKS: list[Callable[[BatchCheckContext], list[Finding]]] = [
    check_batch_construction,
    check_batch_outputs,
    check_batch_reset_order,
    check_batch_seeds,
    check_batch_time_limit,
    check_batch_global_rng,
    check_batch_close_twice,
]


def check_batch_env(
    env_fn_or_class: Callable[..., BaseBatchEnv], cfg: dict | None = None, *, steps: int = 200, seed: int = 0
) -> CheckReport:
    """Run every batch check and return the findings.

    Args:
        env_fn_or_class: A ``BaseBatchEnv`` subclass (built with ``cfg``) or a zero-argument factory.
        cfg: Config for the class (ignored for a factory).
        steps: Steps per rollout.
        seed: Base seed.
    """
    if isinstance(env_fn_or_class, type):
        target = f"{env_fn_or_class.__module__}:{env_fn_or_class.__qualname__}"
        make_env = partial(env_fn_or_class, cfg) if cfg is not None else env_fn_or_class
    else:
        target = getattr(env_fn_or_class, "__qualname__", repr(env_fn_or_class))
        make_env = env_fn_or_class
    ctx = BatchCheckContext(make_env, steps, seed)
    # Named as called: `ding-env check` takes one-env classes only.
    report = CheckReport(target, heading=f"ding_env.checker.check_batch_env({target})")
    raised_by: dict[str, str] = {}  # an exception met -> the first check it failed
    with global_rngs_kept():  # the env under check may seed them: the caller's states come back
        for check in BATCH_CHECKS:
            report.checks.append(check.__name__)
            findings = check(ctx)
            raised = [exception_of(finding) for finding in findings]
            if findings and all(text in raised_by for text in raised):  # what an earlier check reported
                report.skipped[check.__name__] = raised_by[raised[0]]
                continue
            raised_by.update({text: check.__name__ for text in raised if text is not None})
            report.findings += findings
            if check is check_batch_construction and report.errors:
                break  # every other check builds the env the same way
    return report
