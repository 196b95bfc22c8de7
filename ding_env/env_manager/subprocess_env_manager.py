"""The subprocess managers: envs in worker processes, results through shared memory.

``SyncSubprocessEnvManager`` returns every stepped env's result; ``AsyncSubprocessEnvManager``
returns once ``wait_num`` envs have results while slower ones keep running. Both keep the
semantics of ``EnvManager`` (states, seeding, auto-reset, ``episode_num``, errors) and differ
from ``BaseEnvManager`` only in their backends. With ``caller_share=True`` the calling process
hosts one share of the envs itself, beside ``num_workers`` workers.
"""

from __future__ import annotations

import os

from ding_env.env_manager.backends.async_workers import AsyncWorkerBackend
from ding_env.env_manager.backends.base import Backend
from ding_env.env_manager.backends.in_process import InProcessBackend
from ding_env.env_manager.backends.settings import HostSettings, WorkerSettings
from ding_env.env_manager.backends.workers import WorkerBackend
from ding_env.env_manager.di_engine_calls import EnvState
from ding_env.env_manager.manager import EnvManager
from ding_env.env_manager.shm_buffer import ShmBuffer
from ding_env.env_manager.treetensor_managers import TreetensorManager

__all__ = ["AsyncSubprocessEnvManager", "EnvState", "ShmBuffer", "SubprocessEnvManagerV2", "SyncSubprocessEnvManager"]


def caller_share_size(env_num: int, num_workers: int) -> int:
    """How many envs the calling process hosts beside ``num_workers`` workers: an equal share, at least one."""
    if env_num == 1:
        return 1
    return min(max(1, round(env_num / (num_workers + 1))), env_num - 1)


class SyncSubprocessEnvManager(EnvManager):
    """Runs envs in worker processes and returns every stepped env's result; config type ``'subprocess'``.

    A worker that dies (segfault, ``os._exit``, OOM kill) or exceeds ``step_timeout`` /
    ``reset_timeout`` is replaced by a fresh process at once; its envs come back as abnormal
    timesteps (``step_error='abnormal'``) or with ``EnvCrashedError`` / ``EnvTimeoutError``
    (``'raise'``), and need a reset. Envs of the caller's share (``caller_share=True``) have no
    such isolation: they run in this process, as in ``BaseEnvManager``.
    """

    manager_type = "subprocess"
    worker_backend = WorkerBackend

    def _backends(self) -> list[Backend]:
        cfg, env_num, setup = self._cfg, self._env_num, self._setup
        num_workers = cfg.num_workers or min(env_num, os.cpu_count() or 1)
        in_caller = caller_share_size(env_num, num_workers) if cfg.caller_share else 0
        in_workers = env_num - in_caller
        backends: list[Backend] = []
        if in_workers:
            fns = {env_id: self._env_fn[env_id] for env_id in range(in_workers)}
            settings = WorkerSettings.of(cfg)
            backends.append(self.worker_backend(fns, settings, self._name, self._ledger, setup, num_workers))
        if in_caller:
            fns = {env_id: self._env_fn[env_id] for env_id in range(in_workers, env_num)}
            backends.append(InProcessBackend(fns, HostSettings.of(cfg), self._name, self._ledger, setup))
        return backends


class AsyncSubprocessEnvManager(SyncSubprocessEnvManager):
    """Returns as soon as ``wait_num`` envs have results; slower envs keep running; type ``'async_subprocess'``.

    ``step`` dispatches the given actions, then waits until ``wait_num`` envs
    (default: every env in flight) have finished, or ``step_wait_timeout``
    seconds have passed with at least one finished. Envs still running come
    back in a later ``step`` call (``step({})`` just collects); ``ready_obs``
    lists only envs that can take an action now. A worker steps the envs it
    hosts together, so ``num_workers=env_num`` gives the finest interleaving.
    """

    manager_type = "async_subprocess"
    worker_backend = AsyncWorkerBackend
    returns_early = True


class SubprocessEnvManagerV2(TreetensorManager):
    """``SyncSubprocessEnvManager`` with DI-engine's V2 interface; config type ``'subprocess_v2'``."""

    manager_type = "subprocess_v2"
    manager_cls = SyncSubprocessEnvManager
