"""What a backend is given: typed settings (the manager config keys it reads, and no others) and the envs' setup.

Each backend gets the settings of its kind, made from the manager config by ``of(cfg)``:
``HostSettings`` for what every host of envs does (retries, timeouts, what a failed step does),
``WorkerSettings`` and ``RemoteSettings`` for the worker processes and the env servers beside it.
A field's name is the config key it comes from (``manager_config`` validated it).

``EnvSetup`` is what each env is set up with beyond its constructor (its seed and ``env.reset``
kwargs). The manager owns and writes it; backends read it whenever they build or reset an env,
in a fresh worker or a server connected again too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class HostSettings:
    """How a host treats its envs (an ``EnvHost``; an env server's workers get them from the client).

    Attributes:
        max_retry: Attempts to reset an env before its error is raised.
        retry_type: 'reset' (retry on the same env) or 'renew' (build a new one).
        retry_waiting_time: Seconds between reset attempts.
        step_error: 'raise' or 'abnormal': what an exception in ``env.step`` does.
        step_timeout: Seconds a step may take (None: no limit).
        reset_timeout: Seconds a reset may take (None: no limit).
    """

    max_retry: int = 1
    retry_type: str = "reset"
    retry_waiting_time: float = 0.1
    step_error: str = "raise"
    step_timeout: float | None = None
    reset_timeout: float | None = None

    @property
    def step_wait(self) -> float | None:
        """Seconds to wait for a step in another process (None: no limit).

        ``step_timeout`` plus, when set, ``reset_timeout`` for an auto-reset the step may run: a worker
        cuts its auto-resets at ``reset_timeout`` itself (``EnvHost``'s ``limit_auto_reset``), so a slow
        reset is a reset timeout of its env, not a step timeout of its worker.
        """
        if self.step_timeout is None:
            return None
        return self.step_timeout + (self.reset_timeout or 0.0)

    @classmethod
    def of(cls, cfg: Mapping[str, Any]) -> HostSettings:
        """The settings in a manager config (or the settings a client sends a server)."""
        return cls(**{item.name: cfg[item.name] for item in fields(cls)})

    def as_dict(self) -> dict[str, Any]:
        """The settings by config key, as a client sends them to a server."""
        return {item.name: getattr(self, item.name) for item in fields(self)}


@dataclass(frozen=True)
class WorkerSettings:
    """What worker processes are started and waited for with.

    Attributes:
        host: How each worker treats its envs (its time limits are enforced by the parent).
        context: Start method: 'fork', 'spawn' or 'forkserver'.
        connect_timeout: Seconds a worker may take to start and report its spaces.
        cpu_affinity: Pin worker ``i`` to the ``i``-th CPU this process may run on.
    """

    host: HostSettings
    context: str
    connect_timeout: float
    cpu_affinity: bool

    @classmethod
    def of(cls, cfg: Mapping[str, Any]) -> WorkerSettings:
        """The settings in a manager config."""
        return cls(HostSettings.of(cfg), cfg["context"], cfg["connect_timeout"], cfg["cpu_affinity"])


@dataclass(frozen=True)
class RemoteSettings:
    """How a client reaches an env server, and the settings it hands the server's envs.

    Attributes:
        host: How the server's workers treat the envs (sent at launch).
        connect_timeout: Seconds the server may take to answer the handshake and start its workers.
        heartbeat_timeout: Seconds without a sign of life before the server's envs are lost.
        keys_dir: A folder with the client's secret key and the server's public key, or None.
        request_envs: Envs per step request (None: one request per step). A server answers each
            request as soon as it has stepped its envs and steps the next request's meanwhile, so a
            manager that returns early gets its first results while the server steps the rest.
    """

    host: HostSettings
    connect_timeout: float
    heartbeat_timeout: float
    keys_dir: str | None
    request_envs: int | None = None

    @classmethod
    def of(cls, cfg: Mapping[str, Any], request_envs: int | None = None) -> RemoteSettings:
        """The settings in a manager config (``request_envs`` as the manager chooses it)."""
        return cls(
            HostSettings.of(cfg), cfg["connect_timeout"], cfg["heartbeat_timeout"], cfg["keys_dir"], request_envs
        )


@dataclass
class EnvSetup:
    """What each env is set up with beyond its constructor; owned by the manager, read by its backends.

    Attributes:
        seeds: ``{env_id: (seed, dynamic_seed)}`` of the envs seeded so far.
        reset_params: ``{env_id: env.reset kwargs}`` for every reset of the env (auto-resets too).
    """

    seeds: dict[int, tuple[int, bool | None]] = field(default_factory=dict)
    reset_params: dict[int, dict] = field(default_factory=dict)

    def of(self, env_ids: list[int]) -> EnvSetup:
        """A copy of the setup of ``env_ids`` alone (a worker's own, as it stands now)."""
        return EnvSetup(
            {env_id: self.seeds[env_id] for env_id in env_ids if env_id in self.seeds},
            {env_id: self.reset_params[env_id] for env_id in env_ids if env_id in self.reset_params},
        )

    def params_of(self, env_ids: list[int]) -> dict[int, dict]:
        """The reset kwargs of each of ``env_ids`` (``{}`` for an env without any)."""
        return {env_id: self.reset_params.get(env_id, {}) for env_id in env_ids}


@dataclass(frozen=True)
class RaySettings:
    """Where a Ray manager's hosts run and what each reserves; each host's backend gets ``remote`` beside them.

    Attributes:
        remote: How the manager reaches each host's env server.
        address: The Ray cluster (None: a local instance, 'auto', 'ray://head:10001').
        num_hosts: Ray actors hosting the envs, each a consecutive share.
        host_resources: The Ray resources of each host, a placement-group bundle.
        host_workers: Worker processes inside each host (0: the envs step in the host's process).
        context: Start method of those workers.
        placement_strategy: How Ray places the hosts' bundles.
        host_max_restarts: Times Ray restarts a host that died (-1: without limit).
    """

    remote: RemoteSettings
    address: str | None
    num_hosts: int
    host_resources: Mapping[str, float]
    host_workers: int
    context: str
    placement_strategy: str
    host_max_restarts: int

    @classmethod
    def of(cls, cfg: Mapping[str, Any]) -> RaySettings:
        """The settings in a manager config."""
        remote = RemoteSettings.of(cfg)
        keys = ("address", "num_hosts", "host_resources", "host_workers", "context", "placement_strategy")
        return cls(remote, *(cfg[key] for key in keys), cfg["host_max_restarts"])
