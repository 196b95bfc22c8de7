"""ManagerWatch: a worker knows whether its manager lives (the end-to-end cases kill real managers in test_faults)."""

import errno
import os
import subprocess
import threading

from ding_env.env_manager.backends.manager_watch import ManagerWatch


def watcher_threads():
    return [thread for thread in threading.enumerate() if thread.name == "manager-watch"]


def test_a_manager_gone_before_the_worker_started_is_not_alive():
    ended = subprocess.Popen(["true"])
    ended.wait()  # reaped: its pid names no process now
    watch = ManagerWatch(ended.pid, grace=1.0)
    assert not watch.alive() and watch.pidfd is None and not watcher_threads()


def test_without_pidfds_the_os_parent_stands_in(monkeypatch):
    def no_pidfd(pid):
        raise OSError(errno.ENOSYS, "pidfd_open is not available")

    monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    # The manager's pid need not be the parent's (with 'forkserver' it is not): the parent at start is watched.
    watch = ManagerWatch(os.getpid(), grace=1.0)
    assert watch.alive() and watch.parent_pid == os.getppid() and not watcher_threads()
