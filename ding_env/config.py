"""Config dicts: merging, strict validation of known keys, and loading files.

Configs are plain (nested) dicts, returned as ``EasyDict`` so both
``cfg['key']`` and ``cfg.key`` work, as in DI-engine.
"""

from __future__ import annotations

import copy
import difflib
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from easydict import EasyDict

from ding_env.errors import ConfigError
from ding_env.summary import describe_value

# Keys that DI-engine-shaped env configs carry for the managers and the
# pipeline; every env accepts them besides its own. ``cfg_type`` is the class
# tag DI-engine's ``compile_config`` writes; it changes nothing here.
PIPELINE_KEYS = frozenset(
    {
        "type",
        "cfg_type",
        "import_names",
        "collector_env_num",
        "evaluator_env_num",
        "n_evaluator_episode",
        "stop_value",
        "manager",
        "evaluator_manager",
        "is_train",
        "replay_path",
    }
)


def check_config_dict(cfg: Any, where: str) -> None:
    """Raise ``ConfigError`` naming ``where`` unless ``cfg`` is a dict of config keys (any ``Mapping``) or None."""
    if cfg is not None and not isinstance(cfg, Mapping):
        raise ConfigError(
            f"{where}: expected a dict of config keys (or None), got {type(cfg).__name__} {describe_value(cfg)}"
        )


def deep_merge_dicts(original: Mapping, new: Mapping | None) -> EasyDict:
    """Merge ``new`` into a deep copy of ``original``; neither input is changed.

    Nested mappings merge key by key; any other value in ``new`` replaces the
    one in ``original``.
    """
    merged = _to_plain(original)
    _merge_into(merged, _to_plain(new or {}))
    return EasyDict(merged)


def merge_known_keys(default: Mapping, user: Mapping | None, where: str) -> EasyDict:
    """Merge ``user`` into ``default``, rejecting keys that ``default`` lacks.

    Only the top level is checked: nested dicts may hold free-form settings.

    Raises:
        ConfigError: Naming ``where``, the unknown key, a close match and every valid key.
    """
    user = user or {}
    for key in user:
        if key not in default:
            raise ConfigError(unknown_key_message(where, key, default.keys()))
    return deep_merge_dicts(default, user)


def check_env_keys(cfg: Mapping, config: Mapping, where: str) -> None:
    """Refuse a key of an env's ``cfg`` that is neither in its class ``config`` nor a pipeline key.

    Raises:
        ConfigError: Naming ``where``, the unknown key, a close match and every valid key.
    """
    for key in cfg:
        if key not in config and key not in PIPELINE_KEYS:
            raise ConfigError(unknown_key_message(where, key, set(config) | PIPELINE_KEYS))


def unknown_key_message(where: str, key: object, valid: Any) -> str:
    """The error text for an unknown config key, with a suggestion."""
    valid = sorted(str(k) for k in valid)
    close = difflib.get_close_matches(str(key), valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key {key!r} in {where}{hint}; valid keys: {', '.join(valid)}"


def check_batch(cfg: Mapping, where: str) -> int | None:
    """``cfg['batch']``: None or an int >= 1.

    Raises:
        ConfigError: Naming ``where`` and the value.
    """
    batch = cfg.get("batch")
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise ConfigError(f"{where} 'batch': expected None or an int >= 1, got {batch!r:.100}")
    return batch


CALLERS = ("collector", "evaluator")


def check_caller(caller: Any, where: str) -> None:
    """Raise ``ConfigError`` unless ``caller`` is DI-engine's 'collector' or 'evaluator'."""
    if caller not in CALLERS:
        raise ConfigError(f"{where} caller: expected 'collector' or 'evaluator', got {caller!r}")


def load_config_file(path: str | Path) -> EasyDict:
    """Load a config module and return its env config tree.

    The module defines either ``main_config`` and ``create_config`` in
    DI-engine's shape, or a single ``config`` dict. ``create_config.env.type``,
    ``create_config.env.import_names`` and ``create_config.env_manager.type``
    are folded into ``main_config.env`` so one tree describes everything.

    Raises:
        ConfigError: If the file does not exist, fails to import, or defines neither.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    spec = importlib.util.spec_from_file_location(f"_ding_env_config_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise ConfigError(f"config file {str(path)!r} failed to load: {type(error).__name__}: {error}") from error
    if hasattr(module, "config"):
        return deep_merge_dicts(module.config, {})
    if not hasattr(module, "main_config"):
        raise ConfigError(f"config file {str(path)!r} defines neither 'config' nor 'main_config'")
    config = deep_merge_dicts(module.main_config, {})
    create = getattr(module, "create_config", None) or {}
    env_create = create.get("env", {})
    env = config.setdefault("env", EasyDict())
    for key in ("type", "import_names"):
        if key in env_create:
            env[key] = copy.deepcopy(env_create[key])
    manager_type = create.get("env_manager", {}).get("type")
    if manager_type is not None:
        env.setdefault("manager", EasyDict())["type"] = manager_type
    return EasyDict(config)


def set_by_path(config: dict, dotted_key: str, value: Any) -> None:
    """Set ``config['a']['b'] = value`` for ``dotted_key='a.b'``, creating dicts on the way."""
    *parents, last = dotted_key.split(".")
    node = config
    for part in parents:
        child = node.get(part)
        if child is None:
            child = node[part] = EasyDict()
        elif not isinstance(child, dict):
            raise ConfigError(f"cannot set {dotted_key!r}: {part!r} holds {child!r}, not a dict")
        node = child
    node[last] = value


def _to_plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _to_plain(item) for key, item in value.items()}
    return copy.deepcopy(value)


def _merge_into(target: dict, new: dict) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge_into(target[key], value)
        else:
            target[key] = value
