"""A time limit on one env call in the calling process, for the serial managers' ``step_timeout`` / ``reset_timeout``.

The limit is a ``SIGALRM`` timer (``signal.setitimer``, float seconds) whose handler raises
``EnvTimeoutError`` inside the env's code. That works only where signals reach Python code: on
platforms with ``setitimer`` (not Windows), in the main thread (elsewhere the call runs without a
limit), and only between Python bytecodes, so a call stuck in C code that never returns to the
interpreter (a blocking C extension call holding the GIL) is cut only once it does. A timer already
armed by someone else (pytest-timeout, say) is kept: it is re-armed with its remaining time after the call.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ding_env.errors import EnvTimeoutError
from ding_env.ops import Op


def can_limit_time() -> bool:
    """True where a call in this thread can be cut: ``setitimer`` exists and this is the main thread."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None, env_id: int, command: Op) -> Iterator[None]:
    """Raise ``EnvTimeoutError([env_id], command, seconds)`` inside the block once ``seconds`` have passed.

    No limit when ``seconds`` is None or where :func:`can_limit_time` is False.
    """
    if seconds is None or not can_limit_time():
        yield
        return
    outer_remaining, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    if outer_remaining and outer_remaining <= seconds:
        yield  # an outer timer fires first and stays in charge
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise EnvTimeoutError([env_id], command, seconds)

    outer_handler = signal.signal(signal.SIGALRM, on_alarm)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_remaining:
            left = max(outer_remaining - (time.monotonic() - start), 1e-6)
            signal.setitimer(signal.ITIMER_REAL, left, outer_interval)
