"""The Ray managers' hosts: Ray actors placed by one placement group, each serving a share of the envs.

``RayHosts`` joins (or starts) a Ray cluster, reserves one bundle of ``host_resources`` per host
in a placement group, starts one ``HostServer`` actor per bundle and learns each env server's
address. ``RayHostBackend`` is the remote backend (``backends/remote.py``) to one host: steps go
over ZeroMQ, and when a host dies (Ray restarts it on a new port) the next reset asks Ray where
it is now. ``RayHosts.close`` stops every actor, kills it and removes the placement group.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence, Set
from typing import Any, NamedTuple

from typing_extensions import override

from ding_env.env.seeding import global_rngs_kept
from ding_env.env_manager.backends.base import Ledger, consecutive_shares
from ding_env.env_manager.backends.ray_host import STOP_TIMEOUT, HostServer
from ding_env.env_manager.backends.remote import RemoteBackend
from ding_env.env_manager.backends.settings import EnvSetup, RaySettings
from ding_env.errors import ConfigError
from ding_env.ops import Op
from ding_env.remote.errors import ServerLostCrash

# Managers using the Ray instance this process started; the last to close shuts it down.
_started_instance_users = 0
_started_here_alone = False  # ... and it is a local instance of its own (no address given): see on_instance_of_its_own
# What this process's Ray managers hold of the local instance it started (their placement groups' resources).
_held_here: dict[str, float] = {}
RESTART_POLL = 0.05  # seconds between asking a killed host for its new process
_RAY_RESOURCE_OPTIONS = {"CPU": "num_cpus", "GPU": "num_gpus", "memory": "memory"}


class HostView(NamedTuple):
    """One host of a Ray manager.

    Attributes:
        index: The host's position among the manager's hosts.
        env_ids: The env ids it hosts.
        actor: The Ray actor handle (``ray.kill(actor, no_restart=False)`` makes Ray restart it).
        address: Its env server's endpoint, as last learnt.
    """

    index: int
    env_ids: list[int]
    actor: Any
    address: str


class RayHostLost(ServerLostCrash):
    """A Ray host stopped answering (its actor died or was killed): its envs are lost until their next reset.

    Attributes:
        host: The host's index in its manager.
    """

    def __init__(
        self,
        host: int,
        address: str,
        env_ids: list[int],
        command: Op,
        why: str,
        failed_reset: bool = False,
        restarted: bool = True,
    ) -> None:
        super().__init__(address, env_ids, command, why, failed_reset)
        self.host = host
        then = (
            "Ray restarts it while host_max_restarts allows, and a reset then brings its envs back"
            if restarted
            else "host_max_restarts=0: Ray does not restart it, so close the manager and make another"
        )
        self.args = (
            f"Ray host {host} (env server {address}) hosting envs {self.env_ids} was lost during {command}: {why}; "
            f"{then}",
        )


def import_ray(name: str) -> Any:
    """The ``ray`` module, or a ConfigError saying how to install it."""
    try:
        import ray
    except ImportError as error:
        raise ConfigError(f"{name}: the Ray managers need Ray: pip install 'ding-env[ray]' ({error})") from error
    return ray


def join_cluster(ray: Any, address: str | None, timeout: float = 60.0, name: str = "the Ray manager") -> bool:
    """Connect this process to Ray unless it is; whether it uses an instance this process started.

    Raises:
        ConfigError: When nothing answers at ``address`` (``host:port``, or ``ray://host:port``) within
            ``timeout``: Ray itself would wait for it without end.
    """
    global _started_instance_users
    if ray.is_initialized():
        if _started_instance_users:
            _started_instance_users += 1
        return bool(_started_instance_users)
    check_reachable(address, timeout, name)
    # No address: a local instance sized to this machine (or the one `ray start` began on it).
    with global_rngs_kept():
        ray.init(address=address, include_dashboard=False, configure_logging=False)
    _started_instance_users = 1
    global _started_here_alone
    _started_here_alone = address is None and not os.environ.get("RAY_ADDRESS")
    return True


def on_instance_of_its_own() -> bool:
    """Whether this process runs on the local Ray instance it started, which cannot grow and no other job uses.

    Joined by address ('auto', ``ray://``, ``RAY_ADDRESS``), the cluster may grow (an autoscaler) and other
    jobs use it: placements are left to it.
    """
    return bool(_started_instance_users) and _started_here_alone


def check_reachable(address: str | None, timeout: float, name: str) -> None:
    """Refuse a ``host:port`` Ray address where nothing accepts a connection within ``timeout``.

    Raises:
        ConfigError: Naming the address and what the connection attempt said.
    """
    if address is None or address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # a form Ray reads its own way: left to it
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        raise ConfigError(
            f"{name}: nothing answers at the Ray address {address!r} ({error or type(error).__name__}, within "
            f"{timeout:g} s, connect_timeout): start Ray's head there (`ray start --head`) or give its address "
            "(address='auto' on a machine of the cluster)"
        ) from error


def leave_cluster(ray: Any) -> None:
    """Shut down the Ray instance this process started once no manager uses it."""
    global _started_instance_users
    _started_instance_users -= 1
    if _started_instance_users == 0:
        with global_rngs_kept():
            ray.shutdown()


class RayHosts:
    """``cfg.num_hosts`` Ray actors serving consecutive shares of ``env_fns``.

    Args:
        env_fns: One constructor per env (shipped to the hosts through Ray, once).
        settings: Where the hosts run and what each reserves.
        name: Names the manager in errors.

    Raises:
        ConfigError: When Ray is missing, cannot place the hosts within ``connect_timeout`` or a host fails to start.
    """

    def __init__(self, env_fns: Sequence[Callable[[], Any]], settings: RaySettings, name: str) -> None:
        self.ray = ray = import_ray(name)
        self.name = name
        self.shares = consecutive_shares(list(range(len(env_fns))), settings.num_hosts)
        self.actors: list[Any] = []
        self.pids: dict[int, int | None] = {}
        self.max_restarts = settings.host_max_restarts
        self.group: Any = None
        self.held: dict[str, float] = {}  # what the group holds of the instance this process started
        if settings.remote.keys_dir is not None:  # the trainer's keys, checked before any host starts
            from ding_env.remote.keys import check_client_keys

            try:
                check_client_keys(settings.remote.keys_dir)
            except ConfigError as error:
                raise ConfigError(f"{name}: keys_dir: {error}") from error
        self.uses_started_instance = join_cluster(ray, settings.address, settings.remote.connect_timeout, name)
        self.closed = False
        try:
            self.group = self.place(settings)
            self.actors = self.start_actors(env_fns, settings)
            self.addresses = self.fetch_addresses(range(len(self.actors)), settings.remote.connect_timeout)
            # Each host's process, to tell one that stopped answering from one Ray restarted (restart_if_stuck).
            self.pids = dict(enumerate(ray.get([actor.pid.remote() for actor in self.actors])))
        except BaseException:
            self.close()
            raise

    def place(self, settings: RaySettings) -> Any:
        """A placement group of one ``host_resources`` bundle per host, once Ray placed it."""
        from ray.util.placement_group import placement_group

        bundles = [dict(settings.host_resources) for _ in self.shares]
        timeout = settings.remote.connect_timeout
        needs = {key: amount * len(bundles) for key, amount in bundles[0].items()}
        if on_instance_of_its_own():
            # The local instance this process started cannot grow, and only this process's managers use it: what
            # exceeds its total, or what the others hold of it, would never be placed (a wait of connect_timeout).
            total = self.ray.cluster_resources()
            short = {key: need for key, need in needs.items() if need > total.get(key, 0) - _held_here.get(key, 0)}
            if short:
                held = [f"{key} {_held_here[key]:g}" for key in short if _held_here.get(key)]
                raise ConfigError(
                    f"{self.name}: {len(bundles)} hosts of {bundles[0]} need "
                    f"{', '.join(f'{key} {need:g}' for key, need in short.items())}, and the local Ray instance "
                    f"started for them has {', '.join(f'{key} {total.get(key, 0):g}' for key in short)} in all"
                    + (f", of which this process's other Ray managers hold {', '.join(held)}" if held else "")
                    + ": lower num_hosts or host_resources"
                    + (", close those managers first (an evaluator: type 'subprocess')" if held else "")
                    + ", or join a cluster (address='auto' or a ray:// address)"
                )
        group = placement_group(bundles, strategy=settings.placement_strategy)
        ready, _ = self.ray.wait([group.ready()], timeout=timeout)
        if not ready:
            self.ray.util.remove_placement_group(group)
            raise ConfigError(
                f"{self.name}: Ray could not place {len(bundles)} hosts of {bundles[0]} "
                f"({settings.placement_strategy}) within connect_timeout={timeout} s; the cluster has "
                f"{self.free_of(bundles[0])} free (other managers' hosts and other actors hold the rest): "
                "lower num_hosts or host_resources, close the managers holding them, or add machines"
            )
        if on_instance_of_its_own():
            self.held = needs
            for key, need in needs.items():
                _held_here[key] = _held_here.get(key, 0) + need
        return group

    def free_of(self, bundle: Mapping[str, float]) -> str:
        """What the cluster has free of each resource ``bundle`` asks for, of its total ('CPU 0 of 2')."""
        # Ray's own view lists each placement group's share under names of its own ('CPU_group_0_...'), and
        # leaves out a resource none is free of: read the plain names, 0 where absent.
        free, total = self.ray.available_resources(), self.ray.cluster_resources()
        return ", ".join(f"{key} {free.get(key, 0):g} of {total.get(key, 0):g}" for key in bundle)

    def start_actors(self, env_fns: Sequence[Callable[[], Any]], settings: RaySettings) -> list[Any]:
        """One ``HostServer`` actor per bundle of the group."""
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        resources = dict(settings.host_resources)
        options = {option: resources.pop(key) for key, option in _RAY_RESOURCE_OPTIONS.items() if key in resources}
        # Worker processes inside a host do not fork it: a Ray worker process runs threads of its own.
        context = "forkserver" if settings.context == "fork" else settings.context
        server_cfg = {"num_workers": settings.host_workers, "context": context}
        actor_class = self.ray.remote(HostServer)
        trainer_ip = self.ray.util.get_node_ip_address()
        return [
            actor_class.options(
                num_cpus=options.pop("num_cpus", 0),
                **options,
                resources=resources,
                max_restarts=settings.host_max_restarts,
                max_task_retries=settings.host_max_restarts,
                scheduling_strategy=PlacementGroupSchedulingStrategy(self.group, placement_group_bundle_index=index),
            ).remote([env_fns[env_id] for env_id in share], server_cfg, index, trainer_ip, settings.remote.keys_dir)
            for index, share in enumerate(self.shares)
        ]

    def fetch_addresses(self, hosts: Sequence[int], timeout: float) -> list[str]:
        """The env servers' addresses of ``hosts``, waiting for them to start (or restart) up to ``timeout``."""
        refs = [self.actors[host].address.remote() for host in hosts]
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=timeout)
        if len(ready) < len(refs):
            late = [host for host, ref in zip(hosts, refs, strict=True) if ref not in ready]
            raise ConfigError(f"{self.name}: Ray hosts {late} did not start within connect_timeout={timeout} s")
        addresses = []
        for host, ref in zip(hosts, refs, strict=True):
            try:
                addresses.append(self.ray.get(ref))
            except self.ray.exceptions.RayError as error:
                # The host's own exception (its .cause), without Ray's wrapping traceback.
                cause = getattr(error, "cause", None)
                why = f"{type(cause).__name__}: {cause}" if isinstance(cause, Exception) else str(error)
                raise ConfigError(f"{self.name}: Ray host {host} failed to start: {why}") from error
        return addresses

    def restart_if_stuck(self, host: int, timeout: float) -> bool:
        """Kill ``host``'s actor, for Ray to restart it, when the process whose env server stopped answering still runs.

        An env stuck in a call its host cannot interrupt (envs stepped in the actor's own process, where no
        timer reaches the server's thread) keeps the actor alive, so Ray would never restart it. An actor Ray
        restarted already (another process) or is restarting is left to Ray. Whether the actor was killed.
        """
        deadline = time.monotonic() + timeout
        pid = known = self._pid(host, timeout)
        if pid is None or pid != self.pids.get(host):
            self.pids[host] = pid
            return False
        if self.max_restarts == 0:
            raise ConfigError(
                f"{self.name}: Ray host {host}'s env server stopped answering while its process runs (an env stuck in "
                "a call in the host's own process), and host_max_restarts=0 lets Ray restart it no more: close the "
                "manager (host_workers >= 1 cuts a stuck step at step_timeout instead)"
            )
        self.ray.kill(self.actors[host], no_restart=False)
        # Ray kills asynchronously: until the restarted process answers, a call may still reach the old one.
        while pid in (known, None) and time.monotonic() < deadline:
            time.sleep(RESTART_POLL)  # a dead actor's call fails at once: not a busy loop
            pid = self._pid(host, max(deadline - time.monotonic(), 0.0))
        self.pids[host] = pid
        return True

    def _pid(self, host: int, timeout: float) -> int | None:
        """The process id of ``host``'s actor, or None when it does not answer within ``timeout`` (dead, restarting)."""
        ready, _ = self.ray.wait([self.actors[host].pid.remote()], timeout=timeout)
        try:
            return self.ray.get(ready[0]) if ready else None
        except self.ray.exceptions.RayError:
            return None

    def views(self, backends: Sequence[RayHostBackend]) -> list[HostView]:
        """What each host is, as the manager shows it."""
        return [
            HostView(backend.index, list(backend.env_ids), self.actors[backend.index], backend.address)
            for backend in backends
        ]

    def close(self, lost: Set[int] = frozenset()) -> None:
        """Stop every host (closing its envs and workers), kill its actor, remove the placement group; idempotent.

        Args:
            lost: Hosts found lost: killed without a stop, which one stuck in an env's call would wait out.
        """
        if self.closed:
            return
        self.closed = True
        ray = self.ray
        try:
            if self.actors:
                # A stop ends its actor (exit_actor): under the hosts' task retries, Ray logged it as a failed task
                # "to be retried" at every close.
                stops = [
                    actor.stop.options(max_task_retries=0).remote()
                    for host, actor in enumerate(self.actors)
                    if host not in lost
                ]
                if stops:
                    ray.wait(stops, num_returns=len(stops), timeout=STOP_TIMEOUT)
                for actor in self.actors:
                    ray.kill(actor, no_restart=True)
            if self.group is not None:
                ray.util.remove_placement_group(self.group)
        finally:
            self.actors, self.group = [], None
            for key, need in self.held.items():
                _held_here[key] -= need
            self.held = {}
            if self.uses_started_instance:
                leave_cluster(ray)


class RayHostBackend(RemoteBackend):
    """The envs of host ``index`` of ``hosts``, stepped over its env server's ZeroMQ wire.

    Args:
        env_fns: ``{env_id: constructor}`` of the host's share (the host built its own envs from them).
        settings: How to reach the host's server, and the settings its envs get.
        name: Names the manager in errors.
        ledger: Where lost envs are reported.
        setup: The envs' seeds and reset kwargs (the manager's): a restarted host gets the seeds again.
        hosts: The manager's hosts.
        index: This host's index.
    """

    workers_hint = "give the Ray manager host_workers >= 1"

    def __init__(
        self,
        env_fns: Mapping[int, Callable[[], Any]],
        settings: RaySettings,
        name: str,
        ledger: Ledger,
        setup: EnvSetup,
        hosts: RayHosts,
        index: int,
    ) -> None:
        super().__init__(env_fns, settings.remote, name, ledger, setup, hosts.addresses[index])
        self.hosts, self.index = hosts, index

    @override
    def connect(self) -> None:
        if self.lost is not None:  # the host died (or hangs): Ray restarts it, with a server on a new port
            try:
                self.hosts.restart_if_stuck(self.index, self.settings.connect_timeout)
                (self.address,) = self.hosts.fetch_addresses([self.index], self.settings.connect_timeout)
            except ConfigError as error:
                raise self.lost_error(Op.RESET, f"it did not come back: {error}") from error
        super().connect()

    @override
    def lost_error(self, command: Op, why: str, failed_reset: bool = False) -> ServerLostCrash:
        restarted = self.hosts.max_restarts != 0
        return RayHostLost(self.index, self.address, self.env_ids, command, why, failed_reset, restarted)
