"""The records of the batched API: ``ObsBatch`` (ready observations) and ``TimestepBatch`` (a step's results).

``TimestepBatch`` is the one record a step's results travel in, from the backend that hosts the envs
to the caller: backends hand it to the manager (``Backend.collect``), ``Shares`` joins and orders it,
the ledger moves the envs on from it, ``step_batch`` returns it and ``step`` splits it into one
``BaseEnvTimestep`` per env. Its observations have one form: stacked, a tree of arrays with one
row per env, whatever hosts the envs.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from ding_env.env.timestep import BaseEnvTimestep
from ding_env.env_manager import arrays
from ding_env.errors import DingEnvError

# The errors of a step in which nothing failed (read-only: shared by every such batch).
NO_ERRORS: Mapping[int, DingEnvError] = MappingProxyType({})


class ObsBatch(NamedTuple):
    """Observations of the envs that can take an action now.

    Attributes:
        env_id: int64 array of env ids, increasing.
        obs: Stacked observations (a tree of arrays for Dict/Tuple spaces),
            row ``k`` belonging to ``env_id[k]``; arrays of no rows when no env is ready.
    """

    env_id: np.ndarray
    obs: Any


class TimestepBatch(NamedTuple):
    """The results of one batched step, row ``k`` belonging to ``env_id[k]``.

    Attributes:
        env_id: int64 array of the stepped env ids.
        obs: Stacked observations after the step (the true final observation where ``done``).
        reward: ``(n, *reward shape)`` array (``(n, 1)`` for scalar rewards).
        done: ``(n,)`` bool array.
        truncated: ``(n,)`` bool array (True only where ``done``).
        info: List of ``n`` info dicts.
        errors: ``{row: error}`` of the envs whose step, auto-reset or worker failed (each also
            raised with ``step_error='raise'``, or named in its abnormal info with ``'abnormal'``).
        reset_on_done: ``(n,)`` bool array: whether each env was to restart at once if its episode
            ended (where ``done`` and no error, its next ready observation is a reset one).
    """

    env_id: np.ndarray
    obs: Any
    reward: np.ndarray
    done: np.ndarray
    truncated: np.ndarray
    info: list
    errors: Mapping[int, DingEnvError] = NO_ERRORS
    reset_on_done: np.ndarray | None = None

    @property
    def terminated(self) -> np.ndarray:
        """``(n,)`` bool: the episode reached a terminal state (do not bootstrap)."""
        return self.done & ~self.truncated


def empty_batch(spaces: tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]) -> TimestepBatch:
    """The batch of a step that returned no env, shaped by the envs' spaces."""
    flags = np.zeros(0, dtype=bool)
    obs = arrays.allocate(arrays.layout_of(spaces[0]), 0)
    reward = arrays.allocate(arrays.reward_layout(spaces[2]), 0)
    return TimestepBatch(np.zeros(0, dtype=np.int64), obs, reward, flags, flags.copy(), [], NO_ERRORS, flags.copy())


def joined(
    batches: list[TimestepBatch], env_id: np.ndarray | None = None, reset_on_done: np.ndarray | None = None
) -> TimestepBatch:
    """One batch with the rows of ``batches`` one after another (new arrays, unless there is one batch).

    ``env_id`` and ``reset_on_done``, when given, are those rows' ids and flags already joined.
    """
    if len(batches) == 1:
        return batches[0]
    errors, offset = {}, 0
    for batch in batches:
        errors.update({offset + row: error for row, error in batch.errors.items()})
        offset += len(batch.env_id)
    return TimestepBatch(
        np.concatenate([batch.env_id for batch in batches]) if env_id is None else env_id,
        arrays.concatenate([batch.obs for batch in batches]),
        np.concatenate([batch.reward for batch in batches]),
        np.concatenate([batch.done for batch in batches]),
        np.concatenate([batch.truncated for batch in batches]),
        [info for batch in batches for info in batch.info],
        errors,
        np.concatenate([batch.reset_on_done for batch in batches]) if reset_on_done is None else reset_on_done,
    )


def taken(batch: TimestepBatch, rows: np.ndarray) -> TimestepBatch:
    """The rows ``rows`` of ``batch``, in that order (copies)."""
    new_row = {int(old): new for new, old in enumerate(rows.tolist())}
    return TimestepBatch(
        batch.env_id[rows],
        arrays.take(batch.obs, rows),
        batch.reward[rows],
        batch.done[rows],
        batch.truncated[rows],
        [batch.info[row] for row in rows.tolist()],
        {new_row[row]: error for row, error in batch.errors.items() if row in new_row},
        batch.reset_on_done[rows],
    )


def reordered(batch: TimestepBatch, order: np.ndarray) -> TimestepBatch:
    """``batch`` with its rows in the order of the env ids ``order`` (envs not in it are left out)."""
    row_of = {env_id: row for row, env_id in enumerate(batch.env_id.tolist())}
    return taken(batch, np.array([row_of[env_id] for env_id in order.tolist()], dtype=np.int64))


def in_order(ids: list[int]) -> bool:
    """Whether ``ids`` never decrease (compared as Python ints: fewer calls than numpy's on a step's few ids)."""
    return not any(map(int.__gt__, ids, ids[1:]))


def in_id_order(batch: TimestepBatch) -> TimestepBatch:
    """``batch`` with its rows in increasing env id order (itself when they are)."""
    if in_order(batch.env_id.tolist()):
        return batch
    return taken(batch, np.argsort(batch.env_id, kind="stable"))


def owned(batch: TimestepBatch) -> TimestepBatch:
    """``batch`` with copies of its arrays, the caller's to keep (its arrays may be views of a backend's buffers)."""
    return batch._replace(
        obs=arrays.copy_tree(batch.obs),
        reward=batch.reward.copy(),
        done=batch.done.copy(),
        truncated=batch.truncated.copy(),
    )


def timesteps_of(batch: TimestepBatch, copy: bool) -> dict[int, BaseEnvTimestep]:
    """``{env_id: timestep}``: the rows of ``batch`` (each observation copied out of it when ``copy``)."""
    env_ids = batch.env_id.tolist()
    obs = arrays.split_rows(batch.obs, len(env_ids), copy)
    rewards, done, infos = list(batch.reward.copy()), batch.done.tolist(), batch.info
    return {
        env_id: BaseEnvTimestep(obs[row], rewards[row], done[row], infos[row]) for row, env_id in enumerate(env_ids)
    }
