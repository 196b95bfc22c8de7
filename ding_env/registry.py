"""``ENV_REGISTRY``: env types by name, and the helpers that build envs from a config.

Types are registered three ways:

* ``@ENV_REGISTRY.register('cartpole')`` on a ``BaseEnv`` subclass;
* ``ENV_REGISTRY.register('cartpole', 'pkg.module:CartPoleEnv')``, imported on first use;
* the ``ding_env.envs`` entry-point group of an installed package (dizoo
  registers its envs this way), also imported on first use.

A name registered twice is an error naming both places, whatever the import order, with one
exception: ding-env's own built-in types (``cartpole``, ``atari``, ...: the classes the installed
``ding-env`` package names in its entry points) give way to a type that user code registers under
the same name (a DI-engine env ported by renaming its imports registers ``'cartpole'`` too), with a
warning naming both, and stay replaced if their module is imported later. Registering needs only a
name: an env of your own is registered with ``@ENV_REGISTRY.register('my_env')``.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import sys
import warnings
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any

from ding_env.errors import ConfigError, RegistryError
from ding_env.summary import describe_typed, describe_value

ENTRY_POINT_GROUP = "ding_env.envs"
# The distribution whose entry points are ding-env's built-in types.
BUILTIN_DISTRIBUTION = "ding-env"


def import_object(path: str) -> Any:
    """Import ``'package.module:Name'`` (or ``'package.module.Name'``) and return the object.

    Raises:
        RegistryError: If the module or the name cannot be found.
    """
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise RegistryError(f"{path!r} is not of the form 'package.module:Name'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise RegistryError(f"cannot import module {module_name!r} for {path!r}: {error}") from error
    try:
        return getattr(module, attr)
    except AttributeError:
        raise RegistryError(f"module {module_name!r} has no attribute {attr!r}") from None


class Registry:
    """A name -> object table whose entries may be import paths resolved on first use.

    Args:
        kind: What the registry holds, used in error messages ('env', ...).
        entry_point_group: Entry-point group scanned for lazy entries.
    """

    def __init__(self, kind: str, entry_point_group: str | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, Any] = {}
        # name -> where it was registered (a place string, or the object, whose source is read only for an error)
        self._places: dict[str, Any] = {}
        self._builtins: set[str] = set()  # names whose entry is still ding-env's own built-in type
        # name -> 'module:Name' of ding-env's own type of that name (from the ding-env package's entry points)
        self._builtin_paths: dict[str, str] = {}
        self._entry_point_group = entry_point_group
        self._entry_points_loaded = entry_point_group is None

    def register(self, name: str, obj: Any = None, force_overwrite: bool = False) -> Any:
        """Register ``obj`` under ``name``; with no ``obj``, return a class decorator.

        Example::

            @ENV_REGISTRY.register("my_env")
            class MyEnv(BaseEnv): ...

        Args:
            name: The type name used in configs (``env.type``).
            obj: The object, or an import path ``'module:Name'`` resolved lazily.
            force_overwrite: Replace an existing entry instead of raising.

        Raises:
            RegistryError: If ``name`` is taken by another object (the entry points of installed
                packages count, whatever the import order); the message names both places. A
                built-in type of ding-env's is replaced instead, with a warning.
        """
        if obj is None:

            def decorator(target: Any) -> Any:
                self.register(name, target, force_overwrite)
                return target

            return decorator
        self._load_entry_points()
        # ding-env's own type: the class its package's entry point names (imported, or registered again).
        builtin = self._builtin_paths.get(name) == (obj if isinstance(obj, str) else _path_of(obj))
        if name in self._entries and not self._same_entry(name, obj):
            if builtin:
                return obj  # a user's type of this name replaced the built-in one already
            if name in self._builtins:
                warnings.warn(
                    f"{self.kind} type {name!r}: {_place_of(obj)} replaces ding-env's built-in {self.place(name)}",
                    stacklevel=3,
                )
            elif not force_overwrite:
                raise RegistryError(
                    f"{self.kind} type {name!r} is registered twice: first by {self.place(name)}, "
                    f"again by {_place_of(obj)}. Register one of them under another name "
                    f"(or pass force_overwrite=True to replace the first on purpose)"
                )
        self._entries[name] = obj
        self._places[name] = obj
        if builtin:
            self._builtins.add(name)
        else:
            self._builtins.discard(name)
        return obj

    def _same_entry(self, name: str, obj: Any) -> bool:
        # The same object, or the class a lazy path names (its module imported), or the class of a reloaded module.
        existing = self._entries[name]
        existing_path = existing if isinstance(existing, str) else _path_of(existing)
        return existing is obj or existing_path == (obj if isinstance(obj, str) else _path_of(obj))

    def get(self, name: str) -> Any:
        """The object registered as ``name``, importing it if needed.

        Raises:
            RegistryError: Naming the unknown type, a close match and the known types.
        """
        self._load_entry_points()
        if name not in self._entries:
            known = sorted(self._entries)
            close = self.close_name(name)
            hint = f" (did you mean {close!r}?)" if close else ""
            raise RegistryError(
                f"unknown {self.kind} type {name!r}{hint}; registered: {', '.join(known) or 'none'}. "
                f"Add the module that registers it to 'import_names'."
            )
        entry = self._entries[name]
        if not isinstance(entry, str):
            return entry
        # Importing the module may register the name anew: a ported module at the built-in's import path
        # replaces the built-in class (with a warning), and that class is the one meant, even when the
        # module no longer defines the class the entry names.
        try:
            imported = import_object(entry)
        except RegistryError:
            registered = self._entries[name]
            # Only a module that did import counts: one that failed after registering the name is an error.
            if isinstance(registered, str) or entry.partition(":")[0] not in sys.modules:
                raise
            return registered
        registered = self._entries[name]
        if registered is not entry and not isinstance(registered, str):
            return registered
        self._entries[name] = imported
        return imported

    def source(self, name: str) -> str:
        """Where ``name`` is defined, as ``'module:Name'``, without importing it."""
        self._load_entry_points()
        entry = self._entries[name]
        return entry if isinstance(entry, str) else _path_of(entry)

    def place(self, name: str) -> str:
        """Where ``name`` was registered: ``'module:Name (file:line)'``, or the entry point and its package."""
        self._load_entry_points()
        return _place_of(self._places[name])

    def is_builtin_class(self, obj: Any) -> bool:
        """Whether ``obj`` is the class of one of ding-env's built-in types, by its module and name."""
        self._load_entry_points()
        return _path_of(obj) in self._builtin_paths.values()

    def close_name(self, name: str) -> str | None:
        """The registered name closest to ``name`` (a misspelling of it), or None."""
        self._load_entry_points()
        close = difflib.get_close_matches(name, sorted(self._entries), n=1)
        return close[0] if close else None

    def names(self) -> list[str]:
        """All registered names, sorted."""
        self._load_entry_points()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._entries

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for entry_point in metadata.entry_points(group=self._entry_point_group):
            place = f"{entry_point.value} (entry point of the installed package {_distribution_of(entry_point)!r})"
            if entry_point.name in self._entries and self._entries[entry_point.name] != entry_point.value:
                raise RegistryError(
                    f"{self.kind} type {entry_point.name!r} is registered twice: first by "
                    f"{self.place(entry_point.name)}, again by {place}. Uninstall one of the packages"
                )
            self._entries[entry_point.name] = entry_point.value
            self._places[entry_point.name] = place
            if _distribution_of(entry_point) == BUILTIN_DISTRIBUTION:
                self._builtins.add(entry_point.name)
                self._builtin_paths[entry_point.name] = entry_point.value


