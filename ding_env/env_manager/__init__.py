"""Env managers: drive many envs through one dict API and one batched API."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from ding_env.config import check_caller, deep_merge_dicts
from ding_env.env_manager.base import BaseEnvManager
from ding_env.env_manager.batch import ObsBatch, TimestepBatch
from ding_env.env_manager.config import MANAGER_CONFIG, MANAGER_TYPES
from ding_env.env_manager.di_engine_state import EnvState
from ding_env.env_manager.status import EnvStatus
from ding_env.errors import ConfigError

__all__ = [
    "AsyncSubprocessEnvManager",
    "BaseEnvManager",
    "BaseEnvManagerV2",
    "EnvState",
    "EnvStatus",
    "EnvSupervisor",
    "MANAGER_CONFIG",
    "MANAGER_TYPES",
    "ObsBatch",
    "SubprocessEnvManagerV2",
    "SyncSubprocessEnvManager",
    "TimestepBatch",
    "create_env_manager",
    "get_env_manager_cls",
    "setup_ding_env_manager",
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
    if name == "EnvSupervisor":
        from ding_env.env_manager.env_supervisor import EnvSupervisor

        return EnvSupervisor
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
    if manager_cfg is not None and not isinstance(manager_cfg, Mapping):
        raise ConfigError(
            f"env manager config: expected a dict (or None), got {type(manager_cfg).__name__} {manager_cfg!r:.80}"
        )
    manager_cfg = dict(manager_cfg or {})
    manager_cls = get_env_manager_cls(manager_cfg.get("type", "base"))
    return manager_cls(env_fn, deep_merge_dicts(manager_cls.default_config(), manager_cfg))


def setup_ding_env_manager(
    env: Any, env_num: int, context: str | None = None, debug: bool = False, caller: str = "collector"
) -> BaseEnvManager:
    """``env_num`` clones of a ``DingEnvWrapper`` in a V2 manager, as DI-engine's task pipelines set them up.

    Args:
        env: A ``DingEnvWrapper``; each env of the manager is ``env.clone(caller)``.
        env_num: How many envs.
        context: The subprocess manager's start method (None: its default).
        debug: ``BaseEnvManagerV2`` (every env in this process) instead of ``SubprocessEnvManagerV2``.
        caller: 'collector' or 'evaluator': the preprocessing of the clones.

    Raises:
        ConfigError: For another caller, or a context that is not a start method.
    """
    check_caller(caller, "setup_ding_env_manager")
    manager_cls = get_env_manager_cls("base_v2" if debug else "subprocess_v2")
    cfg = manager_cls.default_config()
    if context is not None and not debug:
        cfg.context = context
    return manager_cls([partial(env.clone, caller) for _ in range(env_num)], cfg)
