"""What the checks share: their context, seeded rollouts, and turning env exceptions into findings."""

from __future__ import annotations

import inspect
import sysconfig
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ding_env.checker.report import ERROR, Finding
from ding_env.env.base_env import BaseEnv
from ding_env.env.seeding import SEED_SIGNATURE_HINT, takes_dynamic_seed
from ding_env.env.spaces import leaves
from ding_env.env.timestep import is_timestep
from ding_env.env_manager import arrays
from ding_env.env_wrappers.legacy_gym import to_gymnasium_space
from ding_env.errors import NotATimestepError


@dataclass
class CheckContext:
    """What every check needs.

    Attributes:
        make_env: Builds a fresh env (each check uses its own).
        episodes: Episodes per rollout.
        max_steps: Steps after which an episode that has not ended is cut (and reported).
        seed: Base seed.
        di_engine: Accept what DI-engine's envs do and the managers take (see ``di_engine_mode``).
        di_engine_done_info: Hold done steps to DI-engine's contract, as its raising checks do:
            ``info['eval_episode_return']`` present (any number or array), ``info['truncated']`` optional.
        spaceless: Set by ``check_spaces`` when a space is still None after a reset: the other checks,
            which need the spaces, are then skipped.
    """

    make_env: Callable[[], BaseEnv]
    episodes: int = 3
    max_steps: int = 1000
    seed: int = 0
    di_engine: bool = False
    di_engine_done_info: bool = False
    spaceless: bool = False
    close_failures: list[Exception] = field(default_factory=list)

    def close(self, env: BaseEnv) -> None:
        """Close an env a check used; a ``close()`` that raises is ``check_close_twice``'s finding, not that check's."""
        try:
            env.close()
        except Exception as error:  # noqa: BLE001 - kept: check_close_twice reports it
            self.close_failures.append(error)


class Episode(NamedTuple):
    """One rollout episode: the reset obs, the actions and the timesteps (``ended`` False if cut)."""

    reset_obs: Any
    actions: list
    timesteps: list
    ended: bool


def rollout(env: BaseEnv, ctx: CheckContext, seed: int, dynamic: bool, actions: list | None = None) -> list[Episode]:
    """Run ``ctx.episodes`` episodes with seeded random actions (or replay ``actions``)."""
    seed_env(env, seed, dynamic)
    sampler = None
    episodes = []
    for index in range(ctx.episodes):
        reset_obs = env.reset()
        if sampler is None:  # read after the first reset: some DI-engine envs only know their spaces then
            sampler = env.action_space
            sampler.seed(seed)
        taken, timesteps, ended = [], [], False
        for step in range(ctx.max_steps):
            replaying = actions is not None and index < len(actions) and step < len(actions[index])
            action = actions[index][step] if replaying else sample(sampler, ctx)
            timestep = step_env(env, action)
            taken.append(action)
            timesteps.append(timestep)
            if timestep.done:
                ended = True
                break
        episodes.append(Episode(reset_obs, taken, timesteps, ended))
    return episodes


class SeedSignatureError(TypeError):
    """An env's ``seed()`` does not take ``dynamic_seed``, which the managers pass.

    Attributes:
        where: ``file:line`` of the env class's ``seed`` ('' when unknown).
    """

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where


def seed_env(env: BaseEnv, seed: int, dynamic: bool) -> None:
    """``env.seed(seed, dynamic_seed=dynamic)``, as the managers call it.

    Raises:
        SeedSignatureError: When ``seed()`` takes no ``dynamic_seed`` (a ``TypeError`` raised inside
            ``seed()`` is raised as it is).
    """
    try:
        env.seed(seed, dynamic_seed=dynamic)
    except TypeError as error:
        if not takes_dynamic_seed(env, seed, dynamic):
            raise SeedSignatureError(str(error), source_of(type(env).seed)) from error
        raise


def source_of(function: Any) -> str:
    """``file:line`` of ``function``, or '' for one without Python source."""
    try:
        return f"{inspect.getsourcefile(function)}:{inspect.getsourcelines(function)[1]}"
    except (TypeError, OSError):
        return ""


def step_env(env: BaseEnv, action: Any) -> Any:
    """``env.step(action)``, which must return a timestep (``NotATimestepError`` for a plain tuple, say)."""
    timestep = env.step(action)
    if not is_timestep(timestep):
        raise NotATimestepError.of(env, timestep)
    return timestep


def sample(space: Any, ctx: CheckContext) -> Any:
    """A random action, handed as every manager hands actions to envs (``arrays.conform``).

    Each leaf is a fresh array of its space's dtype, 0-d for a scalar (``Discrete``), and a ``Dict``
    action is a dict of them; an action of a space without an array form is passed as sampled.
    """
    action = space.sample()
    try:
        layout = arrays.layout_of(to_gymnasium_space(space))  # DI-engine's envs may declare gym's spaces
    except TypeError:  # Text, Graph, Sequence: the managers pass such actions on as given
        return action
    return arrays.conform(layout, action)


