"""``StepRows``: where a host writes its envs' step results, one row per env.

``EnvHost.step`` writes each env's step observation, reward and done/truncated flags, and the
observation it shows next, into these rows: views of the shared segment in a worker process,
arrays of its own in the in-process backend. The parent reads them back as a ``TimestepBatch``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ding_env.env.spaces import cast_reward
from ding_env.env_manager import arrays
from ding_env.errors import EnvDataError
from ding_env.summary import describe_value
from ding_env.trees import map_tree


def reward_writer(rewards: np.ndarray) -> Callable[[int, Any], None]:
    """A ``write(row, reward)`` for the reward rows.

    A Python float into one-value float rows (the common reward) goes through a flat memoryview,
    which skips numpy's indexing (benchmarks/history/runs.md, run 23), and an array of the rows' own
    shape and dtype is written as it is; any other reward is checked as it is written: a shape the rows
    would broadcast it from, a float beyond the rows' float32 range, or a value an integer dtype or a float's
    precision would change is refused, never cast silently.
    """
    shape, dtype = rewards.shape[1:], rewards.dtype
    if shape != (1,) or dtype not in (np.float32, np.float64):

        def write_array(row: int, value: Any) -> None:
            if type(value) is np.ndarray and value.dtype == dtype and value.shape == shape:
                rewards[row] = value
            else:
                _write_checked(rewards, row, value)

        return write_array
    flat = memoryview(rewards.reshape(-1))
    limit = float(np.finfo(dtype).max)

    def write(row: int, value: Any) -> None:
        if type(value) is float and -limit <= value <= limit:
            flat[row] = value
        elif type(value) is np.ndarray and value.dtype == dtype and value.shape == shape:
            rewards[row] = value
        else:
            _write_checked(rewards, row, value)

    return write


def _write_checked(rewards: np.ndarray, row: int, value: Any) -> None:
    """Write ``value`` into reward row ``row``, refusing a shape, range or dtype the row would change it by.

    Raises:
        EnvDataError: Naming the reward, the reward space's shape or dtype and the fix.
    """
    shape = rewards.shape[1:]
    given = np.asarray(value)
    if given.shape != shape and not (given.size == 1 and shape == (1,)):  # one value for (1,) in any shape
        raise EnvDataError(
            f"reward {describe_value(value)} has shape {given.shape}, where the reward space holds {shape} "
            f"(it would be {'broadcast' if given.size == 1 else 'refused by numpy'}): return one reward of that shape"
        )
    shaped = given.reshape(shape) if given.size == 1 and shape == (1,) else given
    rewards[row] = cast_reward(shaped, rewards.dtype, shown=value)


class StepRows:
    """Where a host writes its envs' step results: row ``env_id - first`` of each array.

    The workers' rows are views of the shared segment (``first=0``: rows by env id); the in-process
    backend's are arrays of its own. Single flags and rewards are written through memoryviews, which
    index single items with less overhead than numpy (the zero-cost rows of benchmarks/history/runs.md).

    Args:
        ready_obs: The observations each env shows next (a tree of arrays).
        step_obs: The observations a step produced (the true final one where done).
        reward: ``(rows, *reward shape)`` rewards.
        done: ``(rows,)`` bool flags.
        truncated: ``(rows,)`` bool flags.
        first: The env id of row 0.
    """

    def __init__(
        self, ready_obs: Any, step_obs: Any, reward: np.ndarray, done: np.ndarray, truncated: np.ndarray, first: int
    ) -> None:
        self.ready_obs, self.step_obs, self.first = ready_obs, step_obs, first
        self.write_ready_obs = arrays.compile_writer(ready_obs)
        self.write_step_obs = arrays.compile_writer(step_obs)
        self.write_reward = reward_writer(reward)
        self.done, self.truncated = memoryview(done), memoryview(truncated)
        # The arrays themselves, for the batch envs' slice assignments.
        self.rewards, self.done_flags, self.truncated_flags = reward, done, truncated

    def copy_step_to_ready(self, rows: list[int]) -> None:
        """Copy the step observations of ``rows`` (distinct) into their ready observations.

        One numpy copy per leaf for consecutive increasing rows (a step of every env): cheaper than a
        write per env once there are a few.
        """
        first, count = rows[0], len(rows)
        if count == 1:
            index: Any = first
        elif rows[-1] - first == count - 1 and rows == list(range(first, first + count)):
            index = slice(first, first + count)
        else:
            index = rows
        if type(self.step_obs) is np.ndarray:
            self.ready_obs[index] = self.step_obs[index]
        else:
            map_tree(lambda ready, step: ready.__setitem__(index, step[index]), self.ready_obs, self.step_obs)

    def release(self) -> None:
        """Drop every view (before the memory they view is released)."""
        self.ready_obs = self.step_obs = self.done = self.truncated = None
        self.write_ready_obs = self.write_step_obs = self.write_reward = None
        self.rewards = self.done_flags = self.truncated_flags = None
