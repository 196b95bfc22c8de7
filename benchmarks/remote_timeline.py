"""Where a remote step goes: timestamps in the client and inside the server.

Starts ``ding-env serve`` on 127.0.0.1 in a process that timestamps each request it handles (the request
read and checked, the envs stepped, the reply encoded and sent), steps the ``'remote'`` manager over it with
the batched API, timestamping each request sent and each reply taken in, and prints the median of each phase
of a batch. ``time.perf_counter`` is system-wide on Linux, so the client's and the server's timestamps
compare. The raw pyzmq round trip of the same payload (``wire_floor.py``) is timed in the same run, and the
in-process base manager's step of the same envs, which the server's "envs stepped" phase runs. A server that
does not start, answer a batch or stop within ``--timeout`` seconds is stopped, and the run fails naming what
it waited for and the end of the server's stderr::

    PYTHONPATH=$PWD python benchmarks/remote_timeline.py --batches 5000
    PYTHONPATH=$PWD python benchmarks/remote_timeline.py --workers 2   # the server's envs in 2 worker processes
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from remote import action_rows, payloads_for, serve, stop_server, time_batches  # noqa: E402
from wire_floor import round_trip_us  # noqa: E402

from ding_env import create_env_manager  # noqa: E402
from ding_env.checker.target import resolve_target  # noqa: E402
from ding_env.remote.served_envs import env_fns_for  # noqa: E402

PHASES = (
    "batch (client)",
    "client before the request is sent",
    "request sent -> server starts reading it",
    "server reads and checks the request",
    "server steps its envs",
    "server encodes and sends the reply",
    "reply sent -> client has it decoded",
    "client after the reply",
)
WARMUP = 200
DEFAULT_TIMEOUT = 60.0  # seconds of each wait on the server: its start, each batch, its stop


def timed_server(out: str) -> None:
    """``ding-env serve`` (its arguments after ``--timed-server OUT``), writing each request's timestamps to OUT."""
    from ding_env.cli import main
    from ding_env.remote import served_envs, server

    marks: list[tuple[float, ...]] = []
    step_marks: list[float] = []
    handle_one, step = server.EnvServer.handle_one, served_envs.ServedEnvs.step

    def timed_handle_one(self: server.EnvServer) -> None:
        start = time.perf_counter()
        step_marks.clear()
        handle_one(self)
        marks.append((start, *step_marks, time.perf_counter()))

    def timed_step(self: served_envs.ServedEnvs, *args: object, **kwargs: object) -> dict:
        step_marks.append(time.perf_counter())
        try:
            return step(self, *args, **kwargs)
        finally:
            step_marks.append(time.perf_counter())

    server.EnvServer.handle_one, served_envs.ServedEnvs.step = timed_handle_one, timed_step
    atexit.register(lambda: Path(out).write_text(json.dumps(marks)))
    sys.argv = ["ding-env", *sys.argv[3:]]
    sys.exit(main())


class Watchdog:
    """Stops the server when the client waits longer than ``timeout`` seconds for one stage of the run.

    The manager waits for a step's reply without a limit (the run sets no ``step_timeout``: the server would
    then time every env call, which the timeline measures), and a server that hangs inside a step still
    answers the connection's heartbeats. Stopping it ends the connection, so the manager's wait raises.
    """

    def __init__(self, server: subprocess.Popen, timeout: float) -> None:
        self.server, self.timeout = server, timeout
        self.expired: str | None = None  # what the run waited for when the server was stopped
        self._stage = ("the run's first request", time.monotonic())
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def expect(self, what: str) -> None:
        """Start the clock on ``what``: the run waits for it next."""
        self._stage = (what, time.monotonic())  # one assignment: the watching thread reads a consistent pair

    @property
    def waiting_for(self) -> str:
        """What the run waits for now."""
        return self._stage[0]

    def close(self) -> None:
        """Stop watching; returns once a stop begun by the watchdog has ended."""
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while True:
            stage = self._stage
            if self._done.wait(max(stage[1] + self.timeout - time.monotonic(), 0.0)):
                return
            if self._stage is stage:  # no progress since
                self.expired = f"{stage[0]} did not arrive within {self.timeout:g} s: the server was stopped"
                try:
                    stop_server(self.server, self.timeout)
                except RuntimeError as error:
                    self.expired += f" ({error})"
                return


