"""The names a renamed star import no longer brings (``from ding.utils import *`` -> ``from ding_env.utils import *``).

A star import brings every public name of its module, so the rename changes which names a file has
without changing one of its lines. This module finds the names the file uses and binds nowhere
(its free names), and reports each that no star import of the ported file provides any more, at
the line of its first use, with what DI-engine's name is and where to import it from.
"""

from __future__ import annotations

import ast
import builtins
import importlib

from ding_env.porting.findings import ERROR, NAMES, Item
from ding_env.porting.names import MISSING, rename_module, resolve

# Names code has without binding them: every module's, and a class body's and method's implicit ones.
IMPLICIT_NAMES = {
    "__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__", "__builtins__", "__path__",
    "__module__", "__qualname__", "__class__", "__annotations__", "__dict__",
}  # fmt: skip


def star_import_items(path: str, tree: ast.Module) -> list[Item]:
    """An error for each name ``tree`` uses that came from a renamed DI-engine star import and ding_env lacks.

    Nothing is reported when another star import's names are unknown here (a relative one, or a module
    that does not import).
    """
    stars = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
    ]
    renamed = [node.module for node in stars if not node.level and rename_module(node.module or "") is not None]
    if not renamed:
        return []
    if any(node.level for node in stars):  # a relative star import: the names it brings are the port's own
        return []
    provided: set[str] = set()
    for node in stars:
        module = rename_module(node.module or "") or node.module
        try:
            provided |= _public_names(importlib.import_module(module))
        except Exception:  # noqa: BLE001 - a module that fails to import here: what it brings is unknown
            return []
    items = []
    for name, line in _free_names(tree).items():
        if name in provided:
            continue
        # DI-engine's module of the name is one of the renamed star imports: the first that knows it says what it is.
        pairs = [(module, resolve(module, name)) for module in renamed]
        module, known = next(((m, r) for m, r in pairs if r.status != MISSING), pairs[0])
        sources = " or ".join(f"`from {source} import *`" for source in renamed)
        what = f"{name}: used here, it came from {sources}, and the renamed star import does not bring it"
        if known.status == MISSING:
            fix = f"ding_env has no {name}: import it by name from DI-engine (from {module} import {name}) or define it"
        else:
            fix = f"{known.fix} (from {module} import {name})"
        items.append(Item(path, line, ERROR, what, fix, NAMES))
    return items


def _public_names(module: object) -> set[str]:
    """What ``from module import *`` binds."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return set(names)
    return {name for name in dir(module) if not name.startswith("_")}


def _free_names(tree: ast.Module) -> dict[str, int]:
    """``{name: line of its first use}`` for the names ``tree`` reads and binds nowhere (nor are builtins).

    A name bound anywhere in the file counts as bound everywhere: a name this misses fails no less
    at run time, but one it reports is certainly unbound.
    """
    bound = set(dir(builtins)) | IMPLICIT_NAMES
    loaded: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loaded[node.id] = min(loaded.get(node.id, node.lineno), node.lineno)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return {name: line for name, line in sorted(loaded.items(), key=lambda item: item[1]) if name not in bound}
