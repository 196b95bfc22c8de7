"""The code's dotted uses of DI-engine modules it imports plainly (``import ding.envs.gym_env``), after the rename.

Renaming ``import ding.envs.gym_env`` to ``import ding_env.gym_env`` unbinds the name ``ding``, so each use
``ding.envs.gym_env.env`` is renamed with it (``ding_env.gym_env.env``). A use the rename cannot carry over
is reported: one spelled over several lines, a name the renamed module does not reach
(``ding.envs.NoSuchThing``, at any depth of the chain), and a use of ``ding`` that no import binds any more
(``ding.utils.x`` after ``import ding.envs`` was renamed). A scope with a ``ding`` of its own (a parameter, a
local, a comprehension's variable) is left as it is, its decorators, defaults and annotations excepted: they
run in the enclosing scope.
"""

from __future__ import annotations

import ast
import importlib
import types
from typing import NamedTuple

from ding_env.porting.findings import ERROR, WARNING
from ding_env.porting.names import RENAMED, resolve
from ding_env.porting.rewrite import Edit, encode
from ding_env.porting.scan import dotted

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (*_FUNCTIONS, ast.Lambda, ast.ClassDef, *_COMPREHENSIONS)


class SpellingFinding(NamedTuple):
    """A dotted use the rename leaves, at ``line`` of the file: what it is and what to change."""

    line: int
    severity: str
    what: str
    fix: str


