"""The remote manager over loopback against the local sync manager, in one sitting.

Starts ``ding-env serve`` processes on 127.0.0.1, then times the batched step of the local
``SyncSubprocessEnvManager``, of the ``'remote'`` manager over those servers and of the wire alone
(a raw pyzmq round trip with the same sockets and payload sizes, see wire_floor.py) in alternating
rounds (so drift on a shared machine hits all alike), and prints the median microseconds per
batch, steps per second, the ratio, and what the remote path adds over the local manager in units of
the wire's round trip::

    python benchmarks/remote.py                        # the CartPole x8 rows: 1 server of 8, 2 servers of 4
    python benchmarks/remote.py --only pong --rounds 3 # ALE Pong x4 over 1 server (the atari extra)

Rows ending in ``-workers`` serve with ``--workers 2``, the others in the server process (the default);
``-async-half`` rows use the ``'async_remote'`` manager returning half the envs per step.
"""

from __future__ import annotations

import argparse
import copy
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from wire_floor import StepPayload, round_trip_us

from ding_env import create_env_manager
from ding_env.checker.target import resolve_target
from ding_env.remote.served_envs import env_fns_for

# name -> (ding-env serve target, env count, servers' env counts, extra `serve` arguments, remote manager config)
SYNC = {"type": "remote"}
# Returns half the envs per step: each server steps its next half while the caller handles the last.
ASYNC_HALF = {"type": "async_remote", "wait_num": 0.5}
WORKERS = ("--workers", "2")  # the envs in worker processes instead of the server's own (the default)
WORKLOADS = {
    "cartpole-1x8": ("gym:CartPole-v1", 8, (8,), (), SYNC),
    "cartpole-1x8-workers": ("gym:CartPole-v1", 8, (8,), WORKERS, SYNC),
    "cartpole-2x4": ("gym:CartPole-v1", 8, (4, 4), (), SYNC),
    "cartpole-2x4-workers": ("gym:CartPole-v1", 8, (4, 4), WORKERS, SYNC),
    "cartpole-1x8-async-half": ("gym:CartPole-v1", 8, (8,), (), ASYNC_HALF),
    "pong-1x4": ("gym:ALE/Pong-v5", 4, (4,), (), SYNC),
    "pong-1x4-workers": ("gym:ALE/Pong-v5", 4, (4,), WORKERS, SYNC),
    "pong-1x4-async-half": ("gym:ALE/Pong-v5", 4, (4,), (), ASYNC_HALF),
    "pong-1x4-workers-async-half": ("gym:ALE/Pong-v5", 4, (4,), WORKERS, ASYNC_HALF),
    "zero-cost-2x4": (str(Path(__file__).resolve().parent / "zero_cost_env.py"), 8, (4, 4), (), SYNC),
}


def serve(
    target: str,
    envs: int,
    extra: tuple,
    launcher: tuple = (sys.executable, "-m", "ding_env"),
    start_timeout: float = 60.0,
) -> tuple[subprocess.Popen, str]:
    """A `ding-env serve` process on a free loopback port, and its address.

    ``launcher`` is the command that takes ``serve ...`` (remote_timeline.py gives its timed server).

    Raises:
        RuntimeError: When the server exits, or is not ready within ``start_timeout`` seconds (it is then
            killed), naming the command and its last lines.
    """
    command = [*launcher, "serve", target, "--envs", str(envs), *extra]
    # SIGINT as a terminal delivers it: a run started in the background inherits SIGINT ignored.
    server = subprocess.Popen(
        [*command, "--bind", "tcp://127.0.0.1:*"],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # The server's lines are read in a thread, so a server that hangs before it is ready fails the run at the
    # deadline instead of blocking it.
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_forward_lines, args=(server.stdout, lines), daemon=True).start()
    address, seen, deadline = None, [], time.monotonic() + start_timeout
    while True:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0))
        except queue.Empty:
            problem = f"was not ready within {start_timeout:g} s"
            break
        if line is None:
            problem = f"exited with code {server.wait()} before it was ready"
            break
        seen.append(line.rstrip())
        if " at tcp://" in line:
            address = line.rsplit(" at ", 1)[1].strip()
        if "ready" in line:
            return server, address
    try:
        stop_server(server)
    except RuntimeError as error:  # it ignored SIGINT too: say so after why it was stopped
        problem += f" ({error})"
    said = "; its last lines: " + " | ".join(seen[-5:]) if seen else "; it printed nothing on stdout"
    raise RuntimeError(f"`{' '.join(command)}` {problem}{said}")


