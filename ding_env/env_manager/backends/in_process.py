"""The in-process backend: envs in the calling process, stepped one after another.

``BaseEnvManager`` hosts every env on it; with ``caller_share=True`` a subprocess manager hosts
one share of its envs on it beside its workers. It steps its envs as a worker does (``EnvHost.step``
into rows of its own arrays), so its batches have the workers' form. Its envs have no crash
isolation: an env that kills the process kills the caller, and a hung env can be cut only by a
signal, in the main thread (see ``call_timeout``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from typing_extensions import override

from ding_env.env_manager import arrays
from ding_env.env_manager.backends.base import Backend, Ledger, Spaces
from ding_env.env_manager.backends.env_host import EnvHost
from ding_env.env_manager.backends.settings import EnvSetup, HostSettings
from ding_env.env_manager.backends.step_rows import StepRows
from ding_env.env_manager.outcome import NO_ERRORS, TimestepBatch
from ding_env.errors import DingEnvError, EnvError
from ding_env.ops import Op


class InProcessBackend(Backend):
    """Hosts its envs in an ``EnvHost`` of this process; a step runs when its results are collected."""

    views = True
    steps_when_collected = True

    def __init__(
        self,
        env_fns: Mapping[int, Callable[[], Any]],
        settings: HostSettings,
        name: str,
        ledger: Ledger,
        setup: EnvSetup,
    ) -> None:
        super().__init__(env_fns, name, ledger, setup)
        self.host = EnvHost(self.env_fns, settings, setup, limit_time=True)
        self.first = self.env_ids[0]  # the ids are consecutive: env id ``first + k`` has row ``k``
        self.sent: tuple[np.ndarray, Any, np.ndarray] | None = None
        self.known_ids: np.ndarray | None = None  # a read-only array of ids, and its rows (rows_of)
        self.known_rows: slice | np.ndarray | None = None

    @override
    def launch(self) -> Spaces:
        self.host.launch()
        try:
            spaces = self.host.spaces()
            self.distinct_spaces = self.host.distinct_spaces
            obs_layout = arrays.layout_of(spaces[0])
        except EnvError:  # names its env already (a seed that failed)
            self.host.close()
            raise
        except Exception as error:  # noqa: BLE001 - named with the env, as the workers report it
            self.host.close()
            raise EnvError.of(error, self.first, Op.LAUNCH) from error
        self.host.set_obs_layout(obs_layout)
        count = len(self.env_ids)
        self.ready_rows, self.step_rows = arrays.allocate(obs_layout, count), arrays.allocate(obs_layout, count)
        self.reward = arrays.allocate(arrays.reward_layout(spaces[2]), count)
        self.done, self.truncated = np.zeros(count, dtype=bool), np.zeros(count, dtype=bool)
        self.rows = StepRows(self.ready_rows, self.step_rows, self.reward, self.done, self.truncated, self.first)
        return spaces

    @override
    def seed(self, env_id: int) -> None:
        self.host.seed(env_id)

    @override
    def reset(self, env_ids: list[int]) -> tuple[list[int], list[DingEnvError]]:
        # Stops at the first failure, as a reset() that raises should.
        ready, failure = self.host.reset_into(
            env_ids, lambda rows, obs: arrays.write(self.ready_rows, rows - self.first, obs)
        )
        return ready, [] if failure is None else [failure]

    @override
    def send(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        self.sent = (env_ids, actions, reset_on_done)

    @override
    def poll(self) -> int:
        return 0 if self.sent is None else len(self.sent[0])  # stepped when collected

    @override
    def collect(self, wait: bool) -> TimestepBatch | None:
        if self.sent is None:
            return None
        (env_ids, actions, reset_on_done), self.sent = self.sent, None
        ids = env_ids.tolist()
        rows = self.rows_of(env_ids)
        if self.host.batch is not None:
            stepped = (env_ids, actions, reset_on_done)
            # step_stacked takes increasing ids (a slice of rows: they are).
            if not isinstance(rows, slice) and len(ids) > 1 and not (env_ids[1:] > env_ids[:-1]).all():
                order = np.argsort(env_ids, kind="stable")
                stepped = (env_ids[order], arrays.take(actions, order), reset_on_done[order])
            # The rows are written by env id: the results below are read in the order asked for.
            infos, errors = self.host.step_stacked(*stepped, self.rows)
        else:  # each env gets arrays of its own, as the workers give them
            infos, errors = self.host.step(
                ids, self.host.action_rows(actions, len(ids)), reset_on_done.tolist(), self.rows
            )
        info = [{} for _ in ids]
        if infos or errors:
            if isinstance(rows, slice):  # consecutive ids: an id's row is its offset from the first
                first = ids[0]
                row_of = {env_id: env_id - first for env_id in (*infos, *errors)}
            else:
                row_of = {env_id: row for row, env_id in enumerate(ids)}
            for env_id, env_info in infos.items():
                info[row_of[env_id]] = env_info
            errors = {row_of[env_id]: error for env_id, error in errors.items()}
        return TimestepBatch(
            env_ids,
            arrays.take(self.step_rows, rows),
            self.reward[rows],
            self.done[rows],
            self.truncated[rows],
            info,
            errors or NO_ERRORS,
            reset_on_done,
        )

    @override
    def ready_obs(self, env_ids: np.ndarray) -> Any:
        if not len(env_ids):
            return None
        return arrays.take(self.ready_rows, self.rows_of(env_ids))

    def rows_of(self, env_ids: np.ndarray) -> slice | np.ndarray:
        """The rows of ``env_ids`` (distinct, this backend's) in its arrays: a slice when consecutive and increasing."""
        # While every env is ready the manager hands out one read-only array of every id, step after
        # step: its rows are looked up once. An array that is writable, or a view of another, may change
        # between calls and is looked at anew.
        if env_ids is self.known_ids:
            return self.known_rows
        rows = arrays.rows_of(env_ids - self.first if self.first else env_ids)
        if not env_ids.flags.writeable and env_ids.base is None:
            self.known_ids, self.known_rows = env_ids, rows
        return rows

    @override
    def call(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list:
        return self.host.call(env_ids, name, args, kwargs)

    @override
    def get_attr(self, env_ids: list[int], name: str) -> list:
        return self.host.get_attr(env_ids, name)

    @override
    def set_attr(self, env_ids: list[int], name: str, values: list) -> None:
        self.host.set_attr(env_ids, name, values)

    @override
    def close(self) -> list[EnvError]:
        return self.host.close()
