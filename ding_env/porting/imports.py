"""What the rename does to each import statement of DI-engine modules: one plan serves the rewrite and the report.

A name the plan moves is written from its ding_env module; a name it leaves stays on DI-engine and is
reported for what it is (outside the env layer, not in ding-env yet, missing). A one-line statement is
rewritten as the statements its names need (``from ding_env.utils import ENV_REGISTRY; from ding.utils
import set_pkg_seed``), wherever it sits on its line. A statement over several lines keeps its lines: its
module is renamed whole when the names that move go to the renamed module, and every name that does not
belong there (or that should move but cannot) is "stuck", an error asking for a statement of its own.
Deriving both the written file and the report from the same plan keeps them from disagreeing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ding_env.porting.findings import ERROR, NAMES, NOTE, Item
from ding_env.porting.names import ALL_RENAMES, OUTSIDE, RENAMED, Resolution, rename_module, resolve
from ding_env.porting.rewrite import Change, Edit, apply_edits, encode, parse, rewrite_lines, split_lines
from ding_env.porting.spellings import spelling_edits


@dataclass(frozen=True)
class Stuck:
    """A name a statement over several lines cannot put where it belongs: an error of the report."""

    name: str
    what: str
    fix: str


@dataclass(frozen=True)
class ImportPlan:
    """What the rename does to one import statement.

    Attributes:
        node: The statement.
        resolutions: ``(alias, resolution)`` for each DI-engine name it imports (star imports have none).
        edit: The change to the source (None: the statement stays as it is).
        stuck: Names of a statement over several lines that end up where they do not exist.
    """

    node: ast.Import | ast.ImportFrom
    resolutions: tuple[tuple[ast.alias, Resolution], ...]
    edit: Edit | None
    stuck: tuple[Stuck, ...] = ()


def is_ding(module: str | None) -> bool:
    """Whether ``module`` is DI-engine's ``ding`` or a module under it."""
    return module is not None and (module == "ding" or module.startswith("ding."))


def plan_import(node: ast.Import | ast.ImportFrom, lines: list[str], module: str | None = None) -> ImportPlan | None:
    """The plan of ``node`` (None when it imports nothing of DI-engine).

    Args:
        node: An import statement of the module.
        lines: The module's lines (without their endings), for the statement's text.
        module: The absolute DI-engine module a relative ``from`` import means (see ``references``); None
            takes ``node.module`` (an absolute import).
    """
    if isinstance(node, ast.Import):
        aliases = [(alias, resolve(alias.name)) for alias in node.names if is_ding(alias.name)]
        if not aliases:
            return None
        return _plan_plain_import(node, lines, aliases)
    module = module if module is not None else (node.module if node.level == 0 else None)
    if not is_ding(module):
        return None
    if any(alias.name == "*" for alias in node.names):
        new = rename_module(module)
        return ImportPlan(node, (), _module_edit(node, lines, new) if new else None)
    aliases = [(alias, resolve(module, alias.name)) for alias in node.names]
    if node.lineno != node.end_lineno:
        return _plan_several_lines(node, lines, module, aliases)
    statements = _from_statements(node, module, aliases)
    if statements is None:
        return ImportPlan(node, tuple(aliases), None)
    whole = rename_module(module)
    if whole is not None and all(_target(resolution) == (whole, alias.name) for alias, resolution in aliases):
        edit = _module_edit(node, lines, whole)  # every name moves with the module: keep the statement's spelling
        if edit is not None:
            return ImportPlan(node, tuple(aliases), edit)
    return ImportPlan(node, tuple(aliases), _statement_edit(node, "; ".join(statements)))


def _plan_plain_import(node: ast.Import, lines: list[str], aliases: list) -> ImportPlan:
    """``import ding.envs as E, os``: each DI-engine module that the rename brings is renamed in place."""
    renamed = {id(alias): resolution.new for alias, resolution in aliases if resolution.status == RENAMED}
    if not renamed:
        return ImportPlan(node, tuple(aliases), None)
    if node.lineno != node.end_lineno:  # a backslash continuation: left, and every moving name is stuck
        stuck = [
            Stuck(resolution.name, "left on DI-engine: its `import` statement spans several lines", _OWN_LINE)
            for alias, resolution in aliases
            if id(alias) in renamed
        ]
        return ImportPlan(node, tuple(aliases), None, tuple(stuck))
    parts = [_alias(renamed.get(id(alias), alias.name), alias.asname) for alias in node.names]
    return ImportPlan(node, tuple(aliases), _statement_edit(node, "import " + ", ".join(parts)))


