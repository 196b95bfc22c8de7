"""Batched results of the managers' fast path, and the per-step outcome backends return."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


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


class WorkerView(NamedTuple):
    """One worker process of a manager, as the ``workers`` diagnostic shows it.

    Attributes:
        pid: The worker's process id (a replaced worker has a new one).
        env_ids: The env ids it hosts.
    """

    pid: int
    env_ids: list[int]


class StepOutcome(NamedTuple):
    """What a backend reports for the envs of one step (row ``k`` is ``env_id[k]``).

    ``rows`` indexes ``env_id``'s rows in per-env arrays (a slice when the ids are
    consecutive and increasing); ``obs`` is a list of per-env observations
    (serial backend) or a tree of stacked arrays (shared-memory backends); ``errors`` maps the row of each
    env whose step raised to that error; ``reset_on_done`` says which envs
    were to be auto-reset if their episode ended.
    """

    env_id: np.ndarray
    rows: slice | np.ndarray
    obs: Any
    obs_is_list: bool
    reward: np.ndarray
    done: np.ndarray
    truncated: np.ndarray
    info: list
    errors: dict
    reset_on_done: np.ndarray
