"""Env managers: drive many envs through one dict API and one batched API.

``EnvManager`` (``manager.py``) is the state machine every manager shares; the backends it
holds (``backends/``) host the envs: in this process, in worker processes, or both. The
classes DI-engine code names live where DI-engine has them: ``base_env_manager``,
``subprocess_env_manager``, ``envpool_env_manager``, ``gym_vector_env_manager`` and
``ding_env_manager``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ding_env.env_manager.base_env_manager import (
    BaseEnvManager,
    BaseEnvManagerV2,
    create_env_manager,
    get_env_manager_cls,
)
from ding_env.env_manager.config import MANAGER_CONFIG, MANAGER_TYPES
from ding_env.env_manager.di_engine_calls import EnvState
from ding_env.env_manager.ding_env_manager import setup_ding_env_manager
from ding_env.env_manager.env_supervisor import EnvSupervisor
from ding_env.env_manager.envpool_env_manager import PoolEnvManager
from ding_env.env_manager.gym_vector_env_manager import GymVectorEnvManager
from ding_env.env_manager.manager import EnvManager
from ding_env.env_manager.outcome import ObsBatch, TimestepBatch
from ding_env.env_manager.ray_env_manager import AsyncRayEnvManager, RayEnvManager
from ding_env.env_manager.remote_env_manager import AsyncRemoteEnvManager, RemoteEnvManager
from ding_env.env_manager.status import EnvStatus
from ding_env.env_manager.subprocess_env_manager import (
    AsyncSubprocessEnvManager,
    SubprocessEnvManagerV2,
    SyncSubprocessEnvManager,
)

__all__ = [
    "MANAGER_CLASSES",
    "MANAGER_CONFIG",
    "MANAGER_TYPES",
    "AsyncRayEnvManager",
    "AsyncRemoteEnvManager",
    "AsyncSubprocessEnvManager",
    "BaseEnvManager",
    "BaseEnvManagerV2",
    "EnvManager",
    "EnvState",
    "EnvStatus",
    "EnvSupervisor",
    "GymVectorEnvManager",
    "ObsBatch",
    "PoolEnvManager",
    "RayEnvManager",
    "RemoteEnvManager",
    "SubprocessEnvManagerV2",
    "SyncSubprocessEnvManager",
    "TimestepBatch",
    "create_env_manager",
    "get_env_manager_cls",
    "setup_ding_env_manager",
]

# The one table of manager types: a config's ``type`` names its class.
MANAGER_CLASSES: Mapping[str, type] = {
    cls.manager_type: cls
    for cls in (
        BaseEnvManager,
        SyncSubprocessEnvManager,
        AsyncSubprocessEnvManager,
        BaseEnvManagerV2,
        SubprocessEnvManagerV2,
        RemoteEnvManager,
        AsyncRemoteEnvManager,
        PoolEnvManager,
        GymVectorEnvManager,
        RayEnvManager,
        AsyncRayEnvManager,
    )
}
assert tuple(MANAGER_CLASSES) == MANAGER_TYPES, "config.MANAGER_TYPES lists the types of MANAGER_CLASSES"
