"""DI-engine's ``ding.envs.env_manager.base_env_manager`` import path: the serial managers and the factories.

``BaseEnvManagerV2`` is imported on first use (it needs DI-treetensor once built).
"""

from typing import Any

from ding_env.env_manager import BaseEnvManager, create_env_manager, get_env_manager_cls
from ding_env.env_manager.di_engine_state import EnvState

__all__ = ["BaseEnvManager", "BaseEnvManagerV2", "EnvState", "create_env_manager", "get_env_manager_cls"]  # noqa: F822


def __getattr__(name: str) -> Any:
    if name == "BaseEnvManagerV2":
        return get_env_manager_cls("base_v2")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