def _path_of(obj: Any) -> str:
    if not hasattr(obj, "__qualname__"):  # an instance registered as it is
        return repr(obj)
    return f"{obj.__module__}:{obj.__qualname__}"


def _place_of(obj: Any) -> str:
    """``'module:Name (file:line)'`` for a class or function, the path itself for a lazy entry."""
    if isinstance(obj, str):
        return obj
    try:
        file, line = inspect.getsourcefile(obj), inspect.getsourcelines(obj)[1]
    except (TypeError, OSError):  # builtins, instances and classes defined in a REPL have no source
        return _path_of(obj)
    return f"{_path_of(obj)} ({file}:{line})"


def _distribution_of(entry_point: metadata.EntryPoint) -> str:
    dist = getattr(entry_point, "dist", None)
    return dist.name if dist is not None else "unknown"


ENV_REGISTRY = Registry("env", ENTRY_POINT_GROUP)


def get_env_cls(cfg: dict) -> type:
    """The env class named by ``cfg.type``, after importing ``cfg.import_names``.

    A section without a ``type`` that names a Gymnasium id (``env_id``) is a ``DingEnvWrapper`` of it, as
    ``ding-env check`` and ``ding-env serve`` read such a section too.

    Raises:
        RegistryError: If ``type`` is unknown, or missing without an ``env_id``, or an import fails.
        ConfigError: If ``cfg`` is not a dict, or its ``type`` not a non-empty str.
    """
    if not isinstance(cfg, Mapping):
        raise ConfigError(f"env section: expected a dict of env keys, got {describe_typed(cfg)}")
    import_env_modules(cfg)
    if "type" not in cfg:
        if cfg.get("env_id"):
            from ding_env.env.env_id_wrapper import EnvIdWrapper  # imports the env layer only when asked

            return EnvIdWrapper
        raise RegistryError(
            "env config has no 'type'; set env.type to a registered env type (ding-env list shows them), or "
            "env.env_id to a Gymnasium id (such as 'CartPole-v1') for a DingEnvWrapper of it"
        )
    env_type = cfg["type"]
    if not isinstance(env_type, str) or not env_type:  # the registry's lookup would fail on it with a TypeError
        raise ConfigError(
            f"env.type: expected the name of a registered env type, such as 'cartpole', got {describe_typed(env_type)}"
        )
    return ENV_REGISTRY.get(env_type)