def type_name(value: Any) -> str:
    """``bool`` for builtins, ``numpy.bool`` for others: names users recognise."""
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


class OutputFault(Exception):
    """A fault the checker found in an env's output while driving it, which stops the rollout.

    Reported as what the env gave (``hint`` says how to fix it), at ``where`` (the env's method), not as
    an exception the env raised.
    """

    def __init__(self, message: str, where: str = "", hint: str = "") -> None:
        super().__init__(message)
        self.where, self.hint = where, hint


def cause_of(error: BaseException) -> str:
    """``error``'s type and first line: a finding's ``cause``, which the checkers skip a repeat of."""
    text = str(error)
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def raised(check: str, what: str, error: BaseException, hint: str = "") -> Finding:
    """An error finding for an exception the env raised, with where it was raised."""
    cause = cause_of(error)
    if isinstance(error, OutputFault):
        where = f" at {error.where}" if error.where else ""
        return Finding(check, ERROR, f"{what}: {error}{where}", error.hint or hint, cause=cause)
    where = _where(traceback.extract_tb(error.__traceback__)) if error.__traceback__ else ""
    name = type(error).__name__
    if isinstance(error, NotATimestepError):  # raised by the checker about the env's step: point there
        where = f" at {error.where}" if error.where else ""
        hint = NOT_A_TIMESTEP_HINT
    elif isinstance(error, SeedSignatureError):  # raised where the checker calls seed(): point at the env's seed
        what, name = "seeding the env", "TypeError"
        where = f" at {error.where}" if error.where else ""
        hint = SEED_SIGNATURE_HINT
    return Finding(check, ERROR, f"{what} raised {name}: {error}{where}", hint, cause=cause)


def _where(frames: traceback.StackSummary) -> str:
    """`` at file:line`` of the innermost frame of the env's own code, and of the library frame that raised after it.

    An error raised inside gym, numpy or ding_env itself is shown at the env's line that called in, which is
    the one to change (a removed ``seed()`` raises in gym's ``core.py``).
    """
    own = [frame for frame in frames if not _is_library(frame.filename)]
    if not own:
        return f" at {frames[-1].filename}:{frames[-1].lineno}"
    line = f" at {own[-1].filename}:{own[-1].lineno}"
    if own[-1] is not frames[-1]:
        line += f" (raised in {frames[-1].filename}:{frames[-1].lineno})"
    return line


_LIBRARY_DIRS = tuple(
    Path(path).resolve()
    for path in {*(sysconfig.get_paths()[key] for key in ("stdlib", "purelib", "platlib")), Path(__file__).parents[1]}
)


def _is_library(file: str) -> bool:
    """Whether ``file`` is Python's, an installed package's or ding_env's own (not the env's code)."""
    path = Path(file).resolve()
    return any(path.is_relative_to(folder) for folder in _LIBRARY_DIRS)


NOT_A_TIMESTEP_HINT = (
    "the managers read timestep.obs, .reward, .done and .info by name: build the return value with the "
    "named constructors (or BaseEnvTimestep(obs, reward, done, info))"
)
RAISED_HINT = "fix the exception; the check calls the env as a manager does: construct, seed, reset, step, close"


def guard(check: str, what: str, body: Callable[[], list[Finding]], hint: str = RAISED_HINT) -> list[Finding]:
    """Run a check's ``body``; an exception from the env becomes one error finding."""
    try:
        return body()
    except Exception as error:  # noqa: BLE001 - an env error is a finding, not a checker crash
        return [raised(check, what, error, hint)]


def trajectory(episodes: list[Episode]) -> list[tuple[np.ndarray, ...]]:
    """Episodes as one tuple of flat arrays per step (the obs's leaves, then the reward), for comparisons.

    The arrays are views of the episodes' own: an image env's trajectory costs no copy.
    """
    steps = []
    for episode in episodes:
        steps.append(flat_step(episode.reset_obs))
        steps += [flat_step(timestep.obs, timestep.reward) for timestep in episode.timesteps]
    return steps


def flat_step(obs: Any, *reward: Any) -> tuple[np.ndarray, ...]:
    """One step of a trajectory: the obs's leaves and the reward (if given), each as a flat view."""
    return tuple(np.ravel(leaf) for leaf in (*leaves(obs, scalars=True), *reward))


def same(a: list[tuple[np.ndarray, ...]], b: list[tuple[np.ndarray, ...]]) -> bool:
    """True when two trajectories are identical, array by array (NaN equal to NaN)."""
    return len(a) == len(b) and all(len(x) == len(y) and all(map(_same_array, x, y)) for x, y in zip(a, b, strict=True))


def _same_array(x: np.ndarray, y: np.ndarray) -> bool:
    """Equal shapes and values; NaN equals NaN where both hold floats (an integer array has no NaN to test)."""
    floats = x.dtype.kind in "fc" and y.dtype.kind in "fc"
    return x.shape == y.shape and np.array_equal(x, y, equal_nan=floats)
