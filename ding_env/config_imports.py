"""Whether a config file's ``import_names`` reach the modules beside it, or others of the same names first.

A config in a package tree (a port of DI-engine's ``dizoo``, say) names its env modules by their package
path (``dizoo.box2d.bipedalwalker.envs.bipedalwalker_env``). Python takes them from the first folder on
``sys.path`` that has them: run from elsewhere than the tree's root, ding-env's own ``dizoo`` answers for
DI-engine's package names, and the env would silently be the built-in one, not the one beside the config.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Iterable
from pathlib import Path


def package_root(path: Path) -> Path | None:
    """The folder above the outermost package holding the file ``path`` (None when its folder is no package)."""
    folder = path.resolve().parent
    if not (folder / "__init__.py").is_file():
        return None
    while (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder.parent


def module_file(root: Path, name: str) -> Path | None:
    """The file under ``root`` that the module ``name`` is, when ``root`` has it."""
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def warn_shadowed_imports(config_path: Path, import_names: Iterable[object]) -> None:
    """Warn for each module of ``import_names`` that the config's own tree has, but that imports from elsewhere.

    Finding a module imports its parent packages (as importing it would next).
    """
    root = package_root(config_path)
    if root is None:
        return
    for name in import_names:
        own = module_file(root, name) if isinstance(name, str) and name else None
        if own is None:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError as error:
            if not (error.name and (name == error.name or name.startswith(f"{error.name}."))):
                continue  # a module its package imports is missing: importing the env module reports it
            spec = None  # its package is nowhere on sys.path: the tree's root is not on it
        except Exception:  # noqa: BLE001 - a package that fails to import: importing the env module reports it
            continue
        origin = None if spec is None or spec.origin is None else Path(spec.origin).resolve()
        if origin is None:
            found = "imports nothing (its package is not on sys.path)"
        elif origin != own.resolve():
            found = f"imports {origin}, as another folder on sys.path comes first"
        else:
            continue
        warnings.warn(
            f"config file {str(config_path)!r}: import_names {name!r} {found}, not {own} beside the config: run "
            f"from {root}, or with PYTHONPATH={root}",
            stacklevel=4,  # the caller of load_config_file
        )