_OWN_LINE = "write it as a one-line import statement of its own, then port again"


def _plan_several_lines(node: ast.ImportFrom, lines: list[str], module: str, aliases: list) -> ImportPlan:
    """A ``from`` import over several lines: its module renamed whole, or the statement left; the misfits stuck."""
    whole = rename_module(module)
    moves_whole = whole is not None and any(_target(res) == (whole, alias.name) for alias, res in aliases)
    edit = _module_edit(node, lines, whole) if moves_whole else None
    stuck = []
    for alias, resolution in aliases:
        if edit is not None and _target(resolution) != (whole, alias.name):
            what = f"{resolution.status}, and the rename moves this import over several lines whole to {whole}"
            fix = f"import it from {module} in a one-line statement of its own, then port again"
            stuck.append(Stuck(resolution.name, what, f"{fix} ({resolution.fix})" if resolution.fix else fix))
        elif edit is None and resolution.status == RENAMED:
            what = f"left on DI-engine: the statement spans several lines and {resolution.new} is its ding_env name"
            stuck.append(Stuck(resolution.name, what, _OWN_LINE))
    return ImportPlan(node, tuple(aliases), edit, tuple(stuck))


def _target(resolution: Resolution) -> tuple[str, str] | None:
    """``(module, name)`` a moved name is imported as (module '' for a module imported whole), or None."""
    if resolution.status != RENAMED or resolution.new is None:
        return None
    module, _, name = resolution.new.rpartition(".")
    return module, name


def _from_statements(node: ast.ImportFrom, module: str, aliases: list) -> list[str] | None:
    """The statements a one-line ``from`` import becomes: the moved names by module, then those that stay."""
    moved: dict[str, list[str]] = {}
    statements: list[str] = []
    kept = []
    for alias, resolution in aliases:
        target = _target(resolution)
        if target is None:
            kept.append(_alias(alias.name, alias.asname))
            continue
        new_module, new_name = target
        bound = alias.asname or alias.name  # the name the code uses stays bound
        if not new_module:  # from ding import envs -> import ding_env as envs
            statements.append(f"import {new_name} as {bound}")
            continue
        moved.setdefault(new_module, []).append(_alias(new_name, None if bound == new_name else bound))
    if not moved and not statements:
        return None
    statements = [f"from {new_module} import {', '.join(names)}" for new_module, names in moved.items()] + statements
    if kept:
        statements.append(f"from {'.' * node.level}{node.module or ''} import {', '.join(kept)}")
    return statements


def _alias(name: str, asname: str | None) -> str:
    return name if asname is None else f"{name} as {asname}"


def _statement_edit(node: ast.stmt, new: str) -> Edit:
    return Edit(node.lineno, node.col_offset, node.end_col_offset or 0, new)


def _module_edit(node: ast.ImportFrom, lines: list[str], new: str) -> Edit | None:
    """The edit renaming the module of ``from MODULE import ...`` on the statement's first line (None: not there)."""
    spelled = "." * node.level + (node.module or "")
    line = encode(lines[node.lineno - 1])
    match = re.compile(rb"from\s+(" + re.escape(encode(spelled)) + rb")(?=[\s(\\])").match(line, node.col_offset)
    if match is None:
        return None
    return Edit(node.lineno, match.start(1), match.end(1), new)


def renamed_plain_imports(plans: list[ImportPlan]) -> dict[str, str]:
    """``{old: new}`` for each ``import ding.X`` (no ``as``) the rename renames: the code's uses follow it."""
    return {
        alias.name: resolution.new
        for plan in plans
        if isinstance(plan.node, ast.Import) and plan.edit is not None
        for alias, resolution in plan.resolutions
        if resolution.status == RENAMED and alias.asname is None and resolution.new
    }


