"""Where a port goes and where its report is written, refusing any place where it would mix or overwrite.

A folder's report is ``DST/PORTING.md``; a file's is ``NAME.PORTING.md`` beside the ported file, so
several files ported into one folder keep a report each. A report records the port's SRC (its header
names SRC and DST by absolute path), which is how a later port tells its own earlier output, which it
replaces, from another port's or the user's files, which it refuses to touch.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ding_env.errors import ConfigError

REPORT_NAME = "PORTING.md"
REPORT_SUFFIX = ".PORTING.md"
REPORT_TITLE = "# Porting report"
BACKUP_SUFFIX = ".orig"
IGNORED = ("__pycache__", ".git", ".pytest_cache")
_WRITTEN_START = "<!-- ding-env port wrote: "
_WRITTEN_END = " -->"
_HEADER = re.compile(r"^`(?P<src>[^`]+)` -> `(?P<dst>[^`]+)` \(ding-env port", re.MULTILINE)


@dataclass
class Destination:
    """Where a port writes.

    Attributes:
        dst: The ported file or folder (SRC itself in place).
        report: The report's path.
        notices: What the port replaces or leaves of an earlier port there, for the user.
    """

    dst: Path
    report: Path
    notices: list[str] = field(default_factory=list)


def source_files(folder: Path) -> list[Path]:
    """The files of a folder that a port copies: all but caches, ``.orig`` backups and ports' reports, sorted.

    A report is the tool's own output (an in-place port's, or one an earlier port left): ported, it would be
    counted as a file of the port and overwritten by a copy of itself.
    """
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and not any(part in IGNORED for part in path.relative_to(folder).parts)
        and not path.name.endswith(BACKUP_SUFFIX)
        and not is_report(path)
    )


def is_report(path: Path) -> bool:
    """Whether ``path`` is a port's report (``PORTING.md`` or ``NAME.PORTING.md`` opening with its title)."""
    if path.name != REPORT_NAME and not path.name.endswith(REPORT_SUFFIX):
        return False
    with path.open("rb") as file:
        return file.read(len(REPORT_TITLE)) == REPORT_TITLE.encode()


def report_path(src: Path, dst: Path) -> Path:
    """The report of a port of ``src`` at ``dst``: ``DST/PORTING.md``, or ``NAME.PORTING.md`` beside a file."""
    return dst / REPORT_NAME if src.is_dir() else dst.with_name(dst.stem + REPORT_SUFFIX)


def reported_src(report: Path) -> Path | None:
    """The SRC a port's report at ``report`` records (None: no such report, or one that records none).

    Raises:
        ConfigError: When a file is there and is not a port's report (the port would overwrite it).
    """
    if not report.exists():
        return None
    text = report.read_text(errors="replace") if report.is_file() else ""
    if not text.startswith(REPORT_TITLE):
        raise ConfigError(f"ding-env port: {str(report)!r} exists and is not a port's report; move it away first")
    match = _HEADER.search(text)
    return Path(match["src"]) if match and Path(match["src"]).is_absolute() else None


