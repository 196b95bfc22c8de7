"""DI-engine's ``env_implementation_check`` entry points, raising on failure.

Each raises :class:`EnvCheckError` (an ``AssertionError``, as DI-engine's
asserts were) with the finding's message and fix. Unlike DI-engine's, they
accept uint8 images, bound ``Discrete`` as ``start <= x < start + n``, compare
memory with ``np.shares_memory``, and cap the step loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.base_env import BaseEnv
from ding_env.checker.checks import check_obs_memory, check_reset_obs, check_spaces, check_step_output
from ding_env.checker.report import Finding
from ding_env.checker.rollout import CheckContext
from ding_env.checker.spaces import leaves, space_problems

__all__ = [
    "EnvCheckError",
    "check_all",
    "check_array_space",
    "check_different_memory",
    "check_obs_deepcopy",
    "check_reset",
    "check_space_dtype",
    "check_step",
    "demonstrate_correct_procedure",
]


class EnvCheckError(AssertionError):
    """An env broke the contract; the message says how and how to fix it."""


def _raise_on(findings: list[Finding]) -> None:
    errors = [finding for finding in findings if finding.severity == "error"]
    if errors:
        raise EnvCheckError(
            "\n".join(f"{f.check}: {f.message}" + (f" (fix: {f.hint})" if f.hint else "") for f in errors)
        )


def _context(env: BaseEnv, max_steps: int = 1000) -> CheckContext:
    return CheckContext(lambda: env, episodes=1, max_steps=max_steps)


def check_space_dtype(env: BaseEnv) -> None:
    """Spaces exist and follow the float32 / int64 / uint8 convention."""
    _raise_on(check_spaces(_context(env)))


def check_array_space(data: Any, space: gym.spaces.Space, name: str) -> None:
    """``data`` lies exactly inside ``space`` (shape, dtype, bounds, nesting)."""
    problems = space_problems(data, space, name)
    if problems:
        raise EnvCheckError("; ".join(problems))


def check_reset(env: BaseEnv) -> None:
    """``reset()`` returns an observation inside the observation space."""
    _raise_on(check_reset_obs(_context(env)))


def check_step(env: BaseEnv, max_steps: int = 1000) -> None:
    """Random-action steps follow the timestep contract."""
    _raise_on(check_step_output(_context(env, max_steps)))


def check_obs_deepcopy(env: BaseEnv, step_times: int = 10) -> None:
    """Consecutive observations do not share memory."""
    _raise_on(check_obs_memory(_context(env, step_times)))


def check_different_memory(array1: Any, array2: Any, step_times: int) -> None:
    """``array1`` and ``array2`` (observations ``step_times`` apart) share no memory."""
    for old, new in zip(leaves(array1), leaves(array2), strict=False):
        if np.shares_memory(old, new):
            raise EnvCheckError(f"observations {step_times} steps apart share memory; return a copy each step")


def check_all(env: BaseEnv, max_steps: int = 1000) -> None:
    """Spaces, reset, step and memory checks on one env instance."""
    check_space_dtype(env)
    check_reset(env)
    check_step(env, max_steps)
    check_obs_deepcopy(env)


def demonstrate_correct_procedure(env_fn: Callable[[dict], BaseEnv], cfg: dict | None = None) -> None:
    """Print the correct call order: construct, seed, reset, step until done, close."""
    env = env_fn(cfg or {})
    print(f"env = {env!r}  # construction stores config only")
    env.seed(0, dynamic_seed=False)
    print("env.seed(0, dynamic_seed=False)  # static seed for evaluation")
    obs = env.reset()
    print(f"obs = env.reset()  # {type(obs).__name__} {getattr(obs, 'shape', '')}")
    for step in range(1000):
        timestep = env.step(env.random_action())
        if timestep.done:
            print(
                f"# episode ended after {step + 1} steps: truncated={timestep.truncated}, "
                f"eval_episode_return={timestep.info.get('eval_episode_return')}"
            )
            break
    env.close()
    print("env.close()")
