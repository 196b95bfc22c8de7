"""A port's packages beside ding-env's own ``dizoo``: which names both have, and how both stay importable.

A port of DI-engine's ``dizoo`` tree (or of one of its folders) brings packages named as ding-env's:
``dizoo``, ``dizoo.box2d``, ``dizoo.classic_control``... Python imports a package from the first folder
on ``sys.path`` that has it, so with the port's root first, ding-env's built-in envs under those names
(``dizoo.classic_control.cartpole``) would no longer import. Each of ding-env's ``dizoo`` packages
extends its path with the same-named folders further on ``sys.path``; the port's packages of those names
get the same two lines, so both trees stay importable whichever comes first. A module both trees have
(DI-engine's ``bipedalwalker_env``) is the port's where the port comes first: the trial says so.
"""

from __future__ import annotations

import sys
from pathlib import Path

# What the port appends to an __init__.py of a package ding-env's dizoo has too.
JOIN_LINES = (
    "",
    "# ding-env port: ding-env's own dizoo packages of this name stay importable beside this one.",
    "from pkgutil import extend_path",
    "",
    "__path__ = extend_path(__path__, __name__)",
)


def package_of(folder: Path) -> list[str]:
    """The dotted package name of ``folder`` as a list (``['dizoo', 'maze']``): its chain of ``__init__.py``."""
    chain: list[str] = []
    folder = folder.resolve()
    while (folder / "__init__.py").exists():
        chain.insert(0, folder.name)
        folder = folder.parent
    return chain


def own_dizoo_home() -> Path:
    """ding-env's own ``dizoo`` folder (the one this package ships, whatever else extends its path)."""
    return Path(__file__).resolve().parents[2] / "dizoo"


def own_dizoo_names() -> tuple[set[str], set[str]]:
    """The dotted names of ding-env's own ``dizoo`` packages, and of its modules."""
    home = own_dizoo_home()
    packages, modules = set(), set()
    for path in home.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        parts = ("dizoo", *path.relative_to(home).with_suffix("").parts)
        if parts[-1] == "__init__":
            packages.add(".".join(parts[:-1]))
        else:
            modules.add(".".join(parts))
    return packages, modules


def joined_init(text: str) -> str | None:
    """``text`` of an ``__init__.py`` with its package path extended (None: it extends it already)."""
    if "extend_path" in text:
        return None
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text if not text or text.endswith(("\n", "\r")) else text + newline
    return body + newline.join(JOIN_LINES) + newline


def inside(file: str, folder: Path) -> bool:
    """Whether ``file`` lies under ``folder``."""
    return Path(file).resolve().is_relative_to(folder.resolve())


def installed_outside(module: str, folder: Path) -> bool:
    """Whether a top-level ``module`` exists on ``sys.path`` outside ``folder`` (an installed package)."""
    for entry in sys.path:
        if not entry or not Path(entry).is_dir() or inside(entry, folder):
            continue
        path = Path(entry) / module
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            return True
    return False


def hidden_installed_packages(modules: list[str], root: Path) -> list[str]:
    """The port's top-level packages (of ``modules``) named as a package installed elsewhere on ``sys.path``.

    With the port's ``root`` first on ``sys.path``, the port's package hides that one: a library that
    imports it (gym's MuJoCo envs import ``mujoco``) gets the port. ``dizoo`` is joined instead (above).
    """
    tops = sorted({module.split(".")[0] for module in modules} - {"dizoo"})
    return [top for top in tops if installed_outside(top, root)]
