"""``ManagerWatch``: a worker's view of whether the manager process that started it is alive.

A worker must not outlive its manager, even when the manager is killed (SIGKILL, OOM) and
cannot close it. Idle workers ask :meth:`ManagerWatch.alive` between commands and shut down
cleanly (closing their envs). A worker whose env hangs never asks: a watchdog process, forked
by the worker as it starts, kills it once the manager has been gone for ``grace`` seconds. A
thread of the worker's could not: while an env is stuck in a C call that keeps the GIL (a
native simulator's), no other thread of the worker runs. A worker that ends while its manager
lives ends its watchdog (``close``); one the manager kills leaves it to end by itself, as an
orphan that the system's init process reaps.

With the 'forkserver' context the fork server's socket file is in the manager's multiprocessing
folder, which only the manager's exit removes: a manager that is killed leaves both, and the
watchdog removes them once the worker has ended (the folder only when nothing else is left in it).

The manager is watched through a pidfd (Linux 5.3+), which stays bound to that process even if
its pid is reused. The OS parent is not a reliable stand-in: with the 'forkserver' context the
parent is the fork server, which lives on as long as any of its children does.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import warnings


class ManagerWatch:
    """Watches the manager process ``manager_pid``.

    Args:
        manager_pid: The manager's process id (the worker's OS parent for 'fork' and 'spawn').
        grace: Seconds a worker may take to shut down on its own once the manager is gone.
        leftover: The fork server's socket file of the manager's, which a killed manager leaves behind
            (``start_methods.leftover_socket``; None: none).
    """

    def __init__(self, manager_pid: int, grace: float, leftover: str | None = None) -> None:
        self.manager_pid = manager_pid
        # Without pidfds, the OS parent at start stands in (the manager itself for 'fork' and 'spawn').
        self.parent_pid = os.getppid()
        self.pidfd: int | None = None
        self.gone = False
        self.watchdog: int | None = None  # the watchdog's pid
        try:
            self.pidfd = os.pidfd_open(manager_pid)
        except ProcessLookupError:
            self.gone = True  # the manager died before the worker started
            return
        except (AttributeError, OSError):
            return  # no pidfd here (an old kernel, or a sandbox): alive() watches the OS parent
        self.watchdog = start_watchdog(self.pidfd, grace, leftover)

    def alive(self) -> bool:
        """Whether the manager process still runs."""
        if self.gone:
            return False
        if self.pidfd is None:
            return os.getppid() == self.parent_pid
        return not readable(self.pidfd, 0)

    def close(self) -> None:
        """End and reap the watchdog while the manager lives (once it is gone, the watchdog has work left)."""
        if self.watchdog is None or not self.alive():
            return
        with contextlib.suppress(ProcessLookupError):  # it ended already (killed from outside)
            os.kill(self.watchdog, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):  # reaped already (an env's code waited for any child)
            os.waitpid(self.watchdog, 0)
        self.watchdog = None


def start_watchdog(manager_pidfd: int, grace: float, leftover: str | None = None) -> int | None:
    """Fork a process that kills this one (SIGKILL) once the manager has been gone for ``grace`` seconds.

    The watchdog holds no file of the worker's but the two pidfds it waits on, and ends as soon as the
    worker does, whichever way: it never outlives the worker either. Once the manager is gone and the
    worker has ended, it removes ``leftover`` (``remove_leftover``). Call it while this process has one
    Python thread (forking copies only the calling thread).

    Returns:
        The watchdog's pid, or None when there is no process to spare for it (a warning says so).
    """
    try:
        worker_pidfd = os.pidfd_open(os.getpid())
        try:
            with warnings.catch_warnings():  # Python 3.12 warns of forking with threads: a BLAS library's
                warnings.simplefilter("ignore", DeprecationWarning)
                watchdog = os.fork()
        except BaseException:
            os.close(worker_pidfd)
            raise
    except OSError as error:  # idle workers still notice the manager's end themselves
        warnings.warn(
            f"ding-env worker {os.getpid()}: no watchdog process ({error}): a worker whose env hangs "
            "will outlive a manager that is killed",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    if watchdog:
        os.close(worker_pidfd)
        return watchdog
    try:  # the watchdog: whatever happens, it leaves through os._exit, running none of the worker's cleanup
        gc.disable()  # the worker's garbage is not the watchdog's to finalize
        close_inherited(keep=(0, 1, 2, manager_pidfd, worker_pidfd))
        either = select.poll()
        either.register(manager_pidfd, select.POLLIN)
        either.register(worker_pidfd, select.POLLIN)
        either.poll()
        if readable(manager_pidfd, 0):  # the manager is gone (the worker may be too)
            if not readable(worker_pidfd, grace):  # the worker did not end in its grace
                with contextlib.suppress(ProcessLookupError):  # it ended just now
                    signal.pidfd_send_signal(worker_pidfd, signal.SIGKILL)
            if leftover is not None:
                readable(worker_pidfd, None)  # ended: it uses the fork server no more
                remove_leftover(leftover)
    except BaseException as error:  # noqa: BLE001 - nobody is left to raise it to: said on stderr
        os.write(2, f"ding-env worker watchdog {os.getpid()}: {type(error).__name__}: {error}\n".encode())
    finally:
        os._exit(0)


def readable(fd: int, timeout: float | None) -> bool:
    """Whether ``fd`` (a pidfd: its process ended) is readable within ``timeout`` seconds (None: wait for it).

    ``poll``, not ``select``: a worker forked from a manager with many files open may get a pidfd above 1023.
    """
    waiting = select.poll()
    waiting.register(fd, select.POLLIN)
    return bool(waiting.poll(None if timeout is None else timeout * 1000))


def close_inherited(keep: tuple[int, ...]) -> None:
    """Close every file descriptor of this process but ``keep`` (the worker's pipes, sockets and semaphores)."""
    for name in os.listdir("/proc/self/fd"):  # the open ones alone: the fd limit may be in the millions
        fd = int(name)
        if fd not in keep:
            # OSError: the listing's own descriptor, closed once read (close releases a descriptor whatever it says)
            with contextlib.suppress(OSError):
                os.close(fd)


def remove_leftover(socket_file: str) -> None:
    """Remove a killed manager's fork server socket file, then its folder (``pymp-*``) if nothing else is in it.

    Every watchdog of the manager's workers tries: the first one removes them.
    """
    folder = os.path.dirname(socket_file)
    if not os.path.basename(folder).startswith("pymp-"):  # multiprocessing's own folders only
        return
    for remove, path in ((os.unlink, socket_file), (os.rmdir, folder)):
        try:
            remove(path)
        except FileNotFoundError:  # another watchdog removed it first
            continue
        except OSError as error:  # a folder that holds more: another process's, kept
            if path == folder:
                return
            os.write(2, f"ding-env worker watchdog: cannot remove {path} its killed manager left: {error}\n".encode())
            return
