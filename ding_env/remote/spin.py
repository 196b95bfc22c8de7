"""Waiting for a message by polling for a short while before blocking, while that pays.

A thread blocked in ``poll`` is woken by the kernel when a message comes, which on a loaded or
virtual machine costs tens of microseconds per message (benchmarks/RESULTS.md, "Remote"). When
the next message is likely close (a reply to a request just sent, the next request of a client
that just got its reply), polling without blocking for a bounded time avoids that wake-up; each
poll yields the core, so the threads that carry the message can run.

When messages take longer than the polling (a reply from heavy envs), polling only takes a core
from the processes doing the work: a :class:`Spinner` then stops polling after a few misses in a
row, and tries again now and then.
"""

from __future__ import annotations

import os
import time
from typing import Any

import zmq

# How long a side polls before it blocks: a reply on loopback or a LAN comes well within it.
SPIN_SECONDS = 0.001
# Waits in a row with nothing arriving while polling, after which a Spinner blocks at once...
MISSES_BEFORE_BLOCKING = 3
# ...polling again on every this many-th wait, to notice when messages come quickly again.
RETRY_EVERY = 16
# Gives the core to another runnable thread (sched_yield is POSIX-only; sleep(0) yields elsewhere).
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def arrived_while_spinning(socket: Any, seconds: float = SPIN_SECONDS) -> bool:
    """Whether a message waits on ``socket`` within ``seconds`` of polling without blocking."""
    if seconds <= 0:
        return False
    deadline = time.perf_counter() + seconds
    while True:
        if socket.poll(0, zmq.POLLIN):
            return True
        if time.perf_counter() >= deadline:
            return False
        _yield()


class Spinner:
    """Polls a socket before blocking while messages keep arriving within the polling time.

    Args:
        seconds: How long to poll before giving up.
    """

    def __init__(self, seconds: float = SPIN_SECONDS) -> None:
        self.seconds = seconds
        self.misses = 0  # waits in a row that polled the full time for nothing
        self.skipped = 0  # waits that blocked at once since the last poll

    def arrived(self, socket: Any, limit: float | None = None) -> bool:
        """Whether a message waits on ``socket`` after polling (for at most ``limit`` seconds); False: block."""
        seconds = self.seconds if limit is None else min(limit, self.seconds)
        if seconds <= 0:
            return False
        if self.misses >= MISSES_BEFORE_BLOCKING:
            self.skipped += 1
            if self.skipped < RETRY_EVERY:
                return False
            self.skipped = 0
        if arrived_while_spinning(socket, seconds):
            self.misses = 0
            return True
        if seconds >= self.seconds:  # a poll cut short by a caller's limit says nothing about the messages
            self.misses += 1
        return False
