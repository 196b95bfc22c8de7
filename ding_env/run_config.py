"""Run configs: the env tree of a config file, validated, and the managers built from it.

A run config is DI-engine-shaped (``main_config`` + ``create_config``) or a
single ``config`` dict; see ``configs/cartpole.py``. Top-level keys:

* ``exp_name``: name of the run (used in output);
* ``seed``: base seed of the collector (dynamic) and evaluator (static) envs;
* ``env``: the env type, its settings, counts and manager settings (``manager``; ``evaluator_manager``
  overrides some of them for the evaluator, e.g. its own ``servers`` for a remote manager);
* ``policy``: free-form settings for the user's learner (not read here).

DI-engine's configs carry more sections (``policy``, ``world_model``, ...): every dict-valued
section beside ``env`` is left alone, and :func:`unused_sections` names them for a note. An env
class that declares no class ``config`` (most of DI-engine's) gets its env section as DI-engine
gives it; a class that declares one has its env section checked key by key. Either way the env
section is merged over the class's ``default_config()``, as DI-engine's ``compile_config`` does.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import math
from collections.abc import Mapping
from functools import partial
from numbers import Real
from pathlib import Path
from typing import Any

from easydict import EasyDict

from ding_env.config import (
    DI_ENGINE_ONLY_KEYS,
    MAKE_KWARGS_HINT,
    PIPELINE_KEYS,
    check_config_imports,
    deep_merge_dicts,
    default_cfg,
    load_config_file,
    set_by_path,
    unknown_key_message,
    with_replays_off,
)
from ding_env.env.base_env import BaseEnv
from ding_env.env.batch_env import is_batch_env_class
from ding_env.env.ding_env_wrapper import DingEnvWrapper
from ding_env.env_manager import BaseEnvManager, create_env_manager
from ding_env.env_manager.config import MANAGER_CONFIG, REMOTE_TYPES, ignored_placement_keys, manager_config
from ding_env.env_wrappers.wrapper_config import check_wrapper_config
from ding_env.errors import ConfigError, RegistryError
from ding_env.registry import ENV_REGISTRY, get_env_cls, get_vec_env_setting
from ding_env.summary import describe_typed
from ding_env.user_warnings import warn_at_caller

TOP_LEVEL_KEYS = ("exp_name", "seed", "env")
ENV_DEFAULTS = dict(collector_env_num=8, evaluator_env_num=5, n_evaluator_episode=5, stop_value=None)


def load_run_config(path: str | Path, overrides: list[str] | None = None) -> EasyDict:
    """Load ``path``, apply ``--set key.sub=value`` overrides, fill defaults and validate.

    ``path`` may also name an env without a file: a registered env type (``cartpole``) or a Gymnasium
    env id (``CartPole-v1``), with the run's defaults.

    Raises:
        ConfigError: For a missing file, an unknown key (with the valid keys), or a bad value.
    """
    cfg = named_env_config(str(path))
    from_file = cfg is None
    if from_file:
        cfg = load_config_file(path, check_imports=False)  # checked below, on the import_names --set leaves
    for override in overrides or []:
        key, sep, text = override.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set expects key.sub=value, got {override!r}")
        _check_override_section(override, key.strip())
        set_by_path(cfg, key.strip(), _parse_value(text.strip()))
    if from_file:
        check_config_imports(cfg, path)
    return validate_run_config(cfg, str(path))


# DI-engine's sections a file's values are folded from as it loads: where each of their keys lives in the run config.
FOLDED_SECTIONS = {
    "env_manager": "the manager's keys are env.manager's (--set env.manager.type=subprocess)",
    "create_config": "its env type and import_names are env.type and env.import_names, its env_manager.type is "
    "env.manager.type (--set env.manager.type=subprocess)",
    "main_config": "its env section is env (--set env.collector_env_num=4)",
}


def _check_override_section(override: str, key: str) -> None:
    """Refuse a ``--set`` of a section ``ding-env run`` does not read: it would change nothing.

    Raises:
        ConfigError: Naming the override and, for DI-engine's sections, the key to set instead.
    """
    section = key.split(".")[0]
    if section in TOP_LEVEL_KEYS:
        return
    if section in FOLDED_SECTIONS:  # read from the file, into the run config's keys, before --set applies
        raise ConfigError(
            f"--set {override!r} would change nothing: a config file's {section!r} is folded into the run config "
            f"as it loads, and --set changes the run config; {FOLDED_SECTIONS[section]}"
        )
    raise ConfigError(
        f"--set {override!r} would change nothing: {section!r} is not read here; ding-env run reads only "
        f"{', '.join(TOP_LEVEL_KEYS)}"
    )


def named_env_config(name: str) -> EasyDict | None:
    """The run config of the env ``name`` names, when it is no file: a registered env type or a Gymnasium id.

    Returns:
        None for a file name (a ``.py`` name, a file, or a folder that names no env), for ``load_config_file``.

    Raises:
        ConfigError: When ``name`` is none of them (with the registered types), or an env id no registry has.
    """
    if name.endswith(".py") or Path(name).is_file():
        return None
    from ding_env.env.gym_ids import GYM_PREFIXES, check_env_id, looks_like_env_id  # only for a name
    from ding_env.registry import ENV_REGISTRY

    if name in ENV_REGISTRY:
        return EasyDict(exp_name=name, env=dict(type=name))
    env_id = name.split(":", 1)[1] if name.startswith(GYM_PREFIXES) else name
    if env_id != name or looks_like_env_id(env_id):
        check_env_id(env_id, name)  # a typo gets Gymnasium's hint; a missing extra is named
        return EasyDict(exp_name=env_id.replace("/", "_"), env=dict(env_id=env_id))
    if Path(name).exists():  # a folder: load_config_file says so
        return None
    close = ENV_REGISTRY.close_name(name)
    # An env of the user's own is registered by a module of theirs, which a config file names.
    own = (
        "; an env class of your own runs from a config file whose env section names the type it is registered as "
        "and the module that registers it: config = dict(env=dict(type='my_env', import_names=['my_module']))"
    )
    raise ConfigError(
        f"{name!r} is no config file, registered env type ({', '.join(ENV_REGISTRY.names())}"
        f"{f'; did you mean {close!r}?' if close else ''}) or Gymnasium env id (such as CartPole-v1){own}"
    )


def validate_run_config(cfg: dict, where: str = "the config", need_servers: bool = True) -> EasyDict:
    """Fill defaults and check every key of a run config.

    Args:
        cfg: The config.
        where: Names the config in errors (its file).
        need_servers: Whether a remote manager must list its ``servers`` (see ``manager_config``).

    Raises:
        ConfigError: Naming the key, what was expected and what arrived.
    """
    if not isinstance(cfg, Mapping):
        raise ConfigError(f"{where}: expected a dict of sections (exp_name, seed, env, ...), got {describe_typed(cfg)}")
    cfg = EasyDict(cfg)
    for key in cfg:
        if key not in TOP_LEVEL_KEYS and not isinstance(cfg[key], dict):
            raise ConfigError(
                unknown_key_message(where, key, TOP_LEVEL_KEYS) + " (and sections for other parts, such as policy)"
            )
    if "env" not in cfg:
        raise ConfigError(f"{where} has no 'env' section")
    if not isinstance(cfg.env, dict):  # --set env=5: a file's own env section was checked as it loaded
        raise ConfigError(f"{where}: the env section 'env' must be a dict of env keys, got {describe_typed(cfg.env)}")
    cfg.setdefault("exp_name", Path(where).stem)
    if not isinstance(cfg.exp_name, str):
        raise ConfigError(f"{where}: 'exp_name' must be a str (the run's name), got {describe_typed(cfg.exp_name)}")
    cfg.setdefault("seed", 0)
    if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, int) or cfg.seed < 0:
        raise ConfigError(f"{where}: 'seed' must be an int >= 0, got {cfg.seed!r}")
    env = cfg.env
    for key, value in ENV_DEFAULTS.items():
        env.setdefault(key, value)
    try:
        env_cls = get_env_cls(env)
    except ConfigError as error:  # get_env_cls knows no file: the same error, naming it
        raise ConfigError(f"{where}: {error}") from error
    except RegistryError as error:
        raise RegistryError(f"{where}: {error}") from error
    check_env_section_keys(env, env_cls, where)
    default = default_cfg(env_cls)
    # The env's defaults under the section, as DI-engine's compile_config does: its envs read them from cfg.
    env = cfg.env = deep_merge_dicts(default, env)
    if isinstance(env_cls, type) and issubclass(env_cls, DingEnvWrapper):
        # Checked now, as a usage error naming the file: each env checks them as it is built, in its worker.
        # replay_path is the run's (where evaluation replays go), checked below as such.
        check_wrapper_config(with_replays_off(env), f"{where}: env section ({describe_env_section(env)})")
    for key in ("collector_env_num", "evaluator_env_num", "n_evaluator_episode"):
        if isinstance(env[key], bool) or not isinstance(env[key], int) or env[key] < 1:
            raise ConfigError(f"{where}: env.{key} must be an int >= 1, got {env[key]!r}")
    stop_value = env.stop_value
    # Checked now: the evaluation compares its mean return with it only after the whole collection.
    if stop_value is not None and (
        isinstance(stop_value, bool) or not isinstance(stop_value, Real) or math.isnan(stop_value)
    ):
        raise ConfigError(
            f"{where}: env.stop_value must be a number (the mean evaluation return that counts as solved) or None, "
            f"got {describe_typed(stop_value)}"
        )
    replay_path = env.get("replay_path")
    if replay_path is not None and not isinstance(replay_path, (str, Path)):
        raise ConfigError(f"{where}: env.replay_path must be a folder path or None, got {replay_path!r}")
    _check_managers(env, where, need_servers)
    return cfg


def check_env_section_keys(env: dict, env_cls: type, where: str, section: str | None = None) -> None:
    """Refuse a key of the env section that a class declaring its ``config`` does not take.

    Args:
        env: The env section.
        env_cls: The class it builds.
        where: Names the config file in errors.
        section: Says what the section builds (None: ``describe_env_section`` of it).
    """
    if not declares_config(env_cls):
        return
    default = default_cfg(env_cls)
    valid = set(default) | PIPELINE_KEYS
    for key in env:
        if key not in valid:
            section = describe_env_section(env) if section is None else section
            if key in DI_ENGINE_ONLY_KEYS:
                raise ConfigError(f"{where} env section ({section}): key {key!r} is {DI_ENGINE_ONLY_KEYS[key]}")
            if is_own_env(env_cls):
                tail = f". {env_cls.__qualname__} is ding-env's own env: it takes only these keys"
            elif set(difflib.get_close_matches(str(key), sorted(valid), n=1, cutoff=0.85)) & PIPELINE_KEYS:
                tail = ""  # a pipeline key mistyped (colector_env_num): the suggestion says it; nothing to declare
            elif issubclass(env_cls, DingEnvWrapper):  # keyword arguments of gym.make have a key of their own
                tail = f". {env_cls.__qualname__} takes DingEnvWrapper's keys; {MAKE_KWARGS_HINT}"
            else:
                tail = (
                    f". An env section takes the keys of {env_cls.__module__}.{env_cls.__qualname__}.config: if the "
                    f"env reads {key!r}, declare it there with its default (DI-engine's envs may read keys they "
                    "do not declare)"
                )
            raise ConfigError(unknown_key_message(f"{where} env section ({section})", key, valid) + tail)


def _check_managers(env: dict, where: str, need_servers: bool) -> None:
    """Validate ``env.manager`` (the collector's) and ``env.evaluator_manager`` over it (the evaluator's).

    ``manager_config`` knows neither the file nor the section, so its errors get both here.
    """
    manager = env.get("manager")
    try:
        manager_config(manager, env.collector_env_num, need_servers)
    except ConfigError as error:
        raise ConfigError(f"{where}: env.manager: {error}") from error
    for section, value in (("env.manager", manager), ("env.evaluator_manager", env.get("evaluator_manager"))):
        if isinstance(value, dict):
            refuse_env_pool(value.get("type"), f"{where}: {section}")
    evaluator_manager = env.get("evaluator_manager") or {}
    if not isinstance(evaluator_manager, dict):
        raise ConfigError(
            f"{where}: env.evaluator_manager must be a dict of manager settings, got {evaluator_manager!r}"
        )
    # env.manager passed for the collector, so an error now comes from evaluator_manager's keys, or from
    # env.manager's for the evaluator's env count (a wait_num above evaluator_env_num).
    section = "env.evaluator_manager (over env.manager)" if evaluator_manager else "env.manager (for the evaluator)"
    try:
        manager_config({**(manager or {}), **evaluator_manager}, env.evaluator_env_num, need_servers)
    except ConfigError as error:
        raise ConfigError(f"{where}: {section}: {error}") from error


def describe_env_section(env: dict) -> str:
    """What an env section builds, for messages: its type (and the env_id it gives), or its Gymnasium id."""
    if "type" not in env:
        return f"DingEnvWrapper of env_id {env.get('env_id')!r}"
    given = env.get("env_id")  # a type built on DingEnvWrapper runs this id instead of its own
    try:
        own = getattr(get_env_cls(env), "config", {}).get("env_id")
    except (ConfigError, RegistryError):  # a message about the section itself: say what it says
        own = None
    return f"type {env['type']!r}" + (f", env_id {given!r}" if given and given != own else "")


def is_own_env(env_cls: type) -> bool:
    """Whether ``env_cls`` is one of ding-env's built-in envs: a built-in type's class, from ding-env's own tree.

    Both: a port of DI-engine's dizoo defines classes of the same module and name, in its own folder.
    """
    try:
        file = Path(inspect.getfile(env_cls)).resolve()
    except (TypeError, OSError):
        return False
    root = Path(__file__).resolve().parents[1]  # the folder of ding_env and its dizoo
    return ENV_REGISTRY.is_builtin_class(env_cls) and file.is_relative_to(root)


def unused_sections(cfg: dict) -> list[str]:
    """The top-level sections of a run config that ``ding-env run`` does not read (DI-engine's ``policy``, ...)."""
    return [key for key in cfg if key not in TOP_LEVEL_KEYS]


def declares_config(env_cls: type) -> bool:
    """Whether ``env_cls`` (or a base class of its own) sets a class ``config`` of the keys it takes.

    DI-engine's envs mostly declare none and read what their env section holds; such a class gets
    its section as it is, as DI-engine hands it.
    """
    return any("config" in vars(klass) for klass in env_cls.__mro__ if klass not in (BaseEnv, object))


def refuse_env_pool(manager_type: Any, section: str) -> None:
    """Refuse the ``env_pool`` manager type for ``section``, saying how ding-env run steps EnvPool instead."""
    if manager_type == "env_pool":
        raise ConfigError(
            f"{section}: type 'env_pool' is DI-engine's PoolEnvManager, made from a config of its own "
            "in code; ding-env run steps EnvPool pools as batch envs in any manager: set env.batch=N (envs per "
            "pool) and env.batch_source='envpool', with an EnvPool task id as env_id (docs/batch-envs.md, "
            "'From a config', says which keys apply)"
        )


def build_managers(cfg: dict, manager_type: str | None = None) -> tuple[BaseEnvManager, BaseEnvManager]:
    """The collector manager (dynamic seeds, ``is_train=True``) and evaluator manager (static seeds).

    Both are seeded with ``cfg.seed`` but not launched.

    Args:
        cfg: A validated run config.
        manager_type: Overrides ``env.manager.type``.
    """
    # env.replay_path names where evaluation replays go (see run_job): DingEnvWrapper's envs built from the section
    # do not record there, as in DI-engine (env/section_configs.py).
    env_cls = get_env_cls(cfg.env)
    if is_batch_env_class(env_cls):
        raise ConfigError(
            f"env.type {cfg.env['type']!r} is a batch env ({env_cls.__qualname__}), which ding-env run does not build: "
            "it builds one env per env id from the section (DingEnvWrapper's types take batch=N for batch envs); "
            "serve it (ding-env serve CONFIG) or give it to a manager in code (docs/batch-envs.md)"
        )
    env_fn, collector_cfgs, evaluator_cfgs = get_vec_env_setting(cfg.env)
    manager_cfg = dict(cfg.env.get("manager") or {})
    if manager_type is not None:
        refuse_env_pool(manager_type, "--manager")
        manager_cfg["type"] = manager_type
    evaluator_own = dict(cfg.env.get("evaluator_manager") or {})
    evaluator_cfg = {**manager_cfg, **evaluator_own}
    # The evaluator's own keys only: those it inherits are the collector's, said first.
    evaluator_type = evaluator_cfg.get("type", MANAGER_CONFIG["type"])
    for section, keys in (
        ("env.manager", manager_cfg),
        ("env.evaluator_manager", {**evaluator_own, "type": evaluator_type}),
    ):
        ignored = ignored_placement_keys(keys)
        if ignored:
            warn_at_caller(f"{section}: {ignored}")
    _check_own_servers(manager_cfg, evaluator_cfg, len(evaluator_cfgs))
    collector = create_env_manager(manager_cfg, [partial(env_fn, env_cfg) for env_cfg in collector_cfgs])
    evaluator = create_env_manager(evaluator_cfg, [partial(env_fn, env_cfg) for env_cfg in evaluator_cfgs])
    collector.seed(cfg.seed, dynamic_seed=True)
    evaluator.seed(cfg.seed, dynamic_seed=False)
    return collector, evaluator


def _check_own_servers(collector_cfg: dict, evaluator_cfg: dict, evaluator_env_num: int) -> None:
    """Raise ``ConfigError`` when the evaluator would use the collector's env servers.

    A server serves one client at a time, so the second manager would be refused as busy; the
    evaluator's ``servers`` come from ``env.manager`` unless ``env.evaluator_manager`` sets its own.
    """
    if collector_cfg.get("type") not in REMOTE_TYPES or evaluator_cfg.get("type") not in REMOTE_TYPES:
        return
    collector_servers = collector_cfg.get("servers") or []
    shared = [address for address in evaluator_cfg.get("servers") or [] if address in collector_servers]
    if shared:
        raise ConfigError(
            f"env.evaluator_manager.servers: the evaluator needs env servers of its own, got the collector's "
            f"{shared} (a server serves one client at a time; env.manager.servers alone serves only the "
            f"collector). Start servers for the {evaluator_env_num} evaluator envs (ding-env serve TARGET --envs "
            f"{evaluator_env_num} --evaluator: evaluator envs, as create_evaluator_env_cfg makes them) and set "
            "env.evaluator_manager.servers=['tcp://HOST:PORT']"
        )


def _parse_value(text: str) -> Any:
    """A Python literal when ``text`` is one (``3``, ``0.5``, ``True``, ``'x'``, ``[1]``), else the string.

    ``true`` / ``false`` (any case) are booleans and ``none`` / ``null`` None, as in YAML and JSON.
    """
    words = {"true": True, "false": False, "none": None, "null": None}
    if text.strip().lower() in words:
        return words[text.strip().lower()]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
