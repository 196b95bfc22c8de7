"""``RayEnvManager`` and ``AsyncRayEnvManager``: envs on hosts that Ray places across a cluster.

Ray is the control plane: it places ``num_hosts`` actors (one ``host_resources`` bundle each, in
one placement group), starts them, and restarts one that dies. Each actor hosts a whole share of
the envs behind an env server, and the steps travel over the remote manager's ZeroMQ wire, which
benchmarks/RESULTS.md measured faster than Ray's own actor calls. Everything else is
``EnvManager``'s: the same seeds and actions give the same trajectories as the local managers,
whichever host holds which env.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ding_env.env_manager.backends.base import Backend
from ding_env.env_manager.backends.settings import RaySettings
from ding_env.env_manager.manager import EnvManager


class RayEnvManager(EnvManager):
    """Steps envs hosted by ``num_hosts`` Ray actors; config type ``'ray'`` (the ``ray`` extra).

    With no ``address`` a local Ray instance sized to this machine is started (and shut down with the last
    manager using it); ``address='auto'`` or ``'ray://head:10001'`` joins a running cluster. A host that
    dies is noticed at once: its envs come back as abnormal results with ``RayHostLost`` naming the host and
    its envs (raised with ``step_error='raise'``), and their next reset reaches the actor Ray restarted.
    ``close()`` stops every actor and removes the placement group.
    """

    manager_type = "ray"

    def __init__(self, env_fn: Any, cfg: dict | None = None) -> None:
        super().__init__(env_fn, cfg)
        self._hosts: Any = None  # RayHosts once launched

    def _backends(self) -> list[Backend]:
        from ding_env.env_manager.backends.ray_hosts import RayHostBackend, RayHosts  # imports ray

        settings = RaySettings.of(self._cfg)
        self._hosts = hosts = RayHosts(self._env_fn, settings, self._name)
        return [
            RayHostBackend(
                {env_id: self._env_fn[env_id] for env_id in share},
                settings,
                self._name,
                self._ledger,
                self._setup,
                hosts,
                index,
            )
            for index, share in enumerate(hosts.shares)
        ]

    def launch(self, reset_param: Mapping[int, dict] | None = None) -> None:  # noqa: D102 - EnvManager's
        try:
            super().launch(reset_param)
        except BaseException:
            if not self._launched:  # a failed launch releases the actors it started (launch may be called again)
                self._release_hosts()
            raise

    def close(self) -> None:  # noqa: D102 - EnvManager's
        try:
            super().close()
        finally:
            self._release_hosts()

    def _release_hosts(self) -> None:
        hosts, self._hosts = self._hosts, None
        if hosts is not None:
            # A host found lost (dead, or stuck in an env's call) is killed without asking it to stop first.
            backends = self._shares.backends if self._shares is not None else []
            hosts.close(lost={backend.index for backend in backends if backend.lost is not None})

    @property
    def hosts(self) -> list:
        """The hosts (``HostView``: index, env ids, Ray actor handle, env server address); empty before launch."""
        if self._hosts is None or self._shares is None:
            return []
        return self._hosts.views(self._shares.backends)


class AsyncRayEnvManager(RayEnvManager):
    """``RayEnvManager`` that returns as soon as ``wait_num`` envs have results; type ``'async_ray'``.

    A host answers a step for all its envs at once, so results arrive host by host: a step returns once
    the first hosts to answer hold ``wait_num`` envs.
    """

    manager_type = "async_ray"
    returns_early = True