def name_items(
    path: str, tree: ast.AST, plans: list[ImportPlan], spellings: list = (), defines: dict | None = None
) -> list[Item]:
    """The report's items for the DI-engine names of ``plans``: one per statement and kind of problem.

    Args:
        path: The file, as the report names it.
        tree: The file's module.
        plans: Its import plans.
        spellings: The ``SpellingFinding``s of the code's uses of renamed plain imports (``spelling_edits``).
        defines: ``{name: [port modules defining it]}``: a missing name one module of the port defines (a
            port of DI-engine's own tests, whose package exports its demo env) is imported from there.
    """
    groups: dict[tuple[int, str, str, str], list[str]] = {}
    items = []
    for plan in plans:
        stuck = {entry.name for entry in plan.stuck}
        for entry in plan.stuck:
            groups.setdefault((plan.node.lineno, ERROR, entry.what, entry.fix), []).append(entry.name)
        for alias, resolution in plan.resolutions:
            if resolution.name in stuck:
                continue
            if resolution.status != RENAMED:
                severity = NOTE if resolution.status == OUTSIDE else ERROR
                fix = resolution.fix
                own = (defines or {}).get(alias.name, []) if severity == ERROR else []
                if len(own) == 1:
                    fix = f"the port defines {alias.name} in {own[0]}: import it from there (from {own[0]} import ...)"
                groups.setdefault((plan.node.lineno, severity, resolution.status, fix), []).append(resolution.name)
    for (line, severity, what, fix), names in groups.items():
        items.append(Item(path, line, severity, f"{', '.join(names)}: {what}", fix, NAMES))
    items += [Item(path, found.line, found.severity, found.what, found.fix, NAMES) for found in spellings]
    return items


def plan_imports(tree: ast.AST, lines: list[str], relative=None) -> list[ImportPlan]:
    """The plans of every import statement of DI-engine modules in ``tree``.

    Args:
        tree: The module.
        lines: Its lines, without their endings.
        relative: ``relative(node)``: the absolute module a relative ``from`` import means when the
            rename should treat it as that module's import (None: relative imports are left as they are).
    """
    plans = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        module = relative(node) if relative is not None and isinstance(node, ast.ImportFrom) and node.level else None
        if isinstance(node, ast.ImportFrom) and node.level and module is None:
            continue
        plan = plan_import(node, lines, module)
        if plan is not None:
            plans.append(plan)
    return plans


_IMPORT_LINE = re.compile(
    r"^(?P<head>\s*(?:from|import)\s+)(?P<module>"
    + "|".join(re.escape(name) for name in sorted(ALL_RENAMES, key=len, reverse=True))
    + r")(?P<tail>[.\s,].*|$)"
)

_DING_IMPORT = re.compile(r"\s*(?:from|import)\s+ding\b")


def _rename_line(line: str) -> str:
    """A line of a file that does not parse, renamed as the plan of its statement would, or whole by the table."""
    body = line.lstrip()
    indent = len(encode(line)) - len(encode(body))
    try:
        tree = parse(body)
    except SyntaxError:
        tree = None
    if tree is not None and tree.body and all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in tree.body):
        edits = [plan.edit for plan in plan_imports(tree, [body]) if plan.edit is not None]
        return apply_edits(line, [Edit(1, edit.col + indent, edit.end_col + indent, edit.new) for edit in edits])[0]
    # The first line of a statement over several lines: its module renamed whole, as the plans do.
    return _IMPORT_LINE.sub(lambda match: match["head"] + ALL_RENAMES[match["module"]] + match["tail"], line)


def rename_imports_with_changes(text: str) -> tuple[str, list[Change]]:
    """``text`` with its import statements renamed by the plans, and the lines that changed.

    Only import statements and the code's dotted uses of the plain imports renamed (``spelling_edits``) are
    touched, so a docstring that mentions ``from ding.envs import`` stays.
    In a file that does not parse, each line that reads as an import is renamed on its own.
    """
    try:
        tree = parse(text)
    except SyntaxError:
        return rewrite_lines(text, lambda _, line: _rename_line(line) if _DING_IMPORT.match(line) else line)
    lines = [line for line, _ in split_lines(text)]
    plans = plan_imports(tree, lines)
    renamed = renamed_plain_imports(plans)
    edits = [plan.edit for plan in plans if plan.edit is not None] + spelling_edits(tree, lines, renamed)[0]
    return apply_edits(text, edits)


def rename_imports(source: str) -> str:
    """``source`` with its DI-engine imports renamed by the plans, every other byte kept."""
    return rename_imports_with_changes(source)[0]
