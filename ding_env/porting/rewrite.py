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

from ding_env.porting.names import ALL_RENAMES, RENAMED, rename_module, resolve

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
    """``line`` with a DI-engine module of ``ALL_RENAMES`` renamed when it is an import line.

    A one-line ``from MODULE import ...`` keeps importing from DI-engine's module the names the rename
    does not bring (``set_pkg_seed``, ``POLICY_REGISTRY``, ...): it becomes two statements on the line
    (so every line keeps its number), or stays as it was when none of its names moves.
    """
    if _IMPORT_LINE.match(line) is None:
        return line
    split = _split_from_import(line)
    if split is not None:
        return split

    def rename(match: re.Match) -> str:
        return match.group("head") + ALL_RENAMES[match.group("module")] + match.group("tail")

    return _IMPORT_LINE.sub(rename, line)


def _split_from_import(line: str) -> str | None:
    """``line`` (one ``from MODULE import names`` statement) with only the names the rename brings moved.

    None when the line is not such a statement (an ``import``, a star import, one continued on the next
    lines) or when every name it imports moves: the plain rename serves.
    """
    code = line.split("#", 1)[0].rstrip()  # an import line holds no strings: a '#' starts its comment
    try:
        tree = parse(code.strip())
    except SyntaxError:
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, ast.ImportFrom) or node.level or any(alias.name == "*" for alias in node.names):
        return None
    kept = [alias for alias in node.names if resolve(node.module, alias.name).status != RENAMED]
    if not kept:
        return None
    if len(kept) == len(node.names):
        return line
    moved = [alias for alias in node.names if alias not in kept]
    indent = code[: len(code) - len(code.lstrip())]
    statements = (
        f"from {rename_module(node.module)} import {_aliases(moved)}",
        f"from {node.module} import {_aliases(kept)}",
    )
    return indent + "; ".join(statements) + line[len(code) :]


def _aliases(aliases: list[ast.alias]) -> str:
    return ", ".join(alias.name if alias.asname is None else f"{alias.name} as {alias.asname}" for alias in aliases)


def rename_imports_with_changes(text: str) -> tuple[str, list[Change]]:
    """``text`` with its import statements renamed by ``ALL_RENAMES``, and the lines that changed.

    Only lines that start an import statement are touched (every line that looks like one when
    the file does not parse), so a docstring that mentions ``from ding.envs import`` stays.
    """
    return rewrite_lines(text, lambda _, line: rename_import_line(line), import_lines(text))


def rename_imports(source: str) -> str:
    """``source`` with the modules of ``ALL_RENAMES`` renamed on its import lines, every other byte kept."""
    return rename_imports_with_changes(source)[0]
