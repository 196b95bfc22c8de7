"""DI-engine's ``env_implementation_check`` entry points, raising on failure.

Each raises :class:`EnvCheckError` (an ``AssertionError``, as DI-engine's
asserts were) with the finding's message and fix. They take what DI-engine's take: envs
with legacy gym spaces and a one-argument ``seed(seed)``, plain lists and dicts of spaces,
done steps that carry ``eval_episode_return`` in any numeric form (``ding_env.checker.check_env``
holds envs to the full contract). Unlike DI-engine's, they accept uint8 images, bound
``Discrete`` as ``start <= x < start + n``, compare memory with ``np.shares_memory``, and cap
the step loop.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from ding_env.checker.output_checks import check_obs_memory, check_reset_obs, check_spaces, check_step_output
from ding_env.checker.report import Finding
from ding_env.checker.rollout import CheckContext
from ding_env.env.base_env import BaseEnv
from ding_env.env.spaces import value_problems
from ding_env.env_wrappers.legacy_gym import to_gymnasium_space


class EnvCheckError(AssertionError):
    """An env broke the contract; the message says how and how to fix it."""


def _raise_on(findings: list[Finding]) -> None:
    errors = [finding for finding in findings if finding.severity == "error"]
    if errors:
        raise EnvCheckError(
            "\n".join(f"{f.check}: {f.message}" + (f" (fix: {f.hint})" if f.hint else "") for f in errors)
        )


def as_space(space: Any) -> gym.spaces.Space:
    """A Gymnasium space for a Gymnasium or legacy gym space, or a plain list/tuple/dict of them."""
    if isinstance(space, Mapping):
        return gym.spaces.Dict({key: as_space(sub) for key, sub in space.items()})
    if isinstance(space, (list, tuple)):
        return gym.spaces.Tuple(tuple(as_space(sub) for sub in space))
    return to_gymnasium_space(space)


def seed_env(env: Any, seed: int, dynamic_seed: bool) -> None:
    """``env.seed(seed, dynamic_seed=...)``, or ``env.seed(seed)`` for an env whose ``seed`` takes one argument."""
    try:
        inspect.signature(env.seed).bind(seed, dynamic_seed=dynamic_seed)
    except TypeError:
        env.seed(seed)
    else:
        env.seed(seed, dynamic_seed=dynamic_seed)


class _DIEngineEnvView:
    """An env as the checks read it: Gymnasium spaces and ``seed(seed, dynamic_seed)``, whatever it declares."""

    def __init__(self, env: Any) -> None:
        self.env = env

    observation_space = property(lambda self: as_space(self.env.observation_space))
    action_space = property(lambda self: as_space(self.env.action_space))
    reward_space = property(lambda self: as_space(self.env.reward_space))

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        seed_env(self.env, seed, dynamic_seed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)


def _context(env: BaseEnv, max_steps: int = 1000) -> CheckContext:
    view = _DIEngineEnvView(env)
    return CheckContext(lambda: view, episodes=1, max_steps=max_steps, di_engine_done_info=True)


def check_space_dtype(env: BaseEnv) -> None:
    """Spaces exist and follow the float32 / int64 / uint8 convention."""
    _raise_on(check_spaces(_context(env)))


def check_array_space(data: Any, space: Any, name: str) -> None:
    """``data`` lies exactly inside ``space`` (shape, dtype, bounds, nesting).

    ``space`` may be a Gymnasium or legacy gym space, or a list/tuple/dict of them.

    Raises:
        EnvCheckError: When it does not.
        TypeError: When ``data`` is neither an array nor a sequence or dict of them (as DI-engine's).
    """
    if not isinstance(data, (np.ndarray, np.generic, Sequence, Mapping)) or isinstance(data, str):
        raise TypeError(
            f"{name}: expected a numpy array or a sequence/dict of them, got {type(data).__name__} {data!r:.60}"
        )
    problems = value_problems(_tuples(data), as_space(space), name)
    if problems:
        raise EnvCheckError("; ".join(problems))


def _tuples(data: Any) -> Any:
    """Lists become tuples, so a list of arrays is checked against a Tuple space as DI-engine's sequences are."""
    if isinstance(data, Mapping):
        return {key: _tuples(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return tuple(_tuples(item) for item in data)
    return data


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
    """``array1`` and ``array2`` (observations ``step_times`` apart) have the same structure and share no memory.

    Raises:
        EnvCheckError: When their types, lengths or keys differ, or two of their arrays share memory.
        TypeError: When they are neither arrays nor sequences or dicts of them (as DI-engine's).
    """
    where = f"observations {step_times} steps apart"
    if type(array1) is not type(array2):
        raise EnvCheckError(f"{where} differ in type: {type(array1).__name__} and {type(array2).__name__}")
    if isinstance(array1, np.ndarray):
        if np.shares_memory(array1, array2):
            raise EnvCheckError(f"{where} share memory; return a copy each step")
    elif isinstance(array1, Mapping):
        if array1.keys() != array2.keys():
            raise EnvCheckError(f"{where} have different keys: {sorted(array1)} and {sorted(array2)}")
        for key in array1:
            check_different_memory(array1[key], array2[key], step_times)
    elif isinstance(array1, Sequence) and not isinstance(array1, str):
        if len(array1) != len(array2):
            raise EnvCheckError(f"{where} have different lengths: {len(array1)} and {len(array2)}")
        for old, new in zip(array1, array2, strict=True):
            check_different_memory(old, new, step_times)
    else:
        raise TypeError(f"{where}: expected numpy arrays or sequences/dicts of them, got {type(array1).__name__}")


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
    seed_env(env, 0, dynamic_seed=False)
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
