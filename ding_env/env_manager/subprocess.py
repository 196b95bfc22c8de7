"""Shared-memory subprocess env managers: ``SyncSubprocessEnvManager`` and ``AsyncSubprocessEnvManager``.

Envs run in ``num_workers`` worker processes, several per worker. Observations,
actions, rewards and done/truncated flags live in one shared-memory segment
allocated once from the spaces; the batched API returns views into it. A step
costs two semaphore posts per worker and no pickling for plain array envs.
The semantics (states, seeding, auto-reset, episode_num, errors) are those of
``BaseEnvManager``, which this class extends with a different backend.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import time
import warnings
from multiprocessing import resource_tracker
from multiprocessing.connection import wait as wait_connections
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager._worker import CMD_PIPE, CMD_STEP, STATUS_MESSAGE, wait_semaphore, worker_main
from ding_env.env_manager.base import BaseEnvManager, EnvStatus, abnormal_info
from ding_env.env_manager.batch import StepOutcome
from ding_env.env_manager.shared_memory import SharedArrays, scalar_flags
from ding_env.errors import EnvCrashedError, EnvError, EnvTimeoutError

# Workers spin this long for the next command before blocking, and the parent
# this long for results; spinning only while there are cores to spare.
WORKER_SPIN_SECONDS = 0.0002
PARENT_SPIN_SECONDS = 0.0003
# Poll interval while blocked, to notice dead workers (seconds).
LIVENESS_INTERVAL = 0.05
CLOSE_GRACE_SECONDS = 1.0
# How long envs may take to close (videos to write, renderers to free) before their worker is terminated.
CLOSE_TIMEOUT_SECONDS = 10.0


class SyncSubprocessEnvManager(BaseEnvManager):
    """Runs envs in worker processes and returns every stepped env's result.

    Args:
        env_fn: One callable per env returning a fresh ``BaseEnv`` (pickled
            with cloudpickle for 'spawn'/'forkserver', so lambdas work).
        cfg: Manager settings; see ``ding_env.env_manager.config.MANAGER_CONFIG``.
    """

    manager_type = "subprocess"

    def __init__(self, env_fn: Any, cfg: dict | None = None) -> None:
        super().__init__(env_fn, cfg)
        cpus = os.cpu_count() or 1
        self._num_workers = min(self._cfg.num_workers or min(self._env_num, cpus), self._env_num)
        bounds = np.linspace(0, self._env_num, self._num_workers + 1).round().astype(int)
        self._worker_envs = [list(range(bounds[w], bounds[w + 1])) for w in range(self._num_workers)]
        self._worker_of = np.repeat(np.arange(self._num_workers), np.diff(bounds))
        self._all_workers = list(range(self._num_workers))
        self._worker_spin = WORKER_SPIN_SECONDS
        self._parent_spin = PARENT_SPIN_SECONDS
        self._processes: list[mp.Process] = []
        self._conns: list[Any] = []
        self._shared: SharedArrays | None = None

    # ---- backend: workers ----------------------------------------------

    def _backend_launch(self) -> None:
        context = mp.get_context(self._cfg.context)
        resource_tracker.ensure_running()  # one tracker shared by every worker: no double unlink
        config = dict(self._cfg)
        self._cmd_sems = [context.Semaphore(0) for _ in range(self._num_workers)]
        self._results_sem = context.Semaphore(0)
        self._expected_seq = np.zeros(self._num_workers, dtype=np.int64)
        try:
            for index, env_ids in enumerate(self._worker_envs):
                parent_conn, child_conn = context.Pipe()
                payload = cloudpickle.dumps([self._env_fn[env_id] for env_id in env_ids])
                process = context.Process(
                    target=worker_main,
                    args=(
                        index,
                        env_ids,
                        payload,
                        config,
                        child_conn,
                        self._cmd_sems[index],
                        self._results_sem,
                        self._worker_spin,
                    ),
                    name=f"ding_env-worker-{index}",
                    daemon=True,
                )
                process.start()
                child_conn.close()
                self._processes.append(process)
                self._conns.append(parent_conn)
            replies = [self._receive(index, "launch", self._cfg.connect_timeout) for index in range(self._num_workers)]
            self._spaces = cloudpickle.loads(replies[0])
            self._allocate(*self._spaces)
        except BaseException:
            self._terminate_workers()
            raise

    def _allocate(
        self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space, reward_space: gym.spaces.Space
    ) -> None:
        obs_layout = arrays.layout_of(observation_space)
        try:
            action_layout = arrays.layout_of(action_space)
        except TypeError as error:
            raise TypeError(
                f"{self._name}: the action space {action_space!r} has no array form; use BaseEnvManager for this env"
            ) from error
        if not isinstance(action_layout, arrays.ArraySpec):
            raise TypeError(f"{self._name}: nested action spaces are not supported by the subprocess managers")
        count = self._env_num
        entries = [
            ("ready_obs", obs_layout, count),
            ("step_obs", obs_layout, count),
            ("action", action_layout, count),
            ("reward", arrays.ArraySpec(tuple(reward_space.shape) or (1,), np.dtype(reward_space.dtype)), count),
            ("done", scalar_flags(bool), count),
            ("truncated", scalar_flags(bool), count),
            ("step_mask", scalar_flags(bool), count),
            ("reset_on_done", scalar_flags(bool), count),
            ("command", scalar_flags(np.int64), self._num_workers),
            ("status", scalar_flags(np.int64), self._num_workers),
            ("done_seq", scalar_flags(np.int64), self._num_workers),
        ]
        self._shared = SharedArrays(entries)
        buffers = self._shared.arrays
        self._ready_buf, self._step_buf = buffers["ready_obs"], buffers["step_obs"]
        self._action_buf, self._reward_buf = buffers["action"], buffers["reward"]
        self._done_buf, self._truncated_buf = buffers["done"], buffers["truncated"]
        self._mask_buf, self._reset_buf = buffers["step_mask"], buffers["reset_on_done"]
        self._command_buf, self._status_buf = buffers["command"], buffers["status"]
        self._done_seq_buf = buffers["done_seq"]
        for index in range(self._num_workers):
            self._request(index, ("attach", self._shared.name, entries), "attach", self._cfg.connect_timeout)

    def _backend_seed(self, env_id: int, seed: int, dynamic_seed: bool | None) -> None:
        self._env_request(env_id, ("seed", env_id, seed, dynamic_seed), "seed")

    def _backend_set_reset_param(self, env_id: int, param: dict) -> None:
        self._env_request(env_id, ("reset_param", env_id, param), "reset")

    def _backend_reset(self, env_ids: list[int]) -> None:
        by_worker: dict[int, list[int]] = {}
        for env_id in env_ids:
            by_worker.setdefault(int(self._worker_of[env_id]), []).append(env_id)
        for index, ids in by_worker.items():
            self._send(index, ("reset", ids))
        errors = []
        for index in by_worker:  # read every reply before raising, so no stale reply is left in a pipe
            try:
                self._receive(index, "reset", self._cfg.reset_timeout)
            except EnvError as error:
                errors.append(error)
        if errors:
            raise errors[0]

    def _backend_step(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray, batched: bool) -> StepOutcome:
        rows = arrays.rows_of(env_ids)
        self._write_actions(env_ids, rows, actions, batched)
        self._mask_buf[:] = False
        self._mask_buf[rows] = True
        self._reset_buf[rows] = reset_on_done
        workers = self._workers_of(env_ids, rows)
        for index in workers:
            self._dispatch(index)
        self._await_results(workers, self._cfg.step_timeout)
        infos: list[dict] = [{} for _ in range(len(env_ids))]
        errors: dict[int, EnvError] = {}
        messages = [index for index in workers if self._status_buf[index] == STATUS_MESSAGE]
        if messages:
            row_of = {env_id: row for row, env_id in enumerate(env_ids.tolist())}
            for index in messages:
                self._merge_message(index, row_of, infos, errors)
        return StepOutcome(
            env_ids,
            arrays.take(self._step_buf, rows),
            False,
            self._reward_buf[rows],
            self._done_buf[rows],
            self._truncated_buf[rows],
            infos,
            errors,
            reset_on_done,
        )

    def _workers_of(self, env_ids: np.ndarray, rows: slice | np.ndarray) -> list[int]:
        """The workers hosting ``env_ids``, in order."""
        if isinstance(rows, slice) and rows.start == 0 and rows.stop == self._env_num:
            return self._all_workers
        return sorted(set(self._worker_of[env_ids].tolist()))

    def _write_actions(self, env_ids: np.ndarray, rows: slice | np.ndarray, actions: Any, batched: bool) -> None:
        if batched:
            self._action_buf[rows] = actions
        else:
            for env_id, action in zip(env_ids.tolist(), actions, strict=True):
                self._action_buf[env_id] = action

    def _dispatch(self, index: int) -> None:
        self._expected_seq[index] += 1
        self._command_buf[index] = CMD_STEP
        self._cmd_sems[index].release()

    def _finished(self, index: int) -> bool:
        return self._done_seq_buf[index] == self._expected_seq[index]

    def _await_results(self, workers: list[int], timeout: float | None) -> None:
        """Consume one results post per worker in ``workers``; all of them have then finished."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for _ in workers:
            self._take_post(workers, deadline)

    def _take_post(self, workers: list[int], deadline: float | None) -> None:
        """Acquire one results post, watching ``workers`` for crashes and the deadline for hangs."""
        if wait_semaphore(self._results_sem, self._parent_spin, _slice(deadline)):
            return
        while True:
            for index in workers:
                if not self._finished(index) and not self._processes[index].is_alive():
                    raise self._crashed(index, "step")
            if deadline is not None and time.monotonic() >= deadline:
                late = [env_id for index in workers if not self._finished(index) for env_id in self._worker_envs[index]]
                raise EnvTimeoutError(late, "step", self._cfg.step_timeout)
            if self._results_sem.acquire(True, _slice(deadline)):
                return

    def _merge_message(self, index: int, row_of: dict[int, int], infos: list[dict], errors: dict) -> None:
        """Read worker ``index``'s infos and errors from its pipe and place them by row."""
        worker_infos, worker_errors = self._conns[index].recv()
        for env_id, info in worker_infos.items():
            infos[row_of[env_id]] = info
        for env_id, (_, command, message, remote) in worker_errors.items():
            error = EnvError(env_id, command, message, remote)
            errors[row_of[env_id]] = error
            infos[row_of[env_id]] = abnormal_info(error)

    def _backend_ready_obs(self, env_id: int) -> Any:
        return arrays.row(self._ready_buf, env_id, copy=self._cfg.copy_on_get)

    def _backend_ready_obs_batch(self, env_ids: np.ndarray) -> Any:
        if not len(env_ids):
            return None
        return arrays.take(self._ready_buf, arrays.rows_of(env_ids))

    def _backend_getattr(self, env_id: int, name: str) -> Any:
        return self._env_request(env_id, ("getattr", env_id, name), "getattr")

    def _backend_call(self, env_id: int, name: str, args: tuple, kwargs: dict) -> Any:
        return self._env_request(env_id, ("call", env_id, name, args, kwargs), name)

    def _backend_close(self) -> None:
        failures = []
        for index, process in enumerate(self._processes):
            if not process.is_alive():
                continue
            try:
                failures += self._request(index, ("close",), "close", CLOSE_TIMEOUT_SECONDS) or []
            except (EnvError, EnvCrashedError, EnvTimeoutError, OSError) as error:
                failures.append(str(error))
        self._terminate_workers()
        if failures:
            raise EnvError(-1, "close", "; ".join(failures))

    def _terminate_workers(self) -> None:
        """Join every worker (terminate, then kill after a grace period) and free shared memory."""
        deadline = time.monotonic() + CLOSE_GRACE_SECONDS
        for process in self._processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in self._processes:
            if process.is_alive():
                process.terminate()
                process.join(CLOSE_GRACE_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()
            process.close()
        for conn in self._conns:
            conn.close()
        self._processes, self._conns = [], []
        if self._shared is not None:
            self._shared.release()
            self._shared = None

    # ---- pipe traffic --------------------------------------------------

    def _env_request(self, env_id: int, message: tuple, command: str) -> Any:
        return self._request(int(self._worker_of[env_id]), message, command, self._cfg.reset_timeout)

    def _request(self, index: int, message: tuple, command: str, timeout: float | None) -> Any:
        self._send(index, message)
        return self._receive(index, command, timeout)

    def _send(self, index: int, message: tuple) -> None:
        self._conns[index].send(message)
        if message[0] != "attach":  # before attaching, workers read only their pipe
            self._command_buf[index] = CMD_PIPE
            self._cmd_sems[index].release()

    def _receive(self, index: int, command: str, timeout: float | None) -> Any:
        """The worker's reply, raising its error; never blocks forever on a dead worker."""
        conn, process = self._conns[index], self._processes[index]
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            ready = wait_connections([conn, process.sentinel], timeout=_slice(deadline))
            if conn in ready:
                try:
                    reply = conn.recv()
                except EOFError:
                    raise self._crashed(index, command) from None
                break
            if process.sentinel in ready:
                raise self._crashed(index, command)
            if deadline is not None and time.monotonic() >= deadline:
                raise EnvTimeoutError(self._worker_envs[index], command, timeout)
        if reply[0] == "error":
            _, env_id, remote_command, message, remote = reply
            raise EnvError(env_id, remote_command, message, remote)
        return reply[1]

    def _crashed(self, index: int, command: str) -> EnvCrashedError:
        process = self._processes[index]
        process.join(LIVENESS_INTERVAL)
        return EnvCrashedError(self._worker_envs[index], process.exitcode, command)


def _slice(deadline: float | None) -> float:
    if deadline is None:
        return LIVENESS_INTERVAL
    return max(0.0, min(LIVENESS_INTERVAL, deadline - time.monotonic()))


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
        self._queued = np.zeros(self._env_num, dtype=bool)
        self._queued_reset = np.zeros(self._env_num, dtype=bool)
        self._results: dict[int, tuple[dict, EnvError | None, bool]] = {}

    def _backend_step(self, env_ids: np.ndarray, actions: Any, reset_on_done: np.ndarray, batched: bool) -> StepOutcome:
        self._write_actions(env_ids, arrays.rows_of(env_ids), actions, batched)
        self._queued[env_ids] = True
        self._queued_reset[env_ids] = reset_on_done
        self._dispatch_queued()
        in_flight = int(np.count_nonzero(self._status == int(EnvStatus.STEPPING)))
        wait_num = min(self._cfg.wait_num or self._env_num, in_flight)
        deadline = time.monotonic() + self._cfg.step_wait_timeout
        self._harvest(block=False)
        while len(self._results) < wait_num and not (self._results and time.monotonic() >= deadline):
            self._harvest(block=True, until=deadline if self._results else None)
        return self._outcome()

    def _dispatch_queued(self) -> None:
        for index in range(self._num_workers):
            if self._busy[index]:
                continue
            env_ids = [env_id for env_id in self._worker_envs[index] if self._queued[env_id]]
            if not env_ids:
                continue
            self._mask_buf[self._worker_envs[index]] = False
            self._mask_buf[env_ids] = True
            self._reset_buf[env_ids] = self._queued_reset[env_ids]
            self._queued[env_ids] = False
            self._busy[index] = True
            self._dispatch(index)

    def _harvest(self, block: bool, until: float | None = None) -> None:
        """Collect finished workers' results; with ``block``, wait for at least one (or ``until``)."""
        if block:
            busy = np.flatnonzero(self._busy).tolist()
            step_timeout = self._cfg.step_timeout
            deadline = until if step_timeout is None else min(until or math.inf, time.monotonic() + step_timeout)
            try:
                self._take_post(busy, deadline)
            except EnvTimeoutError:
                if until is not None and (step_timeout is None or time.monotonic() < until):
                    return
                raise
            credit = 1
        else:
            credit = 0
        for index in np.flatnonzero(self._busy).tolist():
            if not self._finished(index):
                continue
            if credit:
                credit -= 1
            elif not self._results_sem.acquire(True, CLOSE_GRACE_SECONDS):
                raise self._crashed(index, "step")
            self._collect(index)
        self._dispatch_queued()

    def _collect(self, index: int) -> None:
        self._busy[index] = False
        env_ids = [env_id for env_id in self._worker_envs[index] if self._mask_buf[env_id]]
        row_of = {env_id: row for row, env_id in enumerate(env_ids)}
        infos: list[dict] = [{} for _ in env_ids]
        errors: dict[int, EnvError] = {}
        if self._status_buf[index] == STATUS_MESSAGE:
            self._merge_message(index, row_of, infos, errors)
        for env_id in env_ids:
            self._mask_buf[env_id] = False
            row = row_of[env_id]
            self._results[env_id] = (infos[row], errors.get(row), bool(self._reset_buf[env_id]))

    def _outcome(self) -> StepOutcome:
        env_ids = np.array(sorted(self._results), dtype=np.int64)
        results = [self._results.pop(env_id) for env_id in env_ids.tolist()]
        rows = arrays.rows_of(env_ids)
        errors = {row: error for row, (_, error, _) in enumerate(results) if error is not None}
        reset_on_done = np.array([reset for _, _, reset in results], dtype=bool)
        infos = [info for info, _, _ in results]
        return StepOutcome(
            env_ids,
            arrays.take(self._step_buf, rows),
            False,
            self._reward_buf[rows],
            self._done_buf[rows],
            self._truncated_buf[rows],
            infos,
            errors,
            reset_on_done,
        )

    def _backend_cancel(self, env_ids: list[int]) -> None:
        """Let in-flight steps of ``env_ids`` finish and drop them, so a reset starts clean."""
        self._queued[env_ids] = False
        workers = set(self._worker_of[env_ids].tolist())
        while any(self._busy[index] for index in workers):
            self._harvest(block=True)
        for env_id in env_ids:
            self._results.pop(env_id, None)

    def _backend_poll(self) -> None:
        if self._busy.any():
            self._harvest(block=False)

    def _backend_close(self) -> None:
        try:
            while self._busy.any():
                self._harvest(block=True, until=time.monotonic() + CLOSE_GRACE_SECONDS)
                if self._busy.any():
                    break
        except (EnvCrashedError, EnvTimeoutError) as error:
            warnings.warn(f"{self._name}: {error} while closing", stacklevel=2)
        super()._backend_close()
