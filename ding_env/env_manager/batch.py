"""The batches the managers' batched API returns."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ding_env.env.timestep import BaseEnvTimestep
from ding_env.env_manager import arrays
from ding_env.env_manager.backends.base import StepOutcome


class ObsBatch(NamedTuple):
    """Observations of the envs that can take an action now.

    Attributes:
        env_id: int64 array of env ids, increasing.
        obs: Stacked observations (a tree of arrays for Dict/Tuple spaces),
            row ``k`` belonging to ``env_id[k]``.
    """

    env_id: np.ndarray
    obs: Any


class TimestepBatch(NamedTuple):
    """The timesteps of one batched step, row ``k`` belonging to ``env_id[k]``.

    Attributes:
        env_id: int64 array of the stepped env ids.
        obs: Stacked observations after the step (the true final observation
            where ``done``).
        reward: ``(n, 1)`` array.
        done: ``(n,)`` bool array.
        truncated: ``(n,)`` bool array (True only where ``done``).
        info: List of ``n`` info dicts.
    """

    env_id: np.ndarray
    obs: Any
    reward: np.ndarray
    done: np.ndarray
    truncated: np.ndarray
    info: list


def timesteps_of(outcome: StepOutcome, copy: bool) -> dict[int, BaseEnvTimestep]:
    """``{env_id: timestep}`` of a step's ``outcome`` (its stacked arrays split per env, copied when ``copy``)."""
    env_ids = outcome.env_id.tolist()
    obs = outcome.obs if isinstance(outcome.obs, list) else arrays.split_rows(outcome.obs, len(env_ids), copy)
    rewards, done, infos = list(outcome.reward.copy()), outcome.done.tolist(), outcome.info
    return {
        env_id: BaseEnvTimestep(obs[row], rewards[row], done[row], infos[row]) for row, env_id in enumerate(env_ids)
    }
