"""Config dicts: merging, strict validation of known keys, and loading files.

Configs are plain (nested) dicts, returned as ``EasyDict`` so both
``cfg['key']`` and ``cfg.key`` work, as in DI-engine.
"""

from __future__ import annotations

import copy
import difflib
import functools
import importlib.util
from collections.abc import Mapping
from numbers import Integral
from pathlib import Path
from typing import Any

from easydict import EasyDict

from ding_env.config_di_engine import di_engine_import_fix
from ding_env.config_imports import warn_shadowed_imports
from ding_env.errors import ConfigError
from ding_env.summary import describe_typed

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
        "exp_name",  # DI-engine's configs may name the run inside the env section too; it ignores it there
    }
)
# How a DingEnvWrapper config error ends when the key may be one of gym.make's.
MAKE_KWARGS_HINT = "gym.make's keyword arguments (max_episode_steps too) go in make_kwargs=dict(...)"
# Env-section keys of DI-engine's pipelines that ding-env's read elsewhere or not at all: what each is, and what to do.
_ENV_POOL_BATCH = (
    "the batch size of DI-engine's env_pool pipelines, which ding-env does not read (its env_pool type takes "
    "batch_size in code: PoolEnvManager): remove it"
)
DI_ENGINE_ONLY_KEYS = {
    "collector_batch_size": _ENV_POOL_BATCH,
    "evaluator_batch_size": _ENV_POOL_BATCH,
    "collector_episode_num": "the episodes per collection of DI-engine's parallel pipelines, which ding-env does not "
    "run: remove it",
    "episode_num": "DI-engine's episodes per env: move it to env.manager.episode_num, where ding-env's managers "
    "read it",
}


def is_count(value: Any, low: int = 1) -> bool:
    """Whether ``value`` is an int (a numpy integer too, never a bool) of at least ``low``."""
    return isinstance(value, Integral) and not isinstance(value, bool) and value >= low


def check_config_dict(cfg: Any, where: str) -> None:
    """Raise ``ConfigError`` naming ``where`` unless ``cfg`` is a dict of config keys (any ``Mapping``) or None."""
    if cfg is not None and not isinstance(cfg, Mapping):
        raise ConfigError(f"{where}: expected a dict of config keys (or None), got {describe_typed(cfg)}")


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


def check_env_keys(cfg: Mapping, config: Mapping, where: str, hint: str = "") -> None:
    """Refuse a key of an env's ``cfg`` that is neither in its class ``config`` nor a pipeline key.

    Args:
        cfg: The env's config.
        config: Its class config (its own keys).
        where: Names the config in errors.
        hint: Ends the error (where such a key goes instead, say).

    Raises:
        ConfigError: Naming ``where``, the unknown key, a close match and the env's own keys.
    """
    for key in cfg:
        if key not in config and key not in PIPELINE_KEYS:
            message = unknown_key_message(where, key, set(config) | PIPELINE_KEYS, listed=config)
            raise ConfigError(
                f"{message} (and the pipeline's, which any env section may hold: collector_env_num, manager, ...){hint}"
            )


