r"""Rewriting source text line by line while every other byte stays as it was (line endings included).

Files are read as bytes and decoded with ``surrogateescape``, so any encoding round-trips; lines
keep their own endings (``\\n``, ``\\r\\n`` or ``\\r``).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from ding_env.porting.names import ALL_RENAMES

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_IMPORT_LINE = re.compile(
    r"^(?P<head>\s*(?:from|import)\s+)(?P<module>"
    + "|".join(re.escape(name) for name in sorted(ALL_RENAMES, key=len, reverse=True))
    + r")(?P<tail>[.\s,].*|$)"
)


@dataclass(frozen=True)
class Change:
    """One rewritten line: where, and what it was and became (without its line ending)."""

    line: int
    old: str
    new: str


def decode(data: bytes) -> str:
    """``data`` as text that :func:`encode` turns back into the same bytes."""
    return data.decode("utf-8", errors="surrogateescape")


def encode(text: str) -> bytes:
    """The bytes of text from :func:`decode`."""
    return text.encode("utf-8", errors="surrogateescape")


def split_lines(text: str) -> list[tuple[str, str]]:
    """``text`` as ``(line, ending)`` pairs; joining them gives ``text`` back."""
    pairs = []
    for chunk in _LINE.findall(text):
        body = chunk.rstrip("\r\n")
        pairs.append((body, chunk[len(body) :]))
    return pairs


def rewrite_lines(
    text: str, edit: Callable[[int, str], str], lines: set[int] | None = None
) -> tuple[str, list[Change]]:
    """``text`` with ``edit(number, line)`` applied to each line (numbered from 1), or to ``lines`` only.

    Returns:
        The new text and one ``Change`` per line that changed.
    """
    out, changes = [], []
    for number, (body, ending) in enumerate(split_lines(text), start=1):
        new = edit(number, body) if lines is None or number in lines else body
        if new != body:
            changes.append(Change(number, body, new))
        out.append(new + ending)
    return "".join(out), changes


def parse(text: str) -> ast.Module:
    """``ast.parse(text)`` without the warnings old code gives (invalid escapes): the scan is not about them.

    Raises:
        SyntaxError: When ``text`` is not Python this interpreter parses.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
        try:
            return ast.parse(text)
        except ValueError as error:  # null bytes
            raise SyntaxError(str(error)) from error


def import_lines(text: str) -> set[int] | None:
    """The numbers of the lines that start an ``import`` statement, or None when ``text`` does not parse."""
    try:
        tree = parse(text)
    except SyntaxError:
        return None
    return {node.lineno for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))}


def rename_import_line(line: str) -> str:
    """``line`` with a DI-engine module of ``ALL_RENAMES`` renamed when it is an import line."""

    def rename(match: re.Match) -> str:
        return match.group("head") + ALL_RENAMES[match.group("module")] + match.group("tail")

    return _IMPORT_LINE.sub(rename, line)


def rename_imports_with_changes(text: str) -> tuple[str, list[Change]]:
    """``text`` with its import statements renamed by ``ALL_RENAMES``, and the lines that changed.

    Only lines that start an import statement are touched (every line that looks like one when
    the file does not parse), so a docstring that mentions ``from ding.envs import`` stays.
    """
    return rewrite_lines(text, lambda _, line: rename_import_line(line), import_lines(text))


def rename_imports(source: str) -> str:
    """``source`` with the modules of ``ALL_RENAMES`` renamed on its import lines, every other byte kept."""
    return rename_imports_with_changes(source)[0]