def timeline(
    target: str, env_num: int, workers: int, batches: int, timeout: float = DEFAULT_TIMEOUT
) -> dict[str, float]:
    """The median microseconds of each phase over ``batches`` steps of ``env_num`` envs on one server.

    Every wait on the server (its start, each batch, its stop) lasts at most ``timeout`` seconds; the server is
    stopped and reaped whatever happens.

    Raises:
        RuntimeError: When the server fails or a wait on it runs out, naming what was waited for and the end
            of the server's stderr.
    """
    from ding_env.remote import client

    if batches < 1:
        raise ValueError(f"batches must be >= 1, got {batches}")
    with tempfile.TemporaryDirectory() as folder:
        out, errors = os.path.join(folder, "server.json"), os.path.join(folder, "server.err")
        extra = ("--workers", str(workers)) if workers else ()
        # The server's stderr goes to a file from its first line (import errors too), so a failure can quote it;
        # `exec` keeps the server's pid, which serve() signals.
        launcher = ("/bin/sh", "-c", 'exec "$@" 2>"$0"', errors, sys.executable, __file__, "--timed-server", out)
        try:
            server, address = serve(target, env_num, extra, launcher=launcher, start_timeout=timeout)
        except RuntimeError as error:  # serve() has stopped and reaped it
            raise RuntimeError(f"{error}{stderr_tail(errors)}") from None
        sent: list[float] = []
        received: list[float] = []
        send, receive = client.ServerConnection.send, client.ServerConnection.receive

        def timed_send(self: client.ServerConnection, *args: object, **kwargs: object) -> tuple[int, str]:
            sent.append(time.perf_counter())
            return send(self, *args, **kwargs)

        def timed_receive(self: client.ServerConnection, *args: object, **kwargs: object) -> dict:
            reply = receive(self, *args, **kwargs)
            received.append(time.perf_counter())
            return reply

        client.ServerConnection.send, client.ServerConnection.receive = timed_send, timed_receive
        watchdog = Watchdog(server, timeout)
        failure: Exception | None = None
        try:
            starts, ends, window = step_batches(target, env_num, address, batches, (sent, received), watchdog)
        except Exception as error:  # noqa: BLE001 - raised below, once the server has stopped
            failure = error
        finally:
            client.ServerConnection.send, client.ServerConnection.receive = send, receive
            watchdog.close()
            exited = server.poll()  # None unless the server ended by itself
            try:
                stop_server(server, timeout)  # it writes its timestamps as it exits
            except RuntimeError as error:
                failure = failure or error
        if failure is not None:
            what = watchdog.expired or f"{failure}, while waiting for {watchdog.waiting_for}"
            if exited is not None and not watchdog.expired:
                what += f"; the server had exited with code {exited}"
            raise RuntimeError(f"{what}{stderr_tail(errors)}") from failure
        said = Path(errors).read_text(errors="replace") if os.path.exists(errors) else ""
        sys.stderr.write(said)  # the server's warnings, as if it had written them here
        try:
            marks = json.loads(Path(out).read_text())
        except (OSError, ValueError) as error:
            raise RuntimeError(
                f"the server's timestamps (written as it exits) did not arrive: it exited with code "
                f"{server.returncode} ({error}){stderr_tail(errors)}"
            ) from None
        marks = [mark for mark in marks if mark[0] >= window and len(mark) == 4]
    starts, ends = starts[WARMUP:], ends[WARMUP:]
    sent, received = sent[:batches], received[:batches]  # then the manager's close request
    if not len(marks) == len(sent) == len(received) == batches:
        raise RuntimeError(f"expected one request per batch, got {len(marks)} handled, {len(sent)} sent")
    phases = zip(starts, sent, marks, received, ends, strict=True)
    rows = [
        (end - start, send - start, begin - send, step - begin, stepped - step, done - stepped, got - done, end - got)
        for start, send, (begin, step, stepped, done), got, end in phases
    ]
    return {name: statistics.median(column) * 1e6 for name, column in zip(PHASES, zip(*rows, strict=True), strict=True)}