def import_env_modules(cfg: dict) -> None:
    """Import the modules ``cfg.import_names`` lists, so the env types they register are known.

    Raises:
        RegistryError: Naming the module that cannot be imported and why.
        ConfigError: When ``import_names`` is not a list of module names (a string would be read letter by letter).
    """
    names = cfg.get("import_names", []) or []
    if not isinstance(names, (list, tuple)) or not all(isinstance(name, str) and name for name in names):
        hint = f" (write [{names!r}])" if isinstance(names, str) else ""
        raise ConfigError(f"env.import_names: expected a list of module names, got {describe_value(names)}{hint}")
    for module_name in names:
        try:
            importlib.import_module(module_name)
        except ImportError as error:
            raise RegistryError(f"cannot import {module_name!r} listed in env.import_names: {error}") from error


def get_vec_env_setting(cfg: dict, collect: bool = True, eval_: bool = True) -> tuple[Callable, list, list]:
    """Everything needed to build collector and evaluator env managers from an env config.

    Returns:
        ``(env_fn, collector_env_cfgs, evaluator_env_cfgs)``: ``env_fn(cfg)``
        builds one env; each list holds independent per-env configs (empty
        when the matching flag is False). With ``cfg.batch`` (a ``DingEnvWrapper`` env), ``env_fn(cfg)``
        builds a batch env of ``batch`` envs and the lists hold one config per batch env.

    Raises:
        ConfigError: For ``batch`` on an env class that builds no batch envs.
    """
    env_cls = get_env_cls(cfg)
    collector_cfgs = env_cls.create_collector_env_cfg(cfg) if collect else []
    evaluator_cfgs = env_cls.create_evaluator_env_cfg(cfg) if eval_ else []
    if cfg.get("batch") is None:
        return env_cls, collector_cfgs, evaluator_cfgs
    if getattr(env_cls, "batch_env", None) is None:
        raise ConfigError(
            f"env config 'batch'={cfg['batch']!r}: env type {cfg['type']!r} ({env_cls.__qualname__}) builds no batch "
            "envs (DingEnvWrapper and most of its subclasses do)"
        )
    return env_cls.batch_env, collector_cfgs, evaluator_cfgs
