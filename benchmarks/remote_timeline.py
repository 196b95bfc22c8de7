"""Where a remote step goes: timestamps in the client and inside the server.

Starts ``ding-env serve`` on 127.0.0.1 in a process that timestamps each request it handles (the request
read and checked, the envs stepped, the reply encoded and sent), steps the ``'remote'`` manager over it with
the batched API, timestamping each request sent and each reply taken in, and prints the median of each phase
of a batch. ``time.perf_counter`` is system-wide on Linux, so the client's and the server's timestamps
compare. The raw pyzmq round trip of the same payload (``wire_floor.py``) is timed in the same run, and the
in-process base manager's step of the same envs, which the server's "envs stepped" phase runs::

    PYTHONPATH=$PWD python benchmarks/remote_timeline.py --batches 5000
    PYTHONPATH=$PWD python benchmarks/remote_timeline.py --workers 2   # the server's envs in 2 worker processes
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import statistics
import sys
import tempfile
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


def timeline(target: str, env_num: int, workers: int, batches: int) -> dict[str, float]:
    """The median microseconds of each phase over ``batches`` steps of ``env_num`` envs on one server."""
    from ding_env.remote import client

    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "server.json")
        extra = ("--workers", str(workers)) if workers else ()
        server, address = serve(target, env_num, extra, launcher=(sys.executable, __file__, "--timed-server", out))
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
        try:
            fns = env_fns_for(*resolve_target(target), env_num)
            with create_env_manager({"type": "remote", "servers": [address]}, fns) as manager:
                manager.seed(0)
                manager.launch()
                actions = action_rows(manager.action_space, 256, env_num)
                starts, ends = [], []
                for index in range(WARMUP + batches):
                    if index == WARMUP:
                        sent.clear()
                        received.clear()
                        window = time.perf_counter()
                    starts.append(time.perf_counter())
                    ready = manager.ready_obs_batch
                    manager.step_batch(ready.env_id, actions[index % 256])
                    ends.append(time.perf_counter())
        finally:
            client.ServerConnection.send, client.ServerConnection.receive = send, receive
            stop_server(server)  # it writes its timestamps as it exits
        marks = [mark for mark in json.loads(Path(out).read_text()) if mark[0] >= window and len(mark) == 4]
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


def positive_int(text: str) -> int:
    """An argparse type: an int >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def main() -> None:
    """Print the phases of a remote step, the wire's round trip and the base manager's step of the same envs."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="gym:CartPole-v1")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--workers", type=int, default=0, help="serve with --workers N (default: the server's process)")
    parser.add_argument("--batches", type=positive_int, default=5000, help="timed batches (default 5000)")
    parser.add_argument("--seconds", type=float, default=2.0, help="for the raw round trip and the base manager")
    args = parser.parse_args()
    phases = timeline(args.target, args.envs, args.workers, args.batches)
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
