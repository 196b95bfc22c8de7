"""``RemoteEnvManager`` and ``AsyncRemoteEnvManager``: envs on env servers (``ding-env serve``), here or elsewhere.

The manager's env ids are shared out among ``cfg.servers`` in consecutive runs of (nearly) equal
size, never cutting a batch env; each server must host exactly its run (``ding-env serve TARGET
--envs N``, N constructors: with batch envs, N batch envs). Everything else is ``EnvManager``'s: the
same seeds and actions give the same trajectories as the local managers.
"""

from __future__ import annotations

from ding_env.env_manager.backends.base import Backend
from ding_env.env_manager.backends.remote import RemoteBackend
from ding_env.env_manager.backends.settings import RemoteSettings
from ding_env.env_manager.env_layout import layout_shares
from ding_env.env_manager.manager import EnvManager
from ding_env.errors import ConfigError


class RemoteEnvManager(EnvManager):
    """Steps envs hosted by env servers; config type ``'remote'`` with ``servers=['tcp://host:port', ...]``.

    A step sends every server its share before waiting for any, so servers step in parallel. A
    server that dies, freezes or drops off the network is noticed within ``heartbeat_timeout``
    seconds: its envs come back as abnormal results with ``EnvCrashedError`` naming the server
    (raised with ``step_error='raise'``, with the other servers' results on it), and need a reset,
    which connects to the server again.

    ``launch()`` (and a reset that reconnects) waits ``connect_timeout`` seconds for a server's
    answer, but gives up within 5 s on an address where nothing listens, with a
    ``ServerLostError`` naming the address and what to check. A server serves one manager at a
    time: a collector and an evaluator need servers of their own.
    """

    manager_type = "remote"

    def _backends(self) -> list[Backend]:
        entries, servers = self._layout.entries, self._cfg.servers
        # Runs of (nearly) equal size, never cutting a batch env: a server hosts whole batch envs.
        shares = layout_shares(entries, list(range(self._env_num)), len(servers))
        if len(shares) < len(servers):
            raise ConfigError(
                f"{self._name}: {len(servers)} servers, but the envs split into {len(shares)} runs of whole batch "
                f"envs ({len(self._layout.batches)} batch envs): give fewer servers, or more batch envs"
            )
        settings = RemoteSettings.of(self._cfg, self._request_envs(len(shares)))
        return [
            RemoteBackend(
                {env_id: entries[env_id] for env_id in share},
                settings,
                self._name,
                self._ledger,
                self._setup,
                address,
            )
            for share, address in zip(shares, self._cfg.servers, strict=True)
        ]

    def _request_envs(self, servers: int) -> int | None:
        """Envs per step request: all of a server's at once."""
        return None


class AsyncRemoteEnvManager(RemoteEnvManager):
    """``RemoteEnvManager`` that returns as soon as ``wait_num`` envs have results; type ``'async_remote'``.

    A server answers a step for all the envs it was sent at once, so results arrive server by server:
    with several servers, a step returns once the first servers to answer hold ``wait_num`` envs.
    """

    manager_type = "async_remote"
    returns_early = True

    def _request_envs(self, servers: int) -> int | None:
        """Envs per step request: with ``wait_num`` below the env count, each server's part of ``wait_num``.

        A server then steps its next request while the caller handles the results of the last (double buffering).
        """
        wait_num = self._cfg.wait_num
        if wait_num is None or wait_num >= self._env_num:
            return None
        return max(1, -(-wait_num // servers))