def spelling_edits(
    tree: ast.Module, lines: list[str], renamed: dict[str, str]
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
    ding_still_bound = _binding(tree, renamed) == _LOCAL  # by the module's own statements, after the rename
    # (node, whether ding is a local name where it runs, what a nested function's ding is: a class's names are
    # not its methods').
    pending: list[tuple[ast.AST, bool, bool]] = [(node, False, False) for node in tree.body]
    while pending:
        node, local, inherited = pending.pop()
        if isinstance(node, _SCOPES):
            pending += [(part, local, inherited) for part in _outer_parts(node)]
            binding = _binding(node, renamed)
            inner = binding == _LOCAL or (binding is None and inherited)
            if isinstance(node, ast.ClassDef) and binding == _LOCAL and _uses_ding(node):
                findings.append(_class_finding(node, renamed))
            nested = inherited if isinstance(node, ast.ClassDef) else inner
            pending += [(part, inner, nested) for part in _inner_parts(node)]
            continue
        name = dotted(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
        if local or name is None or name.split(".")[0] != "ding":
            pending += [(child, local, inherited) for child in ast.iter_child_nodes(node)]
            continue
        # A chain on ding (names and attributes only): renamed at its renamed module, checked past it, whole.
        module = next((prefix for prefix in (name, *_prefixes(name)) if prefix in renamed), None)
        if module is None:  # nothing renamed in it
            if not ding_still_bound:
                findings.append(_unbound(node.lineno, name, renamed))
            continue
        inner_node = node
        while dotted(inner_node) != module:
            inner_node = inner_node.value
        _rename(inner_node, module, renamed[module], lines, edits, findings)
        attrs = name[len(module) + 1 :].split(".") if name != module else []
        finding = _chain_finding(node.lineno, module, attrs, renamed[module])
        if finding is not None:
            findings.append(finding)
    return edits, findings


def _rename(
    node: ast.AST, name: str, new: str, lines: list[str], edits: list[Edit], findings: list[SpellingFinding]
) -> None:
    """The edit writing ``new`` for the spelling ``name`` of ``node``; a warning where it is not spelled so."""
    line = lines[node.lineno - 1] if node.lineno == node.end_lineno else ""
    if encode(line)[node.col_offset : node.end_col_offset] == encode(name):
        edits.append(Edit(node.lineno, node.col_offset, node.end_col_offset or 0, new))
        return
    what = f"`{name}` is spelled over several lines or with spaces, where the rename leaves it"
    findings.append(SpellingFinding(node.lineno, WARNING, what, f"write `{new}` there"))


def _prefixes(name: str) -> list[str]:
    """``a.b.c`` -> ``a.b``, ``a`` (the modules a dotted name may start with)."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(len(parts) - 1, 0, -1)]


def _outer_parts(scope: ast.AST) -> list[ast.AST]:
    """The parts of the nested scope ``scope`` that run in the enclosing one."""
    if isinstance(scope, _FUNCTIONS):
        arguments = scope.args
        every = (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg)
        annotations = [arg.annotation for arg in every if arg is not None and arg.annotation is not None]
        defaults = [*arguments.defaults, *(default for default in arguments.kw_defaults if default is not None)]
        return [*scope.decorator_list, *defaults, *annotations, *([scope.returns] if scope.returns else [])]
    if isinstance(scope, ast.Lambda):
        return [*scope.args.defaults, *(default for default in scope.args.kw_defaults if default is not None)]
    if isinstance(scope, ast.ClassDef):
        return [*scope.decorator_list, *scope.bases, *scope.keywords]
    return [scope.generators[0].iter]  # a comprehension's first iterable


def _inner_parts(scope: ast.AST) -> list[ast.AST]:
    """The parts of ``scope`` that run in its own scope."""
    if isinstance(scope, (ast.Module, *_FUNCTIONS, ast.ClassDef)):
        return list(scope.body)
    if isinstance(scope, ast.Lambda):
        return [scope.body]
    parts = [scope.key, scope.value] if isinstance(scope, ast.DictComp) else [scope.elt]
    for position, generator in enumerate(scope.generators):
        parts += [generator.target, *generator.ifs, *([generator.iter] if position else [])]
    return parts


_LOCAL, _GLOBAL = "local", "global"


def _binding(scope: ast.AST, renamed: dict[str, str]) -> str | None:
    """``_LOCAL`` when ``scope`` has a ``ding`` of its own after the rename, ``_GLOBAL`` for ``global ding``, or None.

    Its own: a parameter, an assignment (a walrus in a comprehension binds in the enclosing function), a
    loop, comprehension or match variable, a def, an import the rename keeps, or ``nonlocal ding``.
    """
    arguments = getattr(scope, "args", None)
    if isinstance(arguments, ast.arguments):
        every = (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg)
        if any(arg is not None and arg.arg == "ding" for arg in every):
            return _LOCAL
    bound = False
    in_comprehension = isinstance(scope, _COMPREHENSIONS)
    pending = _inner_parts(scope)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Global) and "ding" in node.names:
            return _GLOBAL
        if isinstance(node, ast.Nonlocal) and "ding" in node.names:
            return _LOCAL  # an enclosing function's
        if isinstance(node, ast.NamedExpr) and in_comprehension:  # its target is the enclosing function's
            pending.append(node.value)
            continue
        bound = bound or _binds(node, renamed)
        if isinstance(node, _COMPREHENSIONS):  # its own names are its own, but a walrus in it binds here
            bound = bound or any(isinstance(sub, ast.NamedExpr) and sub.target.id == "ding" for sub in ast.walk(node))
        if isinstance(node, _SCOPES):  # its own names are its scope's; its outer parts run here
            pending += _outer_parts(node)
            continue
        pending += ast.iter_child_nodes(node)
    return _LOCAL if bound else None


def _binds(node: ast.AST, renamed: dict[str, str]) -> bool:
    """Whether the statement or expression ``node`` itself binds ``ding`` (``del ding`` does not: it is a use)."""
    if isinstance(node, ast.Name):
        return node.id == "ding" and isinstance(node.ctx, ast.Store)
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
        return node.name == "ding"
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return node.name == "ding"
    if isinstance(node, ast.MatchMapping):
        return node.rest == "ding"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any(_import_binds_ding(node, alias, renamed) for alias in node.names)
    return False


def _uses_ding(scope: ast.ClassDef) -> bool:
    """Whether the class body ``scope`` reads ``ding`` in its own statements (not in its methods' bodies)."""
    pending = list(scope.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and node.id == "ding" and isinstance(node.ctx, ast.Load):
            return True
        pending += _outer_parts(node) if isinstance(node, _SCOPES) else ast.iter_child_nodes(node)
    return False


def _class_finding(scope: ast.ClassDef, renamed: dict[str, str]) -> SpellingFinding:
    """The finding for a class body that both assigns ``ding`` and reads it, whose reads are left as they are.

    Which ``ding`` a read in a class body means depends on the order the body runs in.
    """
    new = ", ".join(f"`{new}`" for new in sorted(set(renamed.values())))
    return SpellingFinding(
        scope.lineno,
        WARNING,
        f"class {scope.name} assigns `ding` and reads it in its body, where the rename leaves its uses",
        f"rename the class's own `ding`, then write {new} where the body means the module",
    )


def _import_binds_ding(node: ast.Import | ast.ImportFrom, alias: ast.alias, renamed: dict[str, str]) -> bool:
    """Whether ``alias`` of ``node`` binds ``ding`` once the rename is applied."""
    if alias.asname is not None:
        return alias.asname == "ding"
    if isinstance(node, ast.ImportFrom):
        return alias.name == "ding"
    return alias.name.split(".")[0] == "ding" and alias.name not in renamed


def _chain_finding(line: int, module: str, attrs: list[str], new_module: str) -> SpellingFinding | None:
    """The finding for ``module.attrs...`` when the rename's ``new_module.attrs...`` does not reach as far.

    The chain is followed through ``new_module`` as ``import new_module`` leaves it, while it names modules:
    an attribute of a class or a function is not looked at.
    """
    try:
        reached = importlib.import_module(new_module)
    except ImportError:  # the import line itself is reported
        return None
    old, new = module, new_module
    for attr in attrs:
        if not isinstance(reached, types.ModuleType):
            return None
        if hasattr(reached, attr):
            reached, old, new = getattr(reached, attr), f"{old}.{attr}", f"{new}.{attr}"
            continue
        resolution = resolve(old, attr)
        written = f"{new}.{attr}"
        if resolution.status == RENAMED and resolution.new == written:  # a module its package does not import
            what = f"`{old}.{attr}` becomes `{written}`, a module `import {new_module}` does not import"
            return SpellingFinding(line, ERROR, what, f"add `import {written}`")
        if resolution.status == RENAMED:
            what = f"`{old}.{attr}` becomes `{written}`, which does not exist"
            return SpellingFinding(line, ERROR, what, f"write `{resolution.new}`, and import its module")
        return SpellingFinding(line, ERROR, f"`{old}.{attr}`: {resolution.status}", resolution.fix)
    return None


def _unbound(line: int, name: str, renamed: dict[str, str]) -> SpellingFinding:
    """The finding for a use of ``ding`` once every import binding it is renamed."""
    imports = ", ".join(f"`import {old}`" for old in sorted(renamed))
    module, _, attr = name.rpartition(".")
    resolution = resolve(module, attr) if module else None
    if resolution is not None and resolution.status == RENAMED and resolution.new:
        fix = f"write `{resolution.new}`, and `import {resolution.new.rpartition('.')[0]}`"
    else:
        fix = f"import it from DI-engine (`import {module or name}`), or leave it out of the env code"
    verb = "are" if len(renamed) > 1 else "is"
    return SpellingFinding(
        line, ERROR, f"`{name}`: the name `ding` is no longer bound once {imports} {verb} renamed", fix
    )
