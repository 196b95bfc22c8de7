"""``BaseEnvManager``: every env in the calling process, stepped one after another; the reference semantics.

Also DI-engine's factories of this module's name: ``create_env_manager`` and ``get_env_manager_cls``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ding_env.env_manager.backends.base import Backend
from ding_env.env_manager.backends.in_process import InProcessBackend
from ding_env.env_manager.backends.settings import HostSettings
from ding_env.env_manager.config import check_manager_type
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
        return [
            InProcessBackend(dict(enumerate(self._layout.entries)), settings, self._name, self._ledger, self._setup)
        ]


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

    check_manager_type(manager_type)
    return MANAGER_CLASSES[manager_type]


def create_env_manager(manager_cfg: dict | None, env_fn: Sequence[Callable[[], Any]] | None = None) -> Any:
    """Build the manager named by ``manager_cfg['type']`` (default 'base').

    ``manager_cfg`` is merged over that manager's ``default_config()``. The ``'env_pool'`` type makes its
    envs from its config (``env_id``, ``env_num``) and takes no ``env_fn``.

    Raises:
        ConfigError: For an unknown type, or an ``env_fn`` given to a type that takes none.
    """
    from ding_env.config import check_config_dict, deep_merge_dicts

    check_config_dict(manager_cfg, "env manager config")
    manager_cfg = dict(manager_cfg or {})
    manager_cls = get_env_manager_cls(manager_cfg.get("type", "base"))
    cfg = deep_merge_dicts(manager_cls.default_config(), manager_cfg)
    if getattr(manager_cls, "takes_env_fn", True):
        return manager_cls(env_fn, cfg)
    if env_fn:
        raise ConfigError(
            f"env manager type {manager_cls.manager_type!r} makes its envs from its config (env_id, env_num); "
            f"got {len(env_fn)} env_fn: pass none"
        )
    return manager_cls(cfg)
