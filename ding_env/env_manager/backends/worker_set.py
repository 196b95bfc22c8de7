"""``WorkerSet``: the worker processes of a worker backend, and everything both worker backends do alike.

The synchronous and the asynchronous worker backend (``workers.py``, ``async_workers.py``) are
siblings that differ only in how a step is sent and collected. What they share is here: which
worker hosts which envs, the shared-memory rows of every env, the pipe requests (seed, reset,
env calls), reading a worker's step report, and replacing a dead or hung worker, whose envs then
get abnormal results.

The env ids are ``0..n-1``, shared out in consecutive runs (``layout_shares``: a batch env's ids stay
together); the rows of every shared array are indexed by env id.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager.backends import interrupts
from ding_env.env_manager.backends.base import Ledger, Spaces, WorkerView
from ding_env.env_manager.backends.protocol import Call, GetAttr, Request, Reset, Seed, SetAttr
from ding_env.env_manager.backends.settings import EnvSetup, WorkerSettings
from ding_env.env_manager.backends.worker_pool import WorkerPool
from ding_env.env_manager.env_layout import layout_shares
from ding_env.env_manager.status import abnormal_info
from ding_env.errors import DingEnvError, EnvCrashedError, EnvError, EnvTimeoutError
from ding_env.ops import Op

WORKER_FAILURES = (EnvCrashedError, EnvTimeoutError)


def kept(error: DingEnvError) -> DingEnvError:
    """``error`` without the traceback of where this process caught it, to be raised or reported later.

    That traceback holds the frame that keeps the error (a cycle): with it, the step's buffers
    (views of the shared segment) would stay mapped until the garbage collector runs. The env's
    own traceback stays in the error's text.
    """
    return error.with_traceback(None)


class WorkerSet:
    """The env ids ``0..n-1`` in ``num_workers`` worker processes.

    Args:
        env_fns: ``{env_id: constructor}`` for the ids ``0..n-1`` (pickled with cloudpickle for
            'spawn'/'forkserver', so lambdas work).
        settings: How workers are started, waited for and treat their envs.
        name: Names the manager in errors.
        ledger: Where envs lost with a worker are reported.
        setup: The envs' seeds and reset kwargs (the manager's).
        num_workers: Worker processes (at most one per env).
        wake_on_any: Workers post a shared "any done" semaphore after each step (for a backend that
            waits for any worker).
        settle: Makes the given workers idle before a pipe request to them (a worker answers only
            after its step); None when no step is ever in flight between calls.
    """

    def __init__(
        self,
        env_fns: Mapping[int, Callable[[], Any]],
        settings: WorkerSettings,
        name: str,
        ledger: Ledger,
        setup: EnvSetup,
        num_workers: int,
        wake_on_any: bool = False,
        settle: Callable[[Collection[int]], None] | None = None,
    ) -> None:
        self.env_ids = list(env_fns)
        if self.env_ids != list(range(len(self.env_ids))):
            raise ValueError(f"{name}: worker backends host the env ids 0..n-1, got {self.env_ids}")
        self.env_fns = [env_fns[env_id] for env_id in self.env_ids]
        self.settings, self.name, self.ledger, self.setup = settings, name, ledger, setup
        self.timeout = settings.host.reset_timeout  # of every pipe request
        self.wake_on_any, self.settle = wake_on_any, settle
        self.env_num = len(self.env_ids)
        self.worker_envs = layout_shares(self.env_fns, self.env_ids, min(num_workers, self.env_num))
        self.num_workers = len(self.worker_envs)
        self.worker_of = np.repeat(np.arange(self.num_workers), [len(share) for share in self.worker_envs])
        self.pool: WorkerPool | None = None
        self.holds_interrupts = False

    def launch(self) -> Spaces:
        """Start the workers and map the shared rows; the envs' spaces."""
        self.pool = WorkerPool(self.env_fns, self.worker_envs, self.settings, self.setup, self.name, self.wake_on_any)
        spaces = self.pool.start()
        try:
            buffers = self.pool.allocate(spaces, self.env_num)
        except BaseException:
            self.pool.close_processes()
            raise
        self.ready_buf, self.step_buf = buffers.ready_obs, buffers.step_obs
        self.action_buf, self.reward_buf = buffers.action, buffers.reward
        self.done_buf, self.truncated_buf = buffers.done, buffers.truncated
        self.mask_buf, self.reset_buf = buffers.step_mask, buffers.reset_on_done
        # Ctrl-C is held off across the backends' bookkeeping of a step (``interrupts``).
        self.holds_interrupts = interrupts.install()
        return spaces

    # ---- pipe requests -------------------------------------------------

    def seed(self, env_id: int) -> None:
        """Seed one env in its worker with its seed in the setup (a worker that replaces it starts so seeded)."""
        self.env_request(env_id, Seed(env_id, *self.setup.seeds[env_id]))

    def reset(self, env_ids: list[int]) -> tuple[list[int], list[DingEnvError]]:
        """Reset ``env_ids`` in their workers at once: the ids now ready and the errors of the others."""
        by_worker = self.by_worker(env_ids)
        if self.settle is not None:
            self.settle(by_worker)
        for index, ids in by_worker.items():
            self.pool.send(index, Reset(ids, self.setup.params_of(ids)))
        replies, errors = self.gather(by_worker, lambda index: self.pool.receive(index, Op.RESET, self.timeout))
        # The workers that reset their envs: those are ready, whoever else failed.
        return [env_id for index in replies for env_id in by_worker[index]], errors

    def call(self, env_ids: list[int], name: str, args: tuple, kwargs: dict) -> list:
        """Call method ``name`` of each env; one result per env."""
        return self.ask_each(env_ids, lambda ids: Call(ids, name, args, kwargs))

    def get_attr(self, env_ids: list[int], name: str) -> list:
        """Attribute ``name`` of each env, as ``status.read_attribute`` gives it."""
        return self.ask_each(env_ids, lambda ids: GetAttr(ids, name))

    def set_attr(self, env_ids: list[int], name: str, values: list) -> None:
        """Set attribute ``name`` of each env to its value."""
        value_of = dict(zip(env_ids, values, strict=True))
        self.ask_each(env_ids, lambda ids: SetAttr(ids, name, [value_of[env_id] for env_id in ids]))

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
        if self.settle is not None:
            self.settle(by_worker)
        requests = {index: request_of(ids) for index, ids in by_worker.items()}
        for index, request in requests.items():
            self.pool.send(index, request)
        replies, errors = self.gather(
            by_worker, lambda index: self.pool.receive(index, requests[index].op, self.timeout)
        )
        if errors:
            raise errors[0]
        value_of = {}
        for index, ids in by_worker.items():
            value_of.update(zip(ids, replies[index] or [None] * len(ids), strict=True))
        return [value_of[env_id] for env_id in env_ids]

    def env_request(self, env_id: int, request: Request) -> Any:
        """Send ``request`` about one env to its worker; return the reply's value (raising its failure)."""
        index = int(self.worker_of[env_id])
        if self.settle is not None:
            self.settle([index])
        replies, errors = self.gather({index: [env_id]}, lambda _: self.pool.request(index, request, self.timeout))
        if errors:
            raise errors[0]
        return replies[index]

    def replace_worker(self, index: int) -> None:
        """Start a fresh worker for ``index``; its envs lost their episodes.

        Envs whose (abnormal) results are on the way are the manager's to settle; the ledger
        marks only the others as needing a reset.
        """
        self.pool.restart(index)
        self.ledger.lose(self.worker_envs[index])

    # ---- step results --------------------------------------------------

    def results(self, rows: slice | np.ndarray) -> tuple:
        """The step observations, rewards, done and truncated flags of ``rows`` (views for a slice)."""
        return arrays.take(self.step_buf, rows), self.reward_buf[rows], self.done_buf[rows], self.truncated_buf[rows]

    def read_report(self, index: int, infos: dict[int, dict], errors: dict[int, DingEnvError]) -> None:
        """Add worker ``index``'s infos and errors of its last step to ``infos`` and ``errors`` (by env id)."""
        worker_infos, failures = self.pool.step_report(index)
        infos.update(worker_infos)
        for env_id, failure in failures.items():
            errors[env_id] = failure.error()

    def fail_worker(
        self, index: int, error: DingEnvError, lost: list[int], reset: dict[int, bool]
    ) -> tuple[dict[int, dict], dict[int, DingEnvError]]:
        """Replace a dead or hung worker; its envs ``lost`` get abnormal done results.

        The result rows hold the last ready observation, reward 0 and ``done=True``. With
        ``step_error='abnormal'`` envs due an auto-reset are reset in the new worker; every other
        env of the worker needs a reset.

        Returns:
            ``({env_id: abnormal info}, {env_id: error})``: every lost env's error is ``error``,
            or for the envs whose reset in the new worker failed, that failure (they need a reset).
        """
        self.replace_worker(index)
        for env_id in lost:
            arrays.write(self.step_buf, env_id, arrays.row(self.ready_buf, env_id, copy=True))
            self.reward_buf[env_id] = 0
            self.done_buf[env_id], self.truncated_buf[env_id] = True, False
        infos = {env_id: abnormal_info(error) for env_id in lost}
        errors: dict[int, DingEnvError] = dict.fromkeys(lost, error)
        due = [env_id for env_id in lost if reset[env_id]]
        if self.settings.host.step_error != "abnormal" or not due:
            return infos, errors
        replacement_failed = None
        for env_id in due:
            try:
                self.pool.request(index, Reset([env_id], self.setup.params_of([env_id])), self.timeout)
            except EnvError as reset_error:
                errors[env_id] = kept(reset_error)
            except WORKER_FAILURES as worker_error:
                replacement_failed = kept(worker_error)
                break
        if replacement_failed is not None:  # the new worker died or hung too: none of its resets stand
            self.replace_worker(index)
            errors.update(dict.fromkeys(due, replacement_failed))
        return infos, errors

    def ready_obs(self, env_ids: np.ndarray) -> Any:
        """The ready observations of ``env_ids`` (increasing): views for consecutive ids, else copies."""
        return arrays.take(self.ready_buf, arrays.rows_of(env_ids))

    # ---- processes -----------------------------------------------------

    def views(self) -> list[WorkerView]:
        """The live worker processes and the envs each hosts."""
        if self.pool is None:
            return []
        return [
            WorkerView(process.pid, list(env_ids))
            for process, env_ids in zip(self.pool.processes, self.worker_envs, strict=True)
            if process is not None
        ]

    def close(self, stuck: Collection[int] = ()) -> list[EnvError]:
        """Drop the views of the shared segment, then close the pool (``stuck``: hung workers, stopped unasked).

        (Views a user still holds keep the segment mapped until they are gone.)
        """
        self.ready_buf = self.step_buf = self.action_buf = self.reward_buf = None
        self.done_buf = self.truncated_buf = self.mask_buf = self.reset_buf = None
        if self.holds_interrupts:
            interrupts.uninstall()
            self.holds_interrupts = False
        failures = self.pool.close(stuck)
        self.pool = None
        return failures
