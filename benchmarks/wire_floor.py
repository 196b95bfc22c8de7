"""The wire's own round trip: raw pyzmq DEALER/ROUTER with the remote step's payload sizes, no ding-env code.

The remote manager's client is a DEALER and ``ding-env serve`` a ROUTER (ding_env/remote/client.py and
server.py); a batched step sends one request per server (a header frame and the actions) and reads one
reply (a header frame and the stacked observations, rewards and flags). ``round_trip_us`` times exactly
that traffic against echo processes that answer every request with a reply of the given size at once,
so every remote figure can be read against the wire it rides on.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np

# A header frame of the size the remote step's headers have (sequence number, kind, array specs).
HEADER_BYTES = 160


@dataclass(frozen=True)
class StepPayload:
    """Bytes one server's step request and reply carry for ``env_num`` envs of the given spaces."""

    request_bytes: int
    reply_bytes: int

    @classmethod
    def of(cls, observation_space: gym.Space, action_space: gym.Space, env_num: int) -> StepPayload:
        """The payload of a step of ``env_num`` envs: actions out; observations, float32 rewards, 2 flags back."""
        obs = int(np.prod(observation_space.shape)) * np.dtype(observation_space.dtype).itemsize
        action = max(1, int(np.prod(action_space.shape or (1,)))) * np.dtype(action_space.dtype).itemsize
        return cls(request_bytes=env_num * action, reply_bytes=env_num * (obs + 4 + 2))


def echo_server(reply_bytes: int) -> None:
    """Serve on a free loopback port (printed on stdout), answering every request with ``reply_bytes``."""
    import zmq

    socket = zmq.Context.instance().socket(zmq.ROUTER)
    port = socket.bind_to_random_port("tcp://127.0.0.1")
    print(f"tcp://127.0.0.1:{port}", flush=True)
    header, body = bytes(HEADER_BYTES), bytes(reply_bytes)
    while True:
        frames = socket.recv_multipart(copy=False)
        if frames[-1].bytes == b"stop":
            return
        socket.send_multipart([frames[0], header, body], copy=False)


def round_trip_us(payloads: list[StepPayload], seconds: float) -> float:
    """Median microseconds of one request to every echo server (one per payload) and all their replies."""
    import zmq

    servers = []
    sockets = []
    try:
        for payload in payloads:
            command = [sys.executable, str(Path(__file__).resolve()), "--echo", str(payload.reply_bytes)]
            server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            servers.append(server)
            socket = zmq.Context.instance().socket(zmq.DEALER)
            socket.connect(server.stdout.readline().strip())
            sockets.append((socket, bytes(payload.request_bytes)))
        header = bytes(HEADER_BYTES)
        times = []
        start = time.perf_counter()
        while time.perf_counter() - start < seconds or len(times) < 100:
            began = time.perf_counter()
            for socket, request in sockets:
                socket.send_multipart([header, request], copy=False)
            for socket, _ in sockets:
                socket.recv_multipart(copy=False)
            times.append(time.perf_counter() - began)
        return float(np.median(times[len(times) // 10 :]) * 1e6)  # the first tenth warms up
    finally:
        for socket, _ in sockets:
            socket.send_multipart([bytes(HEADER_BYTES), b"stop"])
            socket.close(linger=1000)
        for server in servers:
            server.wait(timeout=10)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--echo":
        echo_server(int(sys.argv[2]))
    else:
        sys.exit("usage: wire_floor.py --echo REPLY_BYTES (started by round_trip_us)")