def unknown_key_message(where: str, key: object, valid: Any, listed: Any = None) -> str:
    """The error text for an unknown config key, with a suggestion among ``valid``.

    Args:
        where: Names the config.
        key: The unknown key.
        valid: Every key the config takes.
        listed: The keys the text lists (None: ``valid``).
    """
    close = difflib.get_close_matches(str(key), sorted(str(name) for name in valid), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    listed = sorted(str(name) for name in (valid if listed is None else listed))
    return f"unknown key {key!r} in {where}{hint}; valid keys: {', '.join(listed)}"


def with_replays_off(env_section: Mapping) -> Mapping:
    """``env_section`` with its ``replay_path`` None: DingEnvWrapper's envs built from a section do not record.

    A config's ``env.replay_path`` is where its evaluation replays go (DI-engine's eval entry hands it to
    ``enable_save_replay``, and eleven of its dizoo configs set it); DI-engine's DingEnvWrapper never reads it,
    where ding-env's records every episode there: each collector episode would become a video.
    """
    if env_section.get("replay_path") is None:
        return env_section
    return EasyDict({**env_section, "replay_path": None})


def check_batch(cfg: Mapping, where: str) -> int | None:
    """``cfg['batch']``: None or an int >= 1.

    Raises:
        ConfigError: Naming ``where`` and the value.
    """
    batch = cfg.get("batch")
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise ConfigError(f"{where} 'batch': expected None or an int >= 1, got {batch!r:.100}")
    return batch


# Where a DingEnvWrapper config's batch env of `batch` sub-envs comes from (env.batch_sources).
BATCH_SOURCES = ("gym_vector", "envpool")


def check_batch_source(cfg: Mapping, where: str) -> str:
    """``cfg['batch_source']`` (default ``'gym_vector'``), one of ``BATCH_SOURCES``.

    Raises:
        ConfigError: Naming ``where``, the sources and the value.
    """
    source = cfg.get("batch_source", "gym_vector")
    if source not in BATCH_SOURCES:
        raise ConfigError(f"{where} 'batch_source': expected one of {BATCH_SOURCES}, got {source!r:.100}")
    return source


CALLERS = ("collector", "evaluator")


def check_caller(caller: Any, where: str) -> None:
    """Raise ``ConfigError`` unless ``caller`` is DI-engine's 'collector' or 'evaluator'."""
    if caller not in CALLERS:
        raise ConfigError(f"{where} caller: expected 'collector' or 'evaluator', got {caller!r}")


# What load_config_file reads, for its errors.
CONFIG_FILES = (
    "a config is a Python file (.py) defining main_config and create_config (DI-engine's shape) or one config dict"
    " (config; or cfg and env, as DI-engine's example configs do)"
)


def load_config_file(path: str | Path, check_imports: bool = True) -> EasyDict:
    """Load a config module and return its env config tree.

    The module defines either ``main_config`` and ``create_config`` in
    DI-engine's shape, or a single ``config`` dict. ``create_config.env.type``,
    ``create_config.env.import_names`` and ``create_config.env_manager.type``
    are folded into ``main_config.env`` so one tree describes everything.

    Args:
        path: The config file.
        check_imports: Warn when ``import_names`` import env modules from elsewhere than the package
            tree beside the file (``check_config_imports``).

    Raises:
        ConfigError: If the file does not exist, is a folder or not a Python file, fails to import,
            defines neither, or holds a section that is not a dict; the message names the file and the section.
    """
    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise ConfigError(f"config file {name!r} is a folder, not a file: {CONFIG_FILES}")
    if not path.is_file():
        raise ConfigError(f"config file {name!r} does not exist")
    if path.suffix != ".py":
        # importlib finds no loader for another suffix: without this the user got an AttributeError of its own.
        kind = f"a {path.suffix} file" if path.suffix else "a file without the .py suffix"
        raise ConfigError(
            f"config file {name!r}: expected a Python file (.py), got {kind}; {CONFIG_FILES} "
            "(JSON and YAML are not read: write the same dict as config = dict(env=dict(...)) in a .py file)"
        )
    spec = importlib.util.spec_from_file_location(f"_ding_env_config_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        # DI-engine itself: its env layer is ding-env's under another name; the rest belongs under __main__.
        fix = di_engine_import_fix(error, path)
        hint = f"; {fix}" if fix else ""
        raise ConfigError(f"config file {name!r} failed to load: {type(error).__name__}: {error}{hint}") from error
    if hasattr(module, "config"):
        config = deep_merge_dicts(_sections(module.config, "config", name), {})
        return check_config_imports(config, path) if check_imports else config
    if not hasattr(module, "main_config") and isinstance(getattr(module, "cfg", None), Mapping):
        return _example_config(module, name)
    if not hasattr(module, "main_config"):
        raise ConfigError(f"config file {name!r} defines neither 'config' nor 'main_config' (nor 'cfg' and 'env')")
    config = deep_merge_dicts(_sections(module.main_config, "main_config", name), {})
    create = _file_dict(
        getattr(module, "create_config", None), "create_config", name, "DI-engine's env and env_manager entries"
    )
    env_create = _file_dict(create.get("env"), "create_config['env']", name, "its type and import_names")
    manager_create = _file_dict(create.get("env_manager"), "create_config['env_manager']", name, "its type")
    env = config["env"] = config.get("env") or EasyDict()  # None: the keys create_config gives
    for key in ("type", "import_names"):
        if key in env_create:
            env[key] = copy.deepcopy(env_create[key])
    if manager_create.get("type") is not None:
        manager = _file_dict(env.get("manager"), "main_config['env']['manager']", name, "the manager's keys")
        env["manager"] = {**manager, "type": manager_create["type"]}
    config = EasyDict(config)
    return check_config_imports(config, path) if check_imports else config


def check_config_imports(config: EasyDict, path: str | Path) -> EasyDict:
    """``config``, after warning for env modules its ``import_names`` import from outside the tree beside ``path``.

    ``load_config_file`` runs it unless told not to: a caller that changes the config first (``--set``
    overrides) runs it on the changed config.
    """
    env = config.get("env")
    names = env.get("import_names") if isinstance(env, Mapping) else None
    if isinstance(names, (list, tuple)):
        warn_shadowed_imports(Path(path), names)
    return config


def _example_config(module: Any, name: str) -> EasyDict:
    """The tree of a config in the shape of DI-engine's ``ding/config/example`` files: ``cfg`` and ``env``.

    ``env`` is ``ding_env.gym_env.env`` (ported from ``ding.envs.gym_env.env``) or a ``partial`` of it whose
    keywords go to ``gymnasium.make``: the env section then describes a ``DingEnvWrapper`` of ``env_id``.
    """
    from ding_env import gym_env  # the env layer only for a config that needs it

    config = deep_merge_dicts(_sections(module.cfg, "cfg", name), {})
    if "env" not in config and "env_id" in config:
        # The PPOF shape: the policy's settings with env_id beside them.
        top = {key: config.pop(key) for key in ("exp_name", "seed") if key in config}
        config = EasyDict(**top, env=dict(env_id=config.pop("env_id")), policy=config)
    factory = getattr(module, "env", gym_env.env)
    make_kwargs = {}
    if isinstance(factory, functools.partial) and factory.func is gym_env.env and not factory.args:
        make_kwargs = dict(factory.keywords)
    elif factory is not gym_env.env:
        raise ConfigError(
            f"config file {name!r}: 'env' must be ding_env.gym_env.env or a partial of it with gymnasium.make "
            f"arguments (as DI-engine's example configs set it), got {describe_typed(factory)}; for an env class, "
            "register it and set cfg['env']['type']"
        )
    env = gym_env.without_unapplied_keys(config.get("env"), f"config file {name!r}: cfg['env']")
    if make_kwargs:
        own = _file_dict(env.get("make_kwargs"), "cfg['env']['make_kwargs']", name, "gymnasium.make's arguments")
        env["make_kwargs"] = {**own, **make_kwargs}
    config["env"] = env
    return EasyDict(config)


def _sections(config: Any, variable: str, name: str) -> Mapping:
    """``config`` (the file's ``config`` or ``main_config``), checked to be a dict whose ``env`` section is a dict."""
    if not isinstance(config, Mapping):
        raise ConfigError(
            f"config file {name!r}: {variable!r} must be a dict of sections (exp_name, seed, env, ...), "
            f"got {describe_typed(config)}"
        )
    _file_dict(config.get("env", {}), f"{variable}['env'] (the env section)", name, "the env's keys")
    return config


def _file_dict(value: Any, what: str, name: str, holds: str) -> Mapping:
    """``value`` when it is a dict, an empty one for None; else a ``ConfigError`` naming the file and ``what``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"config file {name!r}: {what} must be a dict ({holds}), got {describe_typed(value)}")
    return value


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


def default_cfg(env_cls: type) -> EasyDict:
    """The class's ``default_config()``, or an empty config for a class without one."""
    default_config = getattr(env_cls, "default_config", None)
    return EasyDict(default_config()) if callable(default_config) else EasyDict()


def per_batch_env(configs: list[EasyDict], cfg: dict, count_key: str) -> list[EasyDict]:
    """``configs`` (one per env), or one per batch env of ``cfg['batch']`` envs.

    Raises:
        ConfigError: When the env count is not a multiple of ``batch``, naming both.
    """
    batch = check_batch(cfg, "env config")
    if batch is None:
        return configs
    check_batch_source(cfg, "env config")  # here, not first in the workers building the batch envs
    if len(configs) % batch:
        multiple = max(batch, round(len(configs) / batch) * batch)
        raise ConfigError(
            f"env config '{count_key}'={len(configs)} counts envs and must be a multiple of 'batch'={batch} "
            f"(each batch env hosts {batch} of them): set it to {multiple}, say (on the command line: "
            f"--set env.{count_key}={multiple})"
        )
    return configs[: len(configs) // batch]
