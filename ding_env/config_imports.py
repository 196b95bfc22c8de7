"""Whether a config file's ``import_names`` reach the modules beside it, or others of the same names first.

A config in a package tree (a port of DI-engine's ``dizoo``, say) names its env modules by their package
path (``dizoo.box2d.bipedalwalker.envs.bipedalwalker_env``). Python takes them from the first folder on
``sys.path`` that has them: run from elsewhere than the tree's root, ding-env's own ``dizoo`` answers for
DI-engine's package names, and the env would silently be the built-in one, not the one beside the config.
"""

from __future__ import annotations

import importlib.util
import sys
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
            f"config file {str(config_path)!r}: import_names {name!r} {found}, not {own} beside the config: "
            f"{where_to_run(root, origin)}",
            stacklevel=4,  # the caller of load_config_file
        )


def where_to_run(root: Path, origin: Path | None = None) -> str:
    """How to put ``root`` first on ``sys.path``, said for where the user is (``origin``: the module found instead).

    Python takes a module from the first folder on ``sys.path`` that has it. ``ding-env`` and ``python -m``
    put the current folder there; a script of one's own gets its own folder instead, and ``PYTHONPATH``
    comes after either.
    """
    root = root.resolve()
    here = Path.cwd().resolve()
    entries = [Path(entry or here).resolve() for entry in sys.path if isinstance(entry, str)]
    first = f"the folder first on sys.path that has the module must be {root}"
    if here != root:
        return (
            f"{first}: run from {root} (ding-env and python -m put the current folder first), or with PYTHONPATH={root}"
        )
    if root in entries:
        # The folder that answered instead: the first entry before root holding the module found.
        earlier = [
            entry for entry in entries[: entries.index(root)] if origin is not None and origin.is_relative_to(entry)
        ]
        before = (
            f" after {earlier[0]}, which has the package too" if earlier else " after another folder with the package"
        )
        return (
            f"{first}; it is the current folder and on sys.path, but{before}: take that folder off PYTHONPATH, or "
            f"put {root} first (sys.path.insert(0, ...) in a script)"
        )
    return (
        f"{first}; it is the current folder, but not on sys.path (a script gets its own folder there, not the "
        f"current one): run with ding-env or python -m, or set PYTHONPATH={root}"
    )
