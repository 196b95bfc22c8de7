"""``BatchStep``: what ``BaseBatchEnv.step`` returns, one row per stepped sub-env.

Its fields are stacked arrays, so a manager copies a whole batch env's step into its buffers with
one assignment per field; ``BatchStep.timestep(k)`` gives row ``k`` as a ``BaseEnvTimestep``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from ding_env.env.timestep import BaseEnvTimestep, final_info
from ding_env.summary import describe_value

# Sub-env ids as a batch env's subclass hooks get them: None (every sub-env, in order) or an int64
# array of distinct ids.
EnvIds = np.ndarray | None


class BatchStep(NamedTuple):
    """What ``BaseBatchEnv.step`` returns: row ``k`` of every field belongs to the ``k``-th stepped sub-env.

    Attributes:
        obs: Stacked observations after the step (a dict/tuple of stacked arrays for Dict/Tuple
            spaces). Where the episode ended, the true final observation.
        reward: Array of shape ``(n, *reward_space.shape)`` with the reward space's dtype.
        terminated: ``(n,)`` bool: the episode reached a terminal state (do not bootstrap).
        truncated: ``(n,)`` bool: the episode was cut by a time limit (bootstrap); never True where
            ``terminated``.
        episode_return: ``(n,)`` float64: the sum of the episode's raw (unclipped) rewards up to and
            including this step; a manager reports it as ``eval_episode_return`` on done rows.
        info: ``{key: array with n rows}`` (Gymnasium's vector form; ``{}`` when the env has none).
    """

    obs: Any
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    episode_return: np.ndarray
    info: dict

    @property
    def done(self) -> np.ndarray:
        """``(n,)`` bool: the episode ended (terminated or truncated)."""
        return self.terminated | self.truncated

    def timestep(self, row: int) -> BaseEnvTimestep:
        """Row ``row`` as a ``BaseEnvTimestep``: done rows carry ``truncated`` and ``eval_episode_return``."""
        obs = _tree_row(self.obs, row)
        info = info_row(self.info, row)
        done = bool(self.terminated[row] or self.truncated[row])
        if done:
            info = final_info(info, float(self.episode_return[row]), bool(self.truncated[row]))
        return BaseEnvTimestep(obs, self.reward[row].copy(), done, info)


def scalar_reward_space() -> gym.spaces.Box:
    """A new ``Box(-inf, inf, (1,), float32)``: the reward space of most envs."""
    return gym.spaces.Box(low=-np.inf, high=np.inf, shape=(1,), dtype=np.float32)


def _tree_row(tree: Any, row: int) -> Any:
    """Row ``row`` of stacked observations, copied (a dict/tuple of stacked arrays gives a dict/tuple)."""
    if isinstance(tree, dict):
        return {key: _tree_row(value, row) for key, value in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_tree_row(value, row) for value in tree)
    return tree[row].copy()


def info_row(info: dict, row: int) -> dict:
    """Row ``row`` of a batch env's info (``{key: array with n rows}``), numpy scalars as Python scalars.

    A row that is an array is a copy: the batch env may write its info arrays again at its next step.
    A masked row (a ``numpy.ma`` array's) is a key that sub-env did not report: it is left out.
    """
    return {key: _plain(item) for key, value in info.items() if (item := value[row]) is not np.ma.masked}


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python scalar, as ``DingEnvWrapper`` gives env infos; an array row as a copy."""
    if isinstance(value, np.generic):
        return value.item()
    return value.copy() if isinstance(value, np.ndarray) else value


def rows_of(value: Any) -> int | None:
    """The rows of an array (its first dimension's length); None for anything else or a 0-d array."""
    return len(value) if type(value) is np.ndarray and value.ndim else None


def refuse_record(owner: str, record: BatchStep, rows: int, reward_shape: tuple[int, ...]) -> None:
    """Raise ``ValueError`` for the first field of ``record`` without one row per stepped sub-env.

    numpy would spread a scalar or a one-row array over every sub-env's row, and take an int array of flags
    as indices: ``BaseBatchEnv.step`` calls this when its quick check of the record fails.
    """
    for field in ("reward", "terminated", "truncated", "episode_return"):
        value = getattr(record, field)
        flag = field in ("terminated", "truncated")
        if flag and (type(value) is not np.ndarray or value.shape != (rows,) or value.dtype != np.bool_):
            expected = f"a ({rows},) bool array"
        elif not flag and rows_of(value) != rows:
            expected = f"an array of {rows} rows" + (f" of shape {reward_shape}" if field == "reward" else "")
        else:
            continue
        raise ValueError(
            f"{owner}: BatchStep.{field} must be {expected}, one row per stepped sub-env, got {describe_value(value)}"
        )


def check_info_rows(owner: str, info: Any, rows: int) -> None:
    """Refuse a step info that is not ``{key: array with one row per stepped sub-env}``.

    Raises:
        ValueError: Naming the key, the rows expected and what arrived.
    """
    if not isinstance(info, dict):
        raise ValueError(
            f"{owner}: info must be a dict of arrays with one row per stepped sub-env ({rows}), "
            f"got {describe_value(info)}"
        )
    for key, value in info.items():
        if not isinstance(value, np.ndarray) or value.ndim == 0 or len(value) != rows:
            raise ValueError(
                f"{owner}: info[{key!r}] must be an array with one row per stepped sub-env ({rows}), "
                f"got {describe_value(value)}"
            )
