"""ding_env: the DI-engine env layer (``ding.envs``), with exact RL semantics and fast managers.

Port DI-engine code by replacing ``ding.envs`` with ``ding_env``::

    from ding_env import BaseEnv, BaseEnvTimestep, DingEnvWrapper, BaseEnvManager
"""

from __future__ import annotations

from typing import Any

from ding_env.base_env import BaseEnv
from ding_env.config import deep_merge_dicts
from ding_env.env_manager import BaseEnvManager, ObsBatch, TimestepBatch, create_env_manager
from ding_env.registry import ENV_REGISTRY, get_env_cls, get_vec_env_setting
from ding_env.timestep import BaseEnvTimestep
from ding_env.version import __version__
from ding_env.wrappers import DingEnvWrapper

__all__ = [
    "ENV_REGISTRY",
    "AsyncSubprocessEnvManager",
    "BaseEnv",
    "BaseEnvManager",
    "BaseEnvTimestep",
    "DingEnvWrapper",
    "ObsBatch",
    "SyncSubprocessEnvManager",
    "TimestepBatch",
    "__version__",
    "create_env_manager",
    "deep_merge_dicts",
    "get_env_cls",
    "get_vec_env_setting",
]

_SUBPROCESS_MANAGERS = ("SyncSubprocessEnvManager", "AsyncSubprocessEnvManager")


def __getattr__(name: str) -> Any:
    # The subprocess managers load multiprocessing machinery: import on first use.
    if name in _SUBPROCESS_MANAGERS:
        from ding_env.env_manager import get_env_manager_cls

        return get_env_manager_cls("subprocess" if name == "SyncSubprocessEnvManager" else "async_subprocess")
    raise AttributeError(f"module 'ding_env' has no attribute {name!r}")
