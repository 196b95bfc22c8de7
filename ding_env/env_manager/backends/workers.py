"""``WorkerBackend``: envs in worker processes, results through shared memory; a step returns every env sent.

Envs run in worker processes, several per worker (``WorkerSet``). Observations, actions, rewards
and done/truncated flags live in one shared-memory segment allocated once from the spaces; the
batches it returns are views into it. A step costs two semaphore posts per worker and no
pickling for plain array envs: ``send`` writes the actions and the step mask and posts each
worker's command semaphore, ``collect`` waits for each worker's done semaphore and reads the
results (and the infos and errors a worker reports, see ``WorkerPool.step_report``).

A worker that dies (segfault, ``os._exit``, OOM kill) or exceeds ``step_timeout`` /
``reset_timeout`` is replaced by a fresh process at once; its envs come back as abnormal results
naming the failure, and its other envs lose their episodes (reported to the manager's ledger).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from typing_extensions import override

from ding_env.env_manager import arrays
from ding_env.env_manager.backends.base import Backend, Ledger, Spaces, WorkerView
from ding_env.env_manager.backends.interrupts import held
from ding_env.env_manager.backends.settings import EnvSetup, WorkerSettings
from ding_env.env_manager.backends.worker_set import WORKER_FAILURES, WorkerSet, kept
from ding_env.env_manager.outcome import NO_ERRORS, TimestepBatch
from ding_env.errors import DingEnvError, EnvError


class WorkerBackend(Backend):
    """Hosts the env ids ``0..n-1`` in ``num_workers`` worker processes; a step returns every env sent.

    Args:
        env_fns: ``{env_id: constructor}`` for the ids ``0..n-1``.
        settings: How workers are started, waited for and treat their envs.
        name: Names the manager in errors.
        ledger: Where envs lost with a worker are reported.
        setup: The envs' seeds and reset kwargs (the manager's).
        num_workers: Worker processes.
    """

    views = True

    def __init__(
        self,
        env_fns: Mapping[int, Callable[[], Any]],
        settings: WorkerSettings,
        name: str,
        ledger: Ledger,
        setup: EnvSetup,
        num_workers: int,
    ) -> None:
        super().__init__(env_fns, name, ledger, setup)
        self.step_wait = settings.host.step_wait  # step_timeout, and reset_timeout for an auto-reset
        self.reset_timeout = settings.host.reset_timeout
        self.workers = WorkerSet(env_fns, settings, name, ledger, setup, num_workers)
        self.env_num = len(self.env_ids)
        self.all_workers = list(range(self.workers.num_workers))
        self.sent: tuple[np.ndarray, slice | np.ndarray, np.ndarray, list[int]] | None = None
        # Workers whose step a KeyboardInterrupt left unwaited for, and those it left with a report unread:
        # settled before they are asked anything.
        self.unfinished: list[int] = []
        self.unread: list[int] = []

    @override
    def launch(self) -> Spaces:
        spaces = self.workers.launch()
        self.distinct_spaces = self.workers.pool.distinct_spaces
        # Views of every env's rows, made once: the results of a step of every env.
        self.every_row = slice(0, self.env_num)
        self.every_result = self.workers.results(self.every_row)
        self.every_ready = arrays.take(self.workers.ready_buf, self.every_row)
        self.every_list = list(range(self.env_num))
        # Whether every row of the step mask is set: steps of every env leave it so.
        self.mask_is_full = False
        return spaces

    @override
    def seed(self, env_id: int) -> None:
        self.settle_interrupted()
        self.workers.seed(env_id)

    @override
    def cancel(self, env_ids: list[int]) -> None:
        self.settle_interrupted()

    @override
    def reset(self, env_ids: list[int]) -> tuple[list[int], list[DingEnvError]]:
        self.settle_interrupted()
        return self.workers.reset(env_ids)

    @override
    def call(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list:
        self.settle_interrupted()
        return self.workers.call(env_ids, name, args, kwargs)

    @override
    def get_attr(self, env_ids: list[int], name: str) -> list:
        self.settle_interrupted()
        return self.workers.get_attr(env_ids, name)

    @override
    def set_attr(self, env_ids: list[int], name: str, values: list) -> None:
        self.settle_interrupted()
        self.workers.set_attr(env_ids, name, values)

    def settle_interrupted(self, grace: float | None = None) -> list[int]:
        """Let the steps a KeyboardInterrupt left running finish, and drop their results.

        A worker answers pipe requests only after its step, and its done post and report must not be
        taken for those of a later step or request. A worker still stepping after ``grace`` seconds
        (default ``reset_timeout``, the bound of every request, else the step's own bound) is replaced,
        or with a ``grace`` left for ``close`` to stop.

        Returns:
            The workers still stepping after ``grace`` seconds, when it is given.
        """
        if self.sent is not None:  # dispatched and never collected: a Ctrl-C came between send and collect
            self.unfinished, self.sent = [*self.unfinished, *self.sent[3]], None
        pool, stuck = self.workers.pool, []
        while self.unread:  # finished before the interrupt, their reports not read yet
            if pool.has_report(self.unread[0]):
                self.workers.read_report(self.unread[0], {}, {})
            self.unread.pop(0)
        # The bound of the request that comes next (reset_timeout), else of the step that was cut.
        timeout = self.reset_timeout if self.reset_timeout is not None else self.step_wait
        timeout = timeout if grace is None else grace
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.unfinished:
            index = self.unfinished[0]
            try:
                pool.wait_settled(index, deadline, timeout)
            except WORKER_FAILURES:
                if grace is None:
                    self.workers.replace_worker(index)
                else:
                    stuck.append(index)
            else:
                if pool.has_report(index):
                    self.workers.read_report(index, {}, {})
            self.unfinished.pop(0)
        return stuck

    # ---- steps ---------------------------------------------------------

    @override
    def send(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        workers = self.workers
        every = len(env_ids) == self.env_num  # distinct ids: every env, in some order
        rows = self.rows_of(env_ids, every)
        arrays.write(workers.action_buf, rows, actions)
        if not every:
            workers.mask_buf[:] = False
            workers.mask_buf[rows] = True
            self.mask_is_full = False
        elif not self.mask_is_full:  # a step of every env after one of some: every row steps again
            workers.mask_buf[:] = True
            self.mask_is_full = True
        workers.reset_buf[rows] = reset_on_done
        stepping = self.all_workers if every else sorted(set(workers.worker_of[env_ids].tolist()))
        # A Ctrl-C between counting a worker's step and posting it would leave them apart.
        held(self._dispatch, stepping, (env_ids, rows, reset_on_done, stepping))

    def _dispatch(self, stepping: list[int], sent: tuple) -> None:
        for index in stepping:
            self.workers.pool.dispatch(index)
        self.sent = sent

    @override
    def poll(self) -> int:
        return 0 if self.sent is None else len(self.sent[0])  # collect waits for them

    @override
    def collect(self, wait: bool) -> TimestepBatch | None:
        """The results of the envs sent (a synchronous backend always waits for them).

        A Ctrl-C is held off until the results are read (reports left on a pipe would be taken for a later
        request's reply), except while waiting for a worker: there it is raised at once (``wait_done``).
        """
        if self.sent is None:
            return None
        return held(self._collect)

    def _collect(self) -> TimestepBatch:
        (env_ids, rows, reset_on_done, stepping), self.sent = self.sent, None
        workers, pool, timeout = self.workers, self.workers.pool, self.step_wait
        deadline = None if timeout is None else time.monotonic() + timeout
        failures: dict[int, DingEnvError] = {}
        for position, index in enumerate(stepping):
            try:
                pool.wait_done(index, deadline, timeout)
            except WORKER_FAILURES as error:
                failures[index] = kept(error)
            except BaseException:  # Ctrl-C: the workers not waited for yet are still stepping
                done = stepping[:position]
                # A failed worker is settled as a still-stepping one: waiting for it finds it dead or hung again.
                self.unread = [index for index in done if index not in failures]
                self.unfinished = [index for index in done if index in failures] + stepping[position:]
                raise
        reporting = [index for index in stepping if index not in failures and pool.has_report(index)]
        if not reporting and not failures:  # the common step: nothing but the shared rows
            obs, reward, done, truncated = self.every_result if rows is self.every_row else workers.results(rows)
            return TimestepBatch(
                env_ids, obs, reward, done, truncated, [{} for _ in range(len(env_ids))], NO_ERRORS, reset_on_done
            )
        infos: dict[int, dict] = {}
        errors: dict[int, DingEnvError] = {}
        for index in reporting:
            workers.read_report(index, infos, errors)
        if failures:  # the failed workers' idle envs lost their episodes too: they get results as well
            env_ids, reset_on_done = self.with_idle_envs(env_ids, reset_on_done, failures)
            rows = self.rows_of(env_ids, len(env_ids) == self.env_num)
            flags = dict(zip(env_ids.tolist(), reset_on_done.tolist(), strict=True))
            for index, error in failures.items():
                lost = [env_id for env_id in workers.worker_envs[index] if env_id in flags]
                failed_infos, failed_errors = workers.fail_worker(index, error, lost, flags)
                infos.update(failed_infos)
                errors.update(failed_errors)
        obs, reward, done, truncated = self.every_result if rows is self.every_row else workers.results(rows)
        if rows is self.every_row and not errors:  # every env in id order, row k being env k: place the few infos
            info = [{} for _ in range(len(env_ids))]
            for env_id, env_info in infos.items():
                info[env_id] = env_info
            return TimestepBatch(env_ids, obs, reward, done, truncated, info, NO_ERRORS, reset_on_done)
        ids = env_ids.tolist()
        row_errors = {row: errors[env_id] for row, env_id in enumerate(ids) if env_id in errors}
        info = [infos.get(env_id, {}) for env_id in ids]
        return TimestepBatch(env_ids, obs, reward, done, truncated, info, row_errors or NO_ERRORS, reset_on_done)

    def with_idle_envs(
        self, env_ids: np.ndarray, reset_on_done: np.ndarray, failures: dict[int, DingEnvError]
    ) -> tuple[np.ndarray, np.ndarray]:
        """``env_ids`` (and their auto-reset flags) joined by the idle envs of failed workers the ledger gives up."""
        idle: dict[int, bool] = {}
        for index in failures:
            idle.update(self.ledger.claim_idle(self.workers.worker_envs[index]))
        if not idle:
            return env_ids, reset_on_done
        flags = dict(zip(env_ids.tolist(), reset_on_done.tolist(), strict=True)) | idle
        joined = np.array(sorted(flags), dtype=np.int64)
        return joined, np.array([flags[env_id] for env_id in joined.tolist()], dtype=bool)

    def rows_of(self, env_ids: np.ndarray, every: bool) -> slice | np.ndarray:
        """The buffer rows of ``env_ids``: ``every_row`` for every env in order, a slice for consecutive ids.

        ``arrays.rows_of`` gives the same rows; testing every env against a list made once is the
        cheaper path a step of every env takes (about 0.5 us of the parent's work per zero-cost batch).
        """
        if every and env_ids.tolist() == self.every_list:
            return self.every_row
        return arrays.rows_of(env_ids)

    @override
    def ready_obs(self, env_ids: np.ndarray) -> Any:
        if not len(env_ids):
            return None
        if len(env_ids) == self.env_num:  # increasing, distinct: every env in order
            return self.every_ready
        return self.workers.ready_obs(env_ids)

    @override
    def worker_views(self) -> list[WorkerView]:
        return self.workers.views()

    @override
    def close(self) -> list[EnvError]:
        # A worker still stepping a second after an interrupted step is hung: it would not answer a close request.
        stuck = self.settle_interrupted(grace=1.0)
        self.every_result = self.every_ready = None
        return self.workers.close(stuck)
