"""Ctrl-C held off across the few statements that hand a step to worker processes.

A KeyboardInterrupt between counting a worker's step and posting its command left the count one step ahead
of the worker, and the next reset waited for a step that never came. While a subprocess manager is
launched in the main thread and SIGINT has Python's default handler, ``SIGINT`` goes through
:func:`_on_sigint`: outside a held section it raises ``KeyboardInterrupt`` as the default handler does;
inside one it is noted, and raised as the section ends. Where the handler cannot be installed (another
thread, a handler of the user's) the sections are not held.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class _Hold:
    """How deeply the main thread is inside held sections, and whether a Ctrl-C came meanwhile."""

    depth = 0
    pending = False
    installed = 0  # launched managers that installed the handler


HOLD = _Hold()


def _on_sigint(signum: int, frame: Any) -> None:
    if HOLD.depth:
        HOLD.pending = True
        return
    raise KeyboardInterrupt


def install() -> bool:
    """Route SIGINT through the holding handler (main thread, default handler only); whether it did."""
    if threading.current_thread() is not threading.main_thread():
        return False
    current = signal.getsignal(signal.SIGINT)
    if current is not signal.default_int_handler and current is not _on_sigint:
        return False
    signal.signal(signal.SIGINT, _on_sigint)
    HOLD.installed += 1
    return True


def uninstall() -> None:
    """Undo one :func:`install`; the last one puts Python's default handler back, unless the user set another."""
    HOLD.installed -= 1
    if HOLD.installed == 0 and threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def held(action: Callable[..., T], *args: Any) -> T:
    """``action(*args)`` in a held section: a Ctrl-C meanwhile is raised when it returns.

    Only the main thread's sections are held, while a manager installed the handler: Python runs signal handlers
    there alone, and a section of another thread holding them would give that thread the main thread's Ctrl-C.
    """
    if not HOLD.installed or threading.get_ident() != _MAIN_THREAD:
        return action(*args)
    HOLD.depth += 1
    try:
        return action(*args)
    finally:
        HOLD.depth -= 1
        if HOLD.pending and not HOLD.depth:
            HOLD.pending = False
            raise KeyboardInterrupt


_MAIN_THREAD = threading.main_thread().ident
