"""``AsyncSubprocessEnvManager``: returns as soon as ``wait_num`` envs have results; slower envs keep running."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager.batch import StepOutcome
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

    def __init__(self, env_fn: Any, cfg: dict | None = None) -> None:
        super().__init__(env_fn, cfg)
        self._busy = np.zeros(self._num_workers, dtype=bool)
        self._dispatched_at = np.zeros(self._num_workers)
        self._queued = np.zeros(self._env_num, dtype=bool)
        self._queued_reset = np.zeros(self._env_num, dtype=bool)
        self._results: dict[int, tuple[dict, DingEnvError | None, bool]] = {}
        self._any_queued = False
        self._health_checked_at = 0.0

    def _backend_step(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray, batched: bool) -> StepOutcome:
        self._write_actions(env_ids, arrays.rows_of(env_ids), actions, batched)
        self._queued[env_ids] = True
        self._queued_reset[env_ids] = reset_on_done
        self._any_queued = True
        self._dispatch_queued()
        in_flight = int(np.count_nonzero(self._status == STEPPING))
        wait_num = min(self._cfg.wait_num or self._env_num, in_flight)
        deadline = time.monotonic() + self._cfg.step_wait_timeout
        self._harvest()
        while len(self._results) < wait_num and not (self._results and time.monotonic() >= deadline):
            self._pool.wait_doorbell(min(LIVENESS_INTERVAL, max(0.0, deadline - time.monotonic())) or LIVENESS_INTERVAL)
            self._harvest()
        return self._outcome()

    def _dispatch_queued(self) -> None:
        if not self._any_queued:
            return
        waiting = False  # queued envs of busy workers remain
        for index in range(self._num_workers):
            env_ids = [env_id for env_id in self._worker_envs[index] if self._queued[env_id]]
            if not env_ids:
                continue
            if self._busy[index]:
                waiting = True
                continue
            self._mask_buf[self._worker_envs[index]] = False
            self._mask_buf[env_ids] = True
            self._reset_buf[env_ids] = self._queued_reset[env_ids]
            self._queued[env_ids] = False
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
        for index in np.flatnonzero(self._busy).tolist():
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

    def _stepped_envs(self, index: int) -> list[int]:
        return [env_id for env_id in self._worker_envs[index] if self._mask_buf[env_id]]

    def _collect(self, index: int) -> None:
        self._busy[index] = False
        env_ids = self._stepped_envs(index)
        row_of = {env_id: row for row, env_id in enumerate(env_ids)}
        infos: list[dict] = [{} for _ in env_ids]
        errors: dict[int, DingEnvError] = {}
        if self._pool.has_news(index):
            self._merge_news(index, row_of, infos, errors)
        for env_id in env_ids:
            self._mask_buf[env_id] = False
            row = row_of[env_id]
            self._results[env_id] = (infos[row], errors.get(row), bool(self._reset_buf[env_id]))

    def _collect_failure(self, index: int, error: DingEnvError) -> None:
        self._busy[index] = False
        # Envs whose actions were still queued for this worker lose their state too: they get the
        # same abnormal done rows as the ones in flight, and no auto-reset.
        queued = [env_id for env_id in self._worker_envs[index] if self._queued[env_id]]
        self._queued[queued] = False
        env_ids = self._stepped_envs(index) + queued
        reset = {env_id: bool(self._reset_buf[env_id]) and env_id not in queued for env_id in env_ids}
        infos = self._fail_worker(index, error, env_ids, reset)
        for env_id in env_ids:
            self._mask_buf[env_id] = False
            self._results[env_id] = (infos[env_id], error, reset[env_id])

    def _outcome(self) -> StepOutcome:
        env_ids = np.array(sorted(self._results), dtype=np.int64)
        results = [self._results.pop(env_id) for env_id in env_ids.tolist()]
        rows = arrays.rows_of(env_ids)
        errors = {row: error for row, (_, error, _) in enumerate(results) if error is not None}
        reset_on_done = np.array([reset for _, _, reset in results], dtype=bool)
        infos = [info for info, _, _ in results]
        return self._outcome_of(env_ids, rows, infos, errors, reset_on_done)

    def _backend_cancel(self, env_ids: list[int]) -> None:
        """Let in-flight steps of ``env_ids`` finish and drop them, so a reset starts clean."""
        self._queued[env_ids] = False
        workers = set(self._worker_of[env_ids].tolist())
        while any(self._busy[index] for index in workers):
            self._pool.wait_doorbell(LIVENESS_INTERVAL)
            self._harvest()
        for env_id in env_ids:
            self._results.pop(env_id, None)

    def _backend_poll(self) -> None:
        if self._busy.any():
            self._harvest()

    def _backend_close(self) -> None:
        deadline = time.monotonic() + 1.0
        try:
            while self._busy.any() and time.monotonic() < deadline:
                self._pool.wait_doorbell(LIVENESS_INTERVAL)
                self._harvest()
        except (EnvCrashedError, EnvTimeoutError):
            pass  # the pool's close joins or kills every worker anyway
        super()._backend_close()
