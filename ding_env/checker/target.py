"""What ``ding-env check TARGET`` names: ``module:Class``, a registered env type, ``gym:ENV_ID`` or a config file."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from easydict import EasyDict

from ding_env.config import deep_merge_dicts, default_cfg, load_config_file, with_replays_off
from ding_env.env.base_env import BaseEnv
from ding_env.env.batch_env import BaseBatchEnv, is_batch_env_class
from ding_env.env.gym_ids import GYM_PREFIXES, check_env_id, looks_like_env_id
from ding_env.errors import ConfigError, RegistryError
from ding_env.registry import ENV_REGISTRY, get_env_cls, import_env_modules, import_object
from ding_env.summary import describe_value

# What a target that is a batch env class is told (the one-env checker and run take BaseEnvs).
IS_BATCH = ": a batch env, which ding_env.checker.check_batch_env(cls, cfg) checks (in Python)"


def resolve_target(
    target: str,
    config_path: str | None = None,
    batch_envs: bool = False,
    undeclared_keys: bool = False,
    role: str = "collector",
) -> tuple[Callable[..., Any], EasyDict | None]:
    """The env class (or a zero-argument factory) and its config for ``target``.

    With ``batch_envs`` (what an env server hosts), the target may also be a ``BaseBatchEnv`` class,
    and a ``DingEnvWrapper`` env section with ``batch=N`` builds its batch env of N sub-envs.

    ``gym:CartPole-v1`` is that Gymnasium (or legacy gym) id in ``DingEnvWrapper``; a config file
    whose env section has an ``env_id`` and no ``type``, or ``ding_env:DingEnvWrapper`` with
    ``--config``, is a ``DingEnvWrapper`` built from that env section. A registered type built on
    ``DingEnvWrapper`` (``cartpole``, ``atari``, ...) runs its own default ``env_id`` unless the
    config gives one. The modules in the config's ``import_names`` are imported first, so a type
    they register can be named. With ``--config`` to a ``module:Class`` that declares its ``config``,
    the section's keys are those ``ding-env run`` takes for it, unless ``undeclared_keys``
    (``--di-engine``: DI-engine's envs read keys they do not declare).

    An env class gets its section as one ``role`` env of ``ding-env run`` gets it (``env_cfg_for``); with
    ``undeclared_keys`` and no config, a class that takes a config gets its default one so. A
    ``DingEnvWrapper`` section of the ``'evaluator'`` role gets the evaluation preprocessing
    (``is_train=False``) unless it sets ``is_train``.

    Raises:
        RegistryError: If the class cannot be imported or the type is unknown.
        ConfigError: If a config file is missing or broken, or the target is not a ``BaseEnv`` (nor,
            with ``batch_envs``, a ``BaseBatchEnv``).
    """
    cfg = None
    gym_id = target.split(":", 1)[1] if target.startswith(GYM_PREFIXES) else None
    if gym_id is None and looks_like_env_id(target) and not Path(target).is_file():
        gym_id = target  # CartPole-v1 for gym:CartPole-v1 (no class or type name has that shape)
    if config_path is not None and gym_id is None and (target.endswith(".py") or Path(target).is_file()):
        raise ConfigError(
            f"TARGET {target!r} is a config file and --config {config_path} another: give one of them "
            f"(`{target}` alone, or a type or gym:ENV_ID with --config {config_path})"
        )
    if config_path is not None:
        env_type = target if gym_id is None and target in ENV_REGISTRY else None
        cfg = _loaded_env_section(config_path, is_target=False, gym_id=gym_id, env_type=env_type)
        import_env_modules(cfg)  # the types the config's modules register can be targets
    if gym_id is not None:
        if cfg is not None and cfg.get("env_id") not in (None, gym_id):
            raise ConfigError(
                f"--config {config_path}: its env section has env_id {cfg.env_id!r}, but TARGET is gym:{gym_id}, "
                f"which would replace it; give one id (drop env_id from the section, or use `{config_path}` as TARGET)"
            )
        if (cfg or {}).get("is_gymnasium") is not False:  # legacy gym only: its ids are checked when made
            check_env_id(gym_id, target)
        return _wrapper_factory(EasyDict({**(cfg or {}), "env_id": gym_id}), None, batch_envs, role), None
    if target.endswith(".py") or Path(target).is_file():
        env_cfg = _loaded_env_section(target, is_target=True)
        if "type" not in env_cfg and "env_id" in env_cfg:
            return _wrapper_factory(EasyDict(env_cfg), None, batch_envs, role), None
        env_cls = get_env_cls(env_cfg)
        if batch_envs and env_cfg.get("batch") is not None and _is_wrapper(env_cls):  # a type such as 'cartpole'
            return _wrapper_factory(EasyDict(env_cfg), env_cls, batch_envs, role), None
        if not batch_envs and is_batch_env_class(env_cls):
            what = f"env.type {env_cfg['type']!r} is {env_cls!r}"
            raise ConfigError(f"{target}: {what}, not a BaseEnv subclass{IS_BATCH}")
        if _is_wrapper(env_cls):
            return env_cls, EasyDict(with_replays_off(_in_role(env_cfg, role)))
        return env_cls, env_cfg_for(env_cls, env_cfg, role)
    if ":" in target:
        env_cls = import_object(target)
    elif target in ENV_REGISTRY:
        env_cls = ENV_REGISTRY.get(target)
    else:
        close = ENV_REGISTRY.close_name(target)
        raise RegistryError(
            f"cannot resolve {target!r}{f' (did you mean {close!r}?)' if close else ''}: give module:Class, a "
            f"Gymnasium env id (CartPole-v1), a config file, or one of the registered types "
            f"{', '.join(ENV_REGISTRY.names())}"
        )
    if cfg is not None and "type" in cfg and get_env_cls(cfg) is not env_cls:
        raise ConfigError(
            f"--config {config_path}: its env section names type {cfg.type!r}, but TARGET {target!r} is another "
            f"class, which would ignore that type; check the type itself with `ding-env check {config_path}`, "
            "or leave the type out of the section"
        )
    kinds = (BaseEnv, BaseBatchEnv) if batch_envs else BaseEnv
    if not (isinstance(env_cls, type) and issubclass(env_cls, kinds)):
        expected = "a BaseEnv or BaseBatchEnv subclass" if batch_envs else "a BaseEnv subclass"
        hint = IS_BATCH if is_batch_env_class(env_cls) else ""
        raise ConfigError(f"{target!r} is {env_cls!r}, not {expected}{hint}")
    if cfg is not None and "type" not in cfg and not _is_wrapper(env_cls) and not undeclared_keys:
        from ding_env.run_config import check_env_section_keys  # the run layer, only for config files

        named = f"for {env_cls.__module__}.{env_cls.__qualname__}"
        check_env_section_keys(cfg, env_cls, f"--config {config_path}", named)
    if _is_wrapper(env_cls):
        # A registered type such as 'cartpole' fixes its Gymnasium id in its class config; the base class needs one.
        if cfg is None and not env_cls.config.get("env_id"):
            raise ConfigError(f"{target!r} needs --config FILE whose env section has an env_id, or use gym:ENV_ID")
        return _wrapper_factory(EasyDict(cfg or {}), env_cls, batch_envs, role), None
    if cfg is None and undeclared_keys and _takes_cfg(env_cls):
        cfg = EasyDict()  # DI-engine mode checks a class that takes a config with its default one
    return env_cls, None if cfg is None else env_cfg_for(env_cls, cfg, role)


def env_cfg_for(env_cls: type, cfg: dict, role: str = "collector") -> EasyDict:
    """The config one ``role`` env of ``env_cls`` gets from the env section ``cfg``, as ``ding-env run`` builds it.

    The section over the class's default config goes through the class's ``create_collector_env_cfg`` (or
    ``create_evaluator_env_cfg`` for ``'evaluator'``), where DI-engine's envs set what their collector or
    evaluator envs read (``is_train``). A ``BaseBatchEnv`` class, which has none, gets the section itself.

    Raises:
        ConfigError: When that method raised or returned no config, naming the class.
    """
    method = f"create_{role}_env_cfg"
    create = getattr(env_cls, method, None)
    if create is None:
        return EasyDict(cfg)
    section = EasyDict(deep_merge_dicts(default_cfg(env_cls), cfg))
    section[f"{role}_env_num"] = 1
    called = f"{env_cls.__module__}.{env_cls.__qualname__}.{method}(env section)"
    try:
        configs = create(section)
    except Exception as error:  # noqa: BLE001 - re-raised naming the class and the call
        raise ConfigError(f"{called} raised {type(error).__name__}: {error}") from error
    if not isinstance(configs, (list, tuple)) or not configs or not isinstance(configs[0], dict):
        raise ConfigError(f"{called} returned {describe_value(configs)}, expected a list of one env config per env")
    return EasyDict(configs[0])


def _in_role(cfg: dict, role: str) -> dict:
    """A ``DingEnvWrapper`` section for ``role``: an evaluator's gets ``is_train=False`` unless it sets it."""
    return {**cfg, "is_train": cfg.get("is_train", role == "collector")} if role == "evaluator" else cfg


def _takes_cfg(env_cls: type) -> bool:
    """Whether ``env_cls(cfg)`` is a call its ``__init__`` takes (one positional parameter at least)."""
    try:
        parameters = list(inspect.signature(env_cls).parameters.values())
    except (TypeError, ValueError):
        return False
    return bool(parameters) and parameters[0].kind in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def _loaded_env_section(path: str, is_target: bool, gym_id: str | None = None, env_type: str | None = None) -> EasyDict:
    """The env section of config file ``path``, loaded once and validated as ``ding-env run`` validates it.

    A section that names a ``type`` is a run config, and so is one with an ``env_id`` given as the target
    (``ding-env run`` builds it as a ``DingEnvWrapper``), or one given with ``--config`` to a ``gym:ID``
    target (``gym_id``: the section of a ``DingEnvWrapper`` of that id) or to a registered type (``env_type``:
    the section of that type): a key ``ding-env run`` refuses (a misspelt env key, a manager key, a top-level
    key) is refused here too, with the same error. Another section (one configuring a ``module:Class`` target
    given with ``--config``) is the target's to read.

    Raises:
        ConfigError: For a file that does not load, has no env section, or holds a key ``ding-env run`` refuses.
        RegistryError: For a ``type`` that is not registered.
    """
    from ding_env.run_config import validate_run_config  # the run layer, only for config files

    loaded = load_config_file(path)
    env_cfg = loaded.get("env")
    if env_cfg is None:
        raise ConfigError(f"config file {path!r} has no 'env' section")
    if not isinstance(env_cfg, dict):
        return env_cfg
    implied = {"env_id": gym_id} if gym_id is not None else {"type": env_type} if env_type is not None else None
    implied = implied if "type" not in env_cfg else None
    if implied is None and "type" not in env_cfg and not (is_target and "env_id" in env_cfg):
        return env_cfg  # no run config: the target's to read
    validated = copy.deepcopy(loaded)  # validation fills in defaults: the section returned stays as written
    validated["env"] = {**validated["env"], **(implied or {})}
    # A remote manager's servers are given when the run starts (--set env.manager.servers=[...]): a server and
    # the checker read the config before they exist.
    validate_run_config(validated, str(path), need_servers=False)
    return env_cfg


def _is_wrapper(env_cls: Any) -> bool:
    """Whether ``env_cls`` is ``DingEnvWrapper`` or a subclass (a registered type such as 'cartpole')."""
    from ding_env.env import DingEnvWrapper

    return isinstance(env_cls, type) and issubclass(env_cls, DingEnvWrapper)


def _wrapper_factory(
    cfg: EasyDict, wrapper_cls: type | None = None, batch_envs: bool = False, role: str = "collector"
) -> Callable[[], Any]:
    if wrapper_cls is None:
        from ding_env.env import DingEnvWrapper as wrapper_cls

    # As when get_vec_env_setting builds them: a checked or served env records nothing.
    cfg = with_replays_off(_in_role(cfg, role))
    if batch_envs and cfg.get("batch") is not None:

        def make_env() -> BaseBatchEnv:
            return wrapper_cls.batch_env(EasyDict(cfg))

    else:

        def make_env() -> BaseEnv:
            return wrapper_cls(cfg=EasyDict(cfg))

    make_env.__qualname__ = f"{wrapper_cls.__name__}({cfg.get('env_id') or wrapper_cls.config.get('env_id')!r})"
    return make_env
