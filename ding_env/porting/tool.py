"""``ding-env port SRC --out DST``: port a file or a package folder, and report what is left.

Every file is copied byte for byte except the lines changed: import lines renamed by
``IMPORT_RENAMES``, and with ``--fix`` the mechanical fixes of :mod:`ding_env.porting.fixes`.
The report (:mod:`ding_env.porting.report`) lists with ``file:line`` the DI-engine names the
rename does not bring, the hazards of the static scan, the fixes applied and, with ``--try``,
what happened when the port ran (:mod:`ding_env.porting.trial`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ding_env.errors import ConfigError
from ding_env.porting.findings import ERROR, NOTE, Item
from ding_env.porting.fixes import apply_fixes
from ding_env.porting.packages import joined_init, own_dizoo_names, package_of
from ding_env.porting.rewrite import Change, decode, encode, parse, rename_imports_with_changes
from ding_env.porting.scan import HAZARDS, hazard_items, scan_hazards, scan_names

REPORT_NAME = "PORTING.md"
BACKUP_SUFFIX = ".orig"
IGNORED = ("__pycache__", ".git", ".pytest_cache")


@dataclass
class PortResult:
    """What a port did and found.

    Attributes:
        src: What was ported.
        dst: Where the port is (``src`` itself with ``--in-place``).
        files: Every file of the port, relative to the port's folder.
        renamed: ``(file, Change)`` per renamed import line.
        fixed: ``(file, Change)`` per line ``--fix`` changed.
        joined: The ``__init__.py`` files of packages ding-env's own ``dizoo`` has too, whose package
            path now extends into ding-env's (``porting.packages``).
        items: The findings of the static scan (names and hazards).
        trial: What ``--try`` found (None without it): the JSON of :func:`trial.run_trial`.
        trial_timeout: Seconds the trial may take.
    """

    src: Path
    dst: Path
    files: list[str] = field(default_factory=list)
    renamed: list[tuple[str, Change]] = field(default_factory=list)
    fixed: list[tuple[str, Change]] = field(default_factory=list)
    joined: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    trial: dict | None = None
    trial_timeout: float = 1800.0

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
        for env in trial.get("envs", []):
            if not env.get("run_accepts_config", True):
                failed.append(f"env type {env['type']!r}: ding-env run refuses its config")
            for key in ("build", "base", "subprocess"):
                if "error" in env.get(key, {}):
                    failed.append(f"env type {env['type']!r} ({key}): {env[key]['error']}")
        if "error" in trial:
            failed.append(f"--try: {trial['error']}")
        return failed


def port(
    src: str | Path,
    out: str | Path | None = None,
    in_place: bool = False,
    fix: bool = False,
    trial_steps: int | None = None,
) -> PortResult:
    """Port ``src`` (a file or a folder) to ``out``, or over itself with ``in_place`` (``.orig`` backups kept).

    Args:
        src: A Python file or a folder (a package, or a tree of them).
        out: Where the port goes: a new path, or one a previous port wrote (it holds its PORTING.md).
        in_place: Rewrite ``src`` itself; each changed file keeps its original as ``FILE.orig``.
        fix: Also apply the mechanical fixes the scan is sure of.
        trial_steps: Run ``--try`` with this many env steps per manager (None: no trial).

    Raises:
        ConfigError: For a missing ``src``, neither or both of ``out`` and ``in_place``, or an ``out``
            that exists and was not written by a port.
    """
    src = Path(src)
    dst = _destination(src, out, in_place)
    result = PortResult(src, dst)
    base = src if src.is_dir() else src.parent
    package = package_of(base)
    shared_packages = own_dizoo_names()[0]
    for path in [src] if src.is_file() else sorted(_files(src)):
        relative = path.name if src.is_file() else str(path.relative_to(base))
        target = dst if src.is_file() else dst / relative
        result.files.append(relative)
        data = path.read_bytes()
        if path.suffix == ".py":
            new = _port_source(relative, decode(data), fix, result)
            dotted = ".".join([*package, *Path(relative).parent.parts])
            if path.name == "__init__.py" and dotted in shared_packages and (joined := joined_init(new)) is not None:
                new = joined
                result.joined.append(relative)
            data_out = encode(new)
        else:
            data_out = data
        _write(path, target, data, data_out, in_place)
    if trial_steps is not None:
        result.trial = run_trial(src, dst, trial_steps, result.trial_timeout)
    return result


def _destination(src: Path, out: str | Path | None, in_place: bool) -> Path:
    if not src.exists():
        raise ConfigError(f"ding-env port: {str(src)!r} does not exist")
    if in_place == (out is not None):
        raise ConfigError("ding-env port: give --out DST (a new file or folder) or --in-place, not both or neither")
    if in_place:
        return src
    dst = Path(out)
    folder = dst if src.is_dir() else dst.parent
    if src.is_dir() and dst.exists() and any(dst.iterdir()) and not (dst / REPORT_NAME).exists():
        raise ConfigError(f"ding-env port: {str(dst)!r} exists and holds files a port did not write; choose a new one")
    if src.is_file() and dst.is_dir():
        raise ConfigError(f"ding-env port: {str(dst)!r} is a folder; give the ported file's path")
    if folder.resolve() == (src if src.is_dir() else src.parent).resolve():
        raise ConfigError(
            f"ding-env port: --out {str(dst)!r} is in SRC's own folder, where the port's PORTING.md and --try's "
            f"imports would mix with the original; give a path in another folder (ported/{src.name}), or --in-place"
        )
    return dst


def _files(folder: Path) -> list[Path]:
    return [
        path
        for path in folder.rglob("*")
        if path.is_file() and not any(part in IGNORED for part in path.parts) and not path.name.endswith(BACKUP_SUFFIX)
    ]


def _port_source(relative: str, text: str, fix: bool, result: PortResult) -> str:
    """One Python file's text ported: imports renamed (and fixes applied); its findings added to ``result``."""
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
    result.items += scan_names(relative, original)
    new, changes = rename_imports_with_changes(text)
    result.renamed += [(relative, change) for change in changes]
    hazards = scan_hazards(parse(new), new)  # renaming changes no line, so the lines are the original's
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
    folder = dst if dst.is_dir() else dst.parent
    chain = package_of(src if src.is_dir() else src.parent)
    if not chain:
        return folder, None
    if folder.resolve().parts[-len(chain) :] == tuple(chain):
        return folder.resolve().parents[len(chain) - 1], None
    root = folder.resolve().parent if (folder / "__init__.py").exists() else folder
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
