"""Env managers: drive many envs through one dict API and one batched API."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ding_env.config import deep_merge_dicts
from ding_env.env_manager.base import BaseEnvManager
from ding_env.env_manager.batch import ObsBatch, TimestepBatch
from ding_env.env_manager.config import MANAGER_CONFIG, MANAGER_TYPES
from ding_env.env_manager.status import EnvStatus
from ding_env.errors import ConfigError

__all__ = [
    "AsyncSubprocessEnvManager",
    "BaseEnvManager",
    "BaseEnvManagerV2",
    "EnvStatus",
    "MANAGER_CONFIG",
    "MANAGER_TYPES",
    "ObsBatch",
    "SubprocessEnvManagerV2",
    "SyncSubprocessEnvManager",
    "TimestepBatch",
    "create_env_manager",
    "get_env_manager_cls",
]


# The subprocess managers load multiprocessing machinery, the V2 ones treetensor (and torch) once
# built: their modules are imported on first use, by class name too.
LAZY_MANAGERS = {
    "SyncSubprocessEnvManager": "subprocess",
    "AsyncSubprocessEnvManager": "async_subprocess",
    "BaseEnvManagerV2": "base_v2",
    "SubprocessEnvManagerV2": "subprocess_v2",
}


def __getattr__(name: str) -> Any:
    if name in LAZY_MANAGERS:
        return get_env_manager_cls(LAZY_MANAGERS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_env_manager_cls(manager_type: str) -> type[BaseEnvManager]:
    """The manager class for a config ``type``: one of ``MANAGER_TYPES``.

    Raises:
        ConfigError: For any other type.
    """
    if manager_type == "base":
        return BaseEnvManager
    if manager_type == "subprocess":
        from ding_env.env_manager.subprocess import SyncSubprocessEnvManager

        return SyncSubprocessEnvManager
    if manager_type == "async_subprocess":
        from ding_env.env_manager.async_subprocess import AsyncSubprocessEnvManager

        return AsyncSubprocessEnvManager
    if manager_type in ("base_v2", "subprocess_v2"):
        from ding_env.env_manager.treetensor_managers import BaseEnvManagerV2, SubprocessEnvManagerV2

        return BaseEnvManagerV2 if manager_type == "base_v2" else SubprocessEnvManagerV2
    raise ConfigError(f"env manager config 'type': expected one of {MANAGER_TYPES}, got {manager_type!r}")


def create_env_manager(manager_cfg: dict | None, env_fn: Sequence[Callable[[], Any]]) -> BaseEnvManager:
    """Build the manager named by ``manager_cfg['type']`` (default 'base').

    ``manager_cfg`` is merged over that manager's ``default_config()``.
    """
    manager_cfg = dict(manager_cfg or {})
    manager_cls = get_env_manager_cls(manager_cfg.get("type", "base"))
    return manager_cls(env_fn, deep_merge_dicts(manager_cls.default_config(), manager_cfg))
