"""Warnings shown at the line of the caller's code that led to them, however deep in ding-env they arise."""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message)`` attributed to the first frame outside the ``ding_env`` package.

    A warning raised from a backend several calls below ``manager.launch()`` would otherwise name a line of
    ding-env's (``stacklevel`` counts frames, and their number depends on the path taken).
    """
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the frame that called this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        level += 1
        frame = frame.f_back
    warnings.warn(message, category, stacklevel=level)
