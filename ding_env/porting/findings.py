"""What the porting tool reports: one ``Item`` per place in the user's code, with its fix."""

from __future__ import annotations

from dataclasses import dataclass

ERROR, WARNING, NOTE = "error", "warning", "note"
NAMES, HAZARDS = "names", "hazards"  # the report's sections of findings (``Item.kind``)


@dataclass(frozen=True)
class Item:
    """One finding of the port, at ``path:line`` of the ported code.

    Attributes:
        path: The file, relative to the ported folder (or the file's name).
        line: Its line (0 when the finding is about the whole file).
        severity: ``ERROR`` (the code fails as it is), ``WARNING`` (it may fail) or ``NOTE``.
        what: What was found.
        fix: What to change.
        kind: The section of the report it belongs to.
    """

    path: str
    line: int
    severity: str
    what: str
    fix: str
    kind: str

    @property
    def where(self) -> str:
        """``path:line`` (``path`` alone for a whole file)."""
        return f"{self.path}:{self.line}" if self.line else self.path
