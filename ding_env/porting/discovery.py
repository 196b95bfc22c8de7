"""What ``ding-env port --try`` imports and which DI-engine configs it runs, found in the port's files.

Every config file of the port is loaded as ``ding-env run`` loads it. One that fails to load (a
DI-engine import at its top, a package not installed) is a failure of the port, named with its
line: ``ding-env run`` refuses it. A module under ``config/`` that defines no config is not one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ding_env.porting.known_errors import traced

SKIPPED = re.compile(r"^(test_.*|.*_test|conftest|setup|.*_main)$")  # *_main: DI-engine's training scripts
_NO_CONFIG = "defines neither 'config' nor 'main_config'"  # load_config_file's words for a module that is no config


def module_names(root: Path, folder: Path) -> tuple[dict[str, Path], list[Path]]:
    """The env modules under ``folder`` as importable from ``root`` (``{name: file}``), and the config files.

    Tests, ``setup.py`` and DI-engine's training scripts (``entry/``, ``*_main.py``) are left out; config
    modules (``config/`` or ``*_config.py``) are loaded as configs, not imported.
    """
    modules: dict[str, Path] = {}
    configs: list[Path] = []
    files = [folder] if folder.is_file() else sorted(folder.rglob("*.py"))
    for path in files:
        parts = path.relative_to(root).with_suffix("").parts
        if "__pycache__" in parts or SKIPPED.match(parts[-1]) or "entry" in parts:
            continue
        if "config" in parts[:-1] or parts[-1].endswith("_config"):
            if parts[-1] != "__init__":  # a config package's __init__ is no config (its relative imports fail alone)
                configs.append(path)
            continue
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules, configs


@dataclass
class Configs:
    """The port's config files that loaded, by the env type they name, and those that did not load.

    Attributes:
        by_type: ``{env type: [config file, ...]}`` in file order.
        unloaded: One dict per config file ``ding-env run`` cannot load: ``config`` (relative to the port),
            ``error``, ``where`` (``file:line``) and ``fix`` when known.
    """

    by_type: dict[str, list[Path]] = field(default_factory=dict)
    unloaded: list[dict] = field(default_factory=list)


def find_configs(config_files: list[Path], folder: Path) -> Configs:
    """Load each of ``config_files`` (files of the port at ``folder``) as ``ding-env run`` does."""
    from ding_env.config import load_config_file
    from ding_env.config_di_engine import di_engine_import_fix
    from ding_env.errors import ConfigError

    base = folder if folder.is_dir() else folder.parent
    found = Configs()
    for path in config_files:
        try:
            env_type = load_config_file(path).get("env", {}).get("type")
        except ConfigError as error:
            if _NO_CONFIG in str(error):
                continue  # a helper module or an __init__.py beside the configs
            cause = error.__cause__
            failure = traced(cause if cause is not None else error, folder)
            if cause is not None:
                failure["error"] = f"{type(cause).__name__}: {cause}"[:600]
                fix = di_engine_import_fix(cause, path)
                if fix is not None:
                    failure["fix"] = fix
            else:
                failure["error"] = str(error)[:600]
            found.unloaded.append({"config": str(path.relative_to(base)), **failure})
            continue
        if env_type is not None:
            found.by_type.setdefault(env_type, []).append(path)
    return found
