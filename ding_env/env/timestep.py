"""``BaseEnvTimestep``: what ``BaseEnv.step`` returns, and its named constructors.

The tuple keeps DI-engine's four fields so ``obs, rew, done, info = timestep``
works, and never loses truncation: every step with ``done=True`` carries
``info['truncated']``.

=============  =====  =========  ===========================
step           done   truncated  bootstrap from this obs?
=============  =====  =========  ===========================
mid-episode    False  False      yes
natural end    True   False      no (discount 0)
time limit     True   True       yes (discount 1)
=============  =====  =========  ===========================

Env code builds timesteps with :func:`transition`, :func:`termination` and
:func:`truncation` rather than by position.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class BaseEnvTimestep(NamedTuple):
    """One step of an env.

    Attributes:
        obs: The observation after the action. On the step that ends an
            episode this is the true final observation, never a reset one.
        reward: Array of shape ``(1,)``, float32 unless the env declares otherwise.
        done: Python ``bool``: the episode ended (terminated or truncated).
        info: Dict; on done steps it holds ``truncated`` (bool) and
            ``eval_episode_return`` (float).
    """

    obs: Any
    reward: np.ndarray
    done: bool
    info: dict

    @property
    def truncated(self) -> bool:
        """The episode was cut by a time limit: bootstrap from ``obs`` (``info`` read by ``reported_truncation``)."""
        return bool(self.done and reported_truncation(self.info))

    @property
    def terminated(self) -> bool:
        """The episode reached a terminal state: do not bootstrap."""
        return bool(self.done and not reported_truncation(self.info))


# One step as plain fields, without the ``(1,)`` reward array: what env hosts copy into the managers'
# buffers, a plain tuple ``(obs, reward, done, truncated, info)`` (a NamedTuple costs a Python call per
# step to build). Not part of the env contract (``BaseEnv.step`` is):
# ``env_manager.backends.hosted_env.stepper_of`` reads a step as these fields, through an env class's
# private fast path where it has one. ``obs`` is the observation after the action (the true final one
# where done); ``reward`` a Python float or an array of the reward space's shape; ``done`` and
# ``truncated`` Python bools (``truncated`` False unless done); ``info`` a dict, holding ``truncated`` and
# ``eval_episode_return`` on done steps.
StepFields = tuple[Any, Any, bool, bool, dict]


def is_timestep(value: Any) -> bool:
    """Whether ``value`` reads as a timestep: it has the fields ``obs``, ``reward``, ``done`` and ``info``.

    ``BaseEnvTimestep`` does, and so does DI-engine's namedtuple of the same fields; a plain tuple does not.
    """
    return all(hasattr(value, field) for field in BaseEnvTimestep._fields)


def as_reward(reward: Any, dtype: np.dtype | type = np.float32) -> np.ndarray:
    """Return ``reward`` as an array of shape ``(1,)`` with ``dtype``.

    Raises:
        ValueError: If ``reward`` holds more than one value.
    """
    if type(reward) is float:
        return np.array((reward,), dtype=dtype)
    array = np.asarray(reward, dtype=dtype)
    if array.size != 1:
        raise ValueError(f"reward must hold exactly one value, got shape {array.shape}")
    return array.reshape(1)


def transition(obs: Any, reward: Any, info: dict | None = None) -> BaseEnvTimestep:
    """A mid-episode step (``done=False``)."""
    return BaseEnvTimestep(obs, as_reward(reward), False, {} if info is None else info)


def termination(obs: Any, reward: Any, episode_return: float, info: dict | None = None) -> BaseEnvTimestep:
    """A step that ends the episode in a terminal state (``truncated=False``)."""
    return _final(obs, reward, episode_return, info, truncated=False)


def truncation(obs: Any, reward: Any, episode_return: float, info: dict | None = None) -> BaseEnvTimestep:
    """A step that ends the episode at a time limit (``truncated=True``)."""
    return _final(obs, reward, episode_return, info, truncated=True)


def final_step(
    obs: Any, reward: Any, episode_return: float, truncated: bool, info: dict | None = None
) -> BaseEnvTimestep:
    """A step that ends the episode, truncated or not."""
    return _final(obs, reward, episode_return, info, truncated=truncated)


def reported_truncation(info: dict) -> bool:
    """Whether a done step's ``info`` reports a time limit, as every manager reads it.

    ``info['truncated']``, else gym's ``info['TimeLimit.truncated']`` (DI-engine's own envs report a
    time limit so), else no: the end is a termination.
    """
    return bool(info.get("truncated", info.get("TimeLimit.truncated", False)))


def info_type_fix(info: Any) -> str:
    """The fix for a step ``info`` that is not a dict: one dict per player (DI-engine's battle envs) goes in one."""
    if isinstance(info, (tuple, list)) and info and all(isinstance(item, dict) for item in info):
        return "one dict per player goes in one dict: {'player_0': ..., 'player_1': ...}"
    return "return {} when there is nothing to say"


def final_info(info: dict | None, episode_return: float, truncated: bool) -> dict:
    """``info`` (a new dict if None) with the keys every done step carries: ``truncated``, ``eval_episode_return``."""
    info = {} if info is None else info
    info["truncated"] = bool(truncated)
    info["eval_episode_return"] = float(episode_return)
    return info


def _final(obs: Any, reward: Any, episode_return: float, info: dict | None, truncated: bool) -> BaseEnvTimestep:
    return BaseEnvTimestep(obs, as_reward(reward), True, final_info(info, episode_return, truncated))
