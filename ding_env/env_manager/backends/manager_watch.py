"""``ManagerWatch``: a worker's view of whether the manager process that started it is alive.

A worker must not outlive its manager, even when the manager is killed (SIGKILL, OOM) and
cannot close it. Idle workers ask :meth:`ManagerWatch.alive` between commands and shut down
cleanly (closing their envs). A worker whose env hangs never asks: a watchdog process, forked
by the worker as it starts, kills it once the manager has been gone for ``grace`` seconds. A
thread of the worker's could not: while an env is stuck in a C call that keeps the GIL (a
native simulator's), no other thread of the worker runs.

With the 'forkserver' context the manager's multiprocessing folder holds the fork server's socket,
which only the manager's exit removes: a manager that is killed leaves it, and the watchdog removes it
once the worker has ended.

The manager is watched through a pidfd (Linux 5.3+), which stays bound to that process even if
its pid is reused. The OS parent is not a reliable stand-in: with the 'forkserver' context the
parent is the fork server, which lives on as long as any of its children does.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import warnings


class ManagerWatch:
    """Watches the manager process ``manager_pid``.

    Args:
        manager_pid: The manager's process id (the worker's OS parent for 'fork' and 'spawn').
        grace: Seconds a worker may take to shut down on its own once the manager is gone.
        leftover: The manager's multiprocessing folder, which a killed manager leaves behind (None: none).
    """

    def __init__(self, manager_pid: int, grace: float, leftover: str | None = None) -> None:
        self.manager_pid = manager_pid
        # Without pidfds, the OS parent at start stands in (the manager itself for 'fork' and 'spawn').
        self.parent_pid = os.getppid()
        self.pidfd: int | None = None
        self.gone = False
        try:
            self.pidfd = os.pidfd_open(manager_pid)
        except ProcessLookupError:
            self.gone = True  # the manager died before the worker started
            return
        except (AttributeError, OSError):
            return  # no pidfd here (an old kernel, or a sandbox): alive() watches the OS parent
        start_watchdog(self.pidfd, grace, leftover)

    def alive(self) -> bool:
        """Whether the manager process still runs."""
        if self.gone:
            return False
        if self.pidfd is None:
            return os.getppid() == self.parent_pid
        return not select.select([self.pidfd], [], [], 0)[0]


def start_watchdog(manager_pidfd: int, grace: float, leftover: str | None = None) -> None:
    """Fork a process that kills this one (SIGKILL) once the manager has been gone for ``grace`` seconds.

    The watchdog holds no file of the worker's but the two pidfds it waits on, and ends as soon as
    the worker does, whichever way: it never outlives the worker either. Once the manager is gone and
    the worker has ended, it removes the folder ``leftover``. Call it while this process has one thread
    (forking copies only the calling thread).
    """
    worker_pidfd = os.pidfd_open(os.getpid())
    try:
        watchdog = os.fork()
    except OSError as error:  # no process to spare: idle workers still notice the manager's end themselves
        os.close(worker_pidfd)
        warnings.warn(
            f"ding-env worker {os.getpid()}: no watchdog process ({error}): a worker whose env hangs "
            "will outlive a manager that is killed",
            RuntimeWarning,
            stacklevel=2,
        )
        return
    if watchdog:
        os.close(worker_pidfd)
        return
    try:  # the watchdog: whatever happens, it leaves through os._exit, running none of the worker's cleanup
        low, high = sorted((manager_pidfd, worker_pidfd))
        os.closerange(3, low)  # the worker's pipes and semaphores: their ends close when the worker's do
        os.closerange(low + 1, high)
        os.closerange(high + 1, os.sysconf("SC_OPEN_MAX"))
        select.select([manager_pidfd, worker_pidfd], [], [])
        if select.select([manager_pidfd], [], [], 0)[0]:  # the manager is gone (the worker may be too)
            if not select.select([worker_pidfd], [], [], grace)[0]:  # the worker did not end in its grace
                signal.pidfd_send_signal(worker_pidfd, signal.SIGKILL)
            if leftover is not None:
                select.select([worker_pidfd], [], [])  # ended: it uses the folder no more
                remove_leftover(leftover)
    finally:
        os._exit(0)


def remove_leftover(folder: str) -> None:
    """Remove a killed manager's multiprocessing folder (``pymp-*``); every watchdog of its workers tries."""
    if not os.path.basename(folder).startswith("pymp-"):  # multiprocessing's own folders only
        return
    try:
        shutil.rmtree(folder)
    except FileNotFoundError:  # another watchdog removed it first
        return
    except OSError as error:  # nobody is left to raise it to
        os.write(2, f"ding-env worker watchdog: cannot remove {folder} its killed manager left: {error}\n".encode())
