"""The code's dotted uses of DI-engine modules it imports plainly (``import ding.envs.gym_env``), after the rename.

Renaming ``import ding.envs.gym_env`` to ``import ding_env.gym_env`` unbinds the name ``ding``, so each use
``ding.envs.gym_env.env`` is renamed with it (``ding_env.gym_env.env``). A use the rename cannot carry over
is reported: one spelled over several lines, a name the renamed module lacks (``ding.envs.NoSuchThing``),
and a use of ``ding`` that no import binds any more (``ding.utils.x`` after ``import ding.envs`` was renamed).
A function with its own ``ding`` (a parameter, a local) is left as it is.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from ding_env.porting.findings import ERROR, WARNING
from ding_env.porting.names import RENAMED, resolve
from ding_env.porting.rewrite import Edit, encode
from ding_env.porting.scan import dotted

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class SpellingFinding(NamedTuple):
    """A dotted use the rename leaves, at ``line`` of the file: what it is and what to change."""

    line: int
    severity: str
    what: str
    fix: str


def spelling_edits(
    tree: ast.AST, lines: list[str], renamed: dict[str, str]
) -> tuple[list[Edit], list[SpellingFinding]]:
    """The edits renaming the code's uses of the plainly imported modules ``renamed``; the uses they leave.

    Args:
        tree: The file's module.
        lines: Its lines, without their endings.
        renamed: The DI-engine modules whose plain import (no ``as``) the rename renames, and their new names.
    """
    edits: list[Edit] = []
    findings: list[SpellingFinding] = []
    if not renamed:
        return edits, findings
    ding_still_bound = any(
        (isinstance(node, ast.Name) and node.id == "ding" and isinstance(node.ctx, ast.Store))
        or (
            isinstance(node, ast.Import)
            and any(a.asname is None and a.name.split(".")[0] == "ding" and a.name not in renamed for a in node.names)
        )
        for node in ast.walk(tree)
    )
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, _FUNCTIONS) and _binds_ding(node):
            continue
        name = dotted(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
        if name in renamed:  # the longest renamed module the chain starts with: its inner links are not visited
            line = lines[node.lineno - 1] if node.lineno == node.end_lineno else ""
            if encode(line)[node.col_offset : node.end_col_offset] == encode(name):
                edits.append(Edit(node.lineno, node.col_offset, node.end_col_offset or 0, renamed[name]))
            else:
                findings.append(
                    SpellingFinding(
                        node.lineno,
                        WARNING,
                        f"`{name}` is spelled over several lines or with spaces, where the rename leaves it",
                        f"write `{renamed[name]}` there",
                    )
                )
            continue
        if name is not None and name.split(".")[0] == "ding":
            module = next((prefix for prefix in _prefixes(name) if prefix in renamed), None)
            if module is None:  # nothing renamed in it
                if not ding_still_bound:
                    findings.append(_unbound(node.lineno, name, renamed))
                continue
            if isinstance(node, ast.Attribute) and dotted(node.value) == module:
                finding = _attribute_finding(node.lineno, module, node.attr, renamed[module])
                if finding is not None:
                    findings.append(finding)
        pending.extend(ast.iter_child_nodes(node))
    return edits, findings


def _prefixes(name: str) -> list[str]:
    """``a.b.c`` -> ``a.b``, ``a`` (the modules a dotted name may start with)."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(len(parts) - 1, 0, -1)]


def _binds_ding(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> bool:
    """Whether ``function`` has a parameter or assigns a local named ``ding`` (its uses are not the module's)."""
    arguments = function.args
    names = [arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    names += [arg.arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None]
    return "ding" in names or any(
        isinstance(node, ast.Name) and node.id == "ding" and isinstance(node.ctx, ast.Store)
        for node in ast.walk(function)
    )


def _attribute_finding(line: int, module: str, attr: str, new_module: str) -> SpellingFinding | None:
    """The finding for ``module.attr`` when ``new_module.attr``, what the rename writes, does not exist."""
    resolution = resolve(module, attr)
    written = f"{new_module}.{attr}"
    if resolution.status == RENAMED and resolution.new == written:
        return None
    if resolution.status == RENAMED:
        return SpellingFinding(
            line, ERROR, f"`{module}.{attr}` becomes `{written}`, which does not exist", f"write `{resolution.new}`"
        )
    return SpellingFinding(line, ERROR, f"`{module}.{attr}`: {resolution.status}", resolution.fix)


def _unbound(line: int, name: str, renamed: dict[str, str]) -> SpellingFinding:
    """The finding for a use of ``ding`` once every import binding it is renamed."""
    imports = ", ".join(f"`import {old}`" for old in sorted(renamed))
    module, _, attr = name.rpartition(".")
    resolution = resolve(module, attr) if module else None
    if resolution is not None and resolution.status == RENAMED and resolution.new:
        fix = f"write `{resolution.new}`, and `import {resolution.new.rpartition('.')[0]}`"
    else:
        fix = f"import it from DI-engine (`import {module or name}`), or leave it out of the env code"
    return SpellingFinding(line, ERROR, f"`{name}`: the name `ding` is no longer bound once {imports} are renamed", fix)
