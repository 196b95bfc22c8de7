"""``HostServer``: what runs inside each Ray actor of a Ray manager, an env server over the host's envs.

Ray places the actor, starts it and restarts it when it dies; the actor starts an env server
(``ding_env.remote.server``) on a free port, in a thread of its own, and tells the manager its
address. From then on steps travel over the env server's ZeroMQ wire (no pickle), exactly as
they do to ``ding-env serve``: Ray carries only the control calls (start, address, stop).

The server binds to loopback when the actor runs on the trainer's machine. On another machine it
binds the node's address, and only with CurveZMQ keys (``keys_dir``: the folder ``ding-env keygen``
wrote, at the same path on every machine): without them the host refuses to start.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Mapping

from ding_env.env.base_env import BaseEnv
from ding_env.errors import ConfigError

STOP_TIMEOUT = 30.0  # seconds the server thread may take to close its envs and workers


class HostServer:
    """Serves ``env_fns`` (the host's share, server ids ``0..n-1``) on a free port of this machine.

    Args:
        env_fns: One constructor per env of the host.
        server_cfg: The served envs' settings (``num_workers``: 0 for envs in this process; ``context``).
        host: The host's index in its manager, for errors.
        trainer_ip: The IP address of the machine the manager runs on.
        keys_dir: CurveZMQ keys (server and client pairs), needed when this machine is not the trainer's.

    Raises:
        ConfigError: On another machine than the trainer's without keys, or when the server cannot bind.
    """

    def __init__(
        self,
        env_fns: list[Callable[[], BaseEnv]],
        server_cfg: Mapping,
        host: int,
        trainer_ip: str,
        keys_dir: str | None,
    ) -> None:
        import ray

        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        # A host that cannot start says why when its address is asked for: an actor whose constructor raises
        # dies, and Ray's retries of the calls to it (and its traceback) would bury the reason.
        self._failure: Exception | None = None
        node_ip = ray.util.get_node_ip_address()
        if node_ip != trainer_ip and keys_dir is None:
            self._failure = ConfigError(
                f"Ray host {host} runs on {node_ip}, not on the trainer's machine ({trainer_ip}): its env server "
                "would be reachable from the network without authentication; give the manager keys_dir (the folder "
                "of `ding-env keygen`, at the same path on every machine), see docs/cluster.md"
            )
            return
        bind = "tcp://127.0.0.1:*" if node_ip == trainer_ip else f"tcp://{node_ip}:*"
        started: queue.Queue = queue.Queue(1)
        # The server's socket lives in the thread that serves it (ZeroMQ sockets are not thread-safe);
        # the actor's own thread stays free to answer Ray's control calls.
        self._thread = threading.Thread(
            target=self._serve, args=(env_fns, dict(server_cfg), bind, keys_dir, started), daemon=True
        )
        self._thread.start()
        result = started.get()
        if isinstance(result, Exception):
            self._failure = result
        else:
            self._address: str = result

    def _serve(self, env_fns: list, server_cfg: dict, bind: str, keys_dir: str | None, started: queue.Queue) -> None:
        from ding_env.remote.served_envs import ServedEnvs
        from ding_env.remote.server import EnvServer

        try:
            server = EnvServer(lambda: ServedEnvs(env_fns, server_cfg), bind, keys=keys_dir)
        except Exception as error:  # noqa: BLE001 - the host's failure, raised when its address is asked for
            started.put(error)
            return
        started.put(server.address)
        server.serve(self._stopping.is_set)

    def address(self) -> str:
        """The env server's endpoint.

        Raises:
            Exception: What kept the env server from starting (a ``ConfigError`` for keys, a port, an env).
        """
        if self._failure is not None:
            raise self._failure
        return self._address

    def pid(self) -> int:
        """The actor's process id."""
        return os.getpid()

    def stop(self) -> bool:
        """Stop serving and close the envs (and their workers), then end the actor; False when the server hung.

        The actor ends through Ray's ``exit_actor``, which runs the process's exit handlers: multiprocessing's
        removes its fork server's socket folder (``pymp-*`` in the temp folder), which killing the actor left.
        A server thread still running after ``STOP_TIMEOUT`` is left to the caller's kill.
        """
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT)
            if self._thread.is_alive():
                return False
        import ray  # the actor's own: this class runs only as a Ray actor

        ray.actor.exit_actor()
        return True  # not reached: exit_actor raises to end the actor