def _forward_lines(stream: Any, lines: queue.Queue) -> None:
    """Put each line of ``stream`` on ``lines``, then None at its end."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def stop_server(server: subprocess.Popen, timeout: float = 30.0) -> None:
    """Stop a server started by ``serve`` as Ctrl-C does (it closes its envs); kill it after ``timeout`` seconds.

    Raises:
        RuntimeError: When the server had to be killed (it hung while closing).
    """
    if server.poll() is None:
        server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        raise RuntimeError(
            f"the server (pid {server.pid}) did not exit within {timeout:g} s of SIGINT: killed"
        ) from None


def stop_servers(servers: list[subprocess.Popen]) -> None:
    """``stop_server`` each of ``servers``, all of them whatever fails, then raise the first failure."""
    failures = []
    for server in servers:
        try:
            stop_server(server)
        except RuntimeError as error:
            failures.append(error)
    if failures:
        raise failures[0]


def action_rows(space: gym.spaces.Space, rows: int, envs: int, seed: int = 0) -> np.ndarray:
    """``rows`` stacked batches of ``envs`` random actions of ``space``, reproducible from ``seed``."""
    if isinstance(space, gym.spaces.Discrete):
        return np.random.default_rng(seed).integers(space.start, space.start + space.n, (rows, envs))
    space = copy.deepcopy(space)  # its own generator: the caller's space keeps its state
    space.seed(seed)
    return np.stack([np.stack([space.sample() for _ in range(envs)]) for _ in range(rows)])


def time_batches(cfg: dict, fns: list, seconds: float) -> float:
    """Mean microseconds per ``len(fns)`` env steps of a manager stepping its ready envs for ``seconds``.

    A manager that returns early steps fewer envs per call: its time is counted per env step too.
    """
    with create_env_manager(cfg, fns) as manager:
        manager.seed(0)
        manager.launch()
        actions = action_rows(manager.action_space, 256, manager.env_num)
        for index in range(20):  # warm up
            ready = manager.ready_obs_batch
            manager.step_batch(ready.env_id, actions[index][: len(ready.env_id)])
        steps, index, start = 0, 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            ready = manager.ready_obs_batch
            steps += len(manager.step_batch(ready.env_id, actions[index % 256][: len(ready.env_id)]).env_id)
            index += 1
        return (time.perf_counter() - start) / steps * len(fns) * 1e6


def payloads_for(fns: list, shares: tuple) -> list[StepPayload]:
    """The step payload of each server, from the spaces of the workload's env."""
    env = fns[0]()
    try:
        env.reset()
        return [StepPayload.of(env.observation_space, env.action_space, share) for share in shares]
    finally:
        env.close()


def main() -> None:
    """Time every workload asked for and print one row each."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="cartpole", help="workloads whose name contains this (default cartpole)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="per timing")
    args = parser.parse_args()
    for name, (target, env_num, shares, extra, manager) in WORKLOADS.items():
        if args.only not in name:
            continue
        fns = env_fns_for(*resolve_target(target), env_num)
        payloads = payloads_for(fns, shares)
        servers: list[tuple[subprocess.Popen, str]] = []
        try:
            for share in shares:  # one at a time: those started before a failing one are stopped below
                servers.append(serve(target, share, extra))
            remote_cfg = {**manager, "servers": [address for _, address in servers]}
            if "wait_num" in remote_cfg:
                remote_cfg["wait_num"] = int(env_num * remote_cfg["wait_num"])
            local, remote, wire = [], [], []
            for _ in range(args.rounds):
                local.append(time_batches({"type": "subprocess"}, fns, args.seconds))
                remote.append(time_batches(remote_cfg, fns, args.seconds))
                wire.append(round_trip_us(payloads, args.seconds))
        finally:
            stop_servers([server for server, _ in servers])
        local_us, remote_us, wire_us = statistics.median(local), statistics.median(remote), statistics.median(wire)
        print(
            f"{name:<24} local {local_us:8.0f} us/batch {env_num / local_us * 1e6:8.0f} steps/s | remote "
            f"{remote_us:8.0f} us/batch {env_num / remote_us * 1e6:8.0f} steps/s | remote/local speed "
            f"{local_us / remote_us:.2f} | overhead {remote_us - local_us:.0f} us/batch | wire round trip "
            f"{wire_us:.0f} us ({sum(p.reply_bytes for p in payloads)} B back) | overhead/wire "
            f"{(remote_us - local_us) / wire_us:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
