"""``ding-env port --fix``: the mechanical fixes the scan is sure of, applied where it found them.

numpy's removed aliases become their replacements (``np.float_`` -> ``np.float64``) and imports of
modules that moved are renamed (``pettingzoo.mpe`` -> ``mpe2``). Nothing else is touched.
"""

from __future__ import annotations

import re

from ding_env.porting.rewrite import Change, decode, encode, rewrite_lines
from ding_env.porting.scan import Hazard


def apply_fixes(text: str, hazards: list[Hazard]) -> tuple[str, list[Change], list[Hazard]]:
    """``text`` with every fixable hazard fixed.

    Returns:
        The new text, one ``Change`` per line changed, and the hazards it fixed.
    """
    fixable: dict[int, list[Hazard]] = {}
    for hazard in hazards:
        if hazard.replacement is not None:
            fixable.setdefault(hazard.line, []).append(hazard)
    fixed: list[Hazard] = []

    def edit(number: int, line: str) -> str:
        # Right to left, so the columns of the edits still to come stay valid.
        for hazard in sorted(fixable[number], key=lambda hazard: hazard.col, reverse=True):
            new = _fix_one(line, hazard)
            if new is not None:
                line = new
                fixed.append(hazard)
        return line

    new_text, changes = rewrite_lines(text, edit, set(fixable))
    return new_text, changes, fixed


def _fix_one(line: str, hazard: Hazard) -> str | None:
    """``line`` with ``hazard`` fixed, or None when the line no longer holds what the scan saw."""
    if hazard.end_col:
        data = encode(line)
        if data[hazard.col : hazard.end_col] != encode(hazard.old):
            return None
        return decode(data[: hazard.col] + encode(hazard.replacement) + data[hazard.end_col :])
    pattern = re.compile(r"(?<![\w.])" + re.escape(hazard.old) + r"(?=[.\s,]|$)")
    new, count = pattern.subn(hazard.replacement, line, count=1)
    return new if count else None
