"""The remote step's wire format alone: its four functions timed in one process, no sockets.

Builds the envs a ``ding-env serve`` would host (in this process, as ``--workers 0`` does), launches,
resets and steps them once to get a real step reply, then times, best of ``--repeats`` runs of
``--calls`` calls each, what each side does to a step's messages: the client encoding the request
(``request_frames``), the server reading and checking it (``read_request``), the server encoding the
reply (``reply_frames``) and the client reading and checking the reply (``read_reply``, and the
connection's filling in of what the reply leaves to the request, where the tree has it). Run it once
per tree, alternating, to compare two trees::

    PYTHONPATH=$PWD python benchmarks/remote_wire.py                        # CartPole x8
    PYTHONPATH=$PWD python benchmarks/remote_wire.py --envs 4 --calls 2000  # CartPole x4
    PYTHONPATH=$PWD python benchmarks/remote_wire.py --done                 # a step where env 0's episode ends
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from remote import action_rows

from ding_env.checker.target import resolve_target
from ding_env.remote import messages
from ding_env.remote.served_envs import ServedEnvs, env_fns_for

try:  # trees whose step replies leave the rows' ids and flags to the request (protocol 9)
    from ding_env.remote.step_wire import step_rows
except ImportError:
    step_rows = None


def step_messages(target: str, envs: int, done: bool) -> tuple[dict, dict]:
    """A step request's body (random actions) and the server's result for it, from envs stepped in this process.

    With ``done``, env 0 is stepped until its episode ends, and that step's result is the one returned.
    """
    served = ServedEnvs(env_fns_for(*resolve_target(target), envs), {"num_workers": 0})
    action_space = served.launch({})["spaces"][1]
    for env_id in range(envs):
        served.seed(env_id, env_id, True)
    served.reset(list(range(envs)))
    body = {
        "env_ids": np.arange(envs, dtype=np.int64),
        "actions": action_rows(action_space, 1, envs)[0],
        "reset_on_done": np.ones(envs, dtype=bool),
    }
    try:
        for _ in range(10_000):
            result = {**served.step(**body), "lost": served.take_lost()}
            if not done or result["done"][0]:
                return body, result
        raise RuntimeError(f"env 0 of {target} did not end an episode within 10,000 steps")
    finally:
        served.close()


def best_us(call: Any, calls: int, repeats: int) -> float:
    """The best of ``repeats`` runs of ``calls`` calls, in microseconds per call."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, time.perf_counter() - start)
    return best / calls * 1e6


def read_step_reply(frames: list, body: dict) -> dict:
    """The client's reading of a step reply, with the rows the reply leaves to its request filled in."""
    _, reply, _ = messages.read_reply(frames)
    return reply if step_rows is None else step_rows(reply, body["env_ids"], body["reset_on_done"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="gym:CartPole-v1")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--done", action="store_true", help="time a step where env 0's episode ends")
    args = parser.parse_args()
    body, result = step_messages(args.target, args.envs, args.done)
    request = messages.request_frames("step", 1, body)
    reply = messages.reply_frames(1, result, request="step")
    sent = read_step_reply(reply, body)
    request_rows = {"env_id": body["env_ids"], "reset_on_done": body["reset_on_done"]}
    for name in ("env_id", "obs", "reward", "done", "truncated", "reset_on_done"):
        expected = result[name] if result[name] is not None else request_rows[name]  # left to the request
        assert np.array_equal(sent[name], expected) and sent[name].dtype == expected.dtype, name
    timed = {
        "client encodes the step request (request_frames)": lambda: messages.request_frames("step", 1, body),
        "server reads and checks it (read_request)": lambda: messages.read_request(request),
        "server encodes the reply (reply_frames)": lambda: messages.reply_frames(1, result, request="step"),
        "client reads and checks the reply (read_reply)": lambda: read_step_reply(reply, body),
    }
    total = 0.0
    print(
        f"{args.target} x{args.envs}: request {sum(map(len, request))} B in {len(request)} frames, "
        f"reply {sum(map(len, reply))} B in {len(reply)} frames; us per call, best of {args.repeats} x {args.calls}"
    )
    for name, call in timed.items():
        us = best_us(call, args.calls, args.repeats)
        total += us
        print(f"  {name:<52} {us:7.2f}")
    print(f"  {'the four together':<52} {total:7.2f}")


if __name__ == "__main__":
    main()
