"""References to modules that the import table alone does not see: relative imports and module-path strings.

DI-engine's own tests import their package's modules relatively (``from ..base_env_manager import
EnvState`` in ``ding/envs/env_manager/tests``) and register envs by strings
(``entry_point='ding.envs.env.tests.test_ding_env_wrapper:FakeEnvForTest'``). A relative import that
leaves the port means a DI-engine module when the code sits in DI-engine's tree: it is renamed as that
module's import. One that climbs above the port's top-level package (a copy of the tests folder alone)
fails in Python, so it is an error naming the ding_env module of that name when there is one. A string
naming a module the rename brings is renamed with it; one naming a module ding_env does not have is an
error, pointing at the port's own module of that name when it has one.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from ding_env.porting.findings import ERROR, NAMES, WARNING, Item
from ding_env.porting.names import MISSING, OUTSIDE, RENAMED, rename_module, resolve
from ding_env.porting.rewrite import Edit, encode

_MODULE_PATH = re.compile(r"(?P<module>ding(?:\.[A-Za-z_]\w*)+)(?::(?P<attr>[A-Za-z_][\w.]*))?")


@dataclass(frozen=True)
class Place:
    """Where a file of the port sits.

    Attributes:
        package: The dotted package of the file's folder in SRC, as a tuple (its ``__init__.py`` chain):
            ``('ding', 'envs', 'env_manager', 'tests')`` for a file of DI-engine's own tree.
        top: How many names of ``package`` the ported folder itself has (SRC's folder's chain): a relative
            import whose anchor is shorter leaves the port.
        modules: Every module of the port, dotted as the port imports it (for strings that name one).
    """

    package: tuple[str, ...] = ()
    top: int = 0
    modules: tuple[str, ...] = field(default_factory=tuple)


def relative_anchor(node: ast.ImportFrom, place: Place) -> tuple[str, ...] | None:
    """The package a relative import starts from, or None when it climbs above the file's top-level package."""
    if node.level > len(place.package):
        return None
    return place.package[: len(place.package) - node.level + 1]


def absolute_module(node: ast.ImportFrom, place: Place) -> str | None:
    """The DI-engine module a relative import leaving the port means (None: it stays inside, or is not DI-engine's)."""
    anchor = relative_anchor(node, place)
    if anchor is None or len(anchor) >= max(place.top, 1) or anchor[:1] != ("ding",):
        return None
    return ".".join([*anchor, *([node.module] if node.module else [])])


def relative_items(path: str, tree: ast.AST, place: Place) -> list[Item]:
    """The relative imports that leave the port and are not DI-engine's (those are renamed): one item each."""
    items = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.level or absolute_module(node, place) is not None:
            continue
        spelled = "." * node.level + (node.module or "")
        anchor = relative_anchor(node, place)
        if anchor is None:
            what = f"`from {spelled} import ...` climbs above the top-level package: Python refuses it"
            items.append(Item(path, node.lineno, ERROR, what, _absolute_fix(node), NAMES))
        elif len(anchor) < max(place.top, 1):
            module = ".".join([*anchor, *([node.module] if node.module else [])])
            what = f"`from {spelled} import ...` imports {module}, outside the port"
            fix = "it imports only where the port sits inside that package: write the absolute module it means"
            items.append(Item(path, node.lineno, WARNING, what, fix, NAMES))
    return items


def _absolute_fix(node: ast.ImportFrom) -> str:
    """A hand edit for a relative import Python refuses, naming ding_env's module of that name when there is one."""
    names = ", ".join(alias.name if alias.asname is None else f"{alias.name} as {alias.asname}" for alias in node.names)
    candidates = _ding_env_modules(node.module.rpartition(".")[2]) if node.module else []
    if len(candidates) == 1:
        return f"write the absolute module it means; in ding_env that is `from {candidates[0]} import {names}`"
    return "write the absolute module it means (a DI-engine module: the ding_env module of that name)"


def _ding_env_modules(name: str) -> list[str]:
    """The dotted names of ding_env's modules called ``name`` (DI-engine's tests import their siblings by name)."""
    import ding_env

    home = Path(ding_env.__file__).resolve().parent
    return sorted(
        ".".join(("ding_env", *path.relative_to(home).with_suffix("").parts))
        for path in home.rglob(f"{name}.py")
        if "__pycache__" not in path.parts
    )


def string_references(path: str, tree: ast.AST, text_lines: list[str], place: Place) -> tuple[list[Edit], list[Item]]:
    """Edits renaming the strings that name a module the rename brings, and errors for those naming a missing one.

    A string names a module when it is one in full: ``'ding.envs.env_manager'``, or an entry point
    ``'ding.envs.env.tests.test_ding_env_wrapper:FakeEnvForTest'``.
    """
    edits, items = [], []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        match = _MODULE_PATH.fullmatch(node.value)
        if match is None or rename_module(match["module"]) is None:
            continue  # not a module path, or one of DI-engine's training code: its imports are reported
        module, attr = match["module"], match["attr"]
        name = attr.split(".")[0] if attr else None
        resolution = resolve(module, name)
        if resolution.status == MISSING and name is None and "." in module:
            # A dotted path to a class ('ding.envs.env.ding_env_wrapper.DingEnvWrapper'): its module, then the name.
            parent, _, last = module.rpartition(".")
            if (by_name := resolve(parent, last)).status == RENAMED:
                module, name, resolution = parent, last, by_name
        if resolution.status == OUTSIDE:
            continue
        if resolution.status == RENAMED:
            new_module = resolution.new if name is None else resolution.new.removesuffix(f".{name}")
            fits = name is None or resolution.new.endswith(f".{name}")  # the module part alone is renamed
            edit = _string_edit(node, text_lines, module, new_module) if fits else None
            if edit is not None:
                edits.append(edit)
                continue
            what = f"{node.value!r} names DI-engine's module {module}: the rename could not rewrite this string"
            items.append(Item(path, node.lineno, ERROR, what, f"write {new_module} for {module}", NAMES))
            continue
        # A module of the port by the same name (DI-engine's test registering its own class); not the module
        # itself, which a port of DI-engine's own tree keeps under DI-engine's name.
        tail = module.rpartition(".")[2]
        ours = [name for name in place.modules if name.rpartition(".")[2] == tail and name != module]
        what = f"{node.value!r} names DI-engine's module {module}, which ding_env does not have"
        if len(ours) == 1:
            fix = f"name the port's own module: {ours[0] + (f':{attr}' if attr else '')!r}"
        else:
            fix = "name the module that defines it now (keep DI-engine installed if it is DI-engine's)"
        items.append(Item(path, node.lineno, ERROR, what, fix, NAMES))
    return edits, items


def _string_edit(node: ast.Constant, lines: list[str], old: str, new: str) -> Edit | None:
    """The edit of a one-line string literal's ``old`` module (None when the literal is spelled otherwise)."""
    if node.lineno != node.end_lineno:
        return None
    segment = encode(lines[node.lineno - 1])[node.col_offset : node.end_col_offset]
    quote = segment[:1]
    if quote not in (b"'", b'"') or segment[1:-1] != encode(node.value):  # a prefix, escapes, triple quotes
        return None
    start = node.col_offset + 1
    return Edit(node.lineno, start, start + len(encode(old)), new)
