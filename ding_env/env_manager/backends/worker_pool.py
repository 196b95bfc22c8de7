"""``WorkerPool``: the worker processes of a subprocess manager, their pipes, semaphores and shared memory.

The pool starts workers, allocates the shared segment from the spaces, sends
pipe requests and waits for step results without ever blocking forever: every
wait is cut into short slices that check the worker is alive and the deadline
has not passed. A dead or hung worker is replaced by :meth:`restart`, which
starts a fresh process for the same envs and re-applies their seeds and reset
params (the envs then need a reset).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections.abc import Callable, Collection
from multiprocessing.connection import wait as wait_connections
from typing import Any

import cloudpickle
import gymnasium as gym

from ding_env.env_manager.backends.info_table import InfoReader
from ding_env.env_manager.backends.interrupts import HOLD
from ding_env.env_manager.backends.protocol import (
    CMD_PIPE,
    CMD_STEP,
    INFOS_IN_TABLE,
    REPORT_ON_PIPE,
    Attach,
    Close,
    Failure,
    Request,
    SharedBuffers,
    StepReport,
    buffer_layouts,
    segment_entries,
)
from ding_env.env_manager.backends.settings import EnvSetup, WorkerSettings
from ding_env.env_manager.backends.start_methods import (
    leftover_socket,
    main_guard_hint,
    start_resource_tracker,
    start_worker,
)
from ding_env.env_manager.backends.worker import pickled_env_fns, wait_semaphore, worker_main
from ding_env.env_manager.shared_memory import SharedArrays
from ding_env.errors import EnvCrashedError, EnvError, EnvTimeoutError
from ding_env.ops import Op

# Workers spin this long for their next command before blocking (when they fit on the cores, see
# WorkerPool.__init__), the parent this long for results. Every spin poll yields the core.
WORKER_SPIN_SECONDS = 0.0002
PARENT_SPIN_SECONDS = 0.0003
# Longest a blocked wait goes without checking that the worker is alive (seconds).
LIVENESS_INTERVAL = 0.05
# Grace before a closing worker is terminated, then killed.
CLOSE_GRACE_SECONDS = 1.0
# How long envs may take to close (videos to write, renderers to free).
CLOSE_TIMEOUT_SECONDS = 10.0
# What a worker still gets once that time is up: a healthy one answers close in milliseconds.
CLOSE_FLOOR_SECONDS = 0.5


class WorkerPool:
    """Worker processes hosting ``worker_envs[w]`` each.

    Args:
        env_fn: All env constructors, indexed by env id.
        worker_envs: The env ids each worker hosts.
        settings: How workers are started and treat their envs.
        setup: The envs' seeds and reset kwargs, which each worker gets when it starts.
        name: Names the manager in errors.
        wake_on_any: Workers post a shared "any done" semaphore after each step.
    """

    def __init__(
        self,
        env_fn: list[Callable],
        worker_envs: list[list[int]],
        settings: WorkerSettings,
        setup: EnvSetup,
        name: str,
        wake_on_any: bool = False,
    ) -> None:
        self.env_fn = env_fn
        self.worker_envs = worker_envs
        self.settings, self.setup = settings, setup
        self.timeout = settings.host.reset_timeout  # of every pipe request
        self.name = name
        self.size = len(worker_envs)
        self.context = mp.get_context(settings.context)
        self.processes: list[Any] = [None] * self.size
        self.conns: list[Any] = [None] * self.size
        self.cmd_sems: list[Any] = [None] * self.size
        self.done_sems: list[Any] = [None] * self.size
        self.wake_on_any = wake_on_any
        self.any_done = None
        # Never more spinners than cores. Idle workers spin only if each can have a core. The parent
        # waits only while some worker is stepping (not spinning), so it adds at most one spinner to
        # at most size - 1 idle ones. Blocking instead costs a futex wake-up per step, 10-20 us on a
        # VM: with 8 CartPole envs on 2 workers, parent spinning cut a batched step by 12-15%.
        cores = os.cpu_count() or 1
        self.worker_spin = WORKER_SPIN_SECONDS if self.size <= cores else 0.0
        self.parent_spin = PARENT_SPIN_SECONDS
        self.shared: SharedArrays | None = None
        self.layouts: SharedBuffers | None = None
        self.command_words: memoryview | None = None
        self.ended_words: memoryview | None = None
        self.distinct_spaces: dict[int, tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]] = {}
        self.status_words: memoryview | None = None
        self.info_reader: InfoReader | None = None

    # ---- lifecycle -----------------------------------------------------

    def start(self) -> tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space]:
        """Start every worker; return the envs' spaces as worker 0 reports them.

        ``distinct_spaces`` gets each worker's first env's spaces and those of its envs that differ.
        """
        start_resource_tracker()  # one tracker shared by every worker: no double unlink
        # A semaphore's count is bounded (2**31 - 1 on Linux): nobody may post to one that nobody drains.
        self.any_done = self.context.Semaphore(0) if self.wake_on_any else None
        try:
            for index in range(self.size):
                self._spawn(index)
            replies = [self.receive(index, Op.LAUNCH, self.settings.connect_timeout) for index in range(self.size)]
            for reply in replies:
                self.distinct_spaces.update(cloudpickle.loads(reply))
            return self.distinct_spaces[self.worker_envs[0][0]]
        except BaseException:
            self.close_processes()
            raise

    def _spawn(self, index: int) -> None:
        parent_conn, child_conn = self.context.Pipe()
        self.cmd_sems[index] = self.context.Semaphore(0)
        self.done_sems[index] = self.context.Semaphore(0)
        env_ids = self.worker_envs[index]
        payload = pickled_env_fns(self.env_fn, env_ids)
        setup = self.setup.of(env_ids)  # as it stands now: a replacement starts seeded as before
        process = self.context.Process(
            target=worker_main,
            args=(
                index,
                env_ids,
                payload,
                self.settings.host,
                setup,
                child_conn,
                self.cmd_sems[index],
                self.done_sems[index],
                self.any_done,
                self.worker_spin,
                os.getpid(),
                leftover_socket(self.settings.context),
            ),
            name=f"ding_env-worker-{index}",
            daemon=True,
        )
        start_worker(process, self.settings.context)
        child_conn.close()
        if self.settings.cpu_affinity:
            cpus = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(process.pid, {cpus[index % len(cpus)]})
        self.processes[index], self.conns[index] = process, parent_conn

    def allocate(
        self, spaces: tuple[gym.spaces.Space, gym.spaces.Space, gym.spaces.Space], env_num: int
    ) -> SharedBuffers:
        """Allocate the shared segment from the spaces, attach every worker, and return the arrays."""
        self.layouts = buffer_layouts(spaces, self.name)
        self.env_num = env_num
        self.shared = SharedArrays(segment_entries(self.layouts, env_num, self.size))
        buffers = SharedBuffers(**self.shared.arrays)
        # One word per worker, read and written from Python each step: through a memoryview, which
        # indexes single items with less overhead than numpy (the zero-cost rows of benchmarks/history/runs.md).
        self.command_words, self.status_words = memoryview(buffers.command), memoryview(buffers.status)
        self.ended_words, self.dispatched = memoryview(buffers.ended), [0] * self.size
        self.info_reader = InfoReader(buffers.info_values, buffers.info_schema)
        for index in range(self.size):
            self._attach(index)
        return buffers

    def _attach(self, index: int) -> None:
        attach = Attach(self.shared.name, self.layouts, self.env_num, self.size)
        self.request(index, attach, self.settings.connect_timeout)

    def restart(self, index: int) -> None:
        """Replace worker ``index`` (dead, hung or not) with a fresh one hosting the same envs, set up as before.

        Its envs need a reset.
        """
        self._stop(index, kill=True)
        self._spawn(index)
        self.receive(index, Op.LAUNCH, self.settings.connect_timeout)
        if self.ended_words is not None:  # the fresh worker counts its steps from none
            self.ended_words[index] = self.dispatched[index] = 0
        self._attach(index)

    def close(self, stuck: Collection[int] = ()) -> list[EnvError]:
        """Ask every live worker to close its envs, then join them all and free shared memory.

        Args:
            stuck: Workers still stepping (hung): they are stopped without asking, and reported.

        Returns:
            An ``EnvError`` (command ``close``) for every failure: an env's close error, or a worker
            that did not close (named by its first env).
        """
        failures: list[EnvError] = []
        # One time limit for all: workers hung in a step (a Ctrl-C that cut a synchronous step) are not
        # waited for one after another.
        deadline = time.monotonic() + CLOSE_TIMEOUT_SECONDS
        try:
            for index, process in enumerate(self.processes):
                if process is None or not process.is_alive():
                    continue
                first = self.worker_envs[index][0]
                if index in stuck:
                    stopped = f"its worker (envs {self.worker_envs[index]}) was still stepping and was stopped"
                    failures.append(EnvError(first, Op.CLOSE, stopped))
                    continue
                try:
                    left = round(max(CLOSE_FLOOR_SECONDS, deadline - time.monotonic()), 1)
                    failures += [failure.error() for failure in self.request(index, Close(), left)]
                except (EnvCrashedError, EnvTimeoutError, OSError) as error:
                    failures.append(EnvError(first, Op.CLOSE, f"{type(error).__name__}: {error}"))
        finally:
            # Also when the polite close is interrupted (a second Ctrl-C): no worker or segment outlives us.
            self.close_processes()
        return failures

    def close_processes(self) -> None:
        """Join every worker (terminate, then kill after a grace period) and unlink the segment."""
        deadline = time.monotonic() + CLOSE_GRACE_SECONDS
        for process in self.processes:
            if process is not None:
                process.join(max(0.0, deadline - time.monotonic()))
        for index in range(self.size):
            self._stop(index, kill=False)
        self.command_words = self.status_words = self.ended_words = None
        if self.info_reader is not None:
            self.info_reader.release()
            self.info_reader = None
        if self.shared is not None:
            self.shared.release()
            self.shared = None

    def _stop(self, index: int, kill: bool) -> None:
        process = self.processes[index]
        if process is not None:
            if process.is_alive():
                process.kill() if kill else process.terminate()
                process.join(CLOSE_GRACE_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()
            process.close()
        if self.conns[index] is not None:
            self.conns[index].close()
        self.processes[index] = self.conns[index] = None

    # ---- steps ---------------------------------------------------------

    def dispatch(self, index: int) -> None:
        """Tell worker ``index`` to step its masked envs."""
        self.command_words[index] = CMD_STEP
        self.dispatched[index] += 1
        self.cmd_sems[index].release()

    def wait_done(self, index: int, deadline: float | None, timeout: float | None) -> None:
        """Wait for worker ``index``'s step to finish.

        Raises:
            EnvCrashedError: The worker died.
            EnvTimeoutError: ``deadline`` passed (``timeout`` is reported).
        """
        semaphore = self.done_sems[index]
        if wait_semaphore(semaphore, self.parent_spin, _slice(deadline)):
            return
        while True:
            if HOLD.pending:  # a Ctrl-C held off by the caller: a hung step must still be cut by it
                HOLD.pending = False
                raise KeyboardInterrupt
            if not self.processes[index].is_alive():
                if semaphore.acquire(False):  # finished just before dying
                    return
                raise self.crashed(index, Op.STEP)
            if deadline is not None and time.monotonic() >= deadline:
                raise self.timed_out(index, Op.STEP, timeout)
            if semaphore.acquire(True, _slice(deadline)):
                return

    def wait_settled(self, index: int, deadline: float | None, timeout: float | None) -> None:
        """Wait for worker ``index``'s step whose waiting a KeyboardInterrupt cut, and take its done post.

        The interrupted wait may have taken the post already (the interrupt can land just after the acquire):
        the worker's count of ended steps, written after its post, says when the step ended all the same.

        Raises:
            EnvCrashedError: The worker died.
            EnvTimeoutError: ``deadline`` passed (``timeout`` is reported).
        """
        semaphore = self.done_sems[index]
        while self.ended_words[index] != self.dispatched[index]:
            if semaphore.acquire(True, _slice(deadline)):  # the step's post: it ended
                return
            if not self.processes[index].is_alive():
                if self.ended_words[index] == self.dispatched[index]:  # ended just before dying
                    break
                raise self.crashed(index, Op.STEP)
            if deadline is not None and time.monotonic() >= deadline:
                raise self.timed_out(index, Op.STEP, timeout)
        semaphore.acquire(False)  # posted before the count: here unless the interrupted wait took it

    def poll_done(self, index: int) -> bool:
        """True (once) if worker ``index`` finished its step."""
        return self.done_sems[index].acquire(False)

    def wait_any_done(self, timeout: float) -> None:
        """Sleep until some worker finishes a step or ``timeout`` passes (callers then drain and poll)."""
        wait_semaphore(self.any_done, self.parent_spin, timeout)

    def drain_any_done(self) -> None:
        """Forget every ring so far; call before polling the workers, so no finished step goes unseen."""
        while self.any_done.acquire(False):
            pass

    def has_report(self, index: int) -> bool:
        """Whether worker ``index``'s last step left infos or errors (on its pipe or in the info table)."""
        return self.status_words[index] != 0

    def step_report(self, index: int) -> tuple[dict, dict]:
        """The ``(infos, errors)`` of worker ``index``'s last step, from its pipe and the info table."""
        status = self.status_words[index]
        infos, errors = self.receive_report(index) if status & REPORT_ON_PIPE else ({}, {})
        if status & INFOS_IN_TABLE:
            env_ids = self.worker_envs[index]
            infos.update(self.info_reader.read(env_ids[0], env_ids[-1] + 1))
        return infos, errors

    # ---- pipe traffic --------------------------------------------------

    def request(self, index: int, request: Request, timeout: float | None) -> Any:
        """Send ``request`` to worker ``index`` and return its reply's value (raising its failure)."""
        self.send(index, request)
        return self.receive(index, request.op, timeout)

    def send(self, index: int, request: Request) -> None:
        """Send a pipe request, waking the worker unless it is still attaching."""
        self.conns[index].send(request)
        if not isinstance(request, Attach):  # before attaching, workers read only their pipe
            self.command_words[index] = CMD_PIPE
            self.cmd_sems[index].release()

    def receive(self, index: int, command: Op, timeout: float | None) -> Any:
        """The worker's reply; never blocks forever on a dead worker.

        Raises:
            EnvError: The env raised (remote traceback attached).
            EnvCrashedError: The worker died.
            EnvTimeoutError: No reply within ``timeout`` seconds.
        """
        conn, process = self.conns[index], self.processes[index]
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            ready = wait_connections([conn, process.sentinel], timeout=_slice(deadline))
            if conn in ready:
                try:
                    reply = conn.recv()
                except EOFError:
                    raise self.crashed(index, command) from None
                break
            if process.sentinel in ready:
                raise self.crashed(index, command)
            if deadline is not None and time.monotonic() >= deadline:
                raise self.timed_out(index, command, timeout)
        if isinstance(reply, Failure):
            raise reply.error()
        return reply.value

    def receive_report(self, index: int) -> tuple[dict, dict]:
        """The ``(infos, failures)`` of a worker's :class:`StepReport`."""
        report: StepReport = self.conns[index].recv()
        if report.schemas:
            self.info_reader.learn(report.schemas)
        return report.infos, report.failures

    def crashed(self, index: int, command: Op) -> EnvCrashedError:
        """The error for a dead worker, with its exit code."""
        process = self.processes[index]
        process.join(LIVENESS_INTERVAL)
        hint = main_guard_hint(self.settings.context) if command == Op.LAUNCH and process.exitcode == 1 else ""
        return EnvCrashedError(self.worker_envs[index], process.exitcode, command, hint)

    def timed_out(self, index: int, command: Op, timeout: float) -> EnvTimeoutError:
        """The error for a worker that passed ``timeout``: its envs time out together."""
        env_ids = self.worker_envs[index]
        return EnvTimeoutError(env_ids, command, timeout, grouped=len(env_ids) > 1)


def _slice(deadline: float | None) -> float:
    if deadline is None:
        return LIVENESS_INTERVAL
    return max(0.0, min(LIVENESS_INTERVAL, deadline - time.monotonic()))