def step_batches(
    target: str,
    env_num: int,
    address: str,
    batches: int,
    timestamps: tuple[list[float], list[float]],
    watchdog: Watchdog,
) -> tuple[list[float], list[float], float]:
    """Each batch's start and end over the server at ``address``, and when the timed batches began.

    ``timestamps`` (the requests sent and the replies taken in) are cleared once the warm-up is over.
    """
    fns = env_fns_for(*resolve_target(target), env_num)
    watchdog.expect("the manager's launch (the server's handshake and first reset)")
    with create_env_manager({"type": "remote", "servers": [address]}, fns) as manager:
        manager.seed(0)
        manager.launch()
        actions = action_rows(manager.action_space, 256, env_num)
        starts, ends = [], []
        for index in range(WARMUP + batches):
            if index == WARMUP:
                for marks in timestamps:
                    marks.clear()
                window = time.perf_counter()
            watchdog.expect(f"the reply to batch {index + 1} of {WARMUP + batches} ({WARMUP} of them warm-up)")
            starts.append(time.perf_counter())
            ready = manager.ready_obs_batch
            manager.step_batch(ready.env_id, actions[index % 256])
            ends.append(time.perf_counter())
        watchdog.expect("the reply to the manager's close")
    return starts, ends, window


def stderr_tail(path: str, lines: int = 20) -> str:
    """The last ``lines`` lines of the server's stderr (written to ``path``), to end an error message with."""
    try:
        tail = [line for line in Path(path).read_text(errors="replace").splitlines() if line.strip()][-lines:]
    except OSError:
        tail = []
    if not tail:
        return "; the server wrote nothing to its stderr"
    return "\nthe end of the server's stderr:\n" + "\n".join(f"    {line}" for line in tail)


def positive_int(text: str) -> int:
    """An argparse type: an int >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: an int >= 0."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a float > 0."""
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def main() -> None:
    """Print the phases of a remote step, the wire's round trip and the base manager's step of the same envs."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="gym:CartPole-v1")
    parser.add_argument("--envs", type=positive_int, default=8)
    parser.add_argument(
        "--workers", type=non_negative_int, default=0, help="serve with --workers N (default: the server's process)"
    )
    parser.add_argument("--batches", type=positive_int, default=5000, help="timed batches (default 5000)")
    parser.add_argument(
        "--seconds", type=positive_float, default=2.0, help="for the raw round trip and the base manager"
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for the server to start, answer each batch and stop (default {DEFAULT_TIMEOUT:g})",
    )
    args = parser.parse_args()
    phases = timeline(args.target, args.envs, args.workers, args.batches, args.timeout)
    fns = env_fns_for(*resolve_target(args.target), args.envs)
    wire = round_trip_us(payloads_for(fns, (args.envs,)), args.seconds)
    base = time_batches({"type": "base"}, fns, args.seconds)
    print(f"{args.target} x{args.envs}, 1 server{f' with {args.workers} workers' if args.workers else ''}:")
    for name, micros in phases.items():
        print(f"  {name:<44} {micros:7.1f} us")
    print(f"  {'raw pyzmq round trip, same payload':<44} {wire:7.1f} us")
    print(f"  {'base manager step of the same envs':<44} {base:7.1f} us")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--timed-server":
        timed_server(sys.argv[2])
    else:
        main()
