"""``AsyncWorkerBackend``: worker processes whose results are taken as they come.

A step's actions go to each idle worker at once and are queued for a busy one; results are taken
in worker by worker as they finish (``poll``), so the manager's wait loop (``Shares.collect_early``)
can return once ``wait_num`` envs have results while slower envs keep running. Workers post a
shared "any done" semaphore after each step, so waiting for "any worker" is one semaphore.

How envs are grouped: the env ids are cut into ``num_workers`` consecutive runs (default
``num_workers``: one worker per core), and a worker steps the envs of its run one after another and
reports them together, so an env comes back with the other envs of its worker that were sent with
it: a fast env waits for its slower siblings. ``num_workers=env_num`` (one env per worker) hands back
every env as soon as it has finished. Handing back each env of a shared worker as soon as it is done
was measured and not kept: such an env still cannot step again before its siblings have, so it only
buys more, smaller policy calls (``benchmarks/RESULTS.md``, "The async manager's grouping").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np
from typing_extensions import override

from ding_env.env_manager import arrays
from ding_env.env_manager.backends.base import Backend, Ledger, Spaces, WorkerView
from ding_env.env_manager.backends.interrupts import held
from ding_env.env_manager.backends.settings import EnvSetup, WorkerSettings
from ding_env.env_manager.backends.worker_pool import LIVENESS_INTERVAL
from ding_env.env_manager.backends.worker_set import WorkerSet
from ding_env.env_manager.outcome import NO_ERRORS, TimestepBatch
from ding_env.errors import DingEnvError, EnvCrashedError, EnvError, EnvTimeoutError
from ding_env.ops import Op


class AsyncWorkerBackend(Backend):
    """Hosts the env ids ``0..n-1`` in worker processes; ``collect(wait=False)`` hands over what finished.

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
        self.workers = WorkerSet(
            env_fns, settings, name, ledger, setup, num_workers, wake_on_any=True, settle=self.finish_steps
        )
        self.reset_timeout = settings.host.reset_timeout
        count = self.workers.num_workers
        # Per-worker bookkeeping in plain Python lists: with a handful of envs per worker, numpy's
        # per-call cost would be the larger part.
        self.spans = [(env_ids[0], env_ids[-1] + 1) for env_ids in self.workers.worker_envs]
        self.worker_of_env = self.workers.worker_of.tolist()
        self.busy = [False] * count
        self.in_flight: list[list[int]] = [[] for _ in range(count)]
        self.queued: list[list[int]] = [[] for _ in range(count)]
        self.queued_reset = np.zeros(len(self.env_ids), dtype=bool)
        self.dispatched_at = [0.0] * count
        # Results taken in and not yet handed over: the info, auto-reset flag and error (if any) of each env.
        self.result_infos: dict[int, dict] = {}
        self.result_resets: dict[int, bool] = {}
        self.result_errors: dict[int, DingEnvError] = {}
        self.health_checked_at = 0.0

    @override
    def launch(self) -> Spaces:
        spaces = self.workers.launch()
        self.distinct_spaces = self.workers.pool.distinct_spaces
        self.every_result = self.workers.results(slice(0, len(self.env_ids)))  # views made once
        return spaces

    @override
    def seed(self, env_id: int) -> None:
        self.workers.seed(env_id)

    @override
    def reset(self, env_ids: list[int]) -> tuple[list[int], list[DingEnvError]]:
        return self.workers.reset(env_ids)

    @override
    def call(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list:
        return self.workers.call(env_ids, name, args, kwargs)

    @override
    def get_attr(self, env_ids: list[int], name: str) -> list:
        return self.workers.get_attr(env_ids, name)

    @override
    def set_attr(self, env_ids: list[int], name: str, values: list) -> None:
        self.workers.set_attr(env_ids, name, values)

    # ---- steps ---------------------------------------------------------

    @override
    def send(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        # A Ctrl-C between marking a worker busy and posting its step would leave it so for ever.
        held(self._queue, env_ids, actions, reset_on_done)

    def _queue(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        arrays.write(self.workers.action_buf, env_ids, actions)
        self.queued_reset[env_ids] = reset_on_done
        for env_id in env_ids.tolist():
            self.queued[self.worker_of_env[env_id]].append(env_id)
        self.dispatch_queued()

    def dispatch_queued(self) -> None:
        """Send each idle worker the actions queued for it."""
        workers = self.workers
        for index, env_ids in enumerate(self.queued):
            if not env_ids or self.busy[index]:
                continue
            first, stop = self.spans[index]
            # Rows of envs not stepped now are ignored by the worker.
            workers.mask_buf[first:stop] = False
            workers.mask_buf[env_ids] = True
            workers.reset_buf[first:stop] = self.queued_reset[first:stop]
            self.in_flight[index], self.queued[index] = env_ids, []
            self.busy[index] = True
            self.dispatched_at[index] = time.monotonic()
            workers.pool.dispatch(index)

    @override
    def poll(self) -> int:
        if any(self.busy):
            self.take_finished()
        return len(self.result_infos)

    @override
    def wait(self, timeout: float) -> None:
        if any(self.busy):
            self.workers.pool.wait_any_done(timeout)

    @override
    def collect(self, wait: bool) -> TimestepBatch | None:
        """The results taken in so far (with ``wait``, once every env sent has one)."""
        self.take_finished()
        while wait and (any(self.busy) or any(self.queued)):
            self.workers.pool.wait_any_done(LIVENESS_INTERVAL)
            self.take_finished()
        return self.hand_over() if self.result_infos else None

    def take_finished(self) -> None:
        """Take in finished workers' results, replace dead or overdue ones, dispatch queued actions.

        Liveness (a system call per worker) is checked at most once per ``LIVENESS_INTERVAL``. A Ctrl-C is
        held off meanwhile: landing between taking a worker's done post and marking it idle, it left the
        worker busy with no post to come, and the next reset waited for it for ever.
        """
        held(self._take_finished)

    def _take_finished(self) -> None:
        pool = self.workers.pool
        now = time.monotonic()
        timeout = self.step_wait
        check_health = now - self.health_checked_at >= LIVENESS_INTERVAL
        if check_health:
            self.health_checked_at = now
        # Posts so far are answered by the polls below; draining keeps the count bounded.
        pool.drain_any_done()
        for index, busy in enumerate(self.busy):
            if not busy:
                continue
            if pool.poll_done(index):
                self.take_results(index)
            elif check_health and not pool.processes[index].is_alive():
                if not pool.poll_done(index):
                    self.take_failure(index, pool.crashed(index, Op.STEP))
                else:
                    self.take_results(index)
            elif timeout is not None and now - self.dispatched_at[index] > timeout:
                self.take_failure(index, self.workers.pool.timed_out(index, Op.STEP, timeout))
        self.dispatch_queued()

    def take_results(self, index: int) -> None:
        """Keep the results of worker ``index``'s finished step."""
        env_ids, self.in_flight[index] = self.in_flight[index], []
        self.busy[index] = False
        first, stop = self.spans[index]
        resets = self.workers.reset_buf[first:stop].tolist()
        for env_id in env_ids:
            self.result_resets[env_id] = resets[env_id - first]
        infos = self.result_infos
        if not self.workers.pool.has_report(index):
            for env_id in env_ids:
                infos[env_id] = {}
            return
        reported: dict[int, dict] = {}
        self.workers.read_report(index, reported, self.result_errors)
        for env_id in env_ids:
            infos[env_id] = reported.get(env_id, {})

    def take_failure(self, index: int, error: DingEnvError) -> None:
        """Replace a dead or hung worker; every env it hosted in an episode gets an abnormal result.

        Those are its envs in flight, those whose actions were still queued for it, and its idle
        ones the ledger gives up (stepping until their results are handed over, so no action reaches
        them meanwhile).
        """
        in_flight, self.in_flight[index] = self.in_flight[index], []
        self.busy[index] = False
        queued, self.queued[index] = self.queued[index], []
        reset = {env_id: bool(self.workers.reset_buf[env_id]) for env_id in in_flight}
        reset.update((env_id, bool(self.queued_reset[env_id])) for env_id in queued)
        reset.update(self.ledger.claim_idle(self.workers.worker_envs[index]))
        lost = sorted(reset)
        infos, errors = self.workers.fail_worker(index, error, lost, reset)
        self.result_infos.update(infos)
        self.result_errors.update(errors)
        self.result_resets.update(reset)

    def hand_over(self) -> TimestepBatch:
        """The results taken in so far, in env id order; they are handed over once (a Ctrl-C waits for them)."""
        return held(self._hand_over)

    def _hand_over(self) -> TimestepBatch:
        infos_of, self.result_infos = self.result_infos, {}
        resets_of, self.result_resets = self.result_resets, {}
        errors_of, self.result_errors = self.result_errors, {}
        ids = sorted(infos_of)
        env_ids = np.array(ids, dtype=np.int64)
        every = len(ids) == len(self.env_ids)  # distinct and increasing: every env in order
        obs, reward, done, truncated = self.every_result if every else self.workers.results(arrays.rows_of(env_ids))
        errors = {row: errors_of[env_id] for row, env_id in enumerate(ids) if env_id in errors_of}
        resets = np.array([resets_of[env_id] for env_id in ids], dtype=bool)
        info = [infos_of[env_id] for env_id in ids]
        return TimestepBatch(env_ids, obs, reward, done, truncated, info, errors or NO_ERRORS, resets)

    @override
    def cancel(self, env_ids: list[int]) -> None:
        """Let in-flight steps of ``env_ids`` finish and drop them, so a reset starts clean."""
        cancelled = set(env_ids)
        self.queued = [[env_id for env_id in queued if env_id not in cancelled] for queued in self.queued]
        self.finish_steps({self.worker_of_env[env_id] for env_id in env_ids})
        for env_id in env_ids:
            self.result_infos.pop(env_id, None)
            self.result_resets.pop(env_id, None)
            self.result_errors.pop(env_id, None)

    def finish_steps(self, workers: Collection[int]) -> None:
        """Let the in-flight steps of ``workers`` finish, keeping their results for a later ``collect``.

        A worker answers pipe requests only after its step, and a step with infos or errors
        sends its own message first: a request must not read that message as its reply.
        A step still running after ``reset_timeout`` (the bound of every pipe request) is treated
        as hung: its worker is replaced and its envs get abnormal results, as after ``step_timeout``.
        """
        workers = set(workers)
        timeout = self.reset_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        while any(self.busy[index] for index in workers):
            if deadline is not None and time.monotonic() >= deadline:
                held(self._fail_overdue, workers, timeout)
                return
            left = LIVENESS_INTERVAL if deadline is None else max(0.0, deadline - time.monotonic())
            self.workers.pool.wait_any_done(min(LIVENESS_INTERVAL, left))
            self.take_finished()

    def _fail_overdue(self, workers: Collection[int], timeout: float) -> None:
        for index in [index for index in workers if self.busy[index]]:
            self.take_failure(index, self.workers.pool.timed_out(index, Op.STEP, timeout))

    @override
    def ready_obs(self, env_ids: np.ndarray) -> Any:
        return self.workers.ready_obs(env_ids) if len(env_ids) else None

    @override
    def worker_views(self) -> list[WorkerView]:
        return self.workers.views()

    @override
    def close(self) -> list[EnvError]:
        deadline = time.monotonic() + 1.0
        failures: list[EnvError] = []
        try:
            while any(self.busy) and time.monotonic() < deadline:
                self.workers.pool.wait_any_done(LIVENESS_INTERVAL)
                self.take_finished()
        except (EnvCrashedError, EnvTimeoutError):
            pass  # a worker lost while closing: the pool's close joins or kills every worker anyway
        except EnvError as error:  # a lost worker's replacement failed: reported with the envs' close failures
            failures.append(EnvError(error.env_id, Op.CLOSE, f"its lost worker's replacement failed: {error.summary}"))
        # A worker still stepping now is hung: it would not answer a close request either.
        self.every_result = None
        return failures + self.workers.close([index for index, busy in enumerate(self.busy) if busy])
