"""The Ray managers on one local Ray instance, against the local sync manager and Ray peers, in one sitting.

Rows, timed in alternating rounds (so drift on a shared machine hits all alike), median of the rounds:

- ``local sync``: ``SyncSubprocessEnvManager`` over the same envs (the reference of the ratios);
- ``ray (zmq)``: the ``'ray'`` manager: Ray places the hosts, steps go over the env servers' ZeroMQ wire;
- ``ray calls``: the data plane the ``'ray'`` manager did not take: the same hosts (one actor per host, a
  ``BaseEnvManager`` of its share inside), each batched step one Ray actor call per host returning numpy
  batches (Ray's own serialization);
- ``one actor per env``: Tianshou's ``RayVectorEnv`` as it works (one actor per env, one ``step.remote``
  per env per step, ``ray.wait`` for all; done envs reset with one more call each), reimplemented here
  as a minimal faithful peer because tianshou cannot be installed beside this project's torch pin.

It also measures the constants of RESULTS.md's scaling model: the envs' own time per host batch (a
``BaseEnvManager`` of one host's share stepped in this process) and the wire's round trip (wire_floor.py)::

    python benchmarks/ray_cluster.py                 # CartPole x8 on 2 hosts of 4
    python benchmarks/ray_cluster.py --only pong     # ALE Pong x4 on 2 hosts of 2 (the atari extra)
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np
import ray
from wire_floor import StepPayload, round_trip_us

from ding_env import create_env_manager
from ding_env.checker.target import resolve_target
from ding_env.remote.served_envs import env_fns_for

# name -> (target, gym id for the peer, env count, hosts)
WORKLOADS = {
    "cartpole-2x4": ("gym:CartPole-v1", "CartPole-v1", 8, 2),
    "pong-2x2": ("gym:ALE/Pong-v5", "ALE/Pong-v5", 4, 2),
}


def time_manager(cfg: dict, fns: list, seconds: float) -> float:
    """Mean microseconds per batched step of a manager stepping random actions for ``seconds``."""
    with create_env_manager(cfg, fns) as manager:
        manager.seed(0)
        manager.launch()
        rng = np.random.default_rng(0)
        n = manager.action_space.n
        step = 0
        batches, start = 0, None
        while start is None or time.perf_counter() - start < seconds:
            ready = manager.ready_obs_batch
            manager.step_batch(ready.env_id, rng.integers(0, n, len(ready.env_id)))
            step += 1
            if step == 20:  # warmed up
                batches, start = 0, time.perf_counter()
            batches += 1
        return (time.perf_counter() - start) / batches * 1e6


@ray.remote(num_cpus=0)
class ManagerHost:
    """One host of the Ray-calls data plane: a ``BaseEnvManager`` of a share, stepped by actor calls."""

    def __init__(self, fns: list, first: int) -> None:
        self.manager = create_env_manager({"type": "base"}, fns)
        self.manager.seed(first)
        self.manager.launch()

    def step(self, actions: np.ndarray) -> tuple:
        """Step the ready envs; the batch's arrays and infos, serialized by Ray."""
        ready = self.manager.ready_obs_batch
        batch = self.manager.step_batch(ready.env_id, actions[: len(ready.env_id)])
        return batch.obs, batch.reward, batch.done, batch.truncated, batch.info

    def close(self) -> None:
        """Close the envs."""
        self.manager.close()


def time_ray_calls(fns: list, hosts: int, seconds: float, n: int) -> float:
    """Mean microseconds per batched step with one Ray call per host per step."""
    per_host = len(fns) // hosts
    actors = [ManagerHost.remote(fns[h * per_host : (h + 1) * per_host], h * per_host) for h in range(hosts)]
    try:
        rng = np.random.default_rng(0)
        batches, start = 0, None
        while start is None or time.perf_counter() - start < seconds:
            ray.get([actor.step.remote(rng.integers(0, n, per_host)) for actor in actors])
            batches += 1
            if start is None and batches == 20:
                batches, start = 0, time.perf_counter()
        return (time.perf_counter() - start) / batches * 1e6
    finally:
        ray.get([actor.close.remote() for actor in actors])
        for actor in actors:
            ray.kill(actor)


