"""The worker process of the subprocess managers (a top-level function, so every context can start it).

A worker hosts several envs. Steps are commanded through shared memory: the
parent writes actions and a per-worker command word, then posts the worker's
command semaphore; the worker steps its envs, writes observations, rewards and
flags into shared memory, posts its done semaphore and, for the async manager,
posts the "any done" semaphore all workers share (it waits on it for "any worker
done"). Both sides spin briefly before blocking. Everything rare (spaces, seeds, resets, attribute calls,
infos of a new schema, errors) travels over the worker's pipe; infos of a known
schema go through the shared info table (see ``info_table``).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import cloudpickle
import numpy as np

from ding_env.env_manager import arrays
from ding_env.env_manager.backends.env_host import EnvHost
from ding_env.env_manager.backends.info_table import InfoWriter
from ding_env.env_manager.backends.manager_watch import ManagerWatch
from ding_env.env_manager.backends.protocol import (
    CMD_STEP,
    INFOS_IN_TABLE,
    REPORT_ON_PIPE,
    Attach,
    Call,
    Close,
    Failure,
    GetAttr,
    Reply,
    Request,
    Reset,
    Seed,
    SetAttr,
    SharedBuffers,
    StepReport,
    first_env,
    segment_entries,
)
from ding_env.env_manager.backends.settings import EnvSetup, HostSettings
from ding_env.env_manager.backends.step_rows import StepRows
from ding_env.env_manager.backends.unsendable import send_pickled, sendable_infos, unsendable_result
from ding_env.env_manager.shared_memory import SharedArrays
from ding_env.errors import EnvError
from ding_env.ops import Op

# A worker whose manager died and who has not shut down by then (its env hangs) ends (seconds).
ORPHAN_GRACE_SECONDS = 2.0
# How often a blocked worker checks that its manager is still alive (seconds).
PARENT_CHECK_INTERVAL = 0.2


def wait_semaphore(semaphore: Any, spin_seconds: float, timeout: float | None) -> bool:
    """Acquire ``semaphore``: spin for ``spin_seconds``, then block up to ``timeout`` (None: forever)."""
    if semaphore.acquire(False):
        return True
    if spin_seconds > 0:
        deadline = time.perf_counter() + spin_seconds
        while time.perf_counter() < deadline:
            # Yield between polls: with more processes than cores, the process
            # we are waiting for may need this core.
            os.sched_yield()
            if semaphore.acquire(False):
                return True
    return semaphore.acquire(True, timeout)


def action_reader(actions: Any, host: EnvHost) -> Callable[[int, int], Any]:
    """A ``read(first, stop)`` of the action rows ``[first, stop)``, indexable by offset.

    Each env gets its action as the serial manager gives it (``EnvHost.action_rows``): Python ints
    while the host's envs take them (``EnvHost.int_actions``), else arrays of its own; scalar actions
    (``Discrete``) take a shorter path to the same 0-d arrays, as they are the common case on the step path.
    """
    if isinstance(actions, np.ndarray) and actions.ndim == 1:
        keys = [(offset, Ellipsis) for offset in range(len(actions))]  # row offset -> a 0-d view
        integers = actions.dtype.kind in "iu"

        def read_scalars(first: int, stop: int) -> list[Any]:
            if integers and host.int_actions:
                return actions[first:stop].tolist()
            batch = actions[first:stop].copy()
            return [batch[key] for key in keys[: stop - first]]

        return read_scalars
    return lambda first, stop: arrays.action_rows(arrays.take(actions, slice(first, stop)), stop - first)


def worker_main(
    index: int,
    env_ids: list[int],
    payload: bytes,
    settings: HostSettings,
    setup: EnvSetup,
    conn: Any,
    cmd_sem: Any,
    done_sem: Any,
    any_done: Any,
    spin_seconds: float,
    manager_pid: int,
    leftover: str | None = None,
) -> None:
    """Run a worker until the manager process ``manager_pid`` sends 'close' or dies.

    ``leftover`` is a file of the manager's that its death would leave behind (``ManagerWatch``).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if hasattr(signal, "SIGHUP"):  # so is a hangup (a closed terminal or SSH session): the parent closes the worker
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # A forked worker inherits its parent's Python handlers (ding-env serve's raises on SIGTERM): the parent's
    # terminate() then printed a traceback of the worker's instead of ending it.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    manager = ManagerWatch(manager_pid, ORPHAN_GRACE_SECONDS, leftover)
    # The worker cuts its auto-resets at reset_timeout itself; the parent's wait for a step allows for one.
    host = EnvHost(dict(zip(env_ids, cloudpickle.loads(payload), strict=True)), settings, setup, limit_auto_reset=True)
    worker = _Worker(index, env_ids, host, conn, (cmd_sem, done_sem, any_done), spin_seconds, manager)
    try:
        worker.run()
    finally:
        worker.shutdown()


