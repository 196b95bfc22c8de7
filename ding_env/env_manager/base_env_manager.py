"""``BaseEnvManager``: every env in the calling process, stepped one after another; the reference semantics.

Also DI-engine's factories of this module's name: ``create_env_manager`` and ``get_env_manager_cls``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ding_env.env_manager.backends.base import Backend
from ding_env.env_manager.backends.in_process import InProcessBackend
from ding_env.env_manager.backends.settings import HostSettings
from ding_env.env_manager.di_engine_calls import EnvState
from ding_env.env_manager.manager import EnvManager
from ding_env.env_manager.treetensor_managers import TreetensorManager
from ding_env.errors import ConfigError

__all__ = ["BaseEnvManager", "BaseEnvManagerV2", "EnvState", "create_env_manager", "get_env_manager_cls"]


class BaseEnvManager(EnvManager):
    """Runs every env in the calling process (see ``EnvManager``); config type ``'base'``.

    ``step_timeout`` and ``reset_timeout`` cut an env's call short with a signal, so only in
    the main thread (see ``backends/call_timeout``).
    """

    manager_type = "base"

    def _backends(self) -> list[Backend]:
        settings = HostSettings.of(self._cfg)
        return [InProcessBackend(dict(enumerate(self._env_fn)), settings, self._name, self._ledger, self._setup)]


class BaseEnvManagerV2(TreetensorManager):
    """``BaseEnvManager`` with DI-engine's V2 interface; config type ``'base_v2'``."""

    manager_type = "base_v2"
    manager_cls = BaseEnvManager


def get_env_manager_cls(manager_type: str) -> type:
    """The manager class for a config ``type``: one of ``MANAGER_TYPES``.

    Raises:
        ConfigError: For any other type.
    """
    from ding_env.env_manager import MANAGER_CLASSES  # the table of every type, this module's classes among them

    if manager_type not in MANAGER_CLASSES:
        raise ConfigError(f"env manager config 'type': expected one of {tuple(MANAGER_CLASSES)}, got {manager_type!r}")
    return MANAGER_CLASSES[manager_type]


def create_env_manager(manager_cfg: dict | None, env_fn: Sequence[Callable[[], Any]]) -> Any:
    """Build the manager named by ``manager_cfg['type']`` (default 'base').

    ``manager_cfg`` is merged over that manager's ``default_config()``.
    """
    from ding_env.config import deep_merge_dicts

    if manager_cfg is not None and not isinstance(manager_cfg, Mapping):
        raise ConfigError(
            f"env manager config: expected a dict (or None), got {type(manager_cfg).__name__} {manager_cfg!r:.80}"
        )
    manager_cfg = dict(manager_cfg or {})
    manager_cls = get_env_manager_cls(manager_cfg.get("type", "base"))
    return manager_cls(env_fn, deep_merge_dicts(manager_cls.default_config(), manager_cfg))
