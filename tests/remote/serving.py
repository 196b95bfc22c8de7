"""Env servers for the remote tests: real `ding-env serve` processes on loopback, and process checks."""

import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

from tests.support import process_running

CARTPOLE = "configs/cartpole.py"


def free_port():
    """A loopback port no socket holds now (for a server that must come back on the same address)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(target, envs, *extra, bind="tcp://127.0.0.1:*", startup=None):
    """A `ding-env serve` process on loopback; yields ``(address, process)``, then stops it with Ctrl-C.

    The lines it prints up to "ready" are appended to the list ``startup``, when one is given.
    """
    command = [sys.executable, "-m", "ding_env", "serve", target, "--envs", str(envs), "--bind", bind]
    # SIGINT as a terminal delivers it: a test run started in the background inherits SIGINT ignored.
    server = subprocess.Popen(
        [*command, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        address = None
        for line in server.stdout:
            if startup is not None:
                startup.append(line.rstrip("\n"))
            if " at tcp://" in line or " at ipc://" in line:
                address = line.rsplit(" at ", 1)[1].strip()
            if "ready" in line:
                break
        assert address is not None, server.stderr.read()
        yield address, server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        finally:
            server.kill()


def mapped_segments(pids):
    """The /dev/shm segments processes ``pids`` have mapped (other jobs on the machine make their own)."""
    segments = set()
    for pid in pids:
        with open(f"/proc/{pid}/maps") as maps:
            segments |= {line.split()[-1] for line in maps if "/dev/shm/" in line}
    return segments


def child_pids(pid):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return {int(line) for line in out.split()}


def assert_ended(pids, within=10.0):
    deadline = time.monotonic() + within
    while any(process_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(process_running(pid) for pid in pids)
