"""``RemoteEnvManager`` and ``AsyncRemoteEnvManager``: envs on env servers (``ding-env serve``), here or elsewhere.

The manager's env ids are shared out among ``cfg.servers`` in consecutive runs of (nearly) equal
size; each server must host exactly its run (``ding-env serve TARGET --envs N``). Everything else is
``EnvManager``'s: the same seeds and actions give the same trajectories as the local managers.
"""

from __future__ import annotations

from ding_env.env_manager.backends.base import Backend, consecutive_shares
from ding_env.env_manager.backends.remote import RemoteBackend
from ding_env.env_manager.backends.settings import RemoteSettings
from ding_env.env_manager.manager import EnvManager


class RemoteEnvManager(EnvManager):
    """Steps envs hosted by env servers; config type ``'remote'`` with ``servers=['tcp://host:port', ...]``.

    A step sends every server its share before waiting for any, so servers step in parallel. A
    server that dies, freezes or drops off the network is noticed within ``heartbeat_timeout``
    seconds: its envs come back as abnormal results with ``EnvCrashedError`` naming the server
    (raised with ``step_error='raise'``, with the other servers' results on it), and need a reset,
    which connects to the server again.
    """

    manager_type = "remote"

    def _backends(self) -> list[Backend]:
        shares = consecutive_shares(list(range(self._env_num)), len(self._cfg.servers))
        settings = RemoteSettings.of(self._cfg)
        return [
            RemoteBackend(
                {env_id: self._env_fn[env_id] for env_id in share},
                settings,
                self._name,
                self._ledger,
                self._setup,
                address,
            )
            for share, address in zip(shares, self._cfg.servers, strict=True)
        ]


class AsyncRemoteEnvManager(RemoteEnvManager):
    """``RemoteEnvManager`` that returns as soon as ``wait_num`` envs have results; type ``'async_remote'``.

    A server answers a step for all the envs it was sent at once, so results arrive server by server:
    with several servers, a step returns once the first servers to answer hold ``wait_num`` envs.
    """

    manager_type = "async_remote"
    returns_early = True