def destination(src: Path, out: str | Path | None, in_place: bool, force: bool = False) -> Destination:
    """Check ``src`` and where its port goes.

    Args:
        src: What is ported.
        out: Where the port goes (None: ``in_place``).
        in_place: Port over ``src``.
        force: Replace an earlier port of ``src`` at ``out`` even where its files differ from what it wrote.

    Raises:
        ConfigError: For a missing ``src``, one with nothing to port, neither or both of ``out`` and
            ``in_place``, an ``out`` that holds files no port wrote or another SRC's port, an earlier
            port of ``src`` whose files differ from what it wrote (without ``force``), or a report
            path that holds another port's report.
    """
    if not src.exists():
        raise ConfigError(f"ding-env port: {str(src)!r} does not exist")
    if in_place == (out is not None):
        raise ConfigError("ding-env port: give --out DST (a new file or folder) or --in-place, not both or neither")
    if src.is_dir() and not source_files(src):
        raise ConfigError(f"ding-env port: {str(src)!r} holds no files: nothing to port")
    if in_place:
        report = report_path(src, src)
        reported_src(report)  # a file of the user's under the report's name is refused
        return Destination(src, report)
    dst = Path(out)
    if src.is_file() and dst.is_dir():
        raise ConfigError(f"ding-env port: {str(dst)!r} is a folder; give the ported file's path")
    if src.is_dir() and dst.exists() and not dst.is_dir():
        raise ConfigError(f"ding-env port: {str(dst)!r} is a file; give a new folder for the port of a folder")
    folder = dst if src.is_dir() else dst.parent
    if folder.resolve() == (src if src.is_dir() else src.parent).resolve():
        raise ConfigError(
            f"ding-env port: --out {str(dst)!r} is in SRC's own folder, where the port's report and --try's "
            f"imports would mix with the original; give a path in another folder (ported/{src.name}), or --in-place"
        )
    report = report_path(src, dst)
    earlier = reported_src(report)
    has_earlier = report.exists()
    if not has_earlier and dst.is_file():
        raise ConfigError(
            f"ding-env port: {str(dst)!r} exists and no port wrote it (no {report.name} beside it); choose a new path"
        )
    if not has_earlier and dst.is_dir() and any(dst.iterdir()):
        raise ConfigError(f"ding-env port: {str(dst)!r} exists and holds files a port did not write; choose a new one")
    # --force also replaces an in-place port of the port itself (what trying an edited port leaves).
    own_in_place = force and earlier is not None and earlier.resolve() == dst.resolve()
    if earlier is not None and earlier.resolve() != src.resolve() and not own_in_place:
        harm = "mix the two ports" if src.is_dir() else "overwrite it and its report"
        raise ConfigError(
            f"ding-env port: {str(dst)!r} holds the port of {str(earlier)!r} (see {str(report)!r}); porting "
            f"{str(src)!r} there would {harm}: choose a new --out, or remove the earlier port first"
        )
    if has_earlier and not force:
        _refuse_edited(dst, report)
    result = Destination(dst, report)
    if has_earlier:
        result.notices.append(f"{str(dst)!r} holds an earlier port of this SRC: its files and report are replaced")
        if src.is_dir():
            written = {path.relative_to(src) for path in source_files(src)} | {Path(REPORT_NAME)}
            left = [str(path.relative_to(dst)) for path in source_files(dst) if path.relative_to(dst) not in written]
            if left:
                files = f"{len(left)} file{'s' if len(left) > 1 else ''}"
                shown = ", ".join(left[:10]) + (" ..." if len(left) > 10 else "")
                result.notices.append(
                    f"{files} of the earlier port in {str(dst)!r} not in SRC now stay as they were (delete them if "
                    f"SRC dropped them): {shown}"
                )
    return result


def written_files(dst: Path, files: list[str]) -> dict[str, str]:
    """``{file: sha256}`` of what a port wrote at ``dst`` (``files`` relative to it; a ported file: its name)."""
    paths = {name: dst / name for name in files} if dst.is_dir() else {dst.name: dst}
    return {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in paths.items() if path.is_file()}


def written_line(digests: dict[str, str]) -> str:
    """The report's last line: what the port wrote, for a later port to tell the user's edits (``_refuse_edited``)."""
    return f"{_WRITTEN_START}{json.dumps(digests, sort_keys=True)}{_WRITTEN_END}"


def _refuse_edited(dst: Path, report: Path) -> None:
    """Refuse to port over an earlier port whose files differ from what it wrote (the user's fixes)."""
    text = report.read_text(errors="replace")
    start = text.rfind(_WRITTEN_START)
    if start < 0:  # a report that records no files: nothing to compare
        return
    try:
        digests = json.loads(text[start + len(_WRITTEN_START) :].split(_WRITTEN_END)[0])
    except ValueError:
        return
    now = written_files(dst, list(digests))
    edited = sorted(name for name, digest in digests.items() if name in now and now[name] != digest)
    if edited:
        shown = ", ".join(edited[:5]) + (" ..." if len(edited) > 5 else "")
        raise ConfigError(
            f"ding-env port: {str(dst)!r} holds an earlier port of this SRC, edited since ({shown}); porting "
            f"again would replace those edits. To try the edited port, run `ding-env port {dst} --in-place "
            "--try`; to replace it anyway, add --force"
        )
