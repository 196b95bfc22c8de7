"""What differs between the ways a worker process starts ('fork', 'spawn', 'forkserver')."""

from __future__ import annotations

import gc
import multiprocessing as mp
import re
import signal
import sys
from multiprocessing import forkserver, resource_tracker
from pathlib import Path


def start_worker(process: mp.process.BaseProcess, context: str) -> None:
    """Start ``process``, a worker of the ``context`` start method."""
    if context == "fork":
        start_forked(process)
    else:
        process.start()


def start_forked(process: mp.process.BaseProcess) -> None:
    """Fork ``process`` with the objects it inherits kept out of its garbage collector.

    A forked worker shares the manager's heap. Collecting in the worker would run the finalizers of the
    manager's garbage a second time there (a buffered file flushed twice, a connection closed under the
    manager) and traverse extension objects that are not safe to touch after a fork. Freezing the heap for
    the fork, as CPython's ``gc.freeze`` docs advise, leaves the worker's collector its own objects only.
    A caller that froze objects itself keeps its frozen set as it was.
    """
    if gc.get_freeze_count():
        process.start()
        return
    gc.freeze()
    try:
        process.start()
    finally:
        gc.unfreeze()


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker, if it is not running, with hangups blocked.

    A closed terminal or SSH session sends SIGHUP to the whole process group: the tracker died of it while
    the manager (``ding-env run``) was closing, and its unlinks of shared memory reached a new tracker that
    did not know the segments and printed a traceback. SIGTERM and SIGINT it ignores by itself.
    """
    hangup = getattr(signal, "SIGHUP", None)
    if hangup is None:
        resource_tracker.ensure_running()
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {hangup})  # the tracker inherits the blocked mask
    try:
        resource_tracker.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def leftover_socket(context: str) -> str | None:
    """The fork server's socket file of this process, which its death would leave behind (None: none).

    Only with 'forkserver', in a process no multiprocessing process started (a child's multiprocessing
    folder may be its parent's): only this process's exit removes the file and its folder. The fork
    server is started here if it was not.
    """
    if context != "forkserver" or mp.parent_process() is not None:
        return None
    forkserver.ensure_running()
    # Where the fork server listens: multiprocessing keeps it on its module-level server, with no public name.
    return getattr(getattr(forkserver, "_forkserver", None), "_forkserver_address", None)


def main_guard_hint(context: str) -> str:
    """What a worker that died as it started (exit code 1) likely means, to end its error with ('': nothing).

    A worker that is not forked imports the main script again as it starts: a script that builds managers
    outside ``if __name__ == '__main__':`` makes the worker start workers of its own while it boots, which
    multiprocessing refuses.
    """
    if context == "fork" or not unguarded_main():
        return ""
    return (
        f"; likely because the script {sys.argv[0]!r} builds envs outside `if __name__ == '__main__':`, which "
        f"each {context!r} worker runs again as it starts (its traceback is on stderr): put the script's work under "
        "that guard"
    )


def unguarded_main() -> bool:
    """Whether the main script is a file whose source has no ``if __name__ == '__main__':`` guard."""
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    if not path:
        return False
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return not re.search(r"__name__\s*==\s*['\"]__main__['\"]", source)
