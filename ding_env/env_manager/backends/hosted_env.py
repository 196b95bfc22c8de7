"""What a host needs to know of one env: building it, reading its spaces, and how to step it.

``EnvHost`` builds and steps its envs through these; the manager reads the spaces of a throwaway
env with ``spaces_of_fn`` before launch, and ``vector`` tells Gymnasium envs from ``BaseEnv``s with
``is_gym_env``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym

from ding_env.env.base_env import BaseEnv
from ding_env.env.spaces import ARRAY_SPACES, SPACE_NAMES
from ding_env.env.timestep import StepFields, info_type_fix, is_timestep, reported_truncation
from ding_env.env_wrappers.legacy_gym import to_gymnasium_space
from ding_env.errors import EnvDataError, EnvError, NotATimestepError
from ding_env.ops import Op
from ding_env.summary import describe_value
from ding_env.user_warnings import warn_at_caller


def check_same_spaces(
    env_id: int,
    spaces: tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space],
    first_id: int,
    first_spaces: tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space],
) -> None:
    """Refuse env ``env_id`` when its spaces do not lay out as env ``first_id``'s, or its action space differs.

    A manager lays out every env's results by one env's spaces, so observations and rewards must have their
    structure, shapes and dtypes (their bounds may differ, as ``SyncVectorEnv(observation_mode="different")``
    allows); and it checks every action against one action space, so an env with other action bounds would be
    handed actions outside its own: action spaces must be equal (a space class without an ``__eq__`` of its
    own is compared by its layout).

    Raises:
        EnvError: Naming ``env_id``, the space and env ``first_id``'s.
    """
    for name, space, expected in zip(SPACE_NAMES, spaces, first_spaces, strict=True):
        compared_whole = name == "action_space" and type(space).__eq__ is not object.__eq__
        same = space == expected if compared_whole else _same_layout(space, expected)
        if not same:
            raise EnvError(
                env_id,
                Op.LAUNCH,
                f"its {name} {_brief(space)} is not env {first_id}'s {_brief(expected)}: the envs of one manager "
                "share their spaces (give envs with other spaces a manager of their own)",
            )


def _same_layout(space: gym.spaces.Space, other: gym.spaces.Space) -> bool:
    """Whether the two spaces hold values of one structure, shapes and dtypes (what a manager's arrays need)."""
    if type(space) is not type(other):
        return False
    if isinstance(space, gym.spaces.Dict):
        return list(space.spaces) == list(other.spaces) and all(
            _same_layout(sub, other.spaces[key]) for key, sub in space.spaces.items()
        )
    if isinstance(space, gym.spaces.Tuple):
        return len(space.spaces) == len(other.spaces) and all(map(_same_layout, space.spaces, other.spaces))
    return space.shape == other.shape and space.dtype == other.dtype


def _brief(space: gym.spaces.Space) -> str:
    text = str(space)
    return text if len(text) <= BRIEF_CHARACTERS else f"{text[: BRIEF_CHARACTERS - 3]}..."


# A space's repr in an error stays short enough for both spaces to fit the message's few hundred characters.
BRIEF_CHARACTERS = 120


def env_spaces(env: Any, reset: bool = True) -> tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space] | None:
    """The observation, action and reward spaces of ``env``, as Gymnasium spaces.

    An env that knows its spaces only after its first reset (some of DI-engine's do) is reset
    once to read them, as DI-engine's managers do (without ``reset``: None); gym's spaces become Gymnasium's.
    """
    try:
        spaces = (env.observation_space, env.action_space, env.reward_space)
    except AttributeError:
        spaces = (None,)
    if any(space is None for space in spaces):  # unset, or None until the first reset
        if not reset:
            return None
        env.reset()
        spaces = (env.observation_space, env.action_space, env.reward_space)
        unknown = [name for name, space in zip(SPACE_NAMES, spaces, strict=True) if space is None]
        if unknown:
            raise EnvDataError(
                f"{env!r}: {', '.join(unknown)} still None after reset(); the managers hold every env's results "
                "in arrays laid out by its spaces: declare each in __init__ (or set it in reset()), a "
                "gymnasium.spaces object"
            )
    spaces = tuple(to_gymnasium_space(space) for space in spaces)
    if not isinstance(spaces[2], ARRAY_SPACES):  # one reward array per env (arrays.reward_layout)
        raise EnvDataError(
            f"{env!r}: reward_space is {spaces[2]}, which the managers cannot hold (one reward array per env): "
            "declare a Box ((1,), or (n_agents,)), Discrete, MultiDiscrete or MultiBinary, and put a structured "
            "reward's parts in info"
        )
    return spaces


def spaces_of_fn(env_fn: Callable[[], Any]) -> tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]:
    """The spaces of a throwaway env from ``env_fn`` (closed again), before any env is launched.

    A throwaway env that fails to close is warned about: its spaces were read, and no env of the manager's
    is lost (as when ``EnvHost.renew`` closes an env).
    """
    env = env_fn()
    try:
        return env_spaces(env)
    finally:
        close_throwaway(env, "after its spaces were read")


