r"""Rewriting source text line by line while every other byte stays as it was (line endings included).

Files are read as bytes and decoded in the encoding their coding declaration names (PEP 263; UTF-8
without one) with ``surrogateescape``, so any bytes round-trip; lines keep their own endings
(``\\n``, ``\\r\\n`` or ``\\r``). Columns are counted in the text's UTF-8 bytes, as ``ast`` counts them.
"""

from __future__ import annotations

import ast
import codecs
import io
import re
import tokenize
import warnings
from collections.abc import Callable
from dataclasses import dataclass

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True)
class Change:
    """One rewritten line: where, and what it was and became (without its line ending)."""

    line: int
    old: str
    new: str


@dataclass(frozen=True)
class Edit:
    """Columns ``col:end_col`` of ``line``'s UTF-8 bytes (as ``ast`` counts them) become ``new``."""

    line: int
    col: int
    end_col: int
    new: str


def decode(data: bytes) -> str:
    """``data`` as text that :func:`encode` turns back into the same bytes."""
    return data.decode("utf-8", errors="surrogateescape")


def encode(text: str) -> bytes:
    """The bytes of text from :func:`decode`."""
    return text.encode("utf-8", errors="surrogateescape")


def read_source(data: bytes) -> tuple[str, str]:
    """A Python file's text, decoded as its coding declaration says, and that encoding (for :func:`write_source`).

    A file is read as UTF-8 (as it always round-trips) when its declaration names no codec Python knows, a
    codec that cannot read it, or one that would not give back its bytes unchanged (cp932 spells some
    characters two ways): every byte the port does not rewrite stays as it was.
    """
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        codecs.lookup(encoding)
        if encoding not in ("utf-8", "utf-8-sig"):
            text = data.decode(encoding, errors="surrogateescape")
            if write_source(text, encoding) == data:
                return text, encoding
    except (SyntaxError, LookupError, UnicodeError):
        pass
    return decode(data), "utf-8"  # a BOM stays in the text, and goes back with it


def write_source(text: str, encoding: str) -> bytes:
    """The bytes of text from :func:`read_source`, in the file's own encoding."""
    return text.encode(encoding, errors="surrogateescape")


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


def apply_edits(text: str, edits: list[Edit]) -> tuple[str, list[Change]]:
    """``text`` with ``edits`` made (none overlapping), and one ``Change`` per line that changed."""
    by_line: dict[int, list[Edit]] = {}
    for edit in edits:
        by_line.setdefault(edit.line, []).append(edit)

    def edit_line(number: int, line: str) -> str:
        data = encode(line)
        # Right to left, so the columns of the edits still to come stay valid.
        for edit in sorted(by_line[number], key=lambda edit: edit.col, reverse=True):
            data = data[: edit.col] + encode(edit.new) + data[edit.end_col :]
        return decode(data)

    return rewrite_lines(text, edit_line, set(by_line))
