"""``AsyncSubprocessEnvManager``: returns as soon as ``wait_num`` envs have results; slower envs keep running."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager.batch import StepOutcome
from ding_env.env_manager.failures import raise_close_failures
from ding_env.env_manager.status import STEPPING
from ding_env.env_manager.subprocess import SyncSubprocessEnvManager
from ding_env.env_manager.worker_pool import LIVENESS_INTERVAL
from ding_env.errors import DingEnvError, EnvCrashedError, EnvTimeoutError


class AsyncSubprocessEnvManager(SyncSubprocessEnvManager):
    """Returns as soon as ``wait_num`` envs have results; slower envs keep running.

    ``step`` dispatches the given actions, then waits until ``wait_num`` envs
    (default: every env in flight) have finished, or ``step_wait_timeout``
    seconds have passed with at least one finished. Envs still running come
    back in a later ``step`` call (``step({})`` just collects); ``ready_obs``
    lists only envs that can take an action now. A worker steps the envs it
    hosts together, so ``num_workers=env_num`` gives the finest interleaving.
    """

    manager_type = "async_subprocess"
    _uses_doorbell = True

    def __init__(self, env_fn: Any, cfg: dict | None = None) -> None:
        super().__init__(env_fn, cfg)
        # Per-worker bookkeeping in plain Python lists: a handful of envs per worker makes
        # numpy's per-call cost the larger part.
        self._spans = [(env_ids[0], env_ids[-1] + 1) for env_ids in self._worker_envs]
        self._worker_of_env = self._worker_of.tolist()
        self._busy = [False] * self._num_workers
        self._in_flight: list[list[int]] = [[] for _ in range(self._num_workers)]
        self._queued: list[list[int]] = [[] for _ in range(self._num_workers)]
        self._queued_reset = np.zeros(self._env_num, dtype=bool)
        self._dispatched_at = [0.0] * self._num_workers
        # Results collected and not yet returned: the info, auto-reset flag and error (if any) of each env.
        self._result_infos: dict[int, dict] = {}
        self._result_resets: dict[int, bool] = {}
        self._result_errors: dict[int, DingEnvError] = {}
        # Whether a worker's step-mask and auto-reset rows are all True (so need no rewrite).
        self._rows_are_full = [False] * self._num_workers
        self._any_queued = False
        self._health_checked_at = 0.0

    def _backend_step(
        self, env_ids: np.ndarray, rows: slice | np.ndarray, actions: Any, reset_on_done: np.ndarray, batched: bool
    ) -> StepOutcome:
        self._write_actions(env_ids, rows, actions, batched)
        self._queued_reset[rows] = reset_on_done
        worker_of, queued = self._worker_of_env, self._queued
        for env_id in env_ids.tolist():
            queued[worker_of[env_id]].append(env_id)
        self._any_queued = True
        self._dispatch_queued()
        in_flight = int(np.count_nonzero(self._status == STEPPING))
        wait_num = min(self._cfg.wait_num or self._env_num, in_flight)
        timeout = self._cfg.step_wait_timeout
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        self._harvest()
        results = self._result_infos  # replaced only by _outcome
        while len(results) < wait_num and not (results and time.monotonic() >= deadline):
            self._pool.wait_doorbell(min(LIVENESS_INTERVAL, max(0.0, deadline - time.monotonic())) or LIVENESS_INTERVAL)
            self._harvest()
        return self._outcome()

    def _dispatch_queued(self) -> None:
        if not self._any_queued:
            return
        waiting = False  # queued envs of busy workers remain
        for index, env_ids in enumerate(self._queued):
            if not env_ids:
                continue
            if self._busy[index]:
                waiting = True
                continue
            first, stop = self._spans[index]
            every_env = len(env_ids) == stop - first
            # Rows of envs not stepped now are ignored by the worker. A worker whose every env steps
            # and restarts on done, as last time, finds its rows as they were left.
            if not (every_env and self._endless and self._rows_are_full[index]):
                if every_env:
                    self._mask_buf[first:stop] = True
                else:
                    self._mask_buf[first:stop] = False
                    self._mask_buf[env_ids] = True
                self._reset_buf[first:stop] = self._queued_reset[first:stop]
                self._rows_are_full[index] = every_env and self._endless
            self._in_flight[index], self._queued[index] = env_ids, []
            self._busy[index] = True
            self._dispatched_at[index] = time.monotonic()
            self._pool.dispatch(index)
        self._any_queued = waiting

    def _harvest(self) -> None:
        """Collect finished workers' results, replace dead or overdue ones, dispatch queued actions.

        Liveness (a system call per worker) is checked at most once per ``LIVENESS_INTERVAL``.
        """
        now = time.monotonic()
        timeout = self._cfg.step_timeout
        check_health = now - self._health_checked_at >= LIVENESS_INTERVAL
        if check_health:
            self._health_checked_at = now
        # Rings so far are answered by the polls below; draining keeps the count bounded.
        self._pool.drain_doorbell()
        for index, busy in enumerate(self._busy):
            if not busy:
                continue
            if self._pool.poll_done(index):
                self._collect(index)
            elif check_health and not self._pool.processes[index].is_alive():
                if not self._pool.poll_done(index):
                    self._collect_failure(index, self._pool.crashed(index, "step"))
                else:
                    self._collect(index)
            elif timeout is not None and now - self._dispatched_at[index] > timeout:
                self._collect_failure(index, EnvTimeoutError(self._worker_envs[index], "step", timeout))
        self._dispatch_queued()

    def _collect(self, index: int) -> None:
        env_ids, self._in_flight[index] = self._in_flight[index], []
        self._busy[index] = False
        first, stop = self._spans[index]
        if not self._endless:  # endless episodes always restart: no flags to keep
            resets = self._reset_buf[first:stop].tolist()
            for env_id in env_ids:
                self._result_resets[env_id] = resets[env_id - first]
        infos = self._result_infos
        if not self._pool.has_news(index):
            for env_id in env_ids:
                infos[env_id] = {}
            return
        row_of = {env_id: row for row, env_id in enumerate(env_ids)}
        worker_infos: list[dict] = [{} for _ in env_ids]
        errors: dict[int, DingEnvError] = {}
        self._merge_news(index, row_of, worker_infos, errors)
        for row, env_id in enumerate(env_ids):
            infos[env_id] = worker_infos[row]
            if row in errors:
                self._result_errors[env_id] = errors[row]

    def _collect_failure(self, index: int, error: DingEnvError) -> None:
        """Replace a dead or hung worker; every env it hosted in an episode gets an abnormal result.

        Those are its envs in flight, those whose actions were still queued for it, and its ready
        ones that had no action yet: all lost their episodes (they are STEPPING until the result
        is returned, so no action reaches them meanwhile).
        """
        in_flight, self._in_flight[index] = self._in_flight[index], []
        self._busy[index] = False
        queued, self._queued[index] = self._queued[index], []
        reset = {env_id: bool(self._reset_buf[env_id]) for env_id in in_flight}
        reset.update((env_id, bool(self._queued_reset[env_id])) for env_id in queued)
        reset.update(self._claim_idle_envs(index))
        lost = sorted(reset)
        infos, reset_errors = self._fail_worker(index, error, lost, reset)
        for env_id in lost:
            self._result_infos[env_id] = infos[env_id]
            self._result_errors[env_id] = reset_errors.get(env_id, error)
            self._result_resets[env_id] = reset[env_id]

    def _outcome(self) -> StepOutcome:
        infos_of, self._result_infos = self._result_infos, {}
        resets_of, self._result_resets = self._result_resets, {}
        errors_of, self._result_errors = self._result_errors, {}
        ids = sorted(infos_of)
        if len(ids) == self._env_num:
            env_ids, rows = self._every_id, self._every_row
        else:
            env_ids = np.array(ids, dtype=np.int64)
            rows = arrays.rows_of(env_ids)
        infos = [infos_of[env_id] for env_id in ids]
        errors = {row: errors_of[env_id] for row, env_id in enumerate(ids) if env_id in errors_of} if errors_of else {}
        if self._endless and not resets_of:
            resets = self._always_reset_of(len(ids))
        else:
            resets = np.array([resets_of.get(env_id, True) for env_id in ids], dtype=bool)
        return self._outcome_of(env_ids, rows, infos, errors, resets)

    def _backend_cancel(self, env_ids: list[int]) -> None:
        """Let in-flight steps of ``env_ids`` finish and drop them, so a reset starts clean."""
        cancelled = set(env_ids)
        self._queued = [[env_id for env_id in queued if env_id not in cancelled] for queued in self._queued]
        self._settle_workers({self._worker_of_env[env_id] for env_id in env_ids})
        for env_id in env_ids:
            self._result_infos.pop(env_id, None)
            self._result_resets.pop(env_id, None)
            self._result_errors.pop(env_id, None)

    def _settle_workers(self, workers: Iterable[int]) -> None:
        """Let the in-flight steps of ``workers`` finish, keeping their results for a later ``step``.

        A worker answers pipe requests only after its step, and a step with infos or errors
        sends its own message first: a request must not read that message as its reply.
        A step still running after ``reset_timeout`` (the bound of every pipe request) is treated
        as hung: its worker is replaced and its envs get abnormal results, as after ``step_timeout``.
        """
        workers = set(workers)
        timeout = self._cfg.reset_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        while any(self._busy[index] for index in workers):
            if deadline is not None and time.monotonic() >= deadline:
                for index in [index for index in workers if self._busy[index]]:
                    self._collect_failure(index, EnvTimeoutError(self._worker_envs[index], "step", timeout))
                return
            left = LIVENESS_INTERVAL if deadline is None else max(0.0, deadline - time.monotonic())
            self._pool.wait_doorbell(min(LIVENESS_INTERVAL, left))
            self._harvest()

    def _backend_poll(self) -> None:
        if any(self._busy):
            self._harvest()

    def _backend_close(self) -> None:
        deadline = time.monotonic() + 1.0
        try:
            while any(self._busy) and time.monotonic() < deadline:
                self._pool.wait_doorbell(LIVENESS_INTERVAL)
                self._harvest()
        except (EnvCrashedError, EnvTimeoutError):
            pass  # the pool's close joins or kills every worker anyway
        # A worker still stepping now is hung: it would not answer a close request either.
        stuck = [index for index, busy in enumerate(self._busy) if busy]
        self._release_buffers()
        raise_close_failures(self._pool.close(stuck))
