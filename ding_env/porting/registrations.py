"""Which env types a port's import registered, and which env classes it defines that no type names.

``ding-env port --try`` tries every env type the port registers; an env class registered under no type
runs from no config, and the trial says so instead of passing it over in silence.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from ding_env.porting.packages import inside


def registered_by_port(name: str, before: tuple[str, str] | None, base: Path) -> bool:
    """Whether the port's import registered ``name``: a new name or path, or a class of the port's under the old path.

    A port of a module ding-env's dizoo has too registers its class under the built-in's very path
    (``dizoo.box2d.bipedalwalker.envs.bipedalwalker_env:BipedalWalkerEnv``): only where it is defined tells.
    """
    from ding_env.registry import ENV_REGISTRY

    if before is None or before[0] != ENV_REGISTRY.source(name):
        return True
    if before[1] == ENV_REGISTRY.place(name):
        return False
    try:
        file = inspect.getsourcefile(ENV_REGISTRY.get(name))
    except TypeError:  # an instance or a builtin: no source of its own
        return False
    return file is not None and inside(file, base)


def unregistered_env_classes(modules: list[str], registered: list[str]) -> list[str]:
    """``module:Class`` of each concrete ``BaseEnv`` subclass defined in ``modules`` that ``registered`` misses."""
    from ding_env.env.base_env import BaseEnv
    from ding_env.registry import ENV_REGISTRY

    named = {ENV_REGISTRY.get(name) for name in registered}
    found = []
    for module in modules:
        for name, value in vars(sys.modules[module]).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseEnv)
                and value.__module__ == module
                and not inspect.isabstract(value)
                and value not in named
            ):
                found.append(f"{module}:{name}")
    return sorted(found)
