"""``ManagerWatch``: a worker's view of whether the manager process that started it is alive.

A worker must not outlive its manager, even when the manager is killed (SIGKILL, OOM) and
cannot close it. Idle workers ask :meth:`ManagerWatch.alive` between commands and shut down
cleanly (closing their envs). A worker whose env hangs never asks, so a watcher thread ends
the process when the manager has been gone for ``grace`` seconds.

The manager is watched through a pidfd (Linux 5.3+), which stays bound to that process even if
its pid is reused. The OS parent is not a reliable stand-in: with the 'forkserver' context the
parent is the fork server, which lives on as long as any of its children does.
"""

from __future__ import annotations

import os
import select
import threading


class ManagerWatch:
    """Watches the manager process ``manager_pid``.

    Args:
        manager_pid: The manager's process id (the worker's OS parent for 'fork' and 'spawn').
        grace: Seconds a worker may take to shut down on its own once the manager is gone.
    """

    def __init__(self, manager_pid: int, grace: float) -> None:
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
        threading.Thread(target=self._end_after_manager, args=(grace,), name="manager-watch", daemon=True).start()

    def alive(self) -> bool:
        """Whether the manager process still runs."""
        if self.gone:
            return False
        if self.pidfd is None:
            return os.getppid() == self.parent_pid
        return not select.select([self.pidfd], [], [], 0)[0]

    def _end_after_manager(self, grace: float) -> None:
        select.select([self.pidfd], [], [])  # readable once the manager has exited
        select.select([], [], [], grace)  # time for an idle worker to close its envs
        os._exit(1)
