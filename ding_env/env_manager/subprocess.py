"""``SyncSubprocessEnvManager``: envs in worker processes, results through shared memory.

Envs run in ``num_workers`` worker processes, several per worker. Observations,
actions, rewards and done/truncated flags live in one shared-memory segment
allocated once from the spaces; the batched API returns views into it. A step
costs two semaphore posts per worker and no pickling for plain array envs.
The semantics (states, seeding, auto-reset, episode_num, errors) are those of
``BaseEnvManager``, which this class extends with a different backend.

A worker that dies (segfault, ``os._exit``, OOM kill) or exceeds
``step_timeout`` / ``reset_timeout`` is replaced by a fresh process at once;
its envs come back as abnormal timesteps (``step_error='abnormal'``) or with
``EnvCrashedError`` / ``EnvTimeoutError`` (``'raise'``), and need a reset.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager.base import BaseEnvManager
from ding_env.env_manager.batch import StepOutcome, WorkerView
from ding_env.env_manager.failures import raise_close_failures
from ding_env.env_manager.protocol import CallEnvs, Request, Reset, Seed, SetEnvAttr, SetResetParam
from ding_env.env_manager.status import NEEDS_RESET, READY, STEPPING, abnormal_info
from ding_env.env_manager.worker_pool import WorkerPool
from ding_env.errors import DingEnvError, EnvCrashedError, EnvError, EnvTimeoutError

WORKER_FAILURES = (EnvCrashedError, EnvTimeoutError)


def kept(error: DingEnvError) -> DingEnvError:
    """``error`` without the traceback of where this process caught it, to be raised or reported later.

    That traceback holds the frame that keeps the error (a cycle): with it, the step's buffers
    (views of the shared segment) would stay mapped until the garbage collector runs. The env's
    own traceback stays in the error's text.
    """
    return error.with_traceback(None)


def worker_shares(env_num: int, num_workers: int) -> list[list[int]]:
    """The env ids each of ``num_workers`` workers hosts: consecutive runs whose sizes differ by at most one."""
    bounds = np.linspace(0, env_num, num_workers + 1).round().astype(int)
    return [list(range(bounds[w], bounds[w + 1])) for w in range(num_workers)]


class SyncSubprocessEnvManager(BaseEnvManager):
    """Runs envs in worker processes and returns every stepped env's result.

    Args:
        env_fn: One callable per env returning a fresh ``BaseEnv`` (pickled
            with cloudpickle for 'spawn'/'forkserver', so lambdas work).
        cfg: Manager settings; see ``ding_env.env_manager.config.MANAGER_CONFIG``.
    """

    manager_type = "subprocess"
    _backend_views = True
    # Workers ring a shared doorbell after each step only for a manager that waits for "any worker".
    _uses_doorbell = False

    def __init__(self, env_fn: Any, cfg: dict | None = None) -> None:
        super().__init__(env_fn, cfg)
        cpus = os.cpu_count() or 1
        self._num_workers = min(self._cfg.num_workers or min(self._env_num, cpus), self._env_num)
        self._worker_envs = worker_shares(self._env_num, self._num_workers)
        self._worker_of = np.repeat(np.arange(self._num_workers), [len(share) for share in self._worker_envs])
        self._all_workers = list(range(self._num_workers))
        self._pool: WorkerPool | None = None

    # ---- backend: workers ----------------------------------------------

    def _backend_launch(self) -> None:
        self._pool = WorkerPool(self._env_fn, self._worker_envs, self._cfg, self._name, doorbell=self._uses_doorbell)
        self._spaces = self._pool.start()
        try:
            buffers = self._pool.allocate(self._spaces, self._env_num)
        except BaseException:
            self._pool.close_processes()
            raise
        self._ready_buf, self._step_buf = buffers["ready_obs"], buffers["step_obs"]
        self._action_buf, self._reward_buf = buffers["action"], buffers["reward"]
        self._done_buf, self._truncated_buf = buffers["done"], buffers["truncated"]
        self._mask_buf, self._reset_buf = buffers["step_mask"], buffers["reset_on_done"]
        # Views of every env's results and ready observations, made once.
        every = self._every_row
        self._every_result = (
            arrays.take(self._step_buf, every),
            self._reward_buf[every],
            self._done_buf[every],
            self._truncated_buf[every],
        )
        self._every_ready = arrays.take(self._ready_buf, every)
        self._every_row_of = {env_id: env_id for env_id in range(self._env_num)}  # row of each env id, every env
        # Whether every row of the step mask / auto-reset flags is already True.
        self._mask_is_full = self._reset_is_full = False

    def _backend_seed(self, env_id: int, seed: int, dynamic_seed: bool | None) -> None:
        self._env_request(env_id, Seed(env_id, seed, dynamic_seed))

    def _backend_set_reset_param(self, env_id: int, param: dict) -> None:
        self._env_request(env_id, SetResetParam(env_id, param))

    def _backend_reset(self, env_ids: list[int]) -> None:
        by_worker = self._by_worker(env_ids)
        for index, ids in by_worker.items():
            self._pool.send(index, Reset(ids))
        replies, errors = self._gather(
            by_worker, lambda index: self._pool.receive_reset(index, self._cfg.reset_timeout)
        )
        for index in replies:  # the workers that reset their envs: those are ready, whoever else failed
            self._status[by_worker[index]] = READY
        if errors:
            raise errors[0]

    def _settle_workers(self, workers: Iterable[int]) -> None:
        """Make ``workers`` idle before a pipe request to them (a synchronous step leaves every worker idle)."""

    def _by_worker(self, env_ids: list[int]) -> dict[int, list[int]]:
        """``env_ids`` grouped by the worker hosting them, in their order."""
        by_worker: dict[int, list[int]] = {}
        for env_id in env_ids:
            by_worker.setdefault(int(self._worker_of[env_id]), []).append(env_id)
        return by_worker

    def _gather(
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
            self._replace_worker(index)
        return replies, errors

    def _each(self, env_ids: list[int], name: str, call: bool, args: tuple = (), kwargs: dict | None = None) -> list:
        """Read or call attribute ``name`` of each env: one request per worker, all sent before any reply."""
        return self._ask_each(env_ids, lambda ids: CallEnvs(ids, name, call, args, kwargs or {}))

    def _ask_each(self, env_ids: list[int], request_of: Callable[[list[int]], Request]) -> list:
        """``request_of(ids)`` to each worker hosting some of ``env_ids``; the replies' values, one per env."""
        by_worker = self._by_worker(env_ids)
        self._settle_workers(by_worker)
        requests = {index: request_of(ids) for index, ids in by_worker.items()}
        for index, request in requests.items():
            self._pool.send(index, request)
        replies, errors = self._gather(
            by_worker, lambda index: self._pool.receive(index, requests[index].command, self._cfg.reset_timeout)
        )
        if errors:
            raise errors[0]
        value_of = {}
        for index, ids in by_worker.items():
            value_of.update(zip(ids, replies[index] or [None] * len(ids), strict=True))
        return [value_of[env_id] for env_id in env_ids]

    def _backend_set_attr(self, env_ids: list[int], name: str, values: list[Any]) -> None:
        value_of = dict(zip(env_ids, values, strict=True))
        self._ask_each(env_ids, lambda ids: SetEnvAttr(ids, name, [value_of[env_id] for env_id in ids]))

    def _replace_worker(self, index: int) -> None:
        """Start a fresh worker for ``index``; its ready envs need a reset.

        Envs that finished stay finished, and envs whose (abnormal) results are pending stay
        STEPPING until those results are returned and settle their status.
        """
        self._pool.restart(index, self._env_seeds_of(index), self._reset_params)
        env_ids = self._worker_envs[index]
        status = self._status[env_ids]
        self._status[env_ids] = np.where(status == READY, NEEDS_RESET, status)

    def _env_seeds_of(self, index: int) -> dict[int, tuple]:
        return {env_id: self._env_seeds[env_id] for env_id in self._worker_envs[index] if self._env_seeds[env_id]}

    def _backend_step(
        self, env_ids: np.ndarray, rows: slice | np.ndarray, actions: Any, reset_on_done: np.ndarray, batched: bool
    ) -> StepOutcome:
        every = rows is self._every_row
        self._write_actions(env_ids, rows, actions, batched)
        self._write_step_flags(rows, every, reset_on_done)
        workers = self._all_workers if every else self._workers_of(env_ids)
        pool = self._pool
        for index in workers:
            pool.dispatch(index)
        timeout = self._cfg.step_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        failures: dict[int, DingEnvError] = {}
        for index in workers:
            try:
                pool.wait_done(index, deadline, timeout)
            except WORKER_FAILURES as error:
                failures[index] = kept(error)
        if failures:  # the failed workers' idle envs lost their episodes too: they get results as well
            env_ids, rows, reset_on_done = self._with_idle_envs(env_ids, reset_on_done, failures)
            every = rows is self._every_row
        infos: list[dict] = [{} for _ in range(len(env_ids))]
        errors: dict[int, DingEnvError] = {}
        news = [index for index in workers if index not in failures and pool.has_news(index)]
        if news or failures:
            row_of = self._every_row_of if every else {env_id: row for row, env_id in enumerate(env_ids.tolist())}
            for index in news:
                self._merge_news(index, row_of, infos, errors)
            for index, error in failures.items():
                lost = [env_id for env_id in self._worker_envs[index] if env_id in row_of]
                reset = {env_id: bool(reset_on_done[row_of[env_id]]) for env_id in lost}
                failed, reset_errors = self._fail_worker(index, error, lost, reset)
                for env_id, info in failed.items():
                    errors[row_of[env_id]], infos[row_of[env_id]] = reset_errors.get(env_id, error), info
        return self._outcome_of(env_ids, rows, infos, errors, reset_on_done)

    def _with_idle_envs(
        self, env_ids: np.ndarray, reset_on_done: np.ndarray, failures: dict[int, DingEnvError]
    ) -> tuple[np.ndarray, slice | np.ndarray, np.ndarray]:
        """``env_ids`` (and their auto-reset flags) joined by the ready, unstepped envs of failed workers."""
        idle: dict[int, bool] = {}
        for index in failures:
            idle.update(self._claim_idle_envs(index))
        if not idle:
            return env_ids, self._rows_of(env_ids), reset_on_done
        flags = dict(zip(env_ids.tolist(), reset_on_done.tolist(), strict=True)) | idle
        joined = np.array(sorted(flags), dtype=np.int64)
        return joined, self._rows_of(joined), np.array([flags[env_id] for env_id in joined.tolist()], dtype=bool)

    def _claim_idle_envs(self, index: int) -> dict[int, bool]:
        """The ready envs of failed worker ``index`` with their auto-reset flags, now STEPPING.

        They had no action, but their episodes are lost with the worker: their (abnormal) results
        are on the way, and no action may reach them meanwhile. The envs being stepped are STEPPING
        already and are not among them.
        """
        idle = [env_id for env_id in self._worker_envs[index] if self._status[env_id] == READY]
        if not idle:
            return {}
        self._status[idle] = STEPPING
        return dict(zip(idle, self._reset_on_done_of(np.array(idle, dtype=np.int64)).tolist(), strict=True))

    def _write_step_flags(self, rows: slice | np.ndarray, every: bool, reset_on_done: np.ndarray) -> None:
        """Mark the stepped rows and their auto-reset flags; unchanged flags of every env are not rewritten."""
        if every:
            if not self._mask_is_full:
                self._mask_buf[:] = True
                self._mask_is_full = True
            if reset_on_done is not self._always_reset or not self._reset_is_full:
                self._reset_buf[:] = reset_on_done
                self._reset_is_full = reset_on_done is self._always_reset
            return
        self._mask_buf[:] = False
        self._mask_buf[rows] = True
        self._reset_buf[rows] = reset_on_done
        self._mask_is_full = self._reset_is_full = False

    def _outcome_of(
        self, env_ids: np.ndarray, rows: slice | np.ndarray, infos: list, errors: dict, reset_on_done: np.ndarray
    ) -> StepOutcome:
        """The outcome of ``env_ids`` read from the result buffers (views when ``rows`` is a slice)."""
        if rows is self._every_row:
            views = self._every_result
        else:
            views = (
                arrays.take(self._step_buf, rows),
                self._reward_buf[rows],
                self._done_buf[rows],
                self._truncated_buf[rows],
            )
        obs, reward, done, truncated = views
        return StepOutcome(env_ids, rows, obs, False, reward, done, truncated, infos, errors, reset_on_done)

    def _fail_worker(
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
        self._replace_worker(index)
        for env_id in lost:
            arrays.write(self._step_buf, env_id, arrays.row(self._ready_buf, env_id, copy=True))
            self._reward_buf[env_id] = 0
            self._done_buf[env_id], self._truncated_buf[env_id] = True, False
        infos = {env_id: abnormal_info(error) for env_id in lost}
        due = [env_id for env_id in lost if reset[env_id]]
        if self._cfg.step_error != "abnormal" or not due:
            return infos, {}
        reset_errors: dict[int, DingEnvError] = {}
        replacement_failed = None
        for env_id in due:
            try:
                self._pool.reset(index, [env_id], self._cfg.reset_timeout)
            except EnvError as reset_error:
                reset_errors[env_id] = kept(reset_error)
            except WORKER_FAILURES as worker_error:
                replacement_failed = kept(worker_error)
                break
        if replacement_failed is not None:  # the new worker died or hung too: none of its resets stand
            self._replace_worker(index)
            reset_errors = dict.fromkeys(due, replacement_failed)
        return infos, reset_errors

    def _workers_of(self, env_ids: np.ndarray) -> list[int]:
        """The workers hosting ``env_ids``, in order."""
        return sorted(set(self._worker_of[env_ids].tolist()))

    def _write_actions(self, env_ids: np.ndarray, rows: slice | np.ndarray, actions: Any, batched: bool) -> None:
        if batched and isinstance(self._action_buf, np.ndarray):
            self._action_buf[rows] = actions
        else:  # one action per env: a list, or trees for Dict/Tuple action spaces
            for env_id, action in zip(env_ids.tolist(), actions, strict=True):
                arrays.write(self._action_buf, env_id, action)

    def _merge_news(self, index: int, row_of: dict[int, int], infos: list[dict], errors: dict) -> None:
        """Read worker ``index``'s infos and errors of its last step and place them by row."""
        worker_infos, failures = self._pool.step_news(index)
        for env_id, info in worker_infos.items():
            infos[row_of[env_id]] = info
        for env_id, failure in failures.items():
            error = failure.error()
            errors[row_of[env_id]] = error
            if failure.command != "reset":  # a failed auto-reset keeps the info of the step that ended the episode
                infos[row_of[env_id]] = abnormal_info(error)

    def _backend_ready_obs_rows(self, env_ids: np.ndarray) -> list[Any]:
        if not len(env_ids):
            return []
        return arrays.split_rows(self._backend_ready_obs_batch(env_ids), len(env_ids), self._cfg.copy_on_get)

    def _backend_ready_obs_batch(self, env_ids: np.ndarray) -> Any:
        if not len(env_ids):
            return None
        rows = self._rows_of(env_ids)
        return self._every_ready if rows is self._every_row else arrays.take(self._ready_buf, rows)

    def _backend_call(self, env_id: int, name: str, args: tuple, kwargs: dict) -> Any:
        return self._each([env_id], name, True, args, kwargs)[0]

    def _backend_getattr_each(self, env_ids: list[int], name: str) -> list[Any]:
        return self._each(env_ids, name, False)

    def _backend_call_each(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list[Any]:
        return self._each(env_ids, name, True, args, kwargs)

    def _backend_workers(self) -> list[WorkerView]:
        if self._pool is None or self._closed:
            return []
        return [
            WorkerView(process.pid, list(env_ids))
            for process, env_ids in zip(self._pool.processes, self._worker_envs, strict=True)
        ]

    def _backend_close(self) -> None:
        self._release_buffers()
        raise_close_failures(self._pool.close())

    def _release_buffers(self) -> None:
        """Drop this manager's views of the shared segment, so closing the pool can unmap it.

        (Views a user still holds keep it mapped until they are gone.)
        """
        self._ready_buf = self._step_buf = self._action_buf = self._reward_buf = None
        self._done_buf = self._truncated_buf = self._mask_buf = self._reset_buf = None
        self._every_result = self._every_ready = None

    def _env_request(self, env_id: int, request: Request) -> Any:
        index = int(self._worker_of[env_id])
        self._settle_workers([index])
        replies, errors = self._gather(
            {index: [env_id]}, lambda _: self._pool.request(index, request, self._cfg.reset_timeout)
        )
        if errors:
            raise errors[0]
        return replies[index]
