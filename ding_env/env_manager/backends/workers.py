"""``WorkerBackend``: envs in worker processes, results through shared memory.

Envs run in worker processes, several per worker. Observations, actions, rewards and
done/truncated flags live in one shared-memory segment allocated once from the spaces; the
batches it returns are views into it. A step costs two semaphore posts per worker and no
pickling for plain array envs.

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
from ding_env.env_manager.backends.worker_pool import WorkerPool
from ding_env.env_manager.outcome import NO_ERRORS, TimestepBatch
from ding_env.env_manager.protocol import CallEnvs, Request, Reset, Seed, SetEnvAttr, SetResetParam
from ding_env.env_manager.status import abnormal_info
from ding_env.errors import DingEnvError, EnvCrashedError, EnvError, EnvTimeoutError

WORKER_FAILURES = (EnvCrashedError, EnvTimeoutError)


def kept(error: DingEnvError) -> DingEnvError:
    """``error`` without the traceback of where this process caught it, to be raised or reported later.

    That traceback holds the frame that keeps the error (a cycle): with it, the step's buffers
    (views of the shared segment) would stay mapped until the garbage collector runs. The env's
    own traceback stays in the error's text.
    """
    return error.with_traceback(None)


def worker_shares(env_ids: list[int], num_workers: int) -> list[list[int]]:
    """``env_ids`` cut into ``num_workers`` consecutive runs whose sizes differ by at most one."""
    bounds = np.linspace(0, len(env_ids), num_workers + 1).round().astype(int)
    return [env_ids[bounds[w] : bounds[w + 1]] for w in range(num_workers)]


class WorkerBackend(Backend):
    """Hosts the env ids ``0..n-1`` in ``num_workers`` worker processes; a step returns every env sent.

    Args:
        env_fns: ``{env_id: constructor}`` for the ids ``0..n-1`` (pickled with cloudpickle for
            'spawn'/'forkserver', so lambdas work).
        cfg: The manager config.
        name: Names the manager in errors.
        ledger: Where envs lost with a worker are reported.
        num_workers: Worker processes.
    """

    views = True
    # Workers post a shared "any done" semaphore after each step only for a backend that waits for any worker.
    wake_on_any = False

    def __init__(
        self, env_fns: Mapping[int, Callable[[], Any]], cfg: Mapping, name: str, ledger: Ledger, num_workers: int
    ) -> None:
        super().__init__(env_fns, cfg, name, ledger)
        if self.env_ids != list(range(len(self.env_ids))):
            raise ValueError(f"{name}: worker backends host the env ids 0..n-1, got {self.env_ids}")
        self.env_num = len(self.env_ids)
        self.worker_envs = worker_shares(self.env_ids, min(num_workers, self.env_num))
        self.num_workers = len(self.worker_envs)
        self.worker_of = np.repeat(np.arange(self.num_workers), [len(share) for share in self.worker_envs])
        self.all_workers = list(range(self.num_workers))
        self.pool: WorkerPool | None = None
        # What a replaced worker's envs get again: their seeds and reset params.
        self.seeds: dict[int, tuple[int, bool | None]] = {}
        self.reset_params: dict[int, dict] = {}
        self.sent: tuple[np.ndarray, slice | np.ndarray, np.ndarray, list[int]] | None = None

    @override
    def launch(self) -> Spaces:
        self.pool = WorkerPool(
            [self.env_fns[env_id] for env_id in self.env_ids], self.worker_envs, self.cfg, self.name, self.wake_on_any
        )
        spaces = self.pool.start()
        try:
            buffers = self.pool.allocate(spaces, self.env_num)
        except BaseException:
            self.pool.close_processes()
            raise
        self.ready_buf, self.step_buf = buffers["ready_obs"], buffers["step_obs"]
        self.action_buf, self.reward_buf = buffers["action"], buffers["reward"]
        self.done_buf, self.truncated_buf = buffers["done"], buffers["truncated"]
        self.mask_buf, self.reset_buf = buffers["step_mask"], buffers["reset_on_done"]
        # Views of every env's rows, made once: the results of a step of every env.
        self.every_row = slice(0, self.env_num)
        self.every_result = self.result_views(self.every_row)
        self.every_ready = arrays.take(self.ready_buf, self.every_row)
        self.every_list = list(range(self.env_num))
        # Whether every row of the step mask is set: steps of every env leave it so.
        self.mask_is_full = False
        return spaces

    @override
    def seed(self, env_id: int, seed: int, dynamic_seed: bool | None) -> None:
        self.seeds[env_id] = (seed, dynamic_seed)
        self.env_request(env_id, Seed(env_id, seed, dynamic_seed))

    @override
    def set_reset_param(self, env_id: int, param: dict) -> None:
        self.reset_params[env_id] = param
        self.env_request(env_id, SetResetParam(env_id, param))

    @override
    def reset(self, env_ids: list[int]) -> tuple[list[int], list[DingEnvError]]:
        by_worker = self.by_worker(env_ids)
        self.finish_steps(by_worker)
        for index, ids in by_worker.items():
            self.pool.send(index, Reset(ids))
        replies, errors = self.gather(
            by_worker, lambda index: self.pool.receive_reset(index, self.cfg["reset_timeout"])
        )
        # The workers that reset their envs: those are ready, whoever else failed.
        return [env_id for index in replies for env_id in by_worker[index]], errors

    def finish_steps(self, workers: Any) -> None:
        """Make ``workers`` idle before a pipe request to them (a synchronous step leaves every worker idle)."""

    def by_worker(self, env_ids: list[int]) -> dict[int, list[int]]:
        """``env_ids`` grouped by the worker hosting them, in their order."""
        by_worker: dict[int, list[int]] = {}
        for env_id in env_ids:
            by_worker.setdefault(int(self.worker_of[env_id]), []).append(env_id)
        return by_worker

    def gather(
        self, by_worker: dict[int, list[int]], receive: Callable[[int], Any]
    ) -> tuple[dict[int, Any], list[DingEnvError]]:
        """``receive(index)`` for every worker of ``by_worker``: ``(replies by worker, errors)``.

        No stale reply is left in a pipe; a dead or hung worker is replaced (outside any ``except``
        block: a worker forked there would carry the old error as the context of its own).
        """
        replies: dict[int, Any] = {}
        errors: list[DingEnvError] = []
        failed: list[int] = []
        for index in by_worker:
            try:
                replies[index] = receive(index)
            except EnvError as error:
                errors.append(kept(error))
            except WORKER_FAILURES as error:
                errors.append(kept(error))
                failed.append(index)
        for index in failed:
            self.replace_worker(index)
        return replies, errors

    def ask_each(self, env_ids: list[int], request_of: Callable[[list[int]], Request]) -> list:
        """``request_of(ids)`` to each worker hosting some of ``env_ids``; the replies' values, one per env."""
        by_worker = self.by_worker(env_ids)
        self.finish_steps(by_worker)
        requests = {index: request_of(ids) for index, ids in by_worker.items()}
        for index, request in requests.items():
            self.pool.send(index, request)
        replies, errors = self.gather(
            by_worker, lambda index: self.pool.receive(index, requests[index].command, self.cfg["reset_timeout"])
        )
        if errors:
            raise errors[0]
        value_of = {}
        for index, ids in by_worker.items():
            value_of.update(zip(ids, replies[index] or [None] * len(ids), strict=True))
        return [value_of[env_id] for env_id in env_ids]

    @override
    def call(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list:
        return self.ask_each(env_ids, lambda ids: CallEnvs(ids, name, True, args, kwargs))

    @override
    def get_attr(self, env_ids: list[int], name: str) -> list:
        return self.ask_each(env_ids, lambda ids: CallEnvs(ids, name, False))

    @override
    def set_attr(self, env_ids: list[int], name: str, values: list) -> None:
        value_of = dict(zip(env_ids, values, strict=True))
        self.ask_each(env_ids, lambda ids: SetEnvAttr(ids, name, [value_of[env_id] for env_id in ids]))

    def env_request(self, env_id: int, request: Request) -> Any:
        """Send ``request`` about one env to its worker; return the reply's value (raising its failure)."""
        index = int(self.worker_of[env_id])
        self.finish_steps([index])
        replies, errors = self.gather(
            {index: [env_id]}, lambda _: self.pool.request(index, request, self.cfg["reset_timeout"])
        )
        if errors:
            raise errors[0]
        return replies[index]

    def replace_worker(self, index: int) -> None:
        """Start a fresh worker for ``index``; its envs lost their episodes.

        Envs whose (abnormal) results are on the way are the manager's to settle; the ledger
        marks only the others as needing a reset.
        """
        env_ids = self.worker_envs[index]
        seeds = {env_id: self.seeds[env_id] for env_id in env_ids if env_id in self.seeds}
        self.pool.restart(index, seeds, self.reset_params)
        self.ledger.lose(env_ids)

    # ---- steps ---------------------------------------------------------

    @override
    def send(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray) -> None:
        every = len(env_ids) == self.env_num  # distinct ids: every env, in some order
        rows = self.rows_of(env_ids, every)
        arrays.write(self.action_buf, rows, actions)
        if not every:
            self.mask_buf[:] = False
            self.mask_buf[rows] = True
            self.mask_is_full = False
        elif not self.mask_is_full:  # a step of every env after one of some: every row steps again
            self.mask_buf[:] = True
            self.mask_is_full = True
        self.reset_buf[rows] = reset_on_done
        workers = self.all_workers if every else sorted(set(self.worker_of[env_ids].tolist()))
        for index in workers:
            self.pool.dispatch(index)
        self.sent = (env_ids, rows, reset_on_done, workers)

    @override
    def finished(self) -> int:
        return 0 if self.sent is None else len(self.sent[0])  # collect waits for them

    @override
    def collect(self, wait: bool) -> TimestepBatch | None:
        """The results of the envs sent (a synchronous backend always waits for them)."""
        if self.sent is None:
            return None
        (env_ids, rows, reset_on_done, workers), self.sent = self.sent, None
        pool, timeout = self.pool, self.cfg["step_timeout"]
        deadline = None if timeout is None else time.monotonic() + timeout
        failures: dict[int, DingEnvError] = {}
        for index in workers:
            try:
                pool.wait_done(index, deadline, timeout)
            except WORKER_FAILURES as error:
                failures[index] = kept(error)
        if failures:  # the failed workers' idle envs lost their episodes too: they get results as well
            env_ids, reset_on_done = self.with_idle_envs(env_ids, reset_on_done, failures)
            rows = self.rows_of(env_ids, len(env_ids) == self.env_num)
        infos: list[dict] = [{} for _ in range(len(env_ids))]
        errors: dict[int, DingEnvError] = {}
        reporting = [index for index in workers if index not in failures and pool.has_report(index)]
        if reporting or failures:
            row_of = {env_id: row for row, env_id in enumerate(env_ids.tolist())}
            for index in reporting:
                self.merge_report(index, row_of, infos, errors)
            for index, error in failures.items():
                lost = [env_id for env_id in self.worker_envs[index] if env_id in row_of]
                reset = {env_id: bool(reset_on_done[row_of[env_id]]) for env_id in lost}
                failed, reset_errors = self.fail_worker(index, error, lost, reset)
                for env_id, info in failed.items():
                    errors[row_of[env_id]], infos[row_of[env_id]] = reset_errors.get(env_id, error), info
        return self.outcome_of(env_ids, rows, infos, errors, reset_on_done)

    def with_idle_envs(
        self, env_ids: np.ndarray, reset_on_done: np.ndarray, failures: dict[int, DingEnvError]
    ) -> tuple[np.ndarray, np.ndarray]:
        """``env_ids`` (and their auto-reset flags) joined by the idle envs of failed workers the ledger gives up."""
        idle: dict[int, bool] = {}
        for index in failures:
            idle.update(self.ledger.claim_idle(self.worker_envs[index]))
        if not idle:
            return env_ids, reset_on_done
        flags = dict(zip(env_ids.tolist(), reset_on_done.tolist(), strict=True)) | idle
        joined = np.array(sorted(flags), dtype=np.int64)
        return joined, np.array([flags[env_id] for env_id in joined.tolist()], dtype=bool)

    def outcome_of(
        self, env_ids: np.ndarray, rows: slice | np.ndarray, infos: list, errors: dict, reset_on_done: np.ndarray
    ) -> TimestepBatch:
        """The outcome of ``env_ids`` read from the result buffers (views when ``rows`` is a slice)."""
        obs, reward, done, truncated = self.every_result if self.is_every(rows) else self.result_views(rows)
        return TimestepBatch(env_ids, obs, reward, done, truncated, infos, errors or NO_ERRORS, reset_on_done)

    def result_views(self, rows: slice | np.ndarray) -> tuple:
        """The step observations, rewards, done and truncated flags of ``rows``."""
        return arrays.take(self.step_buf, rows), self.reward_buf[rows], self.done_buf[rows], self.truncated_buf[rows]

    def fail_worker(
        self, index: int, error: DingEnvError, lost: list[int], reset: dict[int, bool]
    ) -> tuple[dict[int, dict], dict[int, DingEnvError]]:
        """Replace a dead or hung worker; its envs ``lost`` get abnormal done results.

        The result rows hold the last ready observation, reward 0 and ``done=True``. With
        ``step_error='abnormal'`` envs due an auto-reset are reset in the new worker; every other
        env of the worker needs a reset.

        Returns:
            ``({env_id: abnormal info}, {env_id: reset error})``: the second for the envs whose
            reset in the new worker failed (they need a reset).
        """
        self.replace_worker(index)
        for env_id in lost:
            arrays.write(self.step_buf, env_id, arrays.row(self.ready_buf, env_id, copy=True))
            self.reward_buf[env_id] = 0
            self.done_buf[env_id], self.truncated_buf[env_id] = True, False
        infos = {env_id: abnormal_info(error) for env_id in lost}
        due = [env_id for env_id in lost if reset[env_id]]
        if self.cfg["step_error"] != "abnormal" or not due:
            return infos, {}
        reset_errors: dict[int, DingEnvError] = {}
        replacement_failed = None
        for env_id in due:
            try:
                self.pool.reset(index, [env_id], self.cfg["reset_timeout"])
            except EnvError as reset_error:
                reset_errors[env_id] = kept(reset_error)
            except WORKER_FAILURES as worker_error:
                replacement_failed = kept(worker_error)
                break
        if replacement_failed is not None:  # the new worker died or hung too: none of its resets stand
            self.replace_worker(index)
            reset_errors = dict.fromkeys(due, replacement_failed)
        return infos, reset_errors

    def merge_report(self, index: int, row_of: dict[int, int], infos: list[dict], errors: dict) -> None:
        """Read worker ``index``'s infos and errors of its last step and place them by row."""
        worker_infos, failures = self.pool.step_report(index)
        for env_id, info in worker_infos.items():
            infos[row_of[env_id]] = info
        for env_id, failure in failures.items():
            errors[row_of[env_id]] = failure.error()

    @override
    def ready_obs(self, env_ids: np.ndarray) -> Any:
        if not len(env_ids):
            return None
        if len(env_ids) == self.env_num:  # increasing, distinct: every env in order
            return self.every_ready
        return arrays.take(self.ready_buf, arrays.rows_of(env_ids))

    def is_every(self, rows: slice | np.ndarray) -> bool:
        """Whether ``rows`` are every env's rows in order (their views are made once)."""
        return isinstance(rows, slice) and rows == self.every_row

    def rows_of(self, env_ids: np.ndarray, every: bool) -> slice | np.ndarray:
        """The buffer rows of ``env_ids``: ``every_row`` for every env in order, a slice for consecutive ids.

        ``arrays.rows_of`` gives the same rows; testing every env against a list made once is the
        cheaper path a step of every env takes (about 0.5 us of the parent's work per zero-cost batch).
        """
        if every and env_ids.tolist() == self.every_list:
            return self.every_row
        return arrays.rows_of(env_ids)

    @override
    def workers(self) -> list[WorkerView]:
        if self.pool is None:
            return []
        return [
            WorkerView(process.pid, list(env_ids))
            for process, env_ids in zip(self.pool.processes, self.worker_envs, strict=True)
            if process is not None
        ]

    @override
    def close(self) -> list[tuple[int, str]]:
        return self.close_pool(())

    def close_pool(self, stuck: Any) -> list[tuple[int, str]]:
        """Drop this backend's views of the shared segment, then close the pool (``stuck``: hung workers).

        (Views a user still holds keep the segment mapped until they are gone.)
        """
        self.ready_buf = self.step_buf = self.action_buf = self.reward_buf = None
        self.done_buf = self.truncated_buf = self.mask_buf = self.reset_buf = None
        self.every_result = self.every_ready = None
        failures = self.pool.close(stuck)
        self.pool = None
        return failures