class _EnvActor:
    """Tianshou's ``_SetAttrWrapper`` actor: a Gymnasium env whose methods are called remotely."""

    def __init__(self, env_id: str) -> None:
        if env_id.startswith("ALE/"):
            import ale_py

            gym.register_envs(ale_py)
        self.env = gym.make(env_id)

    def reset(self, seed: int | None = None) -> tuple:
        return self.env.reset(seed=seed)

    def step(self, action: int) -> tuple:
        return self.env.step(action)


def time_actor_per_env(env_id: str, env_num: int, seconds: float, n: int) -> float:
    """Mean microseconds per batched step of a Tianshou-style ``RayVectorEnv`` (one actor per env)."""
    actors = [ray.remote(_EnvActor).options(num_cpus=0).remote(env_id) for _ in range(env_num)]
    try:
        ray.get([actor.reset.remote(seed=i) for i, actor in enumerate(actors)])
        rng = np.random.default_rng(0)
        batches, start = 0, None
        while start is None or time.perf_counter() - start < seconds:
            actions = rng.integers(0, n, env_num)
            refs = [actor.step.remote(int(action)) for actor, action in zip(actors, actions, strict=True)]
            ray.wait(refs, num_returns=len(refs))
            results = ray.get(refs)
            np.stack([result[0] for result in results])  # the vector env stacks what came back
            done = [i for i, result in enumerate(results) if result[2] or result[3]]
            if done:  # the collector resets finished envs, one call each
                ray.get([actors[i].reset.remote() for i in done])
            batches += 1
            if start is None and batches == 20:
                batches, start = 0, time.perf_counter()
        return (time.perf_counter() - start) / batches * 1e6
    finally:
        for actor in actors:
            ray.kill(actor)


def main() -> None:
    """Time every workload asked for and print its rows and the scaling model's constants."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="cartpole", help="workloads whose name contains this (default cartpole)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="per timing")
    args = parser.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    try:
        for name, (target, gym_id, env_num, hosts) in WORKLOADS.items():
            if args.only not in name:
                continue
            fns = env_fns_for(*resolve_target(target), env_num)
            env = fns[0]()
            env.reset()
            n = env.action_space.n
            payloads = [StepPayload.of(env.observation_space, env.action_space, env_num // hosts)] * hosts
            env.close()
            rows: dict[str, list[float]] = {
                "local sync": [], "ray (zmq)": [], "ray calls": [], "one actor per env": [], "host envs": [],
                "wire": [],
            }  # fmt: skip
            for _ in range(args.rounds):
                rows["local sync"].append(time_manager({"type": "subprocess"}, fns, args.seconds))
                rows["ray (zmq)"].append(time_manager({"type": "ray", "num_hosts": hosts}, fns, args.seconds))
                rows["ray calls"].append(time_ray_calls(fns, hosts, args.seconds, n))
                rows["one actor per env"].append(time_actor_per_env(gym_id, env_num, args.seconds, n))
                rows["host envs"].append(time_manager({"type": "base"}, fns[: env_num // hosts], args.seconds))
                rows["wire"].append(round_trip_us(payloads, args.seconds))
            medians = {row: statistics.median(values) for row, values in rows.items()}
            local = medians["local sync"]
            print(f"{name}: {env_num} envs, {hosts} hosts, {args.rounds} rounds of {args.seconds} s", flush=True)
            for row in ("local sync", "ray (zmq)", "ray calls", "one actor per env"):
                us = medians[row]
                print(
                    f"  {row:<18} {us:9.0f} us/batch {env_num / us * 1e6:9.0f} steps/s  x{local / us:5.2f} of local "
                    f"sync  x{medians['one actor per env'] / us:6.1f} of one actor per env  "
                    f"rounds {[round(value) for value in rows[row]]}",
                    flush=True,
                )
            print(
                f"  constants: one host's envs {medians['host envs']:.0f} us/batch, wire round trip to {hosts} "
                f"hosts {medians['wire']:.0f} us",
                flush=True,
            )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