class _Worker:
    def __init__(self, index, env_ids, host, conn, semaphores, spin_seconds, manager) -> None:
        self.index = index
        self.env_ids = list(env_ids)
        self.first, self.stop = self.env_ids[0], self.env_ids[-1] + 1
        # The ids of a step of every env (the worker's ids are consecutive), made once.
        self.every_id = np.arange(self.first, self.stop, dtype=np.int64)
        self.every_id.flags.writeable = False
        self.conn = conn
        self.cmd_sem, self.done_sem, self.any_done = semaphores
        self.spin_seconds = spin_seconds
        self.manager = manager
        self.host = host
        self.shared: SharedArrays | None = None
        self.running = True

    def run(self) -> None:
        try:
            self.host.launch()
            self.host.spaces()
            self.conn.send(Reply(cloudpickle.dumps(self.host.distinct_spaces)))
        except Exception as error:  # noqa: BLE001 - reported to the parent, which raises it
            self.conn.send(Failure.of(error, self.env_ids[0], Op.LAUNCH))
            return
        # Until shared memory is attached, commands arrive on the pipe alone.
        while self.running and self.shared is None:
            if self.conn.poll(PARENT_CHECK_INTERVAL):
                self.handle_message(self.conn.recv())
            elif not self.manager.alive():
                return
        while self.running:
            if not wait_semaphore(self.cmd_sem, self.spin_seconds, PARENT_CHECK_INTERVAL):
                if not self.manager.alive():
                    return
                continue
            if self.commands[self.index] == CMD_STEP:
                self.step()
            else:
                message = self.receive()
                if message is None:
                    return
                self.handle_message(message)

    def receive(self) -> Request | None:
        """The manager's next pipe message, or None once the manager is gone."""
        while not self.conn.poll(PARENT_CHECK_INTERVAL):
            if not self.manager.alive():
                return None
        return self.conn.recv()

    # ---- pipe commands ------------------------------------------------

    def handle_message(self, request: Request) -> None:
        """Run ``request`` (its handler from ``HANDLERS``) and send its reply or failure."""
        try:
            result = HANDLERS[type(request)](self, request)
        except Exception as error:  # noqa: BLE001 - every env error goes back to the parent
            name = getattr(request, "name", "")
            self.conn.send(Failure.of(error, first_env(request, self.env_ids), request.op, name))
            return
        env_ids, name = getattr(request, "env_ids", self.env_ids), getattr(request, "name", "")
        values = result if isinstance(result, list) else [result]
        send_pickled(self.conn, Reply(result), partial(unsendable_result, env_ids, values, request.op, name))

    def on_attach(self, request: Attach) -> None:
        """Map the shared segment and take this worker's views of it."""
        entries = segment_entries(request.layouts, request.env_num, request.num_workers)
        self.shared = SharedArrays(entries, name=request.segment)
        buffers = SharedBuffers(**self.shared.arrays)
        # Single words written from Python each step: through memoryviews, which index single items
        # with less overhead than numpy (the zero-cost rows of benchmarks/history/runs.md).
        self.commands, self.status = memoryview(buffers.command), memoryview(buffers.status)
        self.ended, self.steps_ended = memoryview(buffers.ended), 0
        self.rows = StepRows(buffers.ready_obs, buffers.step_obs, buffers.reward, buffers.done, buffers.truncated, 0)
        self.step_mask, self.reset_on_done = buffers.step_mask, buffers.reset_on_done
        self.host.set_obs_layout(request.layouts.ready_obs)
        self.actions = buffers.action
        self.read_actions = action_reader(self.actions, self.host)
        self.info_writer = InfoWriter(buffers.info_values, buffers.info_schema)

    def on_seed(self, request: Seed) -> None:
        self.host.setup.seeds[request.env_id] = (request.seed, request.dynamic_seed)
        self.host.seed(request.env_id)

    def on_reset(self, request: Reset) -> None:
        self.host.setup.reset_params.update(request.params)
        _, failure = self.host.reset_into(request.env_ids, partial(arrays.write, self.rows.ready_obs))
        if failure is not None:
            raise failure

    def on_call(self, request: Call) -> list[Any]:
        return self.host.call(request.env_ids, request.name, request.args, request.kwargs)

    def on_get_attr(self, request: GetAttr) -> list[Any]:
        return self.host.get_attr(request.env_ids, request.name)

    def on_set_attr(self, request: SetAttr) -> None:
        self.host.set_attr(request.env_ids, request.name, request.values)

    def on_close(self, request: Close) -> list[Failure]:
        self.running = False
        return [Failure.of(error, error.env_id, Op.CLOSE) for error in self.host.close()]

    # ---- the hot path -------------------------------------------------

    def step(self) -> None:
        """Step this worker's envs the step mask names, with their actions; post the done semaphores."""
        # This worker's envs are the consecutive ids [first, stop): read its rows in one call each.
        first, stop = self.first, self.stop
        info_writer = self.info_writer
        info_writer.start_step(first, stop)
        if self.host.batch is not None:
            self.report(*self.step_stacked(first, stop))
            return
        mask = self.step_mask[first:stop].tolist()
        actions = self.read_actions(first, stop)
        resets = self.reset_on_done[first:stop].tolist()
        env_ids = self.env_ids
        if not all(mask):  # some envs sit out this step: their rows are ignored
            env_ids = [env_id for env_id, stepped in zip(env_ids, mask, strict=True) if stepped]
            actions = [action for action, stepped in zip(actions, mask, strict=True) if stepped]
            resets = [reset for reset, stepped in zip(resets, mask, strict=True) if stepped]
        self.report(*self.host.step(env_ids, actions, resets, self.rows, info_writer.put))

    def step_stacked(self, first: int, stop: int) -> tuple[dict[int, dict], dict[int, Any]]:
        """Step this worker's envs through ``EnvHost.step_stacked``: its batch envs write their rows in one go."""
        mask = self.step_mask[first:stop]
        if np.count_nonzero(mask) == stop - first:  # every env steps (the usual step): the ids and rows made once
            ids, rows = self.every_id, slice(first, stop)
        else:
            ids = np.flatnonzero(mask) + first
            rows = arrays.rows_of(ids)
        # Views of the shared rows: step_stacked gives every env actions of its own (the parent writes the
        # next step's actions into these rows while an env may keep its own).
        actions = arrays.take(self.actions, rows)
        info_writer = self.info_writer
        return self.host.step_stacked(
            ids, actions, self.reset_on_done[rows], self.rows, info_writer.put, info_writer.put_rows
        )

    def report(self, infos: dict[int, dict], errors: dict[int, Any]) -> None:
        """Post the step's end: status word, done semaphores, and the report of infos and errors on the pipe."""
        info_writer = self.info_writer
        has_report = bool(infos or errors)  # a new info schema comes with its info
        in_table = info_writer.wrote
        self.status[self.index] = (REPORT_ON_PIPE if has_report else 0) | (INFOS_IN_TABLE if in_table else 0)
        self.done_sem.release()
        if self.any_done is not None:
            self.any_done.release()
        self.steps_ended += 1  # after the post: once the parent reads it, no post of this step is to come
        self.ended[self.index] = self.steps_ended
        if has_report:
            failures = {env_id: Failure.of(error, env_id, Op.STEP) for env_id, error in errors.items()}
            announced = info_writer.take_announced()
            send_pickled(
                self.conn,
                StepReport(infos, failures, announced),
                lambda _: StepReport(sendable_infos(infos, failures), failures, announced),
            )

    def shutdown(self) -> None:
        if self.host.envs:
            self.host.close()
        if self.shared is not None:
            # Views of the segment go before it (writers hold views too).
            self.commands = self.status = None
            self.rows.release()
            self.info_writer.release()
            self.shared.release()
            self.shared = None
        self.conn.close()
        self.manager.close()


