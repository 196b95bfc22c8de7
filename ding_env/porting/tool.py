"""``ding-env port SRC --out DST``: port a file or a package folder, and report what is left.

Every file is copied byte for byte except the lines changed: import statements renamed by
``IMPORT_RENAMES`` (:mod:`ding_env.porting.imports`), relative imports and module-path strings that
name DI-engine's modules (:mod:`ding_env.porting.references`), and with ``--fix`` the mechanical fixes
of :mod:`ding_env.porting.fixes`. Where the port and its report go is :mod:`ding_env.porting.destination`.
The report (:mod:`ding_env.porting.report`) lists with ``file:line`` the DI-engine names the
rename does not bring, the hazards of the static scan, the fixes applied and, with ``--try``,
what happened when the port ran (:mod:`ding_env.porting.trial`).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ding_env.porting.destination import BACKUP_SUFFIX, destination, source_files
from ding_env.porting.findings import ERROR, HAZARDS, NOTE, Item
from ding_env.porting.fixes import apply_fixes
from ding_env.porting.imports import name_items, plan_imports, rename_imports_with_changes, renamed_plain_imports
from ding_env.porting.kept_ding import kept_ding_items
from ding_env.porting.packages import joined_init, own_dizoo_names, package_of
from ding_env.porting.references import Place, absolute_module, relative_anchor, relative_items, string_references
from ding_env.porting.rewrite import Change, apply_edits, parse, read_source, split_lines, write_source
from ding_env.porting.scan import env_makers, hazard_items, scan_hazards
from ding_env.porting.spellings import spelling_edits
from ding_env.porting.star_imports import star_import_items


@dataclass
class PortResult:
    """What a port did and found.

    Attributes:
        src: What was ported.
        dst: Where the port is (``src`` itself with ``--in-place``).
        report: Where its report goes: ``DST/PORTING.md``, or ``NAME.PORTING.md`` beside a ported file.
        files: Every file of the port, relative to the port's folder.
        renamed: ``(file, Change)`` per renamed import line.
        fixed: ``(file, Change)`` per line ``--fix`` changed.
        joined: The ``__init__.py`` files of packages ding-env's own ``dizoo`` has too, whose package
            path now extends into ding-env's (``porting.packages``).
        items: The findings of the static scan (names and hazards).
        trial: What ``--try`` found (None without it): the JSON of :func:`trial.run_trial`.
        trial_timeout: Seconds the trial may take.
        notices: What the port replaced or left of an earlier port at ``dst``.
    """

    src: Path
    dst: Path
    report: Path
    files: list[str] = field(default_factory=list)
    renamed: list[tuple[str, Change]] = field(default_factory=list)
    fixed: list[tuple[str, Change]] = field(default_factory=list)
    joined: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    trial: dict | None = None
    trial_timeout: float = 1800.0
    notices: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[str]:
        """One line per thing that failed: errors of the scan and failures of the trial."""
        failed = [f"{item.where}: {item.what}" for item in self.items if item.severity == ERROR]
        trial = self.trial or {}
        failed += [
            f"import {module}: {result['error']}"
            for module, result in trial.get("imports", {}).items()
            if not result.get("ok") and not result.get("outside")
        ]
        for config in trial.get("unloaded_configs", []):
            where = f" (at {config['where']})" if config.get("where") else ""
            failed.append(f"config {config['config']}: ding-env run cannot load it: {config['error']}{where}")
        for env in trial.get("envs", []):
            which = f"env type {env['type']!r}" + (f" with {env['config']}" if env.get("config") else "")
            if not env.get("run_accepts_config", True):
                failed.append(f"{which}: ding-env run refuses its config: {env.get('config_error')}")
            for key in ("build", "base", "subprocess", "replay"):
                if "error" in env.get(key, {}):
                    failed.append(f"{which} ({key}): {env[key]['error']}")
        if "error" in trial:
            failed.append(f"--try: {trial['error']}")
        return failed


def port(
    src: str | Path,
    out: str | Path | None = None,
    in_place: bool = False,
    fix: bool = False,
    trial_steps: int | None = None,
    force: bool = False,
) -> PortResult:
    """Port ``src`` (a file or a folder) to ``out``, or over itself with ``in_place`` (``.orig`` backups kept).

    Args:
        src: A Python file or a folder (a package, or a tree of them).
        out: Where the port goes: a new path, or where a previous port of ``src`` went (its report is there).
        in_place: Rewrite ``src`` itself; each changed file keeps its original as ``FILE.orig``.
        fix: Also apply the mechanical fixes the scan is sure of.
        trial_steps: Run ``--try`` with this many env steps per manager (None: no trial).
        force: Replace an earlier port of ``src`` at ``out`` even where its files differ from what it wrote.

    Raises:
        ConfigError: For a missing ``src`` or one with nothing to port, neither or both of ``out`` and
            ``in_place``, or an ``out`` that holds files no port wrote, another SRC's port, or an earlier
            port of ``src`` edited since (without ``force``) (see :mod:`ding_env.porting.destination`).
    """
    src = Path(src)
    where = destination(src, out, in_place, force)
    dst = where.dst
    result = PortResult(src, dst, where.report, notices=where.notices)
    base = src if src.is_dir() else src.parent
    package = package_of(base)
    shared_packages = own_dizoo_names()[0]
    paths = [src] if src.is_file() else source_files(src)
    relatives = [path.name if src.is_file() else str(path.relative_to(base)) for path in paths]
    modules = tuple(_module_name(package, relative) for relative in relatives if relative.endswith(".py"))
    defines = _definitions(paths, relatives, package)
    makers = _env_makers(paths, relatives, package)
    if src.is_dir():
        dst.mkdir(parents=True, exist_ok=True)  # the report goes in it, whatever files there are
    for path, relative in zip(paths, relatives, strict=True):
        target = dst if src.is_file() else dst / relative
        result.files.append(relative)
        data = path.read_bytes()
        if path.suffix == ".py":
            place = Place(tuple(package_of(path.parent)), len(package), modules)
            text, encoding = read_source(data)
            new = _port_source(relative, text, fix, result, place, defines, makers)
            dotted = ".".join([*package, *Path(relative).parent.parts])
            if path.name == "__init__.py" and dotted in shared_packages and (joined := joined_init(new)) is not None:
                new = joined
                result.joined.append(relative)
            data_out = write_source(new, encoding)
        else:
            data_out = data
        _write(path, target, data, data_out, in_place)
    if trial_steps is not None:
        result.trial = run_trial(src, dst, trial_steps, result.trial_timeout)
    return result


def _module_name(package: list[str], relative: str) -> str:
    """The dotted name a module of the port imports as from the port's root (``dizoo.maze.envs.maze_env``)."""
    parts = [*package, *Path(relative).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _definitions(paths: list[Path], relatives: list[str], package: list[str]) -> dict[str, list[str]]:
    """``{name: [port modules defining it at top level]}``: where a name DI-engine lacks may be the port's own."""
    defines: dict[str, list[str]] = {}
    for path, relative in zip(paths, relatives, strict=True):
        if path.suffix != ".py":
            continue
        try:
            tree = parse(read_source(path.read_bytes())[0])
        except SyntaxError:
            continue
        module = _module_name(package, relative)
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                defines.setdefault(node.name, []).append(module)
    return defines


def _env_makers(paths: list[Path], relatives: list[str], package: list[str]) -> dict[str, set[str]]:
    """``{module: its top-level functions that make gym envs}``, a maker of another module's maker included."""
    trees = {}
    for path, relative in zip(paths, relatives, strict=True):
        if path.suffix == ".py":
            try:
                trees[_module_name(package, relative)] = (parse(read_source(path.read_bytes())[0]), path)
            except SyntaxError:
                continue
    makers: dict[str, set[str]] = {}
    for _ in range(2):  # a helper wrapping another module's helper
        for module, (tree, path) in trees.items():
            place = Place(tuple(package_of(path.parent)), len(package))
            makers[module] = env_makers(tree, _imported_makers(tree, place, makers))
    return makers


def _imported_makers(tree: ast.AST, place: Place, makers: dict[str, set[str]]) -> set[str]:
    """The names ``tree`` binds to env makers of other modules of the port (``from .wrappers import wrap``)."""
    bound = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        anchor = relative_anchor(node, place) if node.level else ()
        if anchor is None:
            continue
        module = ".".join([*anchor, *([node.module] if node.module else [])])
        bound.update(alias.asname or alias.name for alias in node.names if alias.name in makers.get(module, ()))
    return bound


def _port_source(
    relative: str,
    text: str,
    fix: bool,
    result: PortResult,
    place: Place,
    defines: dict[str, list[str]] | None = None,
    makers: dict[str, set[str]] | None = None,
) -> str:
    """One Python file's text ported: imports renamed (and fixes applied); its findings added to ``result``.

    The written file and the report come from the same import plans, so they cannot disagree.
    """
    try:
        original = parse(text)
    except SyntaxError as error:
        result.items.append(
            Item(
                relative,
                getattr(error, "lineno", 0) or 0,
                NOTE,
                f"does not parse with Python {sys.version_info.major}.{sys.version_info.minor}: {error.msg}",
                "only its import lines were renamed; nothing else was scanned",
                HAZARDS,
            )
        )
        new, changes = rename_imports_with_changes(text)
        result.renamed += [(relative, change) for change in changes]
        return new
    lines = [line for line, _ in split_lines(text)]
    plans = plan_imports(original, lines, lambda node: absolute_module(node, place))
    string_edits, string_items = string_references(relative, original, lines, place)
    code_edits, spellings = spelling_edits(original, lines, renamed_plain_imports(plans))
    result.items += name_items(relative, original, plans, spellings, defines or {})
    result.items += relative_items(relative, original, place) + string_items + star_import_items(relative, original)
    import_edits = [plan.edit for plan in plans if plan.edit is not None]
    new, changes = apply_edits(text, import_edits + code_edits + string_edits)
    result.renamed += [(relative, change) for change in changes]
    ported = parse(new)
    result.items += kept_ding_items(relative, ported)  # renaming changes no line, so the lines are the original's
    hazards = scan_hazards(ported, new, _imported_makers(ported, place, makers or {}))
    if fix:
        new, fix_changes, fixed = apply_fixes(new, hazards)
        result.fixed += [(relative, change) for change in fix_changes]
        hazards = [hazard for hazard in hazards if hazard not in fixed]
    result.items += hazard_items(relative, hazards)
    return new


def _write(path: Path, target: Path, data: bytes, data_out: bytes, in_place: bool) -> None:
    if in_place:
        if data_out != data:
            backup = path.with_name(path.name + BACKUP_SUFFIX)
            if not backup.exists():  # a second run keeps the first original
                shutil.copy2(path, backup)
            path.write_bytes(data_out)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data_out)
    shutil.copymode(path, target)


