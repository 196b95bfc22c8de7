"""Trajectories of envs run alone and in a manager, in one comparable form (copies, never manager buffers)."""

from __future__ import annotations

from typing import Any

import numpy as np


def tree_copy(value: Any, row: int | None = None) -> Any:
    """A copy of ``value`` (a tree of arrays), or of its row ``row``."""
    if isinstance(value, dict):
        return {key: tree_copy(sub, row) for key, sub in value.items()}
    if isinstance(value, tuple):
        return tuple(tree_copy(sub, row) for sub in value)
    return np.array(value if row is None else value[row])


def run_alone(env_fns: list, seed: int, actions: list[list[Any]]) -> list[list]:
    """Each env seeded ``seed + i`` and stepped with ``actions[step][i]``, reset when done, as a manager would."""
    records = []
    for env_id, env_fn in enumerate(env_fns):
        env = env_fn()
        env.seed(seed + env_id)
        rows = [("reset", tree_copy(env.reset()))]
        for step_actions in actions:
            timestep = env.step(step_actions[env_id])
            rows.append(
                ("step", tree_copy(timestep.obs), tree_copy(timestep.reward), timestep.done, timestep.truncated)
            )
            if timestep.done:
                rows.append(("reset", tree_copy(env.reset())))
        env.close()
        records.append(rows)
    return records


def run_in_manager(manager: Any, seed: int, actions: list[list[Any]]) -> list[list]:
    """:func:`run_alone`'s records from a (sync) manager's batched API, one list of actions per env per step."""
    manager.seed(seed)
    manager.launch()
    ready = manager.ready_obs_batch
    records = [[("reset", tree_copy(ready.obs, row))] for row in range(manager.env_num)]
    for step_actions in actions:
        batch = manager.step_batch(np.arange(manager.env_num), step_actions)
        for row, env_id in enumerate(batch.env_id.tolist()):
            step = (tree_copy(batch.obs, row), tree_copy(batch.reward, row), bool(batch.done[row]))
            records[env_id].append(("step", *step, bool(batch.truncated[row])))
        done = np.array(batch.done, dtype=bool)
        if done.any():
            ready = manager.ready_obs_batch
            for row, env_id in enumerate(ready.env_id.tolist()):
                if done[env_id]:
                    records[env_id].append(("reset", tree_copy(ready.obs, row)))
    return records


def assert_same_records(got: list[list], expected: list[list]) -> None:
    """Equal kinds, observations, rewards and flags, record by record."""
    assert [len(rows) for rows in got] == [len(rows) for rows in expected]
    for env_rows, expected_rows in zip(got, expected, strict=True):
        for record, expected_record in zip(env_rows, expected_rows, strict=True):
            assert record[0] == expected_record[0]
            for field, want in zip(record[1:], expected_record[1:], strict=True):
                _assert_tree_equal(field, want)


def _assert_tree_equal(got: Any, want: Any) -> None:
    if isinstance(want, dict):
        assert list(got) == list(want)
        for key in want:
            _assert_tree_equal(got[key], want[key])
    elif isinstance(want, tuple):
        for sub, want_sub in zip(got, want, strict=True):
            _assert_tree_equal(sub, want_sub)
    else:
        np.testing.assert_array_equal(got, want)