# The worker's handler of each request record.
HANDLERS = {
    Attach: _Worker.on_attach,
    Seed: _Worker.on_seed,
    Reset: _Worker.on_reset,
    Call: _Worker.on_call,
    GetAttr: _Worker.on_get_attr,
    SetAttr: _Worker.on_set_attr,
    Close: _Worker.on_close,
}


def pickled_env_fns(env_fn: Mapping[int, Callable[[], Any]], env_ids: list[int]) -> bytes:
    """The env_fns of ``env_ids``, pickled for the worker that hosts them.

    Raises:
        EnvError: Naming the first env whose env_fn cannot be pickled, what it holds, and the fix.
    """
    try:
        return cloudpickle.dumps([env_fn[env_id] for env_id in env_ids])
    except Exception as error:  # noqa: BLE001 - pickled again env by env below, to name the env
        failure = error
    for env_id in env_ids:
        try:
            cloudpickle.dumps(env_fn[env_id])
        except Exception as error:  # noqa: BLE001 - re-raised naming the env and the fix
            raise EnvError(
                env_id,
                Op.LAUNCH,
                f"its env_fn {env_fn[env_id]!r:.100} cannot be sent to a worker process "
                f"({type(error).__name__}: {error}): build what it holds (a lock, a socket, an open file, a "
                "simulator) inside the function, or use the base manager",
            ) from error
    raise EnvError(
        env_ids[0], Op.LAUNCH, f"the env_fns of envs {env_ids} cannot be sent to their worker process: {failure!r}"
    ) from failure