def import_root(src: Path, dst: Path) -> tuple[Path, str | None]:
    """The folder to put on ``sys.path`` so the port imports under the names its code uses, and a note if none.

    ``src``'s package names (``dizoo.maze`` for ``.../dizoo/maze``) are how the code imports itself;
    a port whose path ends in them (``ported/dizoo/maze``) is imported from the folder above them.
    """
    # Absolute: the trial runs in that folder, where a relative path would name another place.
    folder = (dst if dst.is_dir() else dst.parent).resolve()
    chain = package_of(src if src.is_dir() else src.parent)
    if not chain:
        return folder, None
    if folder.parts[-len(chain) :] == tuple(chain):
        return folder.parents[len(chain) - 1], None
    root = folder.parent if (folder / "__init__.py").exists() else folder
    dotted = ".".join(chain)
    note = f"the code imports itself as {dotted}: port it to a folder whose path ends in {'/'.join(chain)}"
    return root, note


def run_trial(src: Path, dst: Path, steps: int, timeout: float) -> dict:
    """``--try`` on the port at ``dst``, in a process of its own; its JSON result (or the error that stopped it)."""
    import ding_env

    root, note = import_root(src, dst)
    ding_env_home = str(Path(ding_env.__file__).resolve().parents[1])
    paths = [str(root), ding_env_home, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    command = [sys.executable, "-m", "ding_env.porting.trial", str(root), str(dst.resolve()), str(steps)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout, cwd=root)
    except subprocess.TimeoutExpired:
        return {"error": f"the trial did not finish within {timeout:.0f} s", "note": note}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:600], "note": note}
    trial = json.loads(lines[-1])
    trial["note"] = note
    return trial
