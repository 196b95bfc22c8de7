"""What ``ding-env check TARGET`` names: ``module:Class``, a registered env type, or a config file."""

from __future__ import annotations

from pathlib import Path

from easydict import EasyDict

from ding_env.base_env import BaseEnv
from ding_env.config import load_config_file
from ding_env.errors import ConfigError, RegistryError
from ding_env.registry import ENV_REGISTRY, get_env_cls, import_object


def resolve_target(target: str, config_path: str | None = None) -> tuple[type, EasyDict | None]:
    """The env class and its config for ``target``.

    Raises:
        RegistryError: If the class cannot be imported or the type is unknown.
        ConfigError: If a config file is missing or broken, or the target is not a ``BaseEnv``.
    """
    cfg = None
    if config_path is not None:
        cfg = load_config_file(config_path).get("env")
    if target.endswith(".py") or Path(target).is_file():
        env_cfg = load_config_file(target).get("env")
        if env_cfg is None:
            raise ConfigError(f"config file {target!r} has no 'env' section")
        return get_env_cls(env_cfg), EasyDict(env_cfg)
    if ":" in target:
        env_cls = import_object(target)
    elif target in ENV_REGISTRY:
        env_cls = ENV_REGISTRY.get(target)
    else:
        raise RegistryError(
            f"cannot resolve {target!r}: give module:Class, a config file, or one of the registered types "
            f"{', '.join(ENV_REGISTRY.names())}"
        )
    if not (isinstance(env_cls, type) and issubclass(env_cls, BaseEnv)):
        raise ConfigError(f"{target!r} is {env_cls!r}, not a BaseEnv subclass")
    return env_cls, cfg
