"""``GymVectorEnvManager``: DI-engine's ``gym_vector`` manager type, Gymnasium's ``AsyncVectorEnv`` behind the manager.

As in DI-engine, each ``env_fn`` returns a Gymnasium env and Gymnasium's ``AsyncVectorEnv`` runs each in
a process of its own::

    manager = GymVectorEnvManager([partial(gym.make, "Pendulum-v1")] * 4, GymVectorEnvManager.default_config())

The vector env is one ``GymVectorBatchEnv`` (reset mode ``Disabled``) hosted in this process, so every
result follows ``EnvManager``'s semantics: truncation kept, the true final observation on the done step,
per-env seeds ``seed + i``, auto-reset of the envs that finished. A vector env steps all its envs with
each call (it is lockstep): every ``step`` takes an action for every env, and ``episode_num`` stays
infinite (see docs/batch-envs.md).

``env_fn`` returning ``BaseEnv``s (which DI-engine's class also took) are hosted as the ``'subprocess'``
manager hosts them: in worker processes, stepped together, none of those limits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import gymnasium as gym
from gymnasium.vector import AsyncVectorEnv, AutoresetMode

from ding_env.env.batch_sources.gym_vector_env import GymVectorBatchEnv
from ding_env.env_manager import validation
from ding_env.env_manager.backends.base import Backend
from ding_env.env_manager.backends.in_process import InProcessBackend
from ding_env.env_manager.backends.settings import HostSettings
from ding_env.env_manager.subprocess_env_manager import SyncSubprocessEnvManager
from ding_env.summary import describe_value

__all__ = ["GymVectorEnvManager"]


def async_vector_env(env_fns: Sequence[Callable[[], gym.Env]], shared_memory: bool) -> AsyncVectorEnv:
    """Gymnasium's ``AsyncVectorEnv`` over ``env_fns``, resetting only when asked (reset mode ``Disabled``).

    Raises:
        RuntimeError: Naming the ``env_fn`` that fails to build a Gymnasium env, when the vector env could not start.
    """
    checked = [partial(gym_env_of, env_fn) for env_fn in env_fns]
    try:
        return AsyncVectorEnv(checked, shared_memory=shared_memory, autoreset_mode=AutoresetMode.DISABLED)
    except Exception as error:
        # A child that fails to build its env only closes its pipe (a ConnectionResetError here, its
        # traceback on stderr): build each env here to name the one that fails, and why.
        for index, env_fn in enumerate(env_fns):
            try:
                gym_env_of(env_fn).close()
            except Exception as cause:  # noqa: BLE001 - raised again below, naming the env_fn
                raise RuntimeError(
                    f"gym_vector: env_fn {index} of {len(env_fns)} ({describe_value(env_fn)}): "
                    f"{type(cause).__name__}: {cause}"
                ) from cause
        raise error


def gym_env_of(env_fn: Callable[[], Any]) -> gym.Env:
    """The Gymnasium env ``env_fn`` builds.

    Raises:
        TypeError: When it builds something else (a ``BaseEnv`` among Gymnasium envs, say).
    """
    env = env_fn()
    if not isinstance(env, gym.Env):
        env.close()
        raise TypeError(
            f"it returned {describe_value(env)}, where env_fn 0 returned a Gymnasium env: give the gym_vector "
            "manager env_fns that all return Gymnasium envs, or all BaseEnvs"
        )
    return env


class GymVectorEnvManager(SyncSubprocessEnvManager):
    """The Gymnasium envs of ``env_fn`` in one Gymnasium ``AsyncVectorEnv``; config type ``'gym_vector'``.

    The config is ``SyncSubprocessEnvManager``'s; ``shared_memory`` is given to ``AsyncVectorEnv``.

    Args:
        env_fn: Callables returning a fresh ``gymnasium.Env`` each (built in the vector env's processes),
            or a fresh ``BaseEnv`` each (hosted in workers, as by ``SyncSubprocessEnvManager``).
        cfg: Manager settings; see ``ding_env.env_manager.config.MANAGER_CONFIG``.

    Raises:
        ConfigError: For a bad config value.
    """

    manager_type = "gym_vector"

    def __init__(self, env_fn: Sequence[Callable[[], Any]], cfg: dict | None = None) -> None:
        env_fn = validation.check_env_fns(env_fn)
        probe = env_fn[0]()
        self._hosts_vector_env = isinstance(probe, gym.Env)
        probe.close()
        if self._hosts_vector_env:
            shared_memory = True if cfg is None else bool(cfg.get("shared_memory", True))
            make_env = partial(async_vector_env, tuple(env_fn), shared_memory)
            env_fn = [partial(GymVectorBatchEnv, dict(num_envs=len(env_fn)), make_env)]
        super().__init__(env_fn, cfg)

    def _backends(self) -> list[Backend]:
        if not self._hosts_vector_env:
            return super()._backends()
        # The vector env runs its envs in processes of its own: it is hosted here.
        entries = dict(enumerate(self._layout.entries))
        return [InProcessBackend(entries, HostSettings.of(self._cfg), self._name, self._ledger, self._setup)]
