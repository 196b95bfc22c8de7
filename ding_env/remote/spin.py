"""Waiting for a message by polling for a short while before blocking.

A thread blocked in ``poll`` is woken by the kernel when a message comes, which on a loaded or
virtual machine costs tens of microseconds per message (benchmarks/RESULTS.md, "Remote"). When
the next message is likely close (a reply to a request just sent, the next request of a client
that just got its reply), polling without blocking for a bounded time avoids that wake-up; each
poll yields the core, so the threads that carry the message can run.
"""

from __future__ import annotations

import os
import time
from typing import Any

import zmq

# How long a side polls before it blocks: a reply on loopback or a LAN comes well within it.
SPIN_SECONDS = 0.001
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