def close_throwaway(env: Any, after: str) -> None:
    """Close an env built only to read something of it, warning (not raising) when its ``close`` fails.

    What was read stands, and no env of a manager's is lost: the env's author learns what to fix.
    """
    try:
        env.close()
    except Exception as error:  # noqa: BLE001 - warned about: the env is thrown away
        warn_at_caller(f"{env!r} raised while closing {after}: {type(error).__name__}: {error}")


def stepper_of(env: Any) -> Callable[[Any], StepFields]:
    """How a host steps ``env``: a function ``action -> StepFields``, chosen here and nowhere else.

    ``step`` is the one public stepping method. An env class may add a private fast path,
    ``_step_fields``, that ``step`` itself is built on (``DingEnvWrapper``, ``PettingZooEnv``): it
    skips building a timestep per step. It is used only when the class that defines ``step``
    defines it too, so a subclass that overrides ``step`` is stepped through its own ``step``.
    """
    step_owner = next((cls for cls in type(env).__mro__ if "step" in vars(cls)), object)
    if "_step_fields" in vars(step_owner):
        return env._step_fields
    return partial(step_fields_of, env)


def takes_int_actions(env: Any, action_space: gym.spaces.Space) -> bool:
    """Whether ``env``'s stepper takes a ``Discrete`` action as a Python int rather than a 0-d array.

    True for an env stepped through a fast path that converts both to the same numpy scalar
    (``DingEnvWrapper``'s): the int costs a host far less to hand over. Every other env gets the 0-d
    arrays of the contract (``arrays.action_rows``), which DI-engine's envs assert.
    """
    if not isinstance(action_space, gym.spaces.Discrete) or not getattr(type(env), "_steps_int_actions", False):
        return False
    return getattr(stepper_of(env), "__self__", None) is env  # its own _step_fields, not a subclass's step


def step_fields_of(env: Any, action: Any) -> StepFields:
    """``env.step(action)`` as plain fields.

    A done step's info gets ``truncated`` when the env left it out (DI-engine's own envs may report
    a time limit as gym's ``TimeLimit.truncated``).
    """
    timestep = env.step(action)
    try:
        done = bool(timestep.done)
        info = timestep.info
    except AttributeError:
        if is_timestep(timestep):
            raise
        raise NotATimestepError.of(env, timestep) from None
    if not isinstance(info, dict):
        if info is not None:  # None: nothing to say, as {}
            raise EnvDataError(
                f"{type(env).__name__}.step() returned a {type(info).__name__} as info, expected a dict: "
                f"{describe_value(info)}; {info_type_fix(info)}"
            )
        info = {}
    truncated = done and reported_truncation(info)
    if done and "truncated" not in info:
        info = dict(info, truncated=truncated)
    return (timestep.obs, timestep.reward, done, truncated, info)


def build_env(env_id: int, env_fn: Callable[[], BaseEnv]) -> BaseEnv:
    """``env_fn()``, checked to be an env the managers can drive.

    Raises:
        EnvError: ``env_fn`` raised, or returned None, a Gymnasium or gym env (which needs
            ``DingEnvWrapper``), or an object without ``reset``/``step``/``seed``/``close``.
    """
    try:
        env = env_fn()
    except Exception as error:  # noqa: BLE001 - re-raised with the env it belongs to
        raise EnvError.of(error, env_id, Op.LAUNCH) from error
    if is_gym_env(env):
        raise EnvError(
            env_id,
            Op.LAUNCH,
            f"env_fn returned a {type(env).__module__.split('.')[0]} env ({type(env).__name__}), expected a "
            "BaseEnv: wrap it, e.g. lambda: DingEnvWrapper(gymnasium.make(...))",
        )
    missing = [name for name in ENV_METHODS if not callable(getattr(env, name, None))]
    if missing:
        raise EnvError(
            env_id,
            Op.LAUNCH,
            f"env_fn returned {type(env).__name__} {env!r:.80}, which has no {', '.join(missing)}; expected a BaseEnv",
        )
    return env


# What every env the managers drive must have (BaseEnv's abstract methods; DI-engine's own envs have them).
ENV_METHODS = ("reset", "step", "seed", "close")


def is_gym_env(env: Any) -> bool:
    """Whether ``env`` is a Gymnasium or legacy gym env rather than a ``BaseEnv``.

    DI-engine's own envs subclass ``gym.Env`` too; they declare a ``reward_space`` (which gym's do
    not), or at least DI-engine's ``seed(seed, dynamic_seed)`` (some set their spaces in ``reset``).
    """
    try:
        di_engine_seed = "dynamic_seed" in inspect.signature(type(env).seed).parameters
    except (AttributeError, TypeError, ValueError):  # no seed, or one without a signature
        di_engine_seed = False
    return (
        not isinstance(env, BaseEnv)
        and not hasattr(type(env), "reward_space")
        and not di_engine_seed
        and any(
            cls.__name__ == "Env" and cls.__module__.split(".")[0] in ("gym", "gymnasium") for cls in type(env).__mro__
        )
    )
